//! The scheduled cleanup: deletes tasks whose retention ended (with their steps, messages
//! and snapshots) and marks tasks nobody touched for too long `interrupted`. Idempotent and
//! safe to run twice at once: deletes of what is gone are no-ops and the interrupt is a
//! conditional write.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use chrono::Duration as ChronoDuration;
use futures::stream::{self, StreamExt};
use serde::Serialize;

use crate::clock::Clock;
use crate::config::Retention;
use crate::ports::{SnapshotStore, Store, StoreResult};

/// Tasks fetched per sweep page.
const PAGE: usize = 100;
/// Tasks processed at once (each takes a few sequential store calls).
const CONCURRENCY: usize = 8;

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

/// Runs both sweeps within `budget`.
pub async fn run(
    store: &dyn Store,
    snapshots: &dyn SnapshotStore,
    clock: &dyn Clock,
    retention: Retention,
    budget: Duration,
) -> StoreResult<CleanupReport> {
    let started = Instant::now();
    let mut report = CleanupReport::default();
    let now = clock.now();

    let mut seen = HashSet::new();
    loop {
        if started.elapsed() > budget {
            report.incomplete = true;
            break;
        }
        let page = store.expired_tasks(now, PAGE).await?;
        let fresh: Vec<_> = page
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .collect();
        if fresh.is_empty() {
            break;
        }
        let outcomes: Vec<_> = stream::iter(fresh)
            .map(|task| async move {
                // Snapshots first: if the run dies after this, the task is still found next time.
                let outcome = async {
                    let snaps = snapshots
                        .delete_snapshots(&task.tenant_id, &task.task_id)
                        .await?;
                    let items = store.delete_task(&task).await?;
                    StoreResult::Ok((snaps, items))
                }
                .await;
                (task, outcome)
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        for (task, outcome) in outcomes {
            match outcome {
                Ok((snaps, items)) => {
                    report.expired_tasks += 1;
                    report.deleted_snapshots += snaps;
                    report.deleted_items += items;
                }
                Err(e) => {
                    report.failures += 1;
                    tracing::warn!(tenant = %task.tenant_id, task = %task.task_id, error = %e, "could not delete expired task");
                }
            }
        }
    }

    let idle_before = now - ChronoDuration::seconds(retention.idle_seconds);
    let mut seen = HashSet::new();
    loop {
        if started.elapsed() > budget {
            report.incomplete = true;
            break;
        }
        let page = store.idle_tasks(idle_before, PAGE).await?;
        let fresh: Vec<_> = page
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .collect();
        if fresh.is_empty() {
            break;
        }
        let outcomes: Vec<_> = stream::iter(fresh)
            .map(|task| async move {
                let outcome = store.mark_interrupted(&task, idle_before, now).await;
                (task, outcome)
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        for (task, outcome) in outcomes {
            match outcome {
                Ok(true) => report.interrupted_tasks += 1,
                Ok(false) => {}
                Err(e) => {
                    report.failures += 1;
                    tracing::warn!(tenant = %task.tenant_id, task = %task.task_id, error = %e, "could not interrupt idle task");
                }
            }
        }
    }

    tracing::info!(
        expired_tasks = report.expired_tasks,
        deleted_items = report.deleted_items,
        deleted_snapshots = report.deleted_snapshots,
        interrupted_tasks = report.interrupted_tasks,
        failures = report.failures,
        incomplete = report.incomplete,
        duration_ms = started.elapsed().as_millis() as u64,
        "cleanup finished"
    );
    Ok(report)
}
