//! Deciding approvals: approve (the call runs exactly once: `pending → running` in one
//! conditional write with its audit item) or reject, one at a time or as a batch group.

use std::time::Instant;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::approval::{approval_missing, effective_status, stored_call_id};
use super::calls::ToolCall;
use super::session::{self, audit, outcome_of, Audit};
use super::ToolPorts;
use crate::auth::Principal;
use crate::domain::agent_tools::{Approval, ApprovalStatus, Tier};
use crate::error::Error;
use crate::ports::{ApprovalChange, StoreError};

/// What an approved call acted on, for its audit item.
fn audit_target(a: &Approval) -> String {
    ToolCall::from_args(&a.tool_name, a.args.clone())
        .map(|c| c.target())
        .unwrap_or_else(|_| a.args["path"].as_str().unwrap_or_default().to_owned())
}

/// Why an approval could not be taken: decided already, or expired.
fn refusal(a: &Approval, now: DateTime<Utc>) -> Error {
    match effective_status(a, now) {
        ApprovalStatus::Expired => Error::Conflict {
            code: "APPROVAL_EXPIRED",
            message: "The approval expired before it was decided; the call did not run".into(),
        },
        s => Error::Conflict {
            code: "APPROVAL_ALREADY_DECIDED",
            message: format!("The approval was already decided ({})", s.as_str()),
        },
    }
}

/// Loads the approvals of one decision, each the caller's own (another's is missing).
async fn load_group(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    ids: &[String],
) -> Result<Vec<Approval>, Error> {
    let loaded =
        futures::future::join_all(ids.iter().map(|id| ctx.store.approval(&p.tenant_id, id))).await;
    let mut out = Vec::with_capacity(ids.len());
    for a in loaded {
        match a? {
            Some(a) if a.user_id == p.user_id => out.push(a),
            _ => return Err(approval_missing()),
        }
    }
    Ok(out)
}

/// A group may hold only `batch`-tier approvals of one session.
fn check_group(group: &[Approval]) -> Result<(), Error> {
    let Some(first) = group.first() else {
        return Ok(());
    };
    if group.len() > 1
        && group
            .iter()
            .any(|a| a.tier != Tier::Batch || a.session_id != first.session_id)
    {
        return Err(Error::field(
            "approvalIds",
            "a group may hold only batch-tier approvals of one session; decide the others one at a time",
        ));
    }
    Ok(())
}

/// Audits a refused group decision in every session it named (nothing was decided), so a
/// refusal shows in the trail the administrator reads, like any other refused call.
async fn audit_refused_group(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    group: &[Approval],
    approve: bool,
    refused: &Error,
) -> Result<(), Error> {
    let started = Instant::now();
    let code = crate::error::classify(refused).1;
    let mut sessions: Vec<&str> = group.iter().map(|a| a.session_id.as_str()).collect();
    sessions.sort_unstable();
    sessions.dedup();
    let target = group
        .iter()
        .map(|a| a.id.as_str())
        .collect::<Vec<_>>()
        .join(",");
    for session_id in sessions {
        let first = group.iter().find(|a| a.session_id == session_id);
        let record = Audit {
            session_id,
            action: decision_action(approve),
            target: &target,
            approved: Some(false),
            outcome: code.to_owned(),
            started,
            approval_id: first.map(|a| a.id.as_str()),
        };
        audit(ctx, p, record).await?;
    }
    Ok(())
}

fn decision_action(approve: bool) -> &'static str {
    if approve {
        "approval.approve"
    } else {
        "approval.reject"
    }
}

/// Approves (running each call once) or rejects `ids`, in order. The first is the one the
/// route names: if it cannot be decided the request fails; the others report their own state.
/// A group that may not be decided together is refused whole, and audited.
pub async fn decide(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    ids: &[String],
    approve: bool,
) -> Result<Vec<Value>, Error> {
    let group = load_group(ctx, p, ids).await?;
    if let Err(refused) = check_group(&group) {
        audit_refused_group(ctx, p, &group, approve, &refused).await?;
        return Err(refused);
    }
    let mut results = Vec::with_capacity(group.len());
    for (i, a) in group.iter().enumerate() {
        match decide_one(ctx, p, a, approve).await {
            Ok(v) => results.push(v),
            Err(e) if i == 0 => return Err(e),
            Err(e) => {
                let (_, code, message) = crate::error::classify(&e);
                results.push(json!({ "approvalId": a.id, "status": "refused",
                    "error": { "code": code, "message": message } }));
            }
        }
    }
    Ok(results)
}

async fn decide_one(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    a: &Approval,
    approve: bool,
) -> Result<Value, Error> {
    let started = Instant::now();
    let now = ctx.clock.now();
    let decision = |approved: bool, outcome: String| Audit {
        session_id: &a.session_id,
        action: decision_action(approve),
        target: &a.id,
        approved: Some(approved),
        outcome,
        started,
        approval_id: Some(&a.id),
    };
    let outcome = if approve { "ok" } else { "rejected" };
    let record = session::entry(ctx, p, decision(approve, outcome.into()));
    let change = ApprovalChange {
        from: ApprovalStatus::Pending,
        to: if approve {
            ApprovalStatus::Running
        } else {
            ApprovalStatus::Rejected
        },
        at: now,
        decided_by: Some(&p.user_id),
        outcome: None,
    };
    let retention = session::retention_end(ctx, now);
    match ctx
        .store
        .change_approval(&p.tenant_id, &a.id, change, &record, retention)
        .await
    {
        Ok(()) => {}
        Err(StoreError::Conflict(_)) => {
            let current = ctx
                .store
                .approval(&p.tenant_id, &a.id)
                .await?
                .ok_or_else(approval_missing)?;
            let refused = refusal(&current, now);
            let code = crate::error::classify(&refused).1.to_owned();
            audit(ctx, p, decision(false, code)).await?;
            return Err(refused);
        }
        Err(e) => return Err(e.into()),
    }
    // Decided: no longer pending.
    super::limits::release_pending(ctx, a).await;
    if !approve {
        return Ok(json!({ "approvalId": a.id, "status": "rejected" }));
    }
    let result = run_approved(ctx, p, a).await;
    let outcome = outcome_of(&result);
    let status = if result.is_ok() {
        ApprovalStatus::Done
    } else {
        ApprovalStatus::Failed
    };
    let ran = session::entry(
        ctx,
        p,
        Audit {
            session_id: &a.session_id,
            action: &a.tool_name,
            target: &audit_target(a),
            approved: Some(true),
            outcome: outcome.clone(),
            started,
            approval_id: Some(&a.id),
        },
    );
    settle(ctx, p, a, status, &outcome, &ran).await;
    Ok(match result {
        Ok(v) => json!({ "approvalId": a.id, "status": status, "result": v }),
        Err(e) => {
            let (_, code, message) = crate::error::classify(&e);
            json!({ "approvalId": a.id, "status": status,
                "error": { "code": code, "message": message } })
        }
    })
}

/// Records a finished call's outcome with its audit item, retrying a busy store. The call has
/// run (and its decision is audited) whatever happens here, so its result is answered even
/// when this fails; the approval then shows `interrupted` once the run limit has passed.
async fn settle(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    a: &Approval,
    status: ApprovalStatus,
    outcome: &str,
    ran: &crate::domain::agent_tools::AuditEntry,
) {
    let record = |_| async {
        let change = ApprovalChange {
            from: ApprovalStatus::Running,
            to: status,
            at: ctx.clock.now(),
            decided_by: None,
            outcome: Some(outcome),
        };
        let retention = session::retention_end(ctx, ran.timestamp);
        ctx.store
            .change_approval(&p.tenant_id, &a.id, change, ran, retention)
            .await
    };
    let busy = |e: &StoreError| matches!(e, StoreError::Unavailable(_));
    if let Err(e) = crate::retry::retry(&crate::retry::BUSY_STORE, record, busy).await {
        tracing::error!(approval = %a.id, error = %e, "the outcome of an approved call was not recorded");
    }
}

/// Runs an approved call in its session's workspace.
async fn run_approved(ctx: &ToolPorts<'_>, p: &Principal, a: &Approval) -> Result<Value, Error> {
    let call: ToolCall = if a.args_stored {
        let bytes = ctx
            .snapshots
            .snapshot(&p.tenant_id, &stored_call_id(&a.id), 0)
            .await?
            .ok_or_else(|| Error::internal("the approved call's arguments are gone"))?;
        serde_json::from_slice(&bytes).map_err(Error::internal)?
    } else {
        ToolCall::from_args(&a.tool_name, a.args.clone())?
    };
    let opened = session::open(ctx, p, &a.session_id).await?;
    if opened.workspace.id != a.workspace_id {
        return Err(Error::Conflict {
            code: "WORKSPACE_CHANGED",
            message: "The session moved to another workspace after this call was asked for".into(),
        });
    }
    run_now(ctx, p, &opened, &call).await
}

/// Runs a call that may run now (auto tier, or approved).
pub(super) async fn run_now(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    opened: &session::Opened,
    call: &ToolCall,
) -> Result<Value, Error> {
    match call {
        ToolCall::Exec(args) => super::execs::start(ctx, p, opened, args).await,
        ToolCall::Mcp(args) => super::mcp::call(ctx, &p.tenant_id, args).await,
        _ => {
            // A search reads up to 32 MiB: it waits for one of the process's search turns.
            let _turn = match call {
                ToolCall::Grep(_) => Some(super::limits::search_turn(ctx).await?),
                _ => None,
            };
            super::run::run(opened.files.as_ref(), call, ctx.tools.max_file_bytes).await
        }
    }
}
