//! The command runner function's entry (`agent-exec`): a run recorded as approved is read from
//! the store — its command, its workspace and whether it writes, never from whoever asked — and
//! run there.

use crate::domain::agent_tools::ExecStatus;
use crate::ports::runner::Jobs;
use crate::ports::workspace::Workspaces;
use crate::ports::Store;

/// Runs the recorded run `exec_id` of `tenant_id` (the cloud runner's entry): the command, its
/// workspace and whether it writes are read from the store, not from whoever asked; a run
/// that cannot start is recorded as failed with the reason.
pub async fn run_recorded(
    store: &dyn Store,
    workspaces: &dyn Workspaces,
    jobs: &dyn Jobs,
    tenant_id: &str,
    exec_id: &str,
) -> Result<(), String> {
    let exec = store
        .exec(tenant_id, exec_id)
        .await
        .map_err(|e| e.to_string())?
        .filter(|e| e.status == ExecStatus::Running)
        .ok_or("no such running command")?;
    let ws = match store.workspace(tenant_id, &exec.workspace_id).await {
        Ok(Some(ws)) => ws,
        Ok(None) => {
            jobs.refuse(&exec, "the workspace is gone".into()).await;
            return Ok(());
        }
        Err(e) => {
            jobs.refuse(&exec, "the store is unavailable".into()).await;
            return Err(e.to_string());
        }
    };
    let args = super::exec::ExecArgs {
        program: exec.program.clone(),
        args: exec.args.clone(),
        timeout_seconds: Some(exec.timeout_seconds),
    };
    let Some(rule) = args.allowed(&ws.allowed_commands) else {
        jobs.refuse(&exec, "the command is no longer allowed".into())
            .await;
        return Ok(());
    };
    let files = match workspaces.open(&ws.root) {
        Ok(f) => f,
        Err(e) => {
            jobs.refuse(&exec, format!("the workspace cannot be opened: {e}"))
                .await;
            return Ok(());
        }
    };
    jobs.run(files, exec, rule.writes).await;
    Ok(())
}
