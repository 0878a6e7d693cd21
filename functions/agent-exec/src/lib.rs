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

/// Process settings of the runner: not dumpable (commands cannot read its environment through
/// `/proc`), and a subreaper (what a command leaves running, even after `setsid`, becomes
/// this process's child).
pub fn harden() {
    shared::adapters::runner::shield_process();
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Kills and reaps every child of this process: a run is over, so anything still running
/// was left behind by its command (this function runs one command at a time).
pub fn reap_strays() {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The parent pid is the second field after the `)` closing the command name.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1));
        if ppid == Some(me.as_str()) {
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
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
    let ran = shared::tools::recorded_run::run_recorded(
        ctx.store.as_ref(),
        ctx.workspaces.as_ref(),
        &ctx.jobs(),
        &e.tenant_id,
        &e.exec_id,
    )
    .await;
    reap_strays();
    ran.map_err(ExecError)?;
    Ok(json!({ "execId": e.exec_id, "done": true }))
}
