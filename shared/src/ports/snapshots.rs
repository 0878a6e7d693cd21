//! Page snapshots kept outside the table.

use async_trait::async_trait;

use super::StoreResult;

/// A stored page snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotRef {
    pub key: String,
    /// Size before compression.
    pub bytes: usize,
    /// Size as stored (compressed).
    pub stored_bytes: usize,
}

/// Large payloads (DOM snapshots) kept outside the table, compressed, keyed
/// `snapshots/<tenant>/<task>/<step>`.
#[async_trait]
pub trait SnapshotStore: Send + Sync {
    async fn put_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        content: &[u8],
    ) -> StoreResult<SnapshotRef>;
    /// The snapshot's content, decompressed.
    async fn snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
    ) -> StoreResult<Option<Vec<u8>>>;
    /// Steps that have a snapshot, ascending.
    async fn snapshot_steps(&self, tenant_id: &str, task_id: &str) -> StoreResult<Vec<u32>>;
    /// Deletes every snapshot of the task; returns how many went.
    async fn delete_snapshots(&self, tenant_id: &str, task_id: &str) -> StoreResult<usize>;
    /// A URL that fetches the stored (compressed) snapshot for `ttl_seconds`.
    async fn presign_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        ttl_seconds: u64,
    ) -> StoreResult<String>;
}
