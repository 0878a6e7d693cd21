//! Agent sessions: choosing a workspace, opening it for a call, the audit trail, and the
//! session as a user sees it. Every read is under the caller's tenant; another user's session
//! is answered as missing (admins may read any session of their tenant).

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use super::model::{AgentSession, AuditEntry, WorkspaceRecord};
use crate::auth::Principal;
use crate::context::AppContext;
use crate::error::Error;
use crate::ports::workspace::Workspace;

/// Most audit items and approvals a session view returns.
pub const VIEW_LIMIT: usize = 200;

/// 403 unless the agent tools are switched on.
pub fn require_enabled(ctx: &AppContext) -> Result<(), Error> {
    if ctx.config.tools.enabled {
        Ok(())
    } else {
        Err(Error::Denied {
            code: "AGENT_TOOLS_DISABLED",
            message: "The agent tools are switched off on this server (AGENT_TOOLS_ENABLED)".into(),
        })
    }
}

fn session_missing() -> Error {
    Error::NotFound {
        code: "AGENT_SESSION_NOT_FOUND",
        message: "No such agent session".into(),
    }
}

fn workspace_missing() -> Error {
    Error::NotFound {
        code: "WORKSPACE_NOT_FOUND",
        message: "No such workspace".into(),
    }
}

/// When records written now expire.
pub fn retention_end(ctx: &AppContext, now: DateTime<Utc>) -> DateTime<Utc> {
    now + Duration::days(ctx.config.tools.audit_retention_days)
}

/// A workspace as the routes show it (the root stays server-side).
pub fn workspace_view(ws: &WorkspaceRecord) -> Value {
    json!({ "id": ws.id, "name": ws.name, "allowedCommands": ws.allowed_commands,
        "createdAt": crate::time::iso(ws.created_at) })
}

/// The caller's session `id`; another user's is missing unless `admin_reads` and the caller
/// is an admin.
pub async fn owned_session(
    ctx: &AppContext,
    p: &Principal,
    id: &str,
    admin_reads: bool,
) -> Result<AgentSession, Error> {
    let s = ctx
        .store
        .agent_session(&p.tenant_id, id)
        .await?
        .ok_or_else(session_missing)?;
    if s.user_id == p.user_id || (admin_reads && p.is_admin()) {
        Ok(s)
    } else {
        Err(session_missing())
    }
}

/// Creates a session in `workspace_id` (or moves the caller's session `session_id` there).
pub async fn select(
    ctx: &AppContext,
    p: &Principal,
    session_id: Option<&str>,
    workspace_id: &str,
) -> Result<(AgentSession, WorkspaceRecord), Error> {
    let now = ctx.clock.now();
    let (ws, existing) = tokio::join!(ctx.store.workspace(&p.tenant_id, workspace_id), async {
        match session_id {
            Some(id) => owned_session(ctx, p, id, false).await.map(Some),
            None => Ok(None),
        }
    });
    let ws = ws?.ok_or_else(workspace_missing)?;
    let session = match existing? {
        Some(mut s) => {
            s.workspace_id = ws.id.clone();
            s.last_used_at = now;
            s
        }
        None => AgentSession {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id: p.tenant_id.clone(),
            user_id: p.user_id.clone(),
            workspace_id: ws.id.clone(),
            status: "active".into(),
            created_at: now,
            last_used_at: now,
        },
    };
    ctx.store
        .put_agent_session(&session, retention_end(ctx, now))
        .await?;
    Ok((session, ws))
}

/// What a call works in.
pub struct Opened {
    pub session: AgentSession,
    pub workspace: WorkspaceRecord,
    pub files: Arc<dyn Workspace>,
}

/// The caller's session and its workspace, opened.
pub async fn open(ctx: &AppContext, p: &Principal, session_id: &str) -> Result<Opened, Error> {
    let session = owned_session(ctx, p, session_id, false).await?;
    let workspace = ctx
        .store
        .workspace(&p.tenant_id, &session.workspace_id)
        .await?
        .ok_or_else(workspace_missing)?;
    let files = ctx.workspaces.open(&workspace.root)?;
    Ok(Opened {
        session,
        workspace,
        files,
    })
}

/// One audit item to write.
pub struct Audit<'a> {
    pub session_id: &'a str,
    pub action: &'a str,
    pub target: &'a str,
    pub approved: Option<bool>,
    pub outcome: String,
    pub started: Instant,
    pub approval_id: Option<&'a str>,
}

/// The outcome of a call as the audit trail records it.
pub fn outcome_of(result: &Result<Value, Error>) -> String {
    match result {
        Ok(_) => "ok".into(),
        Err(e) => crate::http::error::classify(e).1.to_owned(),
    }
}

/// The audit item for `a`, stamped now.
pub fn entry(ctx: &AppContext, p: &Principal, a: Audit<'_>) -> AuditEntry {
    AuditEntry {
        id: uuid::Uuid::new_v4().to_string(),
        session_id: a.session_id.to_owned(),
        user_id: p.user_id.clone(),
        action: a.action.to_owned(),
        target: a.target.chars().take(1024).collect(),
        approved: a.approved,
        timestamp: ctx.clock.now(),
        outcome: a.outcome,
        duration_ms: a.started.elapsed().as_millis() as u64,
        approval_id: a.approval_id.map(str::to_owned),
    }
}

/// Appends an audit item. A failure to audit is a failure of the request (nothing may run
/// unrecorded), reported after the fact.
pub async fn audit(ctx: &AppContext, p: &Principal, a: Audit<'_>) -> Result<(), Error> {
    let entry = entry(ctx, p, a);
    ctx.store
        .append_audit(&p.tenant_id, &entry, retention_end(ctx, entry.timestamp))
        .await?;
    Ok(())
}

/// The session with its tool calls, approvals and audit trail (newest first).
pub async fn view(ctx: &AppContext, p: &Principal, id: &str) -> Result<Value, Error> {
    let session = owned_session(ctx, p, id, true).await?;
    let (approvals, trail, ws) = tokio::join!(
        ctx.store
            .session_approvals(&p.tenant_id, &session.id, VIEW_LIMIT),
        ctx.store.audit_trail(&p.tenant_id, &session.id, VIEW_LIMIT),
        ctx.store.workspace(&p.tenant_id, &session.workspace_id),
    );
    let trail = trail?;
    let tool_calls: Vec<&AuditEntry> = trail
        .iter()
        .filter(|e| !e.action.starts_with("approval."))
        .collect();
    let approvals: Vec<Value> = approvals?
        .iter()
        .map(|a| super::approvals::approval_view(a, ctx.clock.now()))
        .collect();
    Ok(json!({
        "session": {
            "id": session.id, "userId": session.user_id, "workspaceId": session.workspace_id,
            "workspace": ws?.as_ref().map(workspace_view), "status": session.status,
            "createdAt": crate::time::iso(session.created_at),
            "lastUsedAt": crate::time::iso(session.last_used_at),
        },
        "toolCalls": tool_calls,
        "approvals": approvals,
        "audit": trail,
    }))
}
