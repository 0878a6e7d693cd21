//! Agent sessions: choosing a workspace, opening it for a call, the audit trail, and the
//! session as a user sees it. Every read is under the caller's tenant; another user's session
//! is answered as missing (admins may read any session of their tenant).

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use super::ToolPorts;
use crate::auth::Principal;
use crate::domain::agent_tools::{AgentSession, Approval, AuditEntry, WorkspaceRecord};
use crate::error::Error;
use crate::ports::workspace::Workspace;

/// Audit items a session view returns when the caller does not say, and at most.
pub const DEFAULT_PAGE: usize = 100;
pub const MAX_PAGE: usize = 200;
/// Approvals per page of a session view.
const APPROVALS_PAGE: usize = 50;
/// Serialised bytes of the audit page (its tool calls are shown again apart) and of the
/// approvals page: with the session, an answer stays under 1 MB whatever the items hold
/// (Lambda answers at most 6 MB; an approval shows up to 32 KiB of arguments).
const AUDIT_BYTES: usize = 300 * 1024;
const APPROVALS_BYTES: usize = 300 * 1024;
/// Audit items a filtered page looks at, at most, before it answers with what it found.
const MAX_SCANNED: usize = 1_000;
/// Most values one filter lists.
const MAX_FILTER_VALUES: usize = 20;

/// 403 unless the agent tools are switched on.
pub fn require_enabled(ctx: &ToolPorts<'_>) -> Result<(), Error> {
    if ctx.tools.enabled {
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
pub fn retention_end(ctx: &ToolPorts<'_>, now: DateTime<Utc>) -> DateTime<Utc> {
    now + Duration::days(ctx.tools.audit_retention_days)
}

/// A workspace as the routes show it (the root stays server-side).
pub fn workspace_view(ws: &WorkspaceRecord) -> Value {
    json!({ "id": ws.id, "name": ws.name, "allowedCommands": ws.allowed_commands,
        "createdAt": crate::time::iso(ws.created_at) })
}

/// The caller's session `id`; another user's is missing unless `admin_reads` and the caller
/// is an admin.
pub async fn owned_session(
    ctx: &ToolPorts<'_>,
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
    ctx: &ToolPorts<'_>,
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
pub async fn open(ctx: &ToolPorts<'_>, p: &Principal, session_id: &str) -> Result<Opened, Error> {
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
        Err(e) => crate::error::classify(e).1.to_owned(),
    }
}

/// The audit item for `a`, stamped now.
pub fn entry(ctx: &ToolPorts<'_>, p: &Principal, a: Audit<'_>) -> AuditEntry {
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
pub async fn audit(ctx: &ToolPorts<'_>, p: &Principal, a: Audit<'_>) -> Result<(), Error> {
    let entry = entry(ctx, p, a);
    ctx.store
        .append_audit(&p.tenant_id, &entry, retention_end(ctx, entry.timestamp))
        .await?;
    Ok(())
}

/// Which page of a session view to show: `limit` audit items after `cursor`, only those
/// whose action and outcome are among the ones listed (all when none are), and the
/// approvals after `approvals_cursor`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewQuery {
    pub limit: usize,
    pub cursor: Option<String>,
    pub actions: Vec<String>,
    pub outcomes: Vec<String>,
    pub approvals_cursor: Option<String>,
}

/// An opaque cursor for a position (`<time>#<id>`).
fn cursor_of(position: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(position)
}

impl ViewQuery {
    /// Reads a view's query parameters (`field` → its raw value), naming the field that is
    /// wrong. `limit` is checked by the caller.
    pub fn parse(limit: usize, get: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        Ok(Self {
            limit,
            cursor: get("cursor")
                .map(|c| position_of("cursor", &c))
                .transpose()?,
            actions: get("action")
                .map(|v| filter_values("action", &v))
                .transpose()?
                .unwrap_or_default(),
            outcomes: get("outcome")
                .map(|v| filter_values("outcome", &v))
                .transpose()?
                .unwrap_or_default(),
            approvals_cursor: get("approvalsCursor")
                .map(|c| position_of("approvalsCursor", &c))
                .transpose()?,
        })
    }

    fn keeps(&self, e: &AuditEntry) -> bool {
        (self.actions.is_empty() || self.actions.contains(&e.action))
            && (self.outcomes.is_empty() || self.outcomes.contains(&e.outcome))
    }
}

/// The position a cursor stands for; only ever compared within the caller's own session.
fn position_of(field: &str, cursor: &str) -> Result<String, Error> {
    use base64::Engine;
    let bad = || Error::field(field, "is not a cursor this view returned");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| bad())?;
    let position = String::from_utf8(bytes).map_err(|_| bad())?;
    let ok = (1..=128).contains(&position.len())
        && position.contains('#')
        && position
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ":.-#".contains(c));
    ok.then_some(position).ok_or_else(bad)
}

/// A comma-separated list of action names or outcomes.
fn filter_values(field: &str, raw: &str) -> Result<Vec<String>, Error> {
    let values: Vec<String> = raw
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .collect();
    let ok = (1..=MAX_FILTER_VALUES).contains(&values.len())
        && values.iter().all(|v| {
            v.len() <= 64
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c))
        });
    if ok {
        Ok(values)
    } else {
        Err(Error::field(
            field,
            format!("must list 1 to {MAX_FILTER_VALUES} names, comma-separated"),
        ))
    }
}

/// One page of a listing newest first: items after `before` that `keep` accepts, shown by
/// `show`, until `limit` of them or `budget` serialised bytes (at least one item), or
/// `max_scanned` items looked at; with the cursor of the next page when there may be one.
struct Paging<'a, T> {
    before: Option<String>,
    limit: usize,
    budget: usize,
    max_scanned: usize,
    keep: &'a (dyn Fn(&T) -> bool + Sync),
    show: &'a (dyn Fn(&T) -> Value + Sync),
    position: fn(&T) -> String,
}

impl<T> Paging<'_, T> {
    async fn run<F, Fut>(self, fetch: F) -> Result<(Vec<Value>, Option<String>), Error>
    where
        F: Fn(Option<String>, usize) -> Fut,
        Fut: std::future::Future<Output = crate::ports::StoreResult<(Vec<T>, bool)>>,
    {
        let mut out = Vec::new();
        let mut bytes = 0;
        let mut scanned = 0;
        let mut before = self.before;
        loop {
            let (items, more) = fetch(before.clone(), self.limit).await?;
            let fetched = items.len();
            for (i, item) in items.iter().enumerate() {
                if (self.keep)(item) {
                    let shown = (self.show)(item);
                    let size = shown.to_string().len();
                    if !out.is_empty() && bytes + size > self.budget {
                        return Ok((out, before.map(|b| cursor_of(&b))));
                    }
                    bytes += size;
                    out.push(shown);
                }
                scanned += 1;
                before = Some((self.position)(item));
                let rest = more || i + 1 < fetched;
                if out.len() >= self.limit || scanned >= self.max_scanned {
                    return Ok((out, before.filter(|_| rest).map(|b| cursor_of(&b))));
                }
            }
            if !more || fetched == 0 {
                return Ok((out, None));
            }
        }
    }
}

/// The session with a page of its audit trail (newest first; its tool calls apart) and one
/// of its approvals, each with the cursor of the next page (`nextCursor`,
/// `approvalsNextCursor`; `null` at the end).
pub async fn view(
    ctx: &ToolPorts<'_>,
    p: &Principal,
    id: &str,
    q: &ViewQuery,
) -> Result<Value, Error> {
    let session = owned_session(ctx, p, id, true).await?;
    let now = ctx.clock.now();
    let filtered = !(q.actions.is_empty() && q.outcomes.is_empty());
    let keep_entry = |e: &AuditEntry| q.keeps(e);
    let show_entry = |e: &AuditEntry| serde_json::to_value(e).unwrap_or(Value::Null);
    let audit = Paging {
        before: q.cursor.clone(),
        limit: q.limit,
        budget: AUDIT_BYTES,
        max_scanned: if filtered { MAX_SCANNED } else { q.limit },
        keep: &keep_entry,
        show: &show_entry,
        position: crate::ports::agent_tools::audit_position,
    }
    .run(|before, limit| {
        // A filtered page reads ahead in larger steps.
        let step = if filtered { MAX_PAGE } else { limit };
        let (tenant, session) = (&p.tenant_id, &session.id);
        async move {
            ctx.store
                .audit_trail(tenant, session, before.as_deref(), step)
                .await
        }
    });
    let keep_all = |_: &Approval| true;
    let show_approval = |a: &Approval| super::approval::approval_view(a, now);
    let approvals = Paging {
        before: q.approvals_cursor.clone(),
        limit: APPROVALS_PAGE,
        budget: APPROVALS_BYTES,
        max_scanned: APPROVALS_PAGE,
        keep: &keep_all,
        show: &show_approval,
        position: crate::ports::agent_tools::approval_position,
    }
    .run(|before, limit| {
        let (tenant, session) = (&p.tenant_id, &session.id);
        async move {
            ctx.store
                .session_approvals(tenant, session, before.as_deref(), limit)
                .await
        }
    });
    let (audit, approvals, ws) = tokio::join!(
        audit,
        approvals,
        ctx.store.workspace(&p.tenant_id, &session.workspace_id),
    );
    let (trail, next) = audit?;
    let (approvals, approvals_next) = approvals?;
    let tool_calls: Vec<&Value> = trail
        .iter()
        .filter(|e| {
            !e["action"]
                .as_str()
                .is_some_and(|a| a.starts_with("approval."))
        })
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
        "approvalsNextCursor": approvals_next,
        "audit": trail,
        "nextCursor": next,
    }))
}
