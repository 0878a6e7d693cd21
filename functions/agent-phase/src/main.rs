//! Lambda entry point of `agent-phase`; the handler lives in the library.

use lambda_runtime::{service_fn, LambdaEvent};
use serde_json::Value;
use shared::context::Links;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    shared::telemetry::init_lambda_logs();
    let ctx = shared::runtime::context("agent-phase", Links::OBJECTS.without_tokens()).await?;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| {
        agent_phase::handle(ctx, event)
    }))
    .await
}
