//! Debug support: log entries written by the routes (kept until they expire, readable by the
//! user whose request wrote them and by the tenant's admins; typed text is never in them), the
//! export of one task with everything belonging to it, the listing of recent tasks and the
//! page a step saw (what the task inspector shows). A member reads their own tasks, an admin
//! any of the tenant's.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use crate::auth::Principal;
use crate::config::Retention;
use crate::error::Error;
use crate::ports::{DebugLog, MessagesFrom, SnapshotStore, Store};
use crate::views::MessageView;

/// How long presigned snapshot URLs of an export stay valid.
pub const EXPORT_URL_SECONDS: u64 = 300;

/// Whose log an entry is: the tenant and user of the request, and the task when there is one.
#[derive(Debug, Clone, Copy)]
pub struct LogScope<'a> {
    pub tenant_id: &'a str,
    pub user_id: &'a str,
    pub task_id: Option<&'a str>,
}

/// A log entry of `scope`, expiring with the task retention.
pub fn entry(
    retention: &Retention,
    scope: LogScope<'_>,
    log_type: &str,
    message: &str,
    data: Option<Value>,
    now: DateTime<Utc>,
) -> DebugLog {
    DebugLog {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: scope.tenant_id.to_owned(),
        user_id: scope.user_id.to_owned(),
        task_id: scope.task_id.map(str::to_owned),
        log_type: log_type.to_owned(),
        message: message.to_owned(),
        data,
        timestamp: now,
        expires_at: now.timestamp() + retention.task_seconds,
    }
}

/// `{ id, taskId, logType, message, data?, timestamp }`.
pub fn log_view(l: &DebugLog) -> Value {
    let mut v = json!({
        "id": l.id,
        "taskId": l.task_id,
        "logType": l.log_type,
        "message": l.message,
        "timestamp": crate::time::iso(l.timestamp),
    });
    if let Some(d) = &l.data {
        v["data"] = d.clone();
    }
    v
}

/// Most tasks a listing reads (a tenant holds only the tasks of its retention period).
pub const MAX_TASKS_READ: usize = 2_000;
/// Most tasks a listing answers.
pub const MAX_TASKS_LISTED: usize = 200;
/// Largest snapshot answered whole (a Lambda answer holds 6 MB); a larger one is cut.
pub const MAX_SNAPSHOT_CHARS: usize = 4_000_000;

/// Whether `p` may read a task of `owner` in its tenant: its own, or any when an admin.
fn may_read(p: &Principal, owner: &str) -> bool {
    owner == p.user_id || p.is_admin()
}

/// One of the tasks `p` may read, or `NotFound` (another tenant's, another user's for a
/// member, or none: indistinguishable).
async fn readable_task(
    store: &dyn Store,
    p: &Principal,
    task_id: &str,
) -> Result<crate::domain::Task, Error> {
    Ok(store
        .task(&p.tenant_id, task_id)
        .await?
        .filter(|t| may_read(p, &t.user_id))
        .ok_or(crate::domain::TaskError::NotFound)?)
}

/// `{ taskId, userId, query, url, status, steps, usage, createdAt, updatedAt, durationMs }`:
/// a task as the inspector lists it (`usage.costUsd` is null without a price).
pub fn task_row(t: &crate::domain::Task) -> Value {
    json!({
        "taskId": t.id,
        "userId": t.user_id,
        "query": t.query,
        "url": t.url,
        "status": t.status,
        "steps": t.step_count,
        "usage": {
            "promptTokens": t.usage.prompt_tokens,
            "completionTokens": t.usage.completion_tokens,
            "cachedTokens": t.usage.cached_tokens,
            "costUsd": t.usage.cost_usd(),
        },
        "createdAt": crate::time::iso(t.created_at),
        "updatedAt": crate::time::iso(t.updated_at),
        "durationMs": (t.updated_at - t.created_at).num_milliseconds().max(0),
    })
}

/// The newest `limit` tasks `p` may read (a member's own; an admin's whole tenant), newest
/// first: `{ tasks, truncated }` (`truncated`: the tenant holds more tasks than one listing
/// reads, so older ones may be missing).
pub async fn tasks(store: &dyn Store, p: &Principal, limit: usize) -> Result<Value, Error> {
    let mut tasks = store.tenant_tasks(&p.tenant_id, MAX_TASKS_READ).await?;
    let truncated = tasks.len() >= MAX_TASKS_READ;
    tasks.retain(|t| may_read(p, &t.user_id));
    tasks.sort_by(|a, b| {
        b.created_at
            .cmp(&a.created_at)
            .then_with(|| b.id.cmp(&a.id))
    });
    tasks.truncate(limit.min(MAX_TASKS_LISTED));
    Ok(json!({
        "tasks": tasks.iter().map(task_row).collect::<Vec<_>>(),
        "truncated": truncated,
    }))
}

/// The page the model saw at step `index` of a task `p` may read, as stored (typed secrets
/// masked): `{ stepIndex, content, truncated }`.
pub async fn snapshot(
    store: &dyn Store,
    snapshots: &dyn SnapshotStore,
    p: &Principal,
    task_id: &str,
    index: u32,
) -> Result<Value, Error> {
    let task = readable_task(store, p, task_id).await?;
    let bytes = snapshots
        .snapshot(&task.tenant_id, &task.id, index)
        .await?
        .ok_or_else(|| Error::NotFound {
            code: "SNAPSHOT_NOT_FOUND",
            message: "No page was stored for that step".into(),
        })?;
    let text = String::from_utf8_lossy(&bytes);
    let cut = crate::text::cut_at(&text, MAX_SNAPSHOT_CHARS);
    Ok(json!({
        "stepIndex": index,
        "truncated": cut.is_some(),
        "content": &text[..cut.unwrap_or(text.len())],
    }))
}

/// Everything about one task `p` may read (a member's own; any of the tenant's for an admin).
pub async fn export(
    store: &dyn Store,
    snapshots: &dyn SnapshotStore,
    p: &Principal,
    task_id: &str,
) -> Result<Value, Error> {
    let task = readable_task(store, p, task_id).await?;
    let (steps, logs, messages) = tokio::join!(
        store.steps(&p.tenant_id, task_id),
        store.logs(&p.tenant_id, &task.user_id, Some(task_id), None, None, 500),
        async {
            match &task.session_id {
                Some(s) => store
                    .messages(&p.tenant_id, s, MessagesFrom::After(0), 10_000)
                    .await
                    .map(|page| page.messages),
                None => Ok(Vec::new()),
            }
        }
    );
    let (steps, logs, messages) = (steps?, logs?, messages?);
    // One snapshot per request: the records of a request's server tools and its decision
    // share the page stored under the request's first step.
    let mut listed = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for s in &steps {
        let Some(state) = &s.before_state else {
            continue;
        };
        let Some(index) = state
            .snapshot_key
            .as_deref()
            .and_then(|k| k.rsplit('/').next()?.parse::<u32>().ok())
        else {
            continue;
        };
        if !seen.insert(index) {
            continue;
        }
        let url = snapshots
            .presign_snapshot(&p.tenant_id, task_id, index, EXPORT_URL_SECONDS)
            .await?;
        // `url` is the stored (compressed) object; `path` answers it readable (the inspector's).
        let path = format!("/api/debug/session/{task_id}/snapshot/{index}");
        listed.push(
            json!({ "stepIndex": index, "url": url, "path": path, "bytes": state.snapshot_bytes }),
        );
    }
    // Each record names the step it judged or corrected (`stepIndex`) and the step that
    // made it (`recordedAt`).
    let record = |s: &crate::domain::Step, v: Value| {
        let mut v = v;
        if let Some(o) = v.as_object_mut() {
            o.insert("recordedAt".into(), json!(s.index));
        }
        v
    };
    Ok(json!({
        "task": task,
        "actions": steps,
        "messages": messages.iter().filter(|m| m.task_id.as_deref() == Some(task_id)).map(MessageView::from).collect::<Vec<_>>(),
        "verifications": steps.iter().filter_map(|s| s.verification.as_ref().map(|v| record(s, json!(v)))).collect::<Vec<_>>(),
        "corrections": steps.iter().filter_map(|s| s.correction.as_ref().map(|v| record(s, json!(v)))).collect::<Vec<_>>(),
        "snapshots": listed,
        "logs": logs.iter().map(log_view).collect::<Vec<_>>(),
    }))
}
