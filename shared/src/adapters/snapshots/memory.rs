//! Snapshots in memory (tests and `STORE=memory`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use super::{check_ids, decompress, prepare, step_of};
use crate::ports::{snapshot_key, snapshot_prefix};
use crate::ports::{Compressed, SnapshotRef, SnapshotStore, StoreResult};

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
    async fn put_compressed(
        &self,
        tenant_id: &str,
        task_id: &str,
        step: u32,
        snapshot: &Compressed,
    ) -> StoreResult<SnapshotRef> {
        let r = prepare(tenant_id, task_id, step, snapshot)?;
        self.blobs().insert(r.key.clone(), snapshot.stored.clone());
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
