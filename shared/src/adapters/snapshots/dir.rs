//! Snapshots as files under a directory (the embedded store's companion).

use std::path::{Path, PathBuf};

use async_trait::async_trait;

use super::{check_ids, decompress, prepare};
use crate::ports::{snapshot_key, snapshot_prefix};
use crate::ports::{Compressed, SnapshotRef, SnapshotStore, StoreError, StoreResult};

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
    async fn put_compressed(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        snapshot: &Compressed,
    ) -> StoreResult<SnapshotRef> {
        let r = prepare(tenant_id, task_id, step, snapshot)?;
        let path = self.path(&r.key);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io_err)?;
        }
        // Write then rename, so a reader never sees half a snapshot.
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, &snapshot.stored).map_err(io_err)?;
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
