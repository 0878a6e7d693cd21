//! Where state lives (`STORE` and the DynamoDB/S3 settings) and how long task data is kept.

use std::path::PathBuf;

use super::{parse_num, ConfigError};

/// Where state lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// The embedded single-file database (and a blob directory for snapshots) under a data
    /// directory; survives restarts.
    Embedded { data_dir: PathBuf },
    /// Everything in memory; gone when the process ends (tests).
    Memory,
    /// DynamoDB (single table) and S3 (snapshots).
    DynamoDb(AwsStoreConfig),
}

/// DynamoDB/S3 settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsStoreConfig {
    pub table: String,
    pub bucket: String,
    /// Endpoint override for both services (a local DynamoDB/S3-compatible server); S3 then
    /// uses path-style addressing.
    pub endpoint: Option<String>,
    /// Region; when unset the SDK's usual sources decide (Lambda sets `AWS_REGION`).
    pub region: Option<String>,
}

/// How long task data is kept, and when an untouched task counts as abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub task_seconds: i64,
    pub idle_seconds: i64,
}

impl StoreConfig {
    /// Reads `STORE`, `DATA_DIR`, `TABLE_NAME`, `SNAPSHOT_BUCKET`, `AWS_ENDPOINT_URL` and
    /// `AWS_REGION` (tools that need only the store use this alone).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        match get("STORE").as_deref().unwrap_or("embedded") {
            "embedded" => Ok(StoreConfig::Embedded {
                data_dir: PathBuf::from(get("DATA_DIR").unwrap_or_else(|| ".data".into())),
            }),
            "memory" => Ok(StoreConfig::Memory),
            "dynamodb" => Ok(StoreConfig::DynamoDb(AwsStoreConfig {
                table: get("TABLE_NAME").ok_or(ConfigError::Missing(
                    "TABLE_NAME",
                    "STORE=dynamodb needs the table name",
                ))?,
                bucket: get("SNAPSHOT_BUCKET").ok_or(ConfigError::Missing(
                    "SNAPSHOT_BUCKET",
                    "STORE=dynamodb needs the snapshot bucket",
                ))?,
                endpoint: get("AWS_ENDPOINT_URL"),
                region: get("AWS_REGION"),
            })),
            other => Err(ConfigError::Invalid(
                "STORE",
                format!("`{other}` is not one of: embedded, memory, dynamodb"),
            )),
        }
    }
}

impl Retention {
    /// Reads `TASK_RETENTION_HOURS` and `TASK_IDLE_MINUTES`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let hours: i64 = parse_num(&get, "TASK_RETENTION_HOURS", 168, 1, 24 * 365)?;
        let minutes: i64 = parse_num(&get, "TASK_IDLE_MINUTES", 30, 1, 24 * 60 * 30)?;
        Ok(Self {
            task_seconds: hours * 3600,
            idle_seconds: minutes * 60,
        })
    }
}
