//! The command runner function's entry (`agent-exec`): a run recorded as approved is read from
//! the store — its command, its workspace and whether it writes, never from whoever asked — and
//! run there.

use std::time::Instant;

use super::run_record::{failed, finish, RunEnv};
use super::runner::run_job;
use crate::context::AppContext;
use crate::domain::agent_tools::ExecStatus;

/// What a run records with, from the context.
pub fn env_of(ctx: &AppContext) -> RunEnv {
    RunEnv {
        store: ctx.store.clone(),
        realtime: ctx.realtime.clone(),
        clock: ctx.clock.clone(),
        retention_days: ctx.config.tools.audit_retention_days,
        output_cap: ctx.config.tools.exec_output_bytes,
    }
}

/// Runs the recorded run `exec_id` of `tenant_id` (the cloud runner's entry): the command, its
/// workspace and whether it writes are read from the store, not from whoever asked.
pub async fn run_recorded(ctx: &AppContext, tenant_id: &str, exec_id: &str) -> Result<(), String> {
    let exec = ctx
        .store
        .exec(tenant_id, exec_id)
        .await
        .map_err(|e| e.to_string())?
        .filter(|e| e.status == ExecStatus::Running)
        .ok_or("no such running command")?;
    let env = env_of(ctx);
    let ws = match ctx.store.workspace(tenant_id, &exec.workspace_id).await {
        Ok(Some(ws)) => ws,
        Ok(None) => {
            finish(
                &env,
                &exec,
                failed(&env, Instant::now(), "the workspace is gone".into()),
            )
            .await;
            return Ok(());
        }
        Err(e) => {
            finish(
                &env,
                &exec,
                failed(&env, Instant::now(), "the store is unavailable".into()),
            )
            .await;
            return Err(e.to_string());
        }
    };
    let args = super::exec::ExecArgs {
        program: exec.program.clone(),
        args: exec.args.clone(),
        timeout_seconds: Some(exec.timeout_seconds),
    };
    let Some(rule) = args.allowed(&ws.allowed_commands) else {
        let end = failed(
            &env,
            Instant::now(),
            "the command is no longer allowed".into(),
        );
        finish(&env, &exec, end).await;
        return Ok(());
    };
    let files = match ctx.workspaces.open(&ws.root) {
        Ok(f) => f,
        Err(e) => {
            finish(
                &env,
                &exec,
                failed(
                    &env,
                    Instant::now(),
                    format!("the workspace cannot be opened: {e}"),
                ),
            )
            .await;
            return Ok(());
        }
    };
    run_job(&env, files, exec, rule.writes).await;
    Ok(())
}
