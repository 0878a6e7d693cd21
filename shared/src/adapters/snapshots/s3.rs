//! Snapshots in an S3 bucket: server-side encryption requested, presigned short-lived GETs.

use std::time::Duration;

use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::ServerSideEncryption;

use async_trait::async_trait;

use super::{check_ids, decompress, prepare, step_of};
use crate::adapters::keys::{snapshot_key, snapshot_prefix};
use crate::adapters::s3_list::{delete_keys, DeleteFailure};
use crate::ports::{Compressed, SnapshotRef, SnapshotStore, StoreError, StoreResult};

/// Snapshots in an S3 bucket.
#[derive(Debug, Clone)]
pub struct S3SnapshotStore {
    client: aws_sdk_s3::Client,
    bucket: String,
    /// Most keys listed at once ([`MAX_TASK_OBJECTS`]; smaller in tests).
    list_batch: usize,
}

impl S3SnapshotStore {
    pub fn new(client: aws_sdk_s3::Client, bucket: impl Into<String>) -> Self {
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

fn s3_err<E: aws_sdk_s3::error::ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    op: &str,
    e: aws_sdk_s3::error::SdkError<E, R>,
) -> StoreError {
    use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
    match &e {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) => {
            StoreError::Unavailable(format!("{op}: S3 unreachable"))
        }
        _ => match e.code() {
            Some(c @ ("SlowDown" | "ServiceUnavailable" | "InternalError" | "RequestTimeout")) => {
                StoreError::Unavailable(format!("{op}: {c}"))
            }
            Some(c) => StoreError::Internal(format!("{op}: {c}")),
            None => StoreError::Internal(format!("{op}: {e:?}")),
        },
    }
}

/// Creates the bucket unless it exists; `true` if it was created.
pub async fn ensure_bucket(client: &aws_sdk_s3::Client, bucket: &str) -> StoreResult<bool> {
    if client.head_bucket().bucket(bucket).send().await.is_ok() {
        return Ok(false);
    }
    client
        .create_bucket()
        .bucket(bucket)
        .send()
        .await
        .map_err(|e| s3_err("CreateBucket", e))?;
    Ok(true)
}

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
        Ok((objects.into_iter().filter_map(|o| o.key).collect(), more))
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
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(&r.key)
            .content_type("application/zstd")
            .server_side_encryption(ServerSideEncryption::Aes256)
            .body(ByteStream::from(snapshot.stored.clone()))
            .send()
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
        let out = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(snapshot_key(tenant_id, task_id, step))
            .send()
            .await;
        let out = match out {
            Ok(o) => o,
            Err(e) if e.as_service_error().is_some_and(|s| s.is_no_such_key()) => return Ok(None),
            Err(e) => return Err(s3_err("GetObject", e)),
        };
        let bytes = out
            .body
            .collect()
            .await
            .map_err(|e| StoreError::Unavailable(format!("GetObject body: {e}")))?
            .into_bytes();
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
                    DeleteFailure::Build(why) => StoreError::Internal(why),
                    DeleteFailure::Call(e) => s3_err("DeleteObjects", *e),
                    DeleteFailure::Keys(_, code) => {
                        StoreError::Unavailable(format!("DeleteObjects: {code}"))
                    }
                })?;
            n += keys.len();
            if !more {
                return Ok(n);
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
        let cfg = PresigningConfig::expires_in(Duration::from_secs(ttl_seconds.clamp(1, 3600)))
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        let req = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(snapshot_key(tenant_id, task_id, step))
            .presigned(cfg)
            .await
            .map_err(|e| s3_err("presign GetObject", e))?;
        Ok(req.uri().to_string())
    }
}
