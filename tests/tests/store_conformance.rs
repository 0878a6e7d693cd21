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
                #[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
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
    agent_trail_pages,
    recipes,
    recipes_added_once,
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

async fn sessions_indexed_before_statuses_are_moved_and_counted(dynamodb: bool) {
    // A store written before sessions were indexed by status: the index key of all of a
    // user's sessions was one partition, and there were no counts.
    use shared::adapters::keys;
    use shared::adapters::table::{Cond, Index, Update};
    use shared::domain::SessionStatus;
    use shared::ports::{SessionChanges, SessionFilter, SessionQueries, SessionStore};
    let c = clock();
    let dyn_clock: Arc<dyn Clock> = c.clone();
    let store = if dynamodb {
        let cfg = aws::fresh_resources().await;
        let backend = shared::adapters::dynamo::DynamoTable::new(aws::clients().0, &cfg.table);
        TableStore::new(Arc::new(backend), dyn_clock)
    } else {
        TableStore::memory(dyn_clock).expect("memory store")
    };
    let mut made = Vec::new();
    for k in 0..3 {
        let mut s = conformance::session("t1", &c);
        s.updated_at = c.now() + chrono::Duration::seconds(k);
        store.create_session(&s).await.expect("create");
        made.push(s);
    }
    let table = store.table();
    for s in &made {
        let update = Update {
            set: [(
                Index::Gsi1.pk().to_owned(),
                serde_json::Value::from(keys::legacy_user_sessions_pk("t1", "u1")),
            )]
            .into_iter()
            .collect(),
            ..Update::default()
        };
        table
            .update(
                &keys::tenant_pk("t1"),
                &keys::session_sk(&s.session_id),
                update,
                Cond::Always,
            )
            .await
            .expect("index as before");
    }
    table
        .delete(
            &keys::tenant_pk("t1"),
            &keys::session_counts_sk("u1"),
            Cond::Always,
        )
        .await
        .expect("no counts yet");

    let (listed, total) = store
        .list_sessions("t1", "u1", SessionFilter::default(), 10, 0)
        .await
        .expect("list");
    assert_eq!(total, 3);
    let ids: Vec<&str> = listed.iter().map(|s| s.session_id.as_str()).collect();
    let newest_first: Vec<&str> = made.iter().rev().map(|s| s.session_id.as_str()).collect();
    assert_eq!(ids, newest_first);
    let archive = SessionChanges {
        status: Some(SessionStatus::Archived),
        ..SessionChanges::default()
    };
    store
        .update_session("t1", &made[0].session_id, &archive, c.now())
        .await
        .expect("archive");
    let (_, visible) = store
        .list_sessions("t1", "u1", SessionFilter::default(), 10, 0)
        .await
        .expect("list");
    assert_eq!(visible, 2);
}

mod legacy_sessions {
    api_tests::on_both_stores!(sessions_indexed_before_statuses_are_moved_and_counted);
    use super::sessions_indexed_before_statuses_are_moved_and_counted;
}

/// A task with more snapshot objects than one listing returns loses all of them: deletion
/// lists and deletes batch after batch until none is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
async fn s3_snapshot_deletion_goes_past_one_listing() {
    use shared::adapters::snapshots::S3SnapshotStore;
    use shared::ports::SnapshotStore;
    let cfg = aws::fresh_resources().await;
    let store = S3SnapshotStore::new(aws::clients().1, &cfg.bucket).with_list_batch(2);
    for step in 0..5 {
        store
            .put_snapshot("t1", "task-1", step, b"<p>page</p>")
            .await
            .expect("put");
    }
    assert_eq!(
        store
            .snapshot_steps("t1", "task-1")
            .await
            .expect("steps")
            .len(),
        2
    );
    assert_eq!(
        store
            .delete_snapshots("t1", "task-1")
            .await
            .expect("delete"),
        5
    );
    let full = S3SnapshotStore::new(aws::clients().1, &cfg.bucket);
    assert!(full
        .snapshot_steps("t1", "task-1")
        .await
        .expect("steps")
        .is_empty());
}

/// Thirty snapshots written and read back at once through one S3 client (one connection pool,
/// answers streamed): each read returns its own page, another tenant's key finds nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
async fn thirty_parallel_snapshots_come_back_each_to_its_reader() {
    use shared::adapters::snapshots::S3SnapshotStore;
    use shared::ports::SnapshotStore;
    let cfg = aws::fresh_resources().await;
    let store = Arc::new(S3SnapshotStore::new(aws::clients().1, &cfg.bucket));
    let page = |step: u32| format!("<p>page {step}</p>").repeat(2000 + step as usize * 50);
    let puts = (0..30u32).map(|step| {
        let store = store.clone();
        async move {
            store
                .put_snapshot("t1", "task-1", step, page(step).as_bytes())
                .await
        }
    });
    for put in futures::future::join_all(puts).await {
        put.expect("put");
    }
    let reads = (0..30u32).map(|step| {
        let store = store.clone();
        async move { (step, store.snapshot("t1", "task-1", step).await) }
    });
    for (step, read) in futures::future::join_all(reads).await {
        let got = read.expect("read").expect("found");
        assert_eq!(got, page(step).into_bytes(), "step {step}");
    }
    let other = store.snapshot("t2", "task-1", 3).await.expect("read");
    assert_eq!(other, None);
}

/// A presigned snapshot URL fetches that snapshot's stored bytes with nothing but the URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
async fn a_presigned_url_fetches_its_snapshot() {
    use shared::adapters::snapshots::S3SnapshotStore;
    use shared::ports::{decompress, SnapshotStore};
    let cfg = aws::fresh_resources().await;
    let store = S3SnapshotStore::new(aws::clients().1, &cfg.bucket);
    store
        .put_snapshot("t1", "task-1", 4, b"<p>the fourth page</p>")
        .await
        .expect("put");
    let url = store
        .presign_snapshot("t1", "task-1", 4, 60)
        .await
        .expect("presign");
    assert!(url.contains("X-Amz-Expires=60"), "{url}");
    let answer = reqwest::get(&url).await.expect("fetched");
    assert_eq!(answer.status(), 200, "{url}");
    let stored = answer.bytes().await.expect("body");
    assert_eq!(
        decompress(&stored).expect("a stored snapshot"),
        b"<p>the fourth page</p>"
    );
}
