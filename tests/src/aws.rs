//! Tests against a real DynamoDB/S3-compatible server (moto) started by `scripts/test`, which
//! exports its address as `MOTO_ENDPOINT`. Tests never skip when it is missing: they fail and
//! say how to run them. Each test gets its own uniquely named table and bucket.

use std::sync::Arc;

use aws_sdk_dynamodb::config::{Credentials, Region, SharedCredentialsProvider};
use shared::adapters::dynamo::{create_table, DynamoTable};
use shared::adapters::s3::S3Client;
use shared::adapters::snapshots::S3SnapshotStore;
use shared::adapters::TableStore;
use shared::clock::Clock;
use shared::config::AwsStoreConfig;
use shared::context::Stores;

/// Static credentials the local server accepts.
pub const ACCESS_KEY: &str = "testing";
pub const SECRET_KEY: &str = "testing";
pub const REGION: &str = "us-east-1";

/// The local server's address (panics with instructions when the test script did not start one).
pub fn endpoint() -> String {
    std::env::var("MOTO_ENDPOINT").unwrap_or_else(|_| {
        panic!("MOTO_ENDPOINT is not set: run the tests with scripts/test, which starts the DynamoDB/S3-compatible server")
    })
}

/// Clients for the local server with static test credentials.
pub fn clients() -> (aws_sdk_dynamodb::Client, S3Client) {
    let creds = Credentials::new(ACCESS_KEY, SECRET_KEY, None, None, "tests");
    let endpoint = endpoint();
    let ddb = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(Region::new(REGION))
        .credentials_provider(creds.clone())
        .http_client(shared::adapters::aws::https_client())
        .endpoint_url(&endpoint)
        .build();
    let s3 = S3Client::new(
        Some(endpoint),
        REGION,
        Some(SharedCredentialsProvider::new(creds)),
    );
    (aws_sdk_dynamodb::Client::from_conf(ddb), s3)
}

/// A fresh, uniquely named table and bucket.
pub async fn fresh_resources() -> AwsStoreConfig {
    let (ddb, s3) = clients();
    let id = uuid::Uuid::new_v4().simple().to_string();
    let table = format!("agent-test-{}", &id[..16]);
    let bucket = format!("agent-test-{}", &id[..16]);
    create_table(&ddb, &table).await.expect("create table");
    s3.create_bucket(&bucket).await.expect("create bucket");
    AwsStoreConfig {
        table,
        bucket,
        endpoint: Some(endpoint()),
        region: Some(REGION.into()),
    }
}

/// Stores on a fresh table and bucket of the local server.
pub async fn stores(clock: Arc<dyn Clock>) -> (Stores, AwsStoreConfig) {
    let cfg = fresh_resources().await;
    let (ddb, s3) = clients();
    let stores = Stores {
        store: Arc::new(TableStore::new(
            Arc::new(DynamoTable::new(ddb, &cfg.table)),
            clock,
        )),
        snapshots: Arc::new(S3SnapshotStore::new(s3.clone(), &cfg.bucket)),
        s3: Some(s3),
    };
    (stores, cfg)
}

/// The environment a process needs to use the same table and bucket.
pub fn process_env(cfg: &AwsStoreConfig) -> Vec<(String, String)> {
    [
        ("STORE", "dynamodb".to_owned()),
        ("TABLE_NAME", cfg.table.clone()),
        ("SNAPSHOT_BUCKET", cfg.bucket.clone()),
        ("AWS_ENDPOINT_URL", endpoint()),
        ("AWS_REGION", REGION.to_owned()),
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY.to_owned()),
        ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// Creates the secret `name` holding `value` on the local server, or gives it `value` as its
/// new current version (a rotation); returns its ARN.
pub async fn put_secret(name: &str, value: &str) -> String {
    let creds = Credentials::new(ACCESS_KEY, SECRET_KEY, None, None, "tests");
    let conf = aws_sdk_secretsmanager::Config::builder()
        .behavior_version(aws_sdk_secretsmanager::config::BehaviorVersion::latest())
        .region(Region::new(REGION))
        .credentials_provider(creds)
        .http_client(shared::adapters::aws::https_client())
        .endpoint_url(endpoint())
        .build();
    let client = aws_sdk_secretsmanager::Client::from_conf(conf);
    match client
        .create_secret()
        .name(name)
        .secret_string(value)
        .send()
        .await
    {
        Ok(out) => out.arn.expect("arn"),
        Err(_) => {
            let out = client
                .put_secret_value()
                .secret_id(name)
                .secret_string(value)
                .send()
                .await
                .expect("put secret value");
            out.arn.expect("arn")
        }
    }
}
