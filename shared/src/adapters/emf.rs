//! Metrics as CloudWatch Embedded Metric Format lines on standard output (Lambda sends them
//! to CloudWatch Logs, which extracts the metrics; see `crate::metrics`), or nowhere.
//! Measured (`BENCH_ONLY=metrics`, the bench binary): a step's line (1.2 KB) and its answer's
//! take 13–16 µs together in a release build, written to a file (98 µs in a debug build),
//! against seconds of model time a step.

use std::io::Write;
use std::sync::Arc;

use crate::clock::Clock;
use crate::config::MetricsConfig;
use crate::metrics::Emitter;
use crate::ports::metrics::{CleanupReport, Metrics, RequestFigures, StepFigures};

/// Where a line goes (whole, newline included).
pub type LineSink = Box<dyn Fn(&[u8]) + Send + Sync>;

/// EMF lines written to a sink (standard output in a function).
pub struct EmfLines {
    emitter: Emitter,
    clock: Arc<dyn Clock>,
    out: LineSink,
}

impl EmfLines {
    /// Lines for `function` (and `model`) on standard output, each written whole.
    pub fn stdout(cfg: &MetricsConfig, function: &str, model: &str, clock: Arc<dyn Clock>) -> Self {
        Self::to(
            cfg,
            function,
            model,
            clock,
            Box::new(|line| {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(line).and_then(|()| out.flush());
            }),
        )
    }

    /// Lines given to `out` (the benchmark's sink).
    pub fn to(
        cfg: &MetricsConfig,
        function: &str,
        model: &str,
        clock: Arc<dyn Clock>,
        out: LineSink,
    ) -> Self {
        Self {
            emitter: Emitter {
                namespace: cfg.namespace.clone(),
                function: function.to_owned(),
                model: model.to_owned(),
                tenant_dimension: cfg.tenant_dimension,
            },
            clock,
            out,
        }
    }

    fn write(&self, doc: &serde_json::Value) {
        if let Ok(mut line) = serde_json::to_vec(doc) {
            line.push(b'\n');
            (self.out)(&line);
        }
    }

    fn now_ms(&self) -> i64 {
        self.clock.now().timestamp_millis()
    }
}

impl Metrics for EmfLines {
    fn step(&self, figures: &StepFigures<'_>) {
        self.write(&self.emitter.step(figures, self.now_ms()));
    }

    fn request(&self, route: &str, figures: &RequestFigures<'_>) {
        self.write(&self.emitter.request(route, figures, self.now_ms()));
    }

    fn cleanup(&self, figures: &CleanupReport) {
        self.write(&self.emitter.cleanup(figures, self.now_ms()));
    }
}

/// No metrics (`METRICS=off`, the default outside Lambda).
pub struct NoMetrics;

impl Metrics for NoMetrics {
    fn step(&self, _: &StepFigures<'_>) {}
    fn request(&self, _: &str, _: &RequestFigures<'_>) {}
    fn cleanup(&self, _: &CleanupReport) {}
}

/// The metrics `cfg` asks for, named for `function` and `model`.
pub fn metrics(
    cfg: &MetricsConfig,
    function: &str,
    model: &str,
    clock: Arc<dyn Clock>,
) -> Arc<dyn Metrics> {
    if cfg.emf {
        Arc::new(EmfLines::stdout(cfg, function, model, clock))
    } else {
        Arc::new(NoMetrics)
    }
}
