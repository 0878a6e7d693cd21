//! Lambda entry point of `agent-exec`; the handler lives in the library.

use lambda_runtime::{service_fn, LambdaEvent};
use serde_json::Value;
use shared::context::Links;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    shared::telemetry::init_lambda_logs();
    // Commands run as this process's user: keep its memory and environment from them, and
    // adopt whatever they leave behind so it can be killed after each run.
    agent_exec::harden();
    let ctx = shared::runtime::context("agent-exec", Links::OBJECTS.without_tokens()).await?;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| {
        agent_exec::handle(ctx, event)
    }))
    .await
}
