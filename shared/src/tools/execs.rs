//! Command runs as use cases: start one (once its approval is taken), read its state and
//! output after a sequence number, cancel it. Runs are the caller's own (tenant admins may
//! read any of their organisation's); everything else answers 404.

use serde_json::{json, Value};

use super::exec::ExecArgs;
use super::session::{retention_end, Opened};
use super::ToolPorts;
use crate::auth::Principal;
use crate::domain::agent_tools::{ExecRecord, ExecStatus};
use crate::error::Error;

/// Most chunks one read returns.
pub const MAX_CHUNKS: usize = 200;

fn exec_missing() -> Error {
    Error::NotFound {
        code: "EXEC_NOT_FOUND",
        message: "No such command run".into(),
    }
}

/// Records a run of an approved command and hands it to the runner; answers at once.
pub async fn start(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    opened: &Opened,
    args: &ExecArgs,
) -> Result<Value, Error> {
    // The allowlist may have changed since the call was parked.
    let rule = args.require_allowed(&opened.workspace.allowed_commands)?;
    let max = ctx.tools.exec_max_seconds;
    let now = ctx.clock.now();
    let exec = ExecRecord {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: p.tenant_id.clone(),
        session_id: opened.session.id.clone(),
        user_id: p.user_id.clone(),
        workspace_id: opened.workspace.id.clone(),
        program: args.program.clone(),
        args: args.args.clone(),
        timeout_seconds: args.timeout_seconds.unwrap_or(max).min(max),
        status: ExecStatus::Running,
        cancel_requested: false,
        started_at: now,
        ended_at: None,
        exit_code: None,
        duration_ms: None,
        output_bytes: 0,
        error: None,
    };
    ctx.store
        .create_exec(&exec, retention_end(ctx, now))
        .await?;
    if let Err(why) = ctx
        .runner
        .start(&exec, &opened.workspace.root, rule.writes)
        .await
    {
        tracing::error!(exec = %exec.id, error = %why, "a command could not be started");
        let end = crate::ports::ExecEnd {
            status: ExecStatus::Failed,
            exit_code: None,
            ended_at: ctx.clock.now(),
            duration_ms: 0,
            output_bytes: 0,
            error: Some("the command runner is unavailable".into()),
        };
        ctx.store.finish_exec(&p.tenant_id, &exec.id, &end).await?;
        return Err(Error::Upstream {
            code: "RUNNER_UNAVAILABLE",
            message: "The command runner could not start the command".into(),
        });
    }
    Ok(
        json!({ "execId": exec.id, "status": exec.status, "program": exec.program,
        "args": exec.args, "timeoutSeconds": exec.timeout_seconds }),
    )
}

async fn owned(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    id: &str,
    admin_reads: bool,
) -> Result<ExecRecord, Error> {
    let e = ctx
        .store
        .exec(&p.tenant_id, id)
        .await?
        .ok_or_else(exec_missing)?;
    if e.user_id == p.user_id || (admin_reads && p.is_admin()) {
        Ok(e)
    } else {
        Err(exec_missing())
    }
}

/// A run still `running` this long after its time limit has lost its runner.
const LOST_AFTER_SECONDS: i64 = 15 * 60;

/// The run's state and its output chunks after `after`. The state is read first: once it
/// says the run ended, every chunk is already stored.
pub async fn view(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    id: &str,
    after: Option<u64>,
) -> Result<Value, Error> {
    let exec = owned(ctx, p, id, true).await?;
    let (chunks, more) = ctx
        .store
        .chunks(&p.tenant_id, id, after, MAX_CHUNKS)
        .await?;
    let next = chunks.last().map(|c| c.seq).or(after).unwrap_or(0);
    let overdue = (ctx.clock.now() - exec.started_at).num_seconds()
        > exec.timeout_seconds as i64 + LOST_AFTER_SECONDS;
    let status = match exec.status {
        ExecStatus::Running if overdue => "interrupted",
        s => s.as_str(),
    };
    Ok(json!({
        "execId": exec.id, "sessionId": exec.session_id, "program": exec.program, "args": exec.args,
        "status": status, "exitCode": exec.exit_code, "durationMs": exec.duration_ms,
        "outputBytes": exec.output_bytes, "error": exec.error,
        "startedAt": crate::time::iso(exec.started_at), "endedAt": exec.ended_at.map(crate::time::iso),
        "cancelRequested": exec.cancel_requested,
        "chunks": chunks, "nextAfter": next, "more": more,
    }))
}

/// Asks a running command to stop (it is killed within a fraction of a second).
pub async fn cancel(ctx: &ToolPorts<'_>, p: &Principal, id: &str) -> Result<Value, Error> {
    let exec = owned(ctx, p, id, false).await?;
    if !ctx.store.request_cancel(&p.tenant_id, id).await? {
        return Err(Error::Conflict {
            code: "EXEC_FINISHED",
            message: "The command has already ended".into(),
        });
    }
    super::session::audit(
        ctx,
        p,
        super::session::Audit {
            session_id: &exec.session_id,
            action: "exec.cancel",
            target: &exec.id,
            approved: Some(true),
            outcome: "ok".into(),
            started: std::time::Instant::now(),
            approval_id: None,
        },
    )
    .await?;
    Ok(json!({ "execId": exec.id, "status": "cancelling" }))
}
