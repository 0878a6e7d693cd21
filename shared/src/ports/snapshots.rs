//! Page snapshots kept outside the table.

use std::io::Read;

use async_trait::async_trait;

use super::{StoreError, StoreResult};

/// Object key of a snapshot, the same in every snapshot store (a step record names it).
pub fn snapshot_key(tenant_id: &str, task_id: &str, step: u32) -> String {
    format!("{}{step:06}", snapshot_prefix(tenant_id, task_id))
}

/// Object-key prefix of a task's snapshots.
pub fn snapshot_prefix(tenant_id: &str, task_id: &str) -> String {
    format!("snapshots/{tenant_id}/{task_id}/")
}

/// zstd level: the fastest (0.19 ms for a 2 000-node tree against 0.25 ms at level 3 here),
/// still ~5-20x on HTML and trees.
const LEVEL: i32 = 1;
/// Largest snapshot accepted or returned, decompressed.
pub const MAX_SNAPSHOT_BYTES: usize = 16 * 1024 * 1024;

thread_local! {
    /// This thread's compression context, kept from one snapshot to the next: making one
    /// allocates and clears about a megabyte of tables (the blocking pool's idle threads end,
    /// and their contexts with them).
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// A snapshot in its stored form (zstd), so it can be compressed before it is stored and off
/// the request's path: the page of a step is compressed on the blocking pool while the step
/// goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compressed {
    /// Size before compression.
    pub raw_bytes: usize,
    pub stored: Vec<u8>,
}

impl Compressed {
    /// Compresses `content` (refused above [`MAX_SNAPSHOT_BYTES`]). CPU work: on a request's
    /// path, call it on the blocking pool.
    pub fn of(content: &[u8]) -> StoreResult<Self> {
        if content.len() > MAX_SNAPSHOT_BYTES {
            return Err(StoreError::Internal(format!(
                "snapshot of {} bytes is too large",
                content.len()
            )));
        }
        let _compressing = tracing::debug_span!("snapshot.compress").entered();
        let stored = COMPRESSOR
            .with(|kept| {
                let mut kept = kept.borrow_mut();
                let compressor = match &mut *kept {
                    Some(c) => c,
                    None => kept.insert(zstd::bulk::Compressor::new(LEVEL)?),
                };
                compressor.compress(content)
            })
            .map_err(|e| StoreError::Internal(format!("compress: {e}")))?;
        Ok(Self {
            raw_bytes: content.len(),
            stored,
        })
    }
}

/// The content of a stored (compressed) snapshot, refused if it expands beyond the limit.
pub fn decompress(stored: &[u8]) -> StoreResult<Vec<u8>> {
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(stored)
        .map_err(|e| StoreError::Internal(format!("decompress: {e}")))?
        .take(MAX_SNAPSHOT_BYTES as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| StoreError::Internal(format!("decompress: {e}")))?;
    if out.len() > MAX_SNAPSHOT_BYTES {
        return Err(StoreError::Internal(
            "snapshot expands beyond the limit".into(),
        ));
    }
    Ok(out)
}

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
    /// Stores a compressed snapshot.
    async fn put_compressed(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        snapshot: &Compressed,
    ) -> StoreResult<SnapshotRef>;
    /// Compresses `content` (here, on the caller's thread) and stores it.
    async fn put_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        content: &[u8],
    ) -> StoreResult<SnapshotRef> {
        let snapshot = Compressed::of(content)?;
        self.put_compressed(tenant_id, task_id, step, &snapshot)
            .await
    }
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
