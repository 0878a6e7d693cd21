//! The conformance suite against every store implementation available here.

use std::sync::Arc;

use api_tests::conformance;
use chrono::{TimeZone, Utc};
use shared::adapters::TableStore;
use shared::clock::{Clock, ManualClock};
use shared::ports::Store;

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
            .single()
            .expect("t"),
    ))
}

fn memory(clock: &Arc<ManualClock>) -> Arc<dyn Store> {
    let c: Arc<dyn Clock> = clock.clone();
    Arc::new(TableStore::memory(c).expect("memory store"))
}

fn file(clock: &Arc<ManualClock>, dir: &tempfile::TempDir) -> Arc<dyn Store> {
    let c: Arc<dyn Clock> = clock.clone();
    Arc::new(TableStore::embedded(dir.path(), c).expect("file store"))
}

macro_rules! suite {
    ($($name:ident),*) => {
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
    };
}

suite!(
    users,
    tenants,
    allowed_domains,
    revoked_tokens,
    rate_limit_counters,
    concurrent_increments,
    concurrent_user_creation
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_handles_on_one_file_see_each_others_writes() {
    // local-api and agent-admin open the same file from two processes.
    let c = clock();
    let dir = tempfile::tempdir().expect("tmp");
    let a = file(&c, &dir);
    let b = file(&c, &dir);
    conformance::concurrent_increments(a.clone(), &c).await;
    assert_eq!(b.count("race", 0).await.expect("count"), 20);
}

#[tokio::test]
async fn file_store_survives_reopening() {
    let c = clock();
    let dir = tempfile::tempdir().expect("tmp");
    let until = c.now() + chrono::Duration::hours(1);
    file(&c, &dir)
        .revoke("t", "j", until)
        .await
        .expect("revoke");
    assert!(file(&c, &dir)
        .is_revoked("t", "j", c.now())
        .await
        .expect("check"));
}
