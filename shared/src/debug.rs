//! Debug support: log entries written by the routes (kept until they expire, readable by the
//! user whose request wrote them and by the tenant's admins; typed text is never in them), the
//! export of one task with everything belonging to it, the listing of recent tasks and the
//! page a step saw (what the task inspector shows). A member reads their own tasks, an admin
//! any of the tenant's. The tenant's recipes, and their promotion by an admin: [`recipes`].

pub mod recipes;

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

/// Most entries of the tenant's task list one listing reads (about 100 bytes each): a
/// member's tasks among many others' may lie beyond it (the answer then says `truncated`).
pub const MAX_TASK_LIST_READ: usize = 5_000;
/// Most tasks a listing answers.
pub const MAX_TASKS_LISTED: usize = 200;
/// Bytes a snapshot may take in the answer as Lambda carries it: the page is escaped once as
/// a JSON string in the body and again as the body in API Gateway's envelope, which holds 6 MB.
pub const MAX_SNAPSHOT_ANSWER_BYTES: usize = 5_000_000;

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
        "query": t.goal.query,
        "url": t.goal.url,
        "status": t.status,
        "steps": t.stored.step_count,
        "usage": {
            "promptTokens": t.usage.prompt_tokens,
            "completionTokens": t.usage.completion_tokens,
            "cachedTokens": t.usage.cached_tokens,
            "costUsd": t.usage.cost_usd(),
            "costPartial": t.usage.unpriced && t.usage.cost_micros.is_some(),
        },
        "createdAt": crate::time::iso(t.stored.created_at),
        "updatedAt": crate::time::iso(t.stored.updated_at),
        "durationMs": (t.stored.updated_at - t.stored.created_at).num_milliseconds().max(0),
    })
}

/// The newest `limit` tasks `p` may read (a member's own; an admin's whole tenant), newest
/// first: `{ tasks, truncated }` (`truncated`: the read stopped at [`MAX_TASK_LIST_READ`]
/// entries, so older ones may be missing).
pub async fn tasks(store: &dyn Store, p: &Principal, limit: usize) -> Result<Value, Error> {
    let user = (!p.is_admin()).then_some(p.user_id.as_str());
    let (mut tasks, truncated) = store
        .recent_tasks(
            &p.tenant_id,
            user,
            limit.min(MAX_TASKS_LISTED),
            MAX_TASK_LIST_READ,
        )
        .await?;
    // The list entry names the user; the task itself decides.
    tasks.retain(|t| may_read(p, &t.user_id));
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
    let kept = answer_prefix(&text, MAX_SNAPSHOT_ANSWER_BYTES);
    Ok(json!({
        "stepIndex": index,
        "truncated": kept < text.len(),
        "content": &text[..kept],
    }))
}

/// The bytes of `text` (a char boundary) that fit in `budget` bytes once escaped twice as a
/// JSON string: in the answer's body, then as the body in the Lambda answer's envelope.
fn answer_prefix(text: &str, budget: usize) -> usize {
    let twice_escaped = |c: char| match c {
        // `"` → `\"` → `\\\"`; `\` likewise.
        '"' | '\\' => 4,
        // `\n` → `\\n`.
        '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 3,
        // `\u0001` → `\\u0001`.
        c if (c as u32) < 0x20 => 7,
        c => c.len_utf8(),
    };
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += twice_escaped(c);
        if used > budget {
            return at;
        }
    }
    text.len()
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

#[cfg(test)]
mod tests {
    use super::answer_prefix;

    #[test]
    fn a_snapshot_is_cut_to_what_fits_once_escaped_twice() {
        assert_eq!(answer_prefix("plain", 100), 5);
        // Each quote takes 4 bytes in the envelope: 3 fit in 12, not 4.
        assert_eq!(answer_prefix("\"\"\"\"", 12), 3);
        assert_eq!(answer_prefix("a\u{1}", 7), 1);
        // Never inside a character.
        assert_eq!(answer_prefix("éé", 3), 2);
        // What is kept, escaped twice, stays within the budget.
        let page = "[{\"i\":\"1\",\"n\":\"Caf\u{e9} \\\"quoted\\\"\"}]\n".repeat(1_000);
        let kept = answer_prefix(&page, 20_000);
        let body = serde_json::to_string(&page[..kept]).expect("json");
        let envelope = serde_json::to_string(&body).expect("json");
        // (Plus the quotes around the body: its own 2, escaped, and the envelope's 2.)
        assert!(
            envelope.len() <= 20_000 + 6 && kept < page.len(),
            "{}",
            envelope.len()
        );
    }
}
