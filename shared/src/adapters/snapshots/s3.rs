//! Snapshots in an S3 bucket: server-side encryption requested, presigned short-lived GETs.

use std::time::Duration;

use async_trait::async_trait;

use super::{check_ids, decompress, prepare, step_of};
use crate::adapters::s3::{Put, S3Client, S3Error};
use crate::adapters::s3_list::{delete_keys, DeleteFailure};
use crate::ports::{snapshot_key, snapshot_prefix};
use crate::ports::{Compressed, SnapshotRef, SnapshotStore, StoreError, StoreResult};

/// Snapshots in an S3 bucket.
#[derive(Debug, Clone)]
pub struct S3SnapshotStore {
    client: S3Client,
    bucket: String,
    /// Most keys listed at once ([`MAX_TASK_OBJECTS`]; smaller in tests).
    list_batch: usize,
}

impl S3SnapshotStore {
    pub fn new(client: S3Client, bucket: impl Into<String>) -> Self {
        Self {
            client,
            bucket: bucket.into(),
            list_batch: MAX_TASK_OBJECTS,
        }
    }

    /// Lists at most `n` keys at once (tests of tasks with more objects than that).
    pub fn with_list_batch(mut self, n: usize) -> Self {
        self.list_batch = n.max(1);
        self
    }
}

fn s3_err(op: &str, e: S3Error) -> StoreError {
    match &e {
        S3Error::Unreachable(_) => StoreError::Unavailable(format!("{op}: S3 unreachable")),
        _ if e.is_transient() => StoreError::Unavailable(format!("{op}: {e}")),
        _ => StoreError::Internal(format!("{op}: {e}")),
    }
}

/// Creates the bucket unless it exists; `true` if it was created.
pub async fn ensure_bucket(client: &S3Client, bucket: &str) -> StoreResult<bool> {
    if client.head_bucket(bucket).await.is_ok() {
        return Ok(false);
    }
    client
        .create_bucket(bucket)
        .await
        .map_err(|e| s3_err("CreateBucket", e))?;
    Ok(true)
}

/// Most bytes of a stored snapshot read back: the largest snapshot, compressed, with room
/// for zstd's framing of incompressible content.
const MAX_STORED_SNAPSHOT: u64 = crate::ports::MAX_SNAPSHOT_BYTES as u64 + (1 << 20);

/// Most objects one task can have in the store (a snapshot per step, and the run record).
const MAX_TASK_OBJECTS: usize = 100_000;

impl S3SnapshotStore {
    /// Keys under `prefix`, at most `list_batch`; `true` when more were left.
    async fn keys(&self, prefix: &str) -> StoreResult<(Vec<String>, bool)> {
        let (objects, more) = crate::adapters::s3_list::objects_under(
            &self.client,
            &self.bucket,
            prefix,
            self.list_batch,
        )
        .await
        .map_err(|e| s3_err("ListObjectsV2", e))?;
        Ok((objects.into_iter().map(|o| o.key).collect(), more))
    }
}

#[async_trait]
impl SnapshotStore for S3SnapshotStore {
    async fn put_compressed(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        snapshot: &Compressed,
    ) -> StoreResult<SnapshotRef> {
        let r = prepare(tenant_id, task_id, step, snapshot)?;
        let put = Put {
            content_type: Some("application/zstd"),
            ..Put::default()
        };
        self.client
            .put_object(&self.bucket, &r.key, snapshot.stored.clone(), &put)
            .await
            .map_err(|e| s3_err("PutObject", e))?;
        Ok(r)
    }

    async fn snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
    ) -> StoreResult<Option<Vec<u8>>> {
        check_ids(tenant_id, task_id)?;
        let key = snapshot_key(tenant_id, task_id, step);
        let out = match self.client.get_object(&self.bucket, &key).await {
            Ok(o) => o,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(s3_err("GetObject", e)),
        };
        let bytes = out
            .bytes(MAX_STORED_SNAPSHOT)
            .await
            .map_err(|e| StoreError::Unavailable(format!("GetObject body: {e}")))?;
        decompress(&bytes).map(Some)
    }

    async fn snapshot_steps(&self, tenant_id: &str, task_id: &str) -> StoreResult<Vec<u32>> {
        check_ids(tenant_id, task_id)?;
        let mut steps: Vec<u32> = self
            .keys(&snapshot_prefix(tenant_id, task_id))
            .await?
            .0
            .iter()
            .filter_map(|k| step_of(k))
            .collect();
        steps.sort_unstable();
        Ok(steps)
    }

    async fn delete_snapshots(&self, tenant_id: &str, task_id: &str) -> StoreResult<usize> {
        check_ids(tenant_id, task_id)?;
        let mut n = 0;
        // Listed and deleted a bounded batch at a time until none is left: a task's record
        // goes only after all of its objects have.
        loop {
            let (keys, more) = self.keys(&snapshot_prefix(tenant_id, task_id)).await?;
            delete_keys(&self.client, &self.bucket, &keys)
                .await
                .map_err(|e| match e {
                    DeleteFailure::Call(e) => s3_err("DeleteObjects", e),
                    DeleteFailure::Keys(_, code) => {
                        StoreError::Unavailable(format!("DeleteObjects: {code}"))
                    }
                })?;
            n += keys.len();
            if !more {
                return Ok(n);
            }
            if keys.is_empty() {
                return Err(StoreError::Unavailable(
                    "ListObjectsV2: more objects announced, none listed".into(),
                ));
            }
        }
    }

    async fn presign_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        ttl_seconds: u64,
    ) -> StoreResult<String> {
        check_ids(tenant_id, task_id)?;
        let ttl = Duration::from_secs(ttl_seconds.clamp(1, 3600));
        self.client
            .presign_get(&self.bucket, &snapshot_key(tenant_id, task_id, step), ttl)
            .await
            .map_err(|e| s3_err("presign GetObject", e))
    }
}
