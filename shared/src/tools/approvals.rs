//! Tool calls and their approvals. An `auto` call runs at once; any other is parked as a
//! pending approval (202) until its user approves or rejects it. Approving moves it from
//! `pending` to `running` in one conditional write, so of any number of parallel approvals
//! exactly one runs the call (`decide`); rejected and expired approvals never run. Every call,
//! decision and outcome is audited.

use std::time::Instant;

use chrono::Duration;
use serde_json::Value;

pub use super::decide::decide;

use super::approval::{approval_view, stored_call_id};
use super::calls::ToolCall;
use super::session::{self, audit, outcome_of, Audit};
use super::ToolPorts;
use crate::auth::Principal;
use crate::domain::agent_tools::{Approval, ApprovalStatus, Tier};
use crate::error::Error;

/// Arguments larger than this (serialised) are kept in the snapshot store, not in the item.
const INLINE_ARGS_BYTES: usize = 32 * 1024;
/// Longest string argument shown inline once the arguments are kept aside.
const SHOWN_STRING_CHARS: usize = 1_024;
/// Most approvals decided in one request.
pub const MAX_GROUP: usize = 50;

/// What a call came to.
#[derive(Debug)]
pub enum CallOutcome {
    /// It ran; its result.
    Done(Value),
    /// It waits for a decision; the pending approval.
    Pending(Value),
}

/// The arguments with long strings cut (what the item keeps when the call is stored aside).
fn shown_args(args: &Value) -> Value {
    match args {
        Value::String(s) if s.chars().count() > SHOWN_STRING_CHARS => Value::String(format!(
            "{}… ({} bytes in all)",
            s.chars().take(SHOWN_STRING_CHARS).collect::<String>(),
            s.len()
        )),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| (k.clone(), shown_args(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => other.clone(),
    }
}

/// Runs `call` in the caller's session `session_id`, or parks it for approval.
pub async fn call(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    session_id: &str,
    call: ToolCall,
) -> Result<CallOutcome, Error> {
    let started = Instant::now();
    let opened = session::open(ctx, p, session_id).await?;
    let target = call.target();
    let mut record = Audit {
        session_id,
        action: call.name(),
        target: &target,
        approved: Some(true),
        outcome: String::new(),
        started,
        approval_id: None,
    };
    let checked = match call.validate(ctx.tools.max_file_bytes, ctx.tools.exec_max_seconds) {
        Err(e) => Err(e),
        Ok(()) => match &call {
            ToolCall::Exec(a) => a
                .require_allowed(&opened.workspace.allowed_commands)
                .map(|_| call.tier()),
            // An MCP tool's tier is the administrator's per tool (individual by default).
            ToolCall::Mcp(a) => super::mcp::server(ctx, &p.tenant_id, &a.server)
                .await
                .map(|s| super::mcp::tier_of(&s, &a.tool)),
            _ => Ok(call.tier()),
        },
    };
    let tier = match checked {
        Ok(t) => t,
        Err(e) => {
            record.approved = None;
            record.outcome = crate::error::classify(&e).1.to_owned();
            audit(ctx, p, record).await?;
            return Err(e);
        }
    };
    if tier == Tier::Auto {
        let result = super::decide::run_now(ctx, p, &opened, &call).await;
        record.outcome = outcome_of(&result);
        audit(ctx, p, record).await?;
        return result.map(CallOutcome::Done);
    }
    let now = ctx.clock.now();
    let id = uuid::Uuid::new_v4().to_string();
    let args = call.args();
    let serialized = serde_json::to_vec(&call).map_err(Error::internal)?;
    let args_bytes = serialized.len() as u64;
    // Room among the user's pending approvals first: a refused call leaves nothing behind.
    if let Err(e) = super::limits::reserve_pending(ctx, p, args_bytes).await {
        record.approved = None;
        record.outcome = crate::error::classify(&e).1.to_owned();
        audit(ctx, p, record).await?;
        return Err(e);
    }
    let args_stored = serialized.len() > INLINE_ARGS_BYTES;
    let mut approval = Approval {
        args_bytes,
        id: id.clone(),
        tenant_id: p.tenant_id.clone(),
        session_id: session_id.to_owned(),
        user_id: p.user_id.clone(),
        workspace_id: opened.workspace.id.clone(),
        workspace_name: opened.workspace.name.clone(),
        tool_name: call.name().to_owned(),
        args: if args_stored {
            shown_args(&args)
        } else {
            args.clone()
        },
        args_stored,
        tier,
        status: ApprovalStatus::Pending,
        created_at: now,
        decide_by: (now + Duration::seconds(ctx.tools.approval_ttl_seconds)).timestamp(),
        decided_at: None,
        decided_by: None,
        outcome: None,
    };
    let parked = async {
        if args_stored {
            ctx.snapshots
                .put_snapshot(&p.tenant_id, &stored_call_id(&id), 0, &serialized)
                .await?;
        }
        ctx.store
            .create_approval(&approval, session::retention_end(ctx, now))
            .await
            .map_err(Error::from)
    };
    if let Err(e) = parked.await {
        super::limits::release_pending(ctx, &approval).await;
        return Err(e);
    }
    record.approved = None;
    record.outcome = "pending".into();
    record.approval_id = Some(&id);
    audit(ctx, p, record).await?;
    // The 202 shows the whole call, whatever the item keeps.
    approval.args = args;
    Ok(CallOutcome::Pending(approval_view(&approval, now)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_arguments_are_shown_cut() {
        let args = serde_json::json!({ "path": "a", "content": "x".repeat(5000) });
        let shown = shown_args(&args);
        assert_eq!(shown["path"], "a");
        let c = shown["content"].as_str().expect("string");
        assert!(c.len() < 1200 && c.ends_with("(5000 bytes in all)"), "{c}");
    }
}
