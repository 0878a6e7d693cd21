//! Snapshot stores: page snapshots and other large payloads, zstd-compressed, keyed
//! `snapshots/<tenant>/<task>/<step>`. S3 in production (server-side encryption requested,
//! presigned short-lived GETs), a blob directory next to the embedded database locally, or
//! memory in tests. Nothing large ever goes into table items or state-machine payloads.

mod dir;
mod memory;
mod s3;

pub use dir::DirSnapshotStore;
pub use memory::MemorySnapshotStore;
pub use s3::{ensure_bucket, S3SnapshotStore};

use crate::ports::snapshot_key;
use crate::ports::{Compressed, SnapshotRef, StoreError, StoreResult};

pub use crate::ports::{decompress, MAX_SNAPSHOT_BYTES};

/// Ids become path segments and object keys: refuse anything that could escape its prefix.
pub(super) fn check_ids(tenant_id: &str, task_id: &str) -> StoreResult<()> {
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
pub(super) fn prepare(
    tenant_id: &str,
    task_id: &str,
    step: u32,
    snapshot: &Compressed,
) -> StoreResult<SnapshotRef> {
    check_ids(tenant_id, task_id)?;
    Ok(SnapshotRef {
        key: snapshot_key(tenant_id, task_id, step),
        bytes: snapshot.raw_bytes,
        stored_bytes: snapshot.stored.len(),
    })
}

pub(super) fn step_of(key: &str) -> Option<u32> {
    key.rsplit('/').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_round_trips_and_shrinks_html() {
        let html = "<div class=\"item\"><a href=\"/p/1\">Product</a></div>".repeat(2000);
        let c = Compressed::of(html.as_bytes()).expect("compress").stored;
        assert!(c.len() * 10 < html.len(), "{} vs {}", c.len(), html.len());
        assert_eq!(decompress(&c).expect("decompress"), html.as_bytes());
        // The thread's context is kept: the next snapshots come out whole and the same as a
        // context of their own makes them.
        for page in [b"{\"i\":\"1\"}".as_slice(), b"", html.as_bytes()] {
            let again = Compressed::of(page).expect("compress").stored;
            assert_eq!(decompress(&again).expect("decompress"), page);
            assert_eq!(again, zstd::bulk::compress(page, 1).expect("zstd"));
        }
    }

    #[test]
    fn ids_that_could_escape_the_prefix_are_refused() {
        for (t, k) in [("../x", "t"), ("t", "a/b"), ("", "t"), ("t", "..")] {
            assert!(check_ids(t, k).is_err(), "{t} {k}");
        }
        assert!(check_ids("acme", "3f2b-11").is_ok());
    }
}
