//! Structured JSON logs. Inside Lambda the runtime's subscriber is used (it follows
//! `AWS_LAMBDA_LOG_FORMAT`/`AWS_LAMBDA_LOG_LEVEL`, i.e. Lambda's JSON log format); elsewhere
//! one JSON object per line on stderr, filtered by `RUST_LOG` (default `info`).

use tracing_subscriber::EnvFilter;

/// Installs the JSON subscriber for processes outside Lambda (local-api, tools). Safe to call
/// twice: the second call does nothing.
pub fn init_json_logs() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(true)
        .with_span_list(false)
        .with_writer(std::io::stderr)
        .try_init();
}
