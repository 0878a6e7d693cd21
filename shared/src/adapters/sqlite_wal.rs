//! The embedded store's WAL checkpoints, off the request path. SQLite would copy the log into
//! the database — and wait for the disk, 10 to 25 ms here — inside whichever commit took the
//! log past 1 000 pages, stalling that request; here a thread of its own does it, on its own
//! connection, shortly after writes. Commits still never wait for the disk (`synchronous =
//! NORMAL`), and a checkpoint still makes the database durable as SQLite's would.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use rusqlite::Connection;

/// How soon after a write the log is copied into the database.
const INTERVAL: Duration = Duration::from_millis(200);

/// Tells the checkpoint thread that there is something to copy; the thread ends (closing its
/// connection) once this is dropped.
#[derive(Debug)]
pub(super) struct Checkpoints {
    dirty: Arc<AtomicBool>,
}

impl Checkpoints {
    /// Starts the thread for the database at `path`; `None` (SQLite then checkpoints inside
    /// commits, as it always did) when it cannot.
    pub(super) fn start(path: &Path) -> Option<Self> {
        let conn = Connection::open(path)
            .and_then(|c| c.busy_timeout(Duration::from_secs(5)).map(|_| c))
            .map_err(|e| tracing::warn!(error = %e, "no checkpoint connection"))
            .ok()?;
        let dirty = Arc::new(AtomicBool::new(false));
        let watched = Arc::downgrade(&dirty);
        std::thread::Builder::new()
            .name("sqlite-checkpoints".into())
            .spawn(move || run(conn, watched))
            .map_err(|e| tracing::warn!(error = %e, "no checkpoint thread"))
            .ok()?;
        Some(Self { dirty })
    }

    /// A write was committed.
    pub(super) fn wrote(&self) {
        self.dirty.store(true, Ordering::Release);
    }
}

fn run(conn: Connection, watched: Weak<AtomicBool>) {
    loop {
        std::thread::sleep(INTERVAL);
        let Some(dirty) = watched.upgrade() else {
            return;
        };
        if dirty.swap(false, Ordering::AcqRel) {
            // PASSIVE: copies what no reader still needs, never waits for one, never blocks a
            // writer; what is left goes with the next round.
            if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                tracing::debug!(error = %e, "checkpoint failed; the next one retries");
                dirty.store(true, Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::sqlite::{SqliteTable, DB_FILE};
    use crate::adapters::table::{item_of, Cond, TableBackend};

    #[tokio::test]
    async fn the_log_reaches_the_database_file_off_the_commits() {
        let dir = tempfile::tempdir().expect("tmp");
        let table = SqliteTable::open(dir.path()).expect("open");
        for k in 0..50 {
            let item =
                item_of("P", &format!("S{k}"), &serde_json::json!({ "k": k })).expect("item");
            table.put(item, Cond::Always).await.expect("put");
        }
        // The database file alone (no log beside it) holds every write once the thread ran.
        let copy = tempfile::tempdir().expect("tmp");
        let mut rows = 0;
        for _ in 0..50 {
            std::thread::sleep(Duration::from_millis(100));
            std::fs::copy(dir.path().join(DB_FILE), copy.path().join("alone.db")).expect("copy");
            let alone = Connection::open(copy.path().join("alone.db")).expect("open");
            rows = alone
                .query_row("SELECT count(*) FROM items", [], |r| r.get::<_, i64>(0))
                .unwrap_or(0);
            if rows == 50 {
                break;
            }
        }
        assert_eq!(rows, 50, "the writes were copied into the database file");
    }

    #[test]
    fn the_thread_ends_with_its_table() {
        let dirty = Arc::new(AtomicBool::new(true));
        let conn = Connection::open_in_memory().expect("db");
        let watched = Arc::downgrade(&dirty);
        let thread = std::thread::spawn(move || run(conn, watched));
        std::thread::sleep(INTERVAL * 2);
        assert!(!dirty.load(Ordering::Acquire), "a round ran");
        drop(dirty);
        let (done, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || done.send(thread.join().is_ok()));
        assert_eq!(ended.recv_timeout(INTERVAL * 10), Ok(true));
    }
}
