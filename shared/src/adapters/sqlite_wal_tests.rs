use std::sync::atomic::AtomicU32;

use super::*;
use crate::adapters::sqlite::{SqliteTable, DB_FILE};
use crate::adapters::table::{item_of, Cond, TableBackend};

async fn put_rows(table: &SqliteTable, n: usize) {
    for k in 0..n {
        let item = item_of("P", &format!("S{k}"), &serde_json::json!({ "k": k })).expect("item");
        table.put(item, Cond::Always).await.expect("put");
    }
}

/// The rows a copy of the database file holds without its log beside it.
fn rows_in_file_alone(dir: &Path) -> i64 {
    let copy = tempfile::tempdir().expect("tmp");
    std::fs::copy(dir.join(DB_FILE), copy.path().join("alone.db")).expect("copy");
    let alone = Connection::open(copy.path().join("alone.db")).expect("open");
    alone
        .query_row("SELECT count(*) FROM items", [], |r| r.get::<_, i64>(0))
        .unwrap_or(0)
}

/// Polls the database file until it holds `n` rows on its own (at most 5 s).
fn file_reaches(dir: &Path, n: i64) -> i64 {
    let mut rows = 0;
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(100));
        rows = rows_in_file_alone(dir);
        if rows == n {
            break;
        }
    }
    rows
}

#[tokio::test]
async fn the_log_reaches_the_database_file_off_the_commits() {
    let dir = tempfile::tempdir().expect("tmp");
    let table = SqliteTable::open(dir.path()).expect("open");
    put_rows(&table, 50).await;
    assert_eq!(file_reaches(dir.path(), 50), 50, "the writes were copied");
}

#[tokio::test]
async fn a_checkpoint_a_reader_cut_short_is_finished_once_the_reader_is_gone() {
    let dir = tempfile::tempdir().expect("tmp");
    let table = SqliteTable::open(dir.path()).expect("open");
    // A reader whose snapshot predates the writes: no checkpoint may copy past it.
    let reader = Connection::open(dir.path().join(DB_FILE)).expect("reader");
    reader.execute_batch("BEGIN").expect("begin");
    let before: i64 = reader
        .query_row("SELECT count(*) FROM items", [], |r| r.get(0))
        .expect("read");
    put_rows(&table, 50).await;
    std::thread::sleep(INTERVAL * 3);
    assert_eq!(rows_in_file_alone(dir.path()), before, "the reader held it");
    reader.execute_batch("COMMIT").expect("end the read");
    // No write follows: the thread finishes what it could not copy before.
    assert_eq!(file_reaches(dir.path(), 50), 50, "the rest was copied");
}

#[tokio::test]
async fn a_dropped_table_leaves_every_write_in_the_file_and_no_log() {
    let dir = tempfile::tempdir().expect("tmp");
    let table = SqliteTable::open(dir.path()).expect("open");
    // The thread's connection has checkpointed (it holds the log open too)...
    put_rows(&table, 20).await;
    assert_eq!(file_reaches(dir.path(), 20), 20);
    // ...and writes follow that no checkpoint has copied yet.
    for k in 20..40 {
        let item = item_of("Q", &format!("S{k}"), &serde_json::json!({ "k": k })).expect("item");
        table.put(item, Cond::Always).await.expect("put");
    }
    drop(table);
    let log = dir.path().join(format!("{DB_FILE}-wal"));
    assert!(!log.exists(), "the connection closed last removed the log");
    assert_eq!(rows_in_file_alone(dir.path()), 40);
}

#[test]
fn failures_in_a_row_give_up_and_anything_else_starts_the_count_again() {
    let mut failures = 0;
    for _ in 1..MAX_FAILURES {
        assert_eq!(next(Outcome::Failed, &mut failures), Next::Retry);
    }
    assert_eq!(next(Outcome::Partial, &mut failures), Next::Retry);
    assert_eq!(failures, 0);
    for _ in 1..MAX_FAILURES {
        next(Outcome::Failed, &mut failures);
    }
    assert_eq!(next(Outcome::Whole, &mut failures), Next::Wait);
    for _ in 1..MAX_FAILURES {
        next(Outcome::Failed, &mut failures);
    }
    assert_eq!(next(Outcome::Failed, &mut failures), Next::GiveUp);
}

/// A checkpoint thread whose every round ends in `outcome`, and its count of rounds.
fn counting(outcome: Outcome) -> (Checkpoints, Arc<AtomicU32>) {
    let rounds = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&rounds);
    let c = Checkpoints::spawn(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        outcome
    })
    .expect("thread");
    (c, rounds)
}

/// Waits (at most `rounds` intervals) for the thread to give up.
fn until_given_up(c: &Checkpoints, rounds: u32) {
    let until = Instant::now() + INTERVAL * rounds;
    while !c.shared.gave_up.load(Ordering::Acquire) && Instant::now() < until {
        std::thread::sleep(INTERVAL);
    }
}

#[test]
fn a_thread_whose_checkpoints_keep_failing_hands_them_back_once() {
    let (c, rounds) = counting(Outcome::Failed);
    assert!(!c.wrote(), "the thread is still trying");
    until_given_up(&c, MAX_FAILURES + 25);
    assert_eq!(
        rounds.load(Ordering::Relaxed),
        MAX_FAILURES,
        "retried, then stopped"
    );
    assert!(c.wrote(), "the commits are told");
    assert!(c.wrote(), "until they say their checkpoints are on");
    c.handed_back();
    assert!(!c.wrote());
}

#[test]
fn a_thread_that_panics_hands_checkpoints_back_too() {
    let c = Checkpoints::spawn(|| panic!("a checkpoint that panics")).expect("thread");
    assert!(!c.wrote());
    until_given_up(&c, 50);
    assert!(c.wrote(), "the commits are told");
}

#[test]
fn the_thread_runs_a_last_checkpoint_and_ends_with_its_table() {
    let (c, rounds) = counting(Outcome::Whole);
    // Idle: no write, no checkpoint.
    std::thread::sleep(INTERVAL * 2);
    assert_eq!(rounds.load(Ordering::Relaxed), 0);
    c.wrote();
    drop(c);
    assert_eq!(rounds.load(Ordering::Relaxed), 1, "a last checkpoint ran");
}
