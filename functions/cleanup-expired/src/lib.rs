//! `cleanup-expired`: run by an EventBridge schedule. Reads only the store and retention
//! settings (no signing key), deletes expired tasks with everything that belongs to them,
//! marks idle tasks `interrupted`, and answers with the counts.

use std::sync::Arc;
use std::time::Duration;

use lambda_runtime::{Diagnostic, LambdaEvent};
use shared::cleanup::{self, CleanupReport};
use shared::clock::{Clock, SystemClock};
use shared::config::{ConfigError, MetricsConfig, Retention, StoreConfig};
use shared::context::{open_stores, Stores};
use shared::ports::metrics::Metrics;

/// Time left for other work when the invocation deadline approaches.
const DEADLINE_MARGIN: Duration = Duration::from_secs(10);
/// Budget when the invocation carries no usable deadline.
const DEFAULT_BUDGET: Duration = Duration::from_secs(240);

/// What the function needs, built once per container.
pub struct Cleanup {
    pub stores: Stores,
    pub clock: Arc<dyn Clock>,
    pub retention: Retention,
    /// Where each run's counts go (`METRICS`).
    pub metrics: Arc<dyn Metrics>,
}

/// Why a run failed, with a stable error name for logs and Step Functions.
#[derive(Debug)]
pub struct CleanupFailed(pub String);

impl From<CleanupFailed> for Diagnostic {
    fn from(e: CleanupFailed) -> Self {
        Diagnostic {
            error_type: "CleanupFailed".into(),
            error_message: e.0,
        }
    }
}

impl Cleanup {
    /// Reads `STORE`/`DATA_DIR`/`TABLE_NAME`/`SNAPSHOT_BUCKET`/`AWS_ENDPOINT_URL` and the
    /// retention variables.
    pub async fn from_env() -> Result<Self, String> {
        let lookup = |k: &str| std::env::var(k).ok();
        let store = StoreConfig::from_lookup(lookup).map_err(|e: ConfigError| e.to_string())?;
        let retention = Retention::from_lookup(lookup).map_err(|e| e.to_string())?;
        let metrics = MetricsConfig::from_lookup(lookup).map_err(|e| e.to_string())?;
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let metrics =
            shared::adapters::emf::metrics(&metrics, "cleanup-expired", "none", clock.clone());
        let stores = open_stores(&store, clock.clone())
            .await
            .map_err(|e| e.to_string())?;
        Ok(Self {
            stores,
            clock,
            retention,
            metrics,
        })
    }

    /// One run within `budget`; its counts go to the metrics.
    pub async fn run(&self, budget: Duration) -> Result<CleanupReport, CleanupFailed> {
        let report = cleanup::run(
            self.stores.store.as_ref(),
            self.stores.snapshots.as_ref(),
            self.clock.as_ref(),
            self.retention,
            budget,
        )
        .await
        .map_err(|e| CleanupFailed(e.to_string()))?;
        self.metrics.cleanup(&report);
        Ok(report)
    }
}

/// Lambda entry point: the scheduled event's content does not matter.
pub async fn handle(
    cleanup: &Cleanup,
    event: LambdaEvent<serde_json::Value>,
) -> Result<CleanupReport, CleanupFailed> {
    let budget = event
        .context
        .deadline()
        .duration_since(std::time::SystemTime::now())
        .ok()
        .and_then(|left| left.checked_sub(DEADLINE_MARGIN))
        .unwrap_or(DEFAULT_BUDGET);
    cleanup.run(budget).await
}
