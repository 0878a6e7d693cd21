//! What a run of the scheduled cleanup did (its answer and its metrics).

use serde::Serialize;

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupReport {
    pub expired_tasks: usize,
    pub deleted_items: usize,
    pub deleted_snapshots: usize,
    pub interrupted_tasks: usize,
    /// Tasks that could not be processed this run (left for the next one).
    pub failures: usize,
    /// The time budget ran out before the sweeps were done.
    pub incomplete: bool,
}
