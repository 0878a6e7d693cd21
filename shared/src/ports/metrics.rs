//! The `Metrics` port: where a step's and a request's figures go (adapter: `adapters::emf`,
//! CloudWatch Embedded Metric Format lines on standard output, or none).

pub use crate::domain::sweep::CleanupReport;
pub use crate::metrics::{RequestFigures, StepFigures, Verdict};

/// Records figures. Never fails and never waits on the network: a metric that cannot be
/// written is lost, the request is not.
pub trait Metrics: Send + Sync {
    /// A stored step.
    fn step(&self, figures: &StepFigures<'_>);
    /// An HTTP answer of `route`.
    fn request(&self, route: &str, figures: &RequestFigures<'_>);
    /// A run of the scheduled cleanup.
    fn cleanup(&self, figures: &CleanupReport);
}
