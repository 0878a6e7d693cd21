//! Per-user records: idempotency keys, preferences, debug logs.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;

/// State of an idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub enum Reservation {
    /// First use (or the earlier claim lapsed): the caller now owns the key.
    New,
    /// Another request with the key and the same body is still running.
    Pending,
    /// A request with the key and the same body completed with this response.
    Done(serde_json::Value),
    /// The key was used with a different request body.
    Mismatch,
}

/// A request's claim on an idempotency key.
#[derive(Debug, Clone, Copy)]
pub struct KeyClaim<'a> {
    /// SHA-256 of the request body: the key answers only requests with this body.
    pub request_hash: &'a str,
    /// Who holds the claim (the request id): only the holder completes or abandons it.
    pub holder: &'a str,
    /// When the claim lapses if the request never completes.
    pub until: DateTime<Utc>,
}

/// Idempotency keys of retried requests, per tenant and user. A claim lives only as long as
/// a request can run (a request that died frees its key soon); a completed key remembers its
/// response for longer. Each key remembers the hash of the request body that claimed it.
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims `key`, or reports what happened to it.
    async fn reserve(
        &self,
        tenant_id: &str,
        user_id: &str,
        key: &str,
        claim: &KeyClaim<'_>,
    ) -> StoreResult<Reservation>;
    /// Stores the response of a key `holder` claimed, kept until `keep_until` (nothing happens
    /// when the claim lapsed and another request holds the key now).
    async fn complete(
        &self,
        tenant_id: &str,
        user_id: &str,
        key: &str,
        holder: &str,
        response: &serde_json::Value,
        keep_until: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Releases a key `holder` claimed after a failure, so a retry runs again (another
    /// request's claim on it is left alone).
    async fn abandon(
        &self,
        tenant_id: &str,
        user_id: &str,
        key: &str,
        holder: &str,
    ) -> StoreResult<()>;
}

/// A user's stored preferences.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPreferences {
    pub preferences: serde_json::Map<String, serde_json::Value>,
    pub synced_at: DateTime<Utc>,
}

/// Preferences per tenant and user.
#[async_trait]
pub trait PreferencesStore: Send + Sync {
    async fn preferences(
        &self,
        tenant_id: &str,
        user_id: &str,
    ) -> StoreResult<Option<StoredPreferences>>;
    async fn save_preferences(
        &self,
        tenant_id: &str,
        user_id: &str,
        preferences: &serde_json::Map<String, serde_json::Value>,
        now: DateTime<Utc>,
    ) -> StoreResult<StoredPreferences>;
}

/// One debug log entry.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DebugLog {
    pub id: String,
    pub tenant_id: String,
    /// Whose request wrote it: logs are read per user (they can quote what the user did).
    #[serde(default)]
    pub user_id: String,
    #[serde(default)]
    pub task_id: Option<String>,
    pub log_type: String,
    pub message: String,
    #[serde(default)]
    pub data: Option<serde_json::Value>,
    pub timestamp: DateTime<Utc>,
    pub expires_at: i64,
}

/// Debug logs per tenant and user (kept until they expire).
#[async_trait]
pub trait DebugLogStore: Send + Sync {
    async fn append_log(&self, log: &DebugLog) -> StoreResult<()>;
    /// One user's logs, newest first, filtered.
    async fn logs(
        &self,
        tenant_id: &str,
        user_id: &str,
        task_id: Option<&str>,
        log_type: Option<&str>,
        since: Option<DateTime<Utc>>,
        limit: usize,
    ) -> StoreResult<Vec<DebugLog>>;
}
