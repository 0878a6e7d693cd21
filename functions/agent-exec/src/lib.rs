//! The cloud command runner: invoked asynchronously (by the approval function, which only
//! records the run) with `{ tenantId, execId }`. It reads the run, its workspace and its
//! allowlist entry from the store, copies the workspace into `/tmp`, runs the program with its
//! time and output limits (cancellation is polled from the run's record), stores the output
//! as ordered chunks, writes an allowlisted writer's changes back, and records the end.

use lambda_runtime::{Diagnostic, LambdaEvent};
use serde_json::{json, Value};
use shared::adapters::runner::ExecEvent;
use shared::AppContext;

/// A refused event.
#[derive(Debug)]
pub struct ExecError(pub String);

impl From<ExecError> for Diagnostic {
    fn from(e: ExecError) -> Self {
        Diagnostic {
            error_type: "Exec.Refused".into(),
            error_message: e.0,
        }
    }
}

/// Runs the command the event names (to its end).
pub async fn handle(ctx: &AppContext, event: LambdaEvent<Value>) -> Result<Value, ExecError> {
    let e: ExecEvent = serde_json::from_value(event.payload)
        .map_err(|e| ExecError(format!("not an exec event: {e}")))?;
    if shared::domain::identity::validate_id(&e.tenant_id).is_err()
        || uuid::Uuid::parse_str(&e.exec_id).is_err()
    {
        return Err(ExecError("malformed ids".into()));
    }
    shared::tools::runner::run_recorded(ctx, &e.tenant_id, &e.exec_id)
        .await
        .map_err(ExecError)?;
    Ok(json!({ "execId": e.exec_id, "done": true }))
}
