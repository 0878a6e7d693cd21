//! Debug support: log entries written by the routes (kept until they expire, readable by the
//! user whose request wrote them and by the tenant's admins; typed text is never in them) and
//! the export of one task with everything belonging to it.

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

/// Everything about one of the caller's tasks.
pub async fn export(
    store: &dyn Store,
    snapshots: &dyn SnapshotStore,
    p: &Principal,
    task_id: &str,
) -> Result<Value, Error> {
    let task = store
        .task(&p.tenant_id, task_id)
        .await?
        .filter(|t| t.user_id == p.user_id)
        .ok_or(crate::domain::TaskError::NotFound)?;
    let (steps, logs, messages) = tokio::join!(
        store.steps(&p.tenant_id, task_id),
        store.logs(&p.tenant_id, &p.user_id, Some(task_id), None, None, 500),
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
        listed.push(json!({ "stepIndex": index, "url": url, "bytes": state.snapshot_bytes }));
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
