//! The embedded store's WAL checkpoints, off the request path. SQLite would copy the log into
//! the database — and wait for the disk, 10 to 25 ms here — inside whichever commit took the
//! log past 1 000 pages, stalling that request; here a thread of its own does it, on its own
//! connection, shortly after writes. Commits still never wait for the disk (`synchronous =
//! NORMAL`), and a checkpoint still makes the database durable as SQLite's would:
//! - a checkpoint that could copy only part of the log (a reader still needed the rest) is
//!   tried again until the whole log is in the database;
//! - when the table is dropped the thread runs a last checkpoint and ends, so the connection
//!   closed last checkpoints and removes the log as SQLite always does;
//! - a checkpoint that keeps failing is reported, and after [`MAX_FAILURES`] in a row the
//!   commits checkpoint again themselves ([`Checkpoints::wrote`] says when), so the log never
//!   grows unseen.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

/// How soon after a write the log is copied into the database.
const INTERVAL: Duration = Duration::from_millis(200);

/// Failed checkpoints in a row (one per [`INTERVAL`]) before the thread hands checkpoints back
/// to the commits.
const MAX_FAILURES: u32 = 25;

#[derive(Debug, Default)]
struct State {
    /// A write was committed since the last checkpoint began.
    dirty: bool,
    /// The table is being dropped.
    closing: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// The thread stopped after [`MAX_FAILURES`] failures.
    gave_up: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The checkpoint thread's handle: tells it about writes, and stops it (after a last
/// checkpoint) when dropped.
#[derive(Debug)]
pub(super) struct Checkpoints {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// The commits were told to checkpoint themselves.
    handed_back: AtomicBool,
}

impl Checkpoints {
    /// Starts the thread for the database at `path`; `None` (SQLite then checkpoints inside
    /// commits, as it always did) when it cannot.
    pub(super) fn start(path: &Path) -> Option<Self> {
        let conn = Connection::open(path)
            .and_then(|c| c.busy_timeout(Duration::from_secs(5)).map(|_| c))
            .map_err(|e| tracing::warn!(error = %e, "no checkpoint connection"))
            .ok()?;
        Self::spawn(move || checkpoint(&conn))
    }

    /// Starts the thread over `round`, one checkpoint.
    fn spawn(round: impl FnMut() -> Outcome + Send + 'static) -> Option<Self> {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("sqlite-checkpoints".into())
            .spawn(move || run(&theirs, round))
            .map_err(|e| tracing::warn!(error = %e, "no checkpoint thread"))
            .ok()?;
        Some(Self {
            shared,
            thread: Some(thread),
            handed_back: AtomicBool::new(false),
        })
    }

    /// A write was committed. `true` when the thread has given up and SQLite's own
    /// checkpoints are not back on yet: the caller turns them on, then says so
    /// ([`Checkpoints::handed_back`]).
    pub(super) fn wrote(&self) -> bool {
        if self.shared.gave_up.load(Ordering::Acquire) {
            return !self.handed_back.load(Ordering::Acquire);
        }
        // Only the first write since the last checkpoint began wakes the thread: the writes
        // after it (a step makes several) cost no system call and no thread switch.
        let mut s = self.shared.lock();
        if !s.dirty {
            s.dirty = true;
            self.shared.wake.notify_one();
        }
        false
    }
}

impl Checkpoints {
    /// SQLite checkpoints inside commits again.
    pub(super) fn handed_back(&self) {
        self.handed_back.store(true, Ordering::Release);
    }
}

impl Drop for Checkpoints {
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What one checkpoint did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The whole log is in the database.
    Whole,
    /// Part of the log is still to be copied (a reader needs it).
    Partial,
    Failed,
}

/// What the thread does after a checkpoint, given the failures in a row before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Wait,
    Retry,
    GiveUp,
}

fn next(outcome: Outcome, failures: &mut u32) -> Next {
    match outcome {
        Outcome::Whole => {
            *failures = 0;
            Next::Wait
        }
        Outcome::Partial => {
            *failures = 0;
            Next::Retry
        }
        Outcome::Failed => {
            *failures += 1;
            if *failures >= MAX_FAILURES {
                Next::GiveUp
            } else {
                Next::Retry
            }
        }
    }
}

/// One PASSIVE checkpoint: copies what no reader still needs, never waits for one, never
/// blocks a writer.
fn checkpoint(conn: &Connection) -> Outcome {
    let row = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    });
    match row {
        // (blocked, frames in the log, frames copied); -1 when the database is not in WAL mode.
        Ok((0, log, copied)) if copied >= log => Outcome::Whole,
        Ok(_) => Outcome::Partial,
        Err(e) => {
            tracing::debug!(error = %e, "checkpoint failed");
            Outcome::Failed
        }
    }
}

/// Waits for a write (then [`INTERVAL`], so writes close together share a checkpoint; they do
/// not wake the thread meanwhile) or for the end; `true` at the end. Clears the write mark.
fn wait(shared: &Shared) -> bool {
    let mut s = shared.lock();
    while !s.dirty && !s.closing {
        s = shared.wake.wait(s).unwrap_or_else(|p| p.into_inner());
    }
    let until = Instant::now() + INTERVAL;
    while !s.closing {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        s = match shared.wake.wait_timeout(s, left) {
            Ok((s, _)) => s,
            Err(p) => p.into_inner().0,
        };
    }
    s.dirty = false;
    s.closing
}

/// Marks the thread as given up if it ends by a panic (the commits then checkpoint).
struct GiveUpOnPanic<'a>(&'a Shared);

impl Drop for GiveUpOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.gave_up.store(true, Ordering::Release);
        }
    }
}

fn run(shared: &Shared, mut round: impl FnMut() -> Outcome) {
    let _panic = GiveUpOnPanic(shared);
    let mut failures = 0;
    loop {
        let closing = wait(shared);
        let outcome = round();
        match next(outcome, &mut failures) {
            Next::Wait => {}
            Next::Retry => shared.lock().dirty = true,
            Next::GiveUp => {
                tracing::warn!(
                    failures,
                    "WAL checkpoints keep failing; commits checkpoint the log themselves"
                );
                shared.gave_up.store(true, Ordering::Release);
                return;
            }
        }
        if outcome == Outcome::Failed && failures == 1 {
            tracing::warn!("a WAL checkpoint failed; it is tried again");
        }
        if closing {
            return;
        }
    }
}

#[cfg(test)]
#[path = "sqlite_wal_tests.rs"]
mod tests;
