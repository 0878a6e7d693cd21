//! The client against loopback servers: what it sends, what it retries, how it reads.

use std::time::Duration;

use aws_credential_types::provider::SharedCredentialsProvider;
use aws_credential_types::Credentials;

use super::*;
use crate::adapters::loopback::answer_each;

pub(crate) fn client(url: &str) -> S3Client {
    let creds = Credentials::new("AKIDTEST", "secret", Some("session".into()), None, "test");
    S3Client::new(
        Some(url.to_owned()),
        "eu-west-3",
        Some(SharedCredentialsProvider::new(creds)),
    )
}

/// An answer with `status` and `body` (its length counted).
pub(crate) fn answer(status: &str, body: &str) -> &'static str {
    let text = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/xml\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    Box::leak(text.into_boxed_str())
}

/// A conditional, encrypted write goes out signed, with its key escaped once and the ETag of
/// the answer handed back unquoted.
#[tokio::test]
async fn a_write_is_signed_and_sent_as_asked() {
    let (url, served) = answer_each(
        vec!["HTTP/1.1 200 OK\r\netag: \"abc123\"\r\ncontent-length: 0\r\n\r\n"],
        false,
    )
    .await;
    let put = Put {
        content_type: Some("text/plain"),
        if_match: Some("v1"),
        if_none_match: false,
    };
    let etag = client(&url)
        .put_object("bkt", "ws/a b+c.txt", b"hello".to_vec(), &put)
        .await
        .expect("put");
    assert_eq!(etag, "abc123");
    let request = served.await.expect("served").remove(0).to_ascii_lowercase();
    assert!(
        request.starts_with("put /bkt/ws/a%20b%2bc.txt"),
        "{request}"
    );
    for header in [
        "authorization: aws4-hmac-sha256 credential=akidtest/",
        "/eu-west-3/s3/aws4_request",
        "x-amz-content-sha256: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
        "x-amz-security-token: session",
        "x-amz-server-side-encryption: aes256",
        "if-match: \"v1\"",
        "content-type: text/plain",
    ] {
        assert!(request.contains(header), "{header} in {request}");
    }
    assert!(request.ends_with("hello"));
}

/// An object reaches its reader as a stream: its length is known before any of it is read,
/// so a reader with a limit refuses a huge object without holding it in memory.
#[tokio::test]
async fn an_object_is_streamed_not_read_whole() {
    let (url, _served) = answer_each(
        vec![
            "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\n\
             content-length: 4294967296\r\n\r\nfirst bytes",
        ],
        true,
    )
    .await;
    let s3 = client(&url);
    let got = s3.get_object("b", "huge.bin");
    let out = tokio::time::timeout(Duration::from_secs(10), got)
        .await
        .expect("answered before its 4 GiB body arrived")
        .expect("get_object");
    assert_eq!(out.length, Some(4_294_967_296));
    let refused = tokio::time::timeout(Duration::from_secs(10), out.bytes(5))
        .await
        .expect("refused as soon as the limit was passed");
    assert!(
        matches!(refused, Err(ReadError::TooLarge { limit: 5, .. })),
        "{refused:?}"
    );
}

/// Throttling is tried again and the second answer read; a missing key is not tried again.
#[tokio::test]
async fn throttling_is_tried_again_a_missing_key_is_not() {
    let (url, served) = answer_each(
        vec![
            answer("503 Slow Down", "<Error><Code>SlowDown</Code></Error>"),
            answer("200 OK", "ok"),
        ],
        false,
    )
    .await;
    let object = client(&url)
        .get_object("b", "k")
        .await
        .expect("second attempt");
    assert_eq!(object.bytes(10).await.expect("body"), b"ok");
    assert_eq!(served.await.expect("served").len(), 2);

    let (url, served) = answer_each(
        vec![answer(
            "404 Not Found",
            "<Error><Code>NoSuchKey</Code><Message>m</Message></Error>",
        )],
        false,
    )
    .await;
    let missing = client(&url)
        .get_object("b", "gone")
        .await
        .expect_err("missing");
    assert!(missing.is_not_found(), "{missing:?}");
    assert_eq!(missing.code(), Some("NoSuchKey"));
    assert_eq!(served.await.expect("served").len(), 1);
}

/// A HEAD's bare 404 is "not found"; a refused connection, tried three times, is
/// "unreachable"; no credentials is said as such.
#[tokio::test]
async fn failures_are_told_apart() {
    let (url, _served) = answer_each(
        vec!["HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"],
        false,
    )
    .await;
    let head = client(&url).head_object("b", "k").await.expect_err("404");
    assert!(head.is_not_found(), "{head:?}");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let closed = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    let refused = client(&closed).head_bucket("b").await.expect_err("refused");
    assert!(matches!(refused, S3Error::Unreachable(_)), "{refused:?}");

    let anonymous = S3Client::new(Some(closed), "us-east-1", None);
    let none = anonymous
        .head_bucket("b")
        .await
        .expect_err("no credentials");
    assert!(none.to_string().contains("no AWS credentials"), "{none}");
}

/// A batch delete carries its keys escaped, a checksum of its body, and reads back the keys
/// S3 did not delete.
#[tokio::test]
async fn a_batch_delete_reports_the_keys_left() {
    let result = answer(
        "200 OK",
        "<DeleteResult><Error><Key>a&amp;b</Key><Code>AccessDenied</Code></Error></DeleteResult>",
    );
    let (url, served) = answer_each(vec![result], false).await;
    let keys = vec!["a&b".to_owned(), "c".to_owned()];
    let left = client(&url)
        .delete_objects("b", &keys)
        .await
        .expect("delete");
    assert_eq!(left, vec![("a&b".to_owned(), "AccessDenied".to_owned())]);
    let request = served.await.expect("served").remove(0);
    let line = request.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("POST /b") && line.contains("?delete"),
        "{request}"
    );
    // S3 requires a checksum of a batch delete's body (the SDK sends a CRC).
    let lower = request.to_ascii_lowercase();
    assert!(
        lower.contains("content-md5: ") || lower.contains("x-amz-checksum-"),
        "{request}"
    );
    assert!(request.contains("<Key>a&amp;b</Key>"));
    let too_many = vec![String::new(); 1001];
    assert!(client(&url).delete_objects("b", &too_many).await.is_err());
}

/// An empty object (a directory marker) still says its length: S3 refuses a PUT without one.
#[tokio::test]
async fn an_empty_put_says_its_length() {
    let (url, served) = answer_each(vec![answer("200 OK", "")], false).await;
    client(&url)
        .put_object("b", "dir/", Vec::new(), &Put::default())
        .await
        .expect("put");
    let request = served.await.expect("served").remove(0).to_ascii_lowercase();
    assert!(request.contains("\r\ncontent-length: 0\r\n"), "{request}");
}

/// A server that keeps answering "more" with no keys cannot hold a listing forever.
#[tokio::test]
async fn an_endless_listing_is_cut_off() {
    let page = answer(
        "200 OK",
        "<ListBucketResult><KeyCount>0</KeyCount><IsTruncated>true</IsTruncated>\
         <NextContinuationToken>again</NextContinuationToken></ListBucketResult>",
    );
    let pages = crate::adapters::s3_list::MAX_PAGES;
    let (url, served) = answer_each(vec![page; pages], false).await;
    let listed = crate::adapters::s3_list::objects_under(&client(&url), "b", "p/", 10).await;
    assert!(matches!(listed, Err(S3Error::Answer(_))), "{listed:?}");
    assert_eq!(served.await.expect("served").len(), pages);
}
