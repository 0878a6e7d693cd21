//! Phase 5: the step, its messages, the page snapshot and the debug log are written
//! concurrently; then the response, its realtime events and the idempotent copy.

use std::time::Instant;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::response::{Metrics, StepResponse};
use super::{StepContext, StepInput};
use crate::context::AppContext;
use crate::domain::{Message, MessageRole, Step, Task, TaskError};
use crate::error::Error;
use crate::ports::{KnownSession, StoreError};
use crate::text::truncate_chars;

/// How long a completed idempotency key keeps its response.
const IDEMPOTENCY_HOURS: i64 = 24;

/// Writes the step, its messages and the page snapshot, and builds the response.
pub async fn persist(
    ctx: &AppContext,
    step: &StepContext,
    input: &StepInput,
    raw_page: &[u8],
    started: Instant,
) -> Result<Value, Error> {
    let decision = step
        .decision
        .clone()
        .ok_or_else(|| Error::internal("persist without a decision"))?;
    let req = &input.request;
    let now: DateTime<Utc> = ctx.clock.now();
    let expires_at = now.timestamp() + ctx.config.retention.task_seconds;
    let snapshot_key =
        crate::adapters::keys::snapshot_key(&step.tenant_id, &step.task_id, step.step_index);
    let record = Step {
        tenant_id: step.tenant_id.clone(),
        task_id: step.task_id.clone(),
        index: step.step_index,
        thought: decision.thought.clone(),
        action: decision.action.clone(),
        before_state: Some(json!({
            "url": req.url,
            "pageHash": step.page_hash,
            "summary": step.page_summary,
            "snapshotKey": snapshot_key,
            "snapshotBytes": raw_page.len(),
            "form": step.page_form,
        })),
        expected_outcome: None,
        verification: None,
        correction: None,
        client_outcome: (!req.last_action.is_empty())
            .then(|| serde_json::to_value(&req.last_action).unwrap_or(Value::Null)),
        usage: Some(serde_json::to_value(step.usage).unwrap_or(Value::Null)),
        timings: Some(json!({ "llmMs": step.llm_ms, "llmCalls": step.llm_calls })),
        created_at: now,
        expires_at,
        user_input: step.user_input.clone(),
    };

    let message = |role: MessageRole, content: &str| {
        Message::new(
            &step.tenant_id,
            &step.session_id,
            Some((&step.task_id, expires_at)),
            role,
            content,
            now,
        )
    };
    let mut messages = Vec::new();
    if step.task.is_none() {
        messages.push(message(MessageRole::User, &req.query));
    } else if let Some(answer) = &step.user_input {
        messages.push(message(MessageRole::User, answer));
    }
    let mut reply = message(MessageRole::Assistant, &decision.thought);
    reply.action_string = Some(decision.action.clone());
    reply.status = Some(
        serde_json::to_value(decision.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
    );
    reply.dom_summary = Some(truncate_chars(&step.page_summary, 200));
    reply.snapshot_id = Some(snapshot_key.clone());
    reply.metadata = Some(json!({ "stepIndex": step.step_index }));
    messages.push(reply);

    let store = ctx.store.as_ref();
    let task_write = async {
        match &step.task {
            None => {
                let task = Task {
                    id: step.task_id.clone(),
                    tenant_id: step.tenant_id.clone(),
                    user_id: step.user_id.clone(),
                    session_id: Some(step.session_id.clone()),
                    status: decision.status,
                    query: req.query.clone(),
                    url: req.url.clone(),
                    plan: None,
                    step_count: 1,
                    version: 0,
                    lease_owner: None,
                    lease_until: None,
                    created_at: now,
                    updated_at: now,
                    expires_at,
                };
                store.start_task(&task, &record).await
            }
            Some(_) => {
                store
                    .record_step(&record, decision.status, &step.lease_owner, now)
                    .await
            }
        }
    };
    let log = crate::debug::entry(
        ctx,
        crate::debug::LogScope {
            tenant_id: &step.tenant_id,
            user_id: &step.user_id,
            task_id: Some(&step.task_id),
        },
        "step",
        &format!(
            "step {} decided: {}",
            step.step_index,
            crate::agent::action::redacted(&decision.action)
        ),
        Some(json!({
            "status": decision.status,
            "usage": step.usage,
            "llmMs": step.llm_ms,
            "llmCalls": step.llm_calls,
            "pageForm": step.page_form,
            "pageHash": step.page_hash,
        })),
        now,
    );
    // A session made by init has no task yet: its automatic title learns the first task,
    // unless the user renamed it.
    let retitle = step
        .session
        .as_ref()
        .filter(|s| !s.is_renamed && s.message_count == 0 && step.task.is_none())
        .map(|s| crate::ports::SessionChanges {
            title: Some(crate::domain::session::auto_title(
                &s.domain,
                Some(&req.query),
            )),
            ..crate::ports::SessionChanges::default()
        });
    let (written, stored_messages, snapshot, logged, retitled) = tokio::join!(
        task_write,
        store.append_messages_after(
            &step.tenant_id,
            &step.session_id,
            &messages,
            step.new_session.as_ref(),
            match (&step.session, &step.new_session) {
                (Some(s), _) => KnownSession::Present(s),
                (None, Some(_)) => KnownSession::Missing,
                (None, None) => KnownSession::Unknown,
            },
        ),
        ctx.snapshots
            .put_snapshot(&step.tenant_id, &step.task_id, step.step_index, raw_page),
        store.append_log(&log),
        async {
            match &retitle {
                Some(changes) => store
                    .update_session(&step.tenant_id, &step.session_id, changes, now)
                    .await
                    .map(drop),
                None => Ok(()),
            }
        },
    );
    if let Err(e) = retitled {
        tracing::warn!(error = %e, "could not update the session title");
    }
    match written {
        Ok(()) => {}
        Err(StoreError::Conflict(_)) => {
            return Err(TaskError::Busy("Another request for this task got there first").into())
        }
        Err(e) => return Err(e.into()),
    }
    // The step is recorded: a failed message or snapshot write is logged, not fatal.
    let stored_messages = stored_messages.map_err(|e| {
        tracing::warn!(error = %e, "could not store the step's messages");
    });
    if let Err(e) = logged {
        tracing::warn!(error = %e, "could not store the step's debug log");
    }
    if let Err(e) = snapshot {
        tracing::warn!(error = %e, "could not store the page snapshot");
    }

    let response = StepResponse {
        success: true,
        thought: decision.thought.clone(),
        action: decision.action.clone(),
        task_id: step.task_id.clone(),
        session_id: step.session_id.clone(),
        has_org_knowledge: step.has_org_knowledge,
        status: decision.status,
        usage: step.usage,
        metrics: Metrics {
            duration_ms: started.elapsed().as_millis() as u64,
            llm_ms: step.llm_ms,
            llm_calls: step.llm_calls,
            step_index: step.step_index,
        },
        user_question: decision.user_question.clone(),
    };
    let response = serde_json::to_value(&response)
        .map_err(|e| Error::internal(format!("response serialisation: {e}")))?;
    // Events go to the session's channel only when its messages were stored: the session (and
    // so the channel) is this user's.
    if let Ok(stored) = &stored_messages {
        crate::realtime::notify(
            ctx,
            &step.session_id,
            Some(&step.task_id),
            stored,
            Some(&response),
        )
        .await;
    }
    if let Some(key) = &input.idempotency_key {
        let keep_until = now + chrono::Duration::hours(IDEMPOTENCY_HOURS);
        if let Err(e) = store
            .complete(
                &step.tenant_id,
                &step.user_id,
                key,
                &input.request_id,
                &response,
                keep_until,
            )
            .await
        {
            tracing::warn!(error = %e, "could not store the idempotent response");
        }
    }
    tracing::info!(
        tenant = %step.tenant_id,
        task = %step.task_id,
        step = step.step_index,
        status = ?decision.status,
        llm_ms = step.llm_ms,
        llm_calls = step.llm_calls,
        prompt_tokens = step.usage.prompt_tokens,
        page_form = %step.page_form,
        "step decided"
    );
    Ok(response)
}
