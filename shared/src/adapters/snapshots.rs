//! Snapshot stores: page snapshots and other large payloads, zstd-compressed, keyed
//! `snapshots/<tenant>/<task>/<step>`. S3 in production (server-side encryption requested,
//! presigned short-lived GETs), a blob directory next to the embedded database locally, or
//! memory in tests. Nothing large ever goes into table items or state-machine payloads.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{Delete, ObjectIdentifier, ServerSideEncryption};

use super::keys::{snapshot_key, snapshot_prefix};
use crate::ports::{SnapshotRef, SnapshotStore, StoreError, StoreResult};

/// zstd level: fast to compress on the request path, still ~5-10x on HTML.
const LEVEL: i32 = 3;
/// Largest snapshot accepted or returned, decompressed.
pub const MAX_SNAPSHOT_BYTES: usize = 16 * 1024 * 1024;

pub fn compress(content: &[u8]) -> StoreResult<Vec<u8>> {
    if content.len() > MAX_SNAPSHOT_BYTES {
        return Err(StoreError::Internal(format!(
            "snapshot of {} bytes is too large",
            content.len()
        )));
    }
    zstd::bulk::compress(content, LEVEL).map_err(|e| StoreError::Internal(format!("compress: {e}")))
}

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

/// Ids become path segments and object keys: refuse anything that could escape its prefix.
fn check_ids(tenant_id: &str, task_id: &str) -> StoreResult<()> {
    let ok = |s: &str| {
        !s.is_empty()
            && s.len() <= 128
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    if ok(tenant_id) && ok(task_id) {
        Ok(())
    } else {
        Err(StoreError::Internal(
            "snapshot ids must be [A-Za-z0-9_-]".into(),
        ))
    }
}

/// What every store does before writing: check the ids, name the object, compress.
fn prepare(
    tenant_id: &str,
    task_id: &str,
    step: u32,
    content: &[u8],
) -> StoreResult<(SnapshotRef, Vec<u8>)> {
    check_ids(tenant_id, task_id)?;
    let stored = compress(content)?;
    let r = SnapshotRef {
        key: snapshot_key(tenant_id, task_id, step),
        bytes: content.len(),
        stored_bytes: stored.len(),
    };
    Ok((r, stored))
}

fn step_of(key: &str) -> Option<u32> {
    key.rsplit('/').next()?.parse().ok()
}

// ------------------------------------------------------------------ blob directory

/// Snapshots as files under a directory (the embedded store's companion).
#[derive(Debug)]
pub struct DirSnapshotStore {
    root: PathBuf,
}

impl DirSnapshotStore {
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
        }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }
}

fn io_err(e: std::io::Error) -> StoreError {
    StoreError::Internal(format!("blob directory: {e}"))
}

#[async_trait]
impl SnapshotStore for DirSnapshotStore {
    async fn put_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        content: &[u8],
    ) -> StoreResult<SnapshotRef> {
        let (r, stored) = prepare(tenant_id, task_id, step, content)?;
        let path = self.path(&r.key);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io_err)?;
        }
        // Write then rename, so a reader never sees half a snapshot.
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, &stored).map_err(io_err)?;
        std::fs::rename(&tmp, &path).map_err(io_err)?;
        Ok(r)
    }

    async fn snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
    ) -> StoreResult<Option<Vec<u8>>> {
        check_ids(tenant_id, task_id)?;
        match std::fs::read(self.path(&snapshot_key(tenant_id, task_id, step))) {
            Ok(bytes) => decompress(&bytes).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(e)),
        }
    }

    async fn snapshot_steps(&self, tenant_id: &str, task_id: &str) -> StoreResult<Vec<u32>> {
        check_ids(tenant_id, task_id)?;
        let dir = self.path(&snapshot_prefix(tenant_id, task_id));
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(e)),
        };
        let mut steps: Vec<u32> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
            .collect();
        steps.sort_unstable();
        Ok(steps)
    }

    async fn delete_snapshots(&self, tenant_id: &str, task_id: &str) -> StoreResult<usize> {
        let n = self.snapshot_steps(tenant_id, task_id).await?.len();
        match std::fs::remove_dir_all(self.path(&snapshot_prefix(tenant_id, task_id))) {
            Ok(()) => Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(io_err(e)),
        }
    }

    async fn presign_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        _ttl_seconds: u64,
    ) -> StoreResult<String> {
        check_ids(tenant_id, task_id)?;
        let path = self.path(&snapshot_key(tenant_id, task_id, step));
        let abs = std::path::absolute(&path).map_err(io_err)?;
        // Local files need no signature: only this machine can read them.
        Ok(format!("file://{}", abs.display()))
    }
}

// ------------------------------------------------------------------ memory

/// Snapshots in memory (tests and `STORE=memory`).
#[derive(Debug, Default)]
pub struct MemorySnapshotStore {
    blobs: Mutex<BTreeMap<String, Vec<u8>>>,
}

impl MemorySnapshotStore {
    fn blobs(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.blobs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl SnapshotStore for MemorySnapshotStore {
    async fn put_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        content: &[u8],
    ) -> StoreResult<SnapshotRef> {
        let (r, stored) = prepare(tenant_id, task_id, step, content)?;
        self.blobs().insert(r.key.clone(), stored);
        Ok(r)
    }

    async fn snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
    ) -> StoreResult<Option<Vec<u8>>> {
        check_ids(tenant_id, task_id)?;
        let stored = self
            .blobs()
            .get(&snapshot_key(tenant_id, task_id, step))
            .cloned();
        stored.map(|s| decompress(&s)).transpose()
    }

    async fn snapshot_steps(&self, tenant_id: &str, task_id: &str) -> StoreResult<Vec<u32>> {
        check_ids(tenant_id, task_id)?;
        let prefix = snapshot_prefix(tenant_id, task_id);
        Ok(self
            .blobs()
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter_map(|(k, _)| step_of(k))
            .collect())
    }

    async fn delete_snapshots(&self, tenant_id: &str, task_id: &str) -> StoreResult<usize> {
        check_ids(tenant_id, task_id)?;
        let prefix = snapshot_prefix(tenant_id, task_id);
        let mut blobs = self.blobs();
        let before = blobs.len();
        blobs.retain(|k, _| !k.starts_with(&prefix));
        Ok(before - blobs.len())
    }

    async fn presign_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        _ttl_seconds: u64,
    ) -> StoreResult<String> {
        check_ids(tenant_id, task_id)?;
        Ok(format!(
            "memory://{}",
            snapshot_key(tenant_id, task_id, step)
        ))
    }
}

// ------------------------------------------------------------------ S3

/// Snapshots in an S3 bucket.
#[derive(Debug, Clone)]
pub struct S3SnapshotStore {
    client: aws_sdk_s3::Client,
    bucket: String,
}

impl S3SnapshotStore {
    pub fn new(client: aws_sdk_s3::Client, bucket: impl Into<String>) -> Self {
        Self {
            client,
            bucket: bucket.into(),
        }
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

impl S3SnapshotStore {
    async fn keys(&self, prefix: &str) -> StoreResult<Vec<String>> {
        let mut keys = Vec::new();
        let mut token = None;
        loop {
            let out = self
                .client
                .list_objects_v2()
                .bucket(&self.bucket)
                .prefix(prefix)
                .set_continuation_token(token.take())
                .send()
                .await
                .map_err(|e| s3_err("ListObjectsV2", e))?;
            keys.extend(
                out.contents
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|o| o.key),
            );
            match out.next_continuation_token {
                Some(t) if out.is_truncated == Some(true) => token = Some(t),
                _ => return Ok(keys),
            }
        }
    }
}

#[async_trait]
impl SnapshotStore for S3SnapshotStore {
    async fn put_snapshot(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        content: &[u8],
    ) -> StoreResult<SnapshotRef> {
        let (r, stored) = prepare(tenant_id, task_id, step, content)?;
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(&r.key)
            .content_type("application/zstd")
            .server_side_encryption(ServerSideEncryption::Aes256)
            .body(ByteStream::from(stored))
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
            .iter()
            .filter_map(|k| step_of(k))
            .collect();
        steps.sort_unstable();
        Ok(steps)
    }

    async fn delete_snapshots(&self, tenant_id: &str, task_id: &str) -> StoreResult<usize> {
        check_ids(tenant_id, task_id)?;
        let keys = self.keys(&snapshot_prefix(tenant_id, task_id)).await?;
        let n = keys.len();
        // DeleteObjects takes at most 1000 keys.
        for chunk in keys.chunks(1000) {
            let objects = chunk
                .iter()
                .map(|k| {
                    ObjectIdentifier::builder()
                        .key(k)
                        .build()
                        .map_err(|e| StoreError::Internal(e.to_string()))
                })
                .collect::<StoreResult<Vec<_>>>()?;
            let delete = Delete::builder()
                .set_objects(Some(objects))
                .quiet(true)
                .build()
                .map_err(|e| StoreError::Internal(e.to_string()))?;
            let out = self
                .client
                .delete_objects()
                .bucket(&self.bucket)
                .delete(delete)
                .send()
                .await
                .map_err(|e| s3_err("DeleteObjects", e))?;
            if let Some(err) = out.errors.as_ref().and_then(|e| e.first()) {
                return Err(StoreError::Unavailable(format!(
                    "DeleteObjects: {:?}",
                    err.code
                )));
            }
        }
        Ok(n)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_round_trips_and_shrinks_html() {
        let html = "<div class=\"item\"><a href=\"/p/1\">Product</a></div>".repeat(2000);
        let c = compress(html.as_bytes()).expect("compress");
        assert!(c.len() * 10 < html.len(), "{} vs {}", c.len(), html.len());
        assert_eq!(decompress(&c).expect("decompress"), html.as_bytes());
    }

    #[test]
    fn ids_that_could_escape_the_prefix_are_refused() {
        for (t, k) in [("../x", "t"), ("t", "a/b"), ("", "t"), ("t", "..")] {
            assert!(check_ids(t, k).is_err(), "{t} {k}");
        }
        assert!(check_ids("acme", "3f2b-11").is_ok());
    }
}
