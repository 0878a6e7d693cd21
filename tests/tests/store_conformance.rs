//! The conformance suite against every store implementation: embedded in memory, embedded on
//! file, and DynamoDB + S3 on the local compatible server started by `scripts/test`.

use std::sync::Arc;

use api_tests::{aws, conformance};
use chrono::{TimeZone, Utc};
use shared::adapters::snapshots::{DirSnapshotStore, MemorySnapshotStore};
use shared::adapters::TableStore;
use shared::clock::{Clock, ManualClock};
use shared::context::Stores;

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
            .single()
            .expect("t"),
    ))
}

fn memory(clock: &Arc<ManualClock>) -> Stores {
    let c: Arc<dyn Clock> = clock.clone();
    Stores {
        store: Arc::new(TableStore::memory(c).expect("memory store")),
        snapshots: Arc::new(MemorySnapshotStore::default()),
        s3: None,
    }
}

fn file(clock: &Arc<ManualClock>, dir: &tempfile::TempDir) -> Stores {
    let c: Arc<dyn Clock> = clock.clone();
    Stores {
        store: Arc::new(TableStore::embedded(dir.path(), c).expect("file store")),
        snapshots: Arc::new(DirSnapshotStore::new(&dir.path().join("blobs"))),
        s3: None,
    }
}

async fn dynamodb(clock: &Arc<ManualClock>) -> Stores {
    aws::stores(clock.clone()).await.0
}

macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        mod memory_store {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    let c = clock();
                    conformance::$name(memory(&c), &c).await;
                }
            )*
        }
        mod file_store {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    let c = clock();
                    let dir = tempfile::tempdir().expect("tmp");
                    conformance::$name(file(&c, &dir), &c).await;
                }
            )*
        }
        mod dynamodb_store {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    let c = clock();
                    conformance::$name(dynamodb(&c).await, &c).await;
                }
            )*
        }
    };
}

suite!(
    users,
    tenants,
    allowed_domains,
    revoked_tokens,
    rate_limit_counters,
    concurrent_increments,
    concurrent_user_creation,
    tasks,
    task_leases,
    steps,
    concurrent_step_append,
    sweeps,
    sessions_and_messages,
    message_pages,
    session_ownership,
    concurrent_message_append,
    snapshots,
    task_deletion,
    cleanup,
    task_step_recording,
    message_batches,
    idempotency_keys,
    session_queries,
    session_counts,
    preferences_and_logs,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_handles_on_one_file_see_each_others_writes() {
    // local-api and agent-admin open the same file from two processes.
    let c = clock();
    let dir = tempfile::tempdir().expect("tmp");
    let a = file(&c, &dir);
    let b = file(&c, &dir);
    conformance::concurrent_increments(a, &c).await;
    assert_eq!(b.store.count("race", 0).await.expect("count"), 30);
    assert_eq!(b.store.count("limited", 0).await.expect("count"), 5);
}

#[tokio::test]
async fn file_store_survives_reopening() {
    let c = clock();
    let dir = tempfile::tempdir().expect("tmp");
    let until = c.now() + chrono::Duration::hours(1);
    file(&c, &dir)
        .store
        .revoke("t", "j", until)
        .await
        .expect("revoke");
    assert!(file(&c, &dir)
        .store
        .is_revoked("t", "j", c.now())
        .await
        .expect("check"));
}
