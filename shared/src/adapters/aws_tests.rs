//! Tests of the SDK's HTTPS client against loopback servers.
use super::*;
use crate::adapters::loopback::{answer_each, answer_once};
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::{Credentials, Region as DdbRegion};
use aws_sdk_dynamodb::error::SdkError;
use tokio::net::TcpListener;

/// A DynamoDB client for `endpoint` with static credentials, the process's HTTPS client and
/// no retries.
fn dynamodb(endpoint: &str) -> aws_sdk_dynamodb::Client {
    dynamodb_retrying(endpoint, RetryConfig::disabled())
}

fn dynamodb_retrying(endpoint: &str, retry: RetryConfig) -> aws_sdk_dynamodb::Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(DdbRegion::new("us-east-1"))
        .credentials_provider(Credentials::new("AKIDTEST", "secret", None, None, "test"))
        .retry_config(retry)
        .http_client(https_client())
        .endpoint_url(endpoint)
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}

/// The signed request goes out with its body, and the answer's status, headers and body
/// come back to the SDK, which parses the item.
#[tokio::test]
async fn a_signed_request_and_its_answer_pass_through_whole() {
    let (url, served) = answer_once(
        "HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\n\
         x-amzn-requestid: req-1\r\ncontent-length: 30\r\n\r\n{\"Item\":{\"pk\":{\"S\":\"tenant\"}}}",
    )
    .await;
    let item = dynamodb(&url)
        .get_item()
        .table_name("t")
        .key(
            "pk",
            aws_sdk_dynamodb::types::AttributeValue::S("tenant".into()),
        )
        .send()
        .await
        .expect("get_item");
    let value = item
        .item()
        .and_then(|i| i.get("pk"))
        .and_then(|v| v.as_s().ok());
    assert_eq!(value.map(String::as_str), Some("tenant"));
    let request = served.await.expect("served").to_ascii_lowercase();
    assert!(request.starts_with("post / http/1.1"), "{request}");
    assert!(
        request.contains("authorization: aws4-hmac-sha256 credential=akidtest/"),
        "{request}"
    );
    assert!(
        request.contains("x-amz-target: dynamodb_20120810.getitem"),
        "{request}"
    );
    assert!(
        request.ends_with(r#"{"tablename":"t","key":{"pk":{"s":"tenant"}}}"#),
        "{request}"
    );
}

/// A redirect is the SDK's to read (an S3 bucket in another region answers 301), not the
/// client's to follow.
#[tokio::test]
async fn a_redirect_is_not_followed() {
    let (url, served) = answer_once(
        "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:9/\r\n\
         content-length: 0\r\n\r\n",
    )
    .await;
    let failed = dynamodb(&url).list_tables().send().await.err();
    served.await.expect("served");
    match failed {
        Some(SdkError::ServiceError(e)) => assert_eq!(e.raw().status().as_u16(), 307),
        other => panic!("expected the 307 answer as a service error: {other:?}"),
    }
}

/// A refused connection is an I/O failure, which the SDK retries.
#[tokio::test]
async fn a_refused_connection_is_a_retryable_io_failure() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    match dynamodb(&url).list_tables().send().await.err() {
        Some(SdkError::DispatchFailure(e)) => assert!(e.is_io(), "{e:?}"),
        other => panic!("expected a dispatch failure: {other:?}"),
    }
}

/// An answer cut off before its length is a transient failure: the SDK tries again, and
/// the second answer is the one it reads.
#[tokio::test]
async fn an_answer_cut_short_is_tried_again() {
    let (url, served) = answer_each(
        vec![
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\n\
             content-length: 64\r\n\r\n{\"TableNames\":[",
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\n\
             content-length: 20\r\n\r\n{\"TableNames\":[\"t\"]}",
        ],
        false,
    )
    .await;
    let retry = RetryConfig::standard()
        .with_max_attempts(2)
        .with_initial_backoff(Duration::from_millis(1));
    let listed = dynamodb_retrying(&url, retry)
        .list_tables()
        .send()
        .await
        .expect("the second attempt");
    assert_eq!(listed.table_names(), ["t"]);
    assert_eq!(served.await.expect("served").len(), 2);
}

/// A server that takes longer than the SDK's stalled-upload grace period (5 s) to answer a
/// request it has read whole is slow, not stalled: the one attempt gets its answer. (Were the
/// body handed over without being read through the SDK's stream, the SDK would count the
/// wait as a stalled upload, give up and send the write again: a conditional write that
/// succeeded the first time would then fail its own condition.)
#[tokio::test]
async fn a_slow_answer_to_a_whole_request_is_waited_for() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let served = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        let request = crate::adapters::loopback::read_request(&mut socket).await;
        tokio::time::sleep(Duration::from_secs(8)).await;
        let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\n\
                      content-length: 2\r\n\r\n{}";
        tokio::io::AsyncWriteExt::write_all(&mut socket, answer.as_bytes())
            .await
            .expect("write");
        request
    });
    let put = dynamodb(&url)
        .put_item()
        .table_name("t")
        .item(
            "pk",
            aws_sdk_dynamodb::types::AttributeValue::S("x".repeat(4096)),
        )
        .condition_expression("attribute_not_exists(pk)")
        .send()
        .await;
    assert!(put.is_ok(), "{put:?}");
    let request = served.await.expect("served");
    assert!(
        request.contains(&"x".repeat(4096)),
        "the body went out whole"
    );
}

/// As the functions are built: the region named wins, else the environment's.
#[cfg(not(feature = "aws-profiles"))]
#[tokio::test]
async fn a_named_region_is_the_configurations() {
    let config = sdk_config(Some("eu-west-3")).await;
    assert_eq!(config.region().map(|r| r.as_ref()), Some("eu-west-3"));
    assert!(config.credentials_provider().is_some());
    assert!(config.http_client().is_some());
}
