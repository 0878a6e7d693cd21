//! The scheduled cleanup: deletes tasks whose retention ended (with their steps, messages
//! and snapshots) and marks tasks nobody touched for too long `interrupted`. Idempotent and
//! safe to run twice at once: deletes of what is gone are no-ops and the interrupt is a
//! conditional write.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use chrono::Duration as ChronoDuration;
use futures::stream::{self, StreamExt};

use crate::clock::Clock;
use crate::config::Retention;
use crate::domain::TaskRef;
use crate::ports::{SnapshotStore, Store, StoreResult};

/// Tasks fetched per sweep page.
const PAGE: usize = 100;
/// Tasks processed at once (each takes a few sequential store calls).
const CONCURRENCY: usize = 8;

pub use crate::domain::sweep::CleanupReport;

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

    let expired = sweep(
        started,
        budget,
        || store.expired_tasks(now, PAGE),
        |task| async move {
            // Snapshots first: if the run dies after this, the task is still found next time.
            let snaps = snapshots
                .delete_snapshots(&task.tenant_id, &task.task_id)
                .await?;
            let items = store.delete_task(&task).await?;
            StoreResult::Ok((snaps, items))
        },
    )
    .await?;
    report.incomplete |= expired.incomplete;
    for (task, outcome) in expired.outcomes {
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

    let idle_before = now - ChronoDuration::seconds(retention.idle_seconds);
    let idle = sweep(
        started,
        budget,
        || store.idle_tasks(idle_before, PAGE),
        |task| async move { store.mark_interrupted(&task, idle_before, now).await },
    )
    .await?;
    report.incomplete |= idle.incomplete;
    for (task, outcome) in idle.outcomes {
        match outcome {
            Ok(true) => report.interrupted_tasks += 1,
            Ok(false) => {}
            Err(e) => {
                report.failures += 1;
                tracing::warn!(tenant = %task.tenant_id, task = %task.task_id, error = %e, "could not interrupt idle task");
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

/// What one sweep did to each task it met.
struct Swept<T> {
    outcomes: Vec<(TaskRef, StoreResult<T>)>,
    incomplete: bool,
}

/// Fetches pages of tasks and processes each (a few at a time) until a page brings nothing
/// new or the budget is spent. Tasks that could not be processed stay for the next run.
async fn sweep<T, F, FF, P, PF>(
    started: Instant,
    budget: Duration,
    fetch: F,
    process: P,
) -> StoreResult<Swept<T>>
where
    F: Fn() -> FF,
    FF: std::future::Future<Output = StoreResult<Vec<TaskRef>>>,
    P: Fn(TaskRef) -> PF,
    PF: std::future::Future<Output = StoreResult<T>>,
{
    let mut seen = HashSet::new();
    let mut out = Swept {
        outcomes: Vec::new(),
        incomplete: false,
    };
    loop {
        if started.elapsed() > budget {
            out.incomplete = true;
            return Ok(out);
        }
        let fresh: Vec<TaskRef> = fetch()
            .await?
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .collect();
        if fresh.is_empty() {
            return Ok(out);
        }
        let results: Vec<_> = stream::iter(fresh)
            .map(|task| {
                let work = process(task.clone());
                async move { (task, work.await) }
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        out.outcomes.extend(results);
    }
}
