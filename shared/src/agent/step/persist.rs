//! Phase 7 (Persist): the step with the task's new state (one transaction; nothing else is
//! written if it fails), then its messages, the page snapshot, the debug log and the session's
//! changes concurrently; then the response, its realtime events and the idempotent copy.

use std::time::Instant;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::response::StepResponse;
use super::{records, secrets, BuiltPage, Decision, StepContext, StepInput};
use crate::agent::step::StepPorts;
use crate::domain::intervention::Intervention;
use crate::domain::secrets::Finder;
use crate::domain::{Message, MessageRole, SessionStatus, TaskError, TaskStatus};
use crate::error::Error;
use crate::ports::metrics::StepFigures;
use crate::ports::{KnownSession, SessionChanges, SessionPlace, StoreError};
use crate::text::truncate_chars;

/// How long a completed idempotency key keeps its response.
const IDEMPOTENCY_HOURS: i64 = 24;

/// The user's message (a new task's query, or an answer) and the agent's reply.
fn messages(step: &StepContext, d: &Decision, query: &str, now: DateTime<Utc>) -> Vec<Message> {
    let message = |role: MessageRole, content: &str| {
        Message::new(
            &step.tenant_id,
            &step.session.id,
            Some((&step.task.id, step.task.stored.expires_at)),
            role,
            content,
            now,
        )
    };
    let mut out = Vec::new();
    if step.request.is_new {
        out.push(message(MessageRole::User, query));
    } else if let Some(answer) = &step.request.user_input {
        out.push(message(MessageRole::User, answer));
    }
    let mut reply = message(MessageRole::Assistant, &d.thought);
    reply.action_string = Some(d.action.clone());
    reply.status = serde_json::to_value(d.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned));
    reply.dom_summary = Some(truncate_chars(&step.page.summary, 200));
    reply.snapshot_id = Some(crate::ports::snapshot_key(
        &step.tenant_id,
        &step.task.id,
        step.request.first_index,
    ));
    reply.metadata = Some(json!({ "stepIndex": step.records.step_index }));
    out.push(reply);
    out
}

/// A response that typed a secret, as it is kept: a server round (the client calls again and
/// the step reads the page anew), with the step's thought.
fn withheld(d: &Decision) -> Decision {
    let mut round = super::tools::server_round(&d.thought, "secret_withheld", None);
    round.status = d.status;
    round
}

/// What the step changes on its session: the task waiting for the user, exported notes, the
/// page of a session made without one (init before the client knew its tab: the first task's
/// web page names it), the automatic title of a session made by init before its first task,
/// and an archived session a new task is started in, which is active again (its archived task
/// stays ended).
fn session_changes(
    step: &StepContext,
    status: TaskStatus,
    query: &str,
    url: &str,
    hidden: &Finder,
) -> Option<SessionChanges> {
    let waits = status.asks_user();
    let current = step
        .session
        .read
        .as_ref()
        .and_then(|s| s.waiting_task_id.as_deref());
    let waiting_task_id = match (waits, current) {
        (true, c) if c != Some(step.task.id.as_str()) => Some(Some(step.task.id.clone())),
        (false, Some(c)) if c == step.task.id => Some(None),
        _ => None,
    };
    let place = step
        .session
        .read
        .as_ref()
        .filter(|s| s.domain.is_empty())
        .map(|_| crate::domain::session::session_domain(None, url))
        .filter(|d| !d.is_empty())
        .map(|domain| SessionPlace {
            user_id: step.user_id.clone(),
            url: url.to_owned(),
            domain,
        });
    let title = step
        .session
        .read
        .as_ref()
        .filter(|s| !s.is_renamed && s.message_count == 0 && step.request.is_new)
        .map(|s| {
            let domain = place.as_ref().map_or(s.domain.as_str(), |p| &p.domain);
            crate::domain::session::auto_title(domain, Some(query))
        })
        // A secret the task typed, kept in the title made from its instruction, is hidden.
        .or_else(|| {
            let title = &step.session.read.as_ref()?.title;
            hidden
                .in_text(title)
                .then(|| hidden.scrub(title).into_owned())
        });
    // And in the session's metadata (`initialQuery`).
    let metadata = step
        .session
        .read
        .as_ref()
        .and_then(|s| s.metadata.as_ref())
        .filter(|m| hidden.in_text(&m.to_string()))
        .and_then(|m| hidden.scrubbed(m));
    let reopened = step
        .session
        .read
        .as_ref()
        .is_some_and(|s| step.request.is_new && s.status == SessionStatus::Archived);
    let changes = SessionChanges {
        title,
        waiting_task_id,
        memory: step.session.memory.clone(),
        place,
        status: reopened.then_some(SessionStatus::Active),
        metadata,
        ..SessionChanges::default()
    };
    let any = changes.title.is_some()
        || changes.metadata.is_some()
        || changes.waiting_task_id.is_some()
        || changes.memory.is_some()
        || changes.place.is_some()
        || changes.status.is_some();
    any.then_some(changes)
}

/// What the stored step counts in the metrics.
fn step_figures<'a>(
    step: &'a StepContext,
    status: TaskStatus,
    step_ms: u64,
    interventions: &'a [Intervention],
) -> StepFigures<'a> {
    use crate::ports::metrics::Verdict;
    StepFigures {
        tenant_id: &step.tenant_id,
        task_id: &step.task.id,
        step_index: step.records.step_index,
        started_task: step.request.is_new,
        status,
        usage: step.spend.usage,
        llm_calls: step.spend.llm_calls,
        llm_ms: step.spend.llm_ms,
        step_ms,
        interventions,
        verdict: step.verdicts.verification.as_ref().map(|v| match v {
            v if v.success => Verdict::Passed,
            v if v.unconfirmed => Verdict::Unconfirmed,
            _ => Verdict::Failed,
        }),
    }
}

/// Why the step's write lost: the task was ended meanwhile (its session archived: `409
/// TASK_COMPLETED`, as its next request would be told), or another request got there first.
async fn lost_to(ctx: &StepPorts<'_>, step: &StepContext) -> Error {
    let tenant = step.tenant_id.as_str();
    let (task, session) = tokio::join!(
        ctx.store.task(tenant, &step.task.id),
        ctx.store.session(tenant, &step.session.id)
    );
    match task {
        Ok(Some(t)) if t.status.is_finished() => {
            let archived = matches!(session, Ok(Some(s)) if s.status == SessionStatus::Archived);
            if archived {
                TaskError::Archived.into()
            } else {
                TaskError::Finished(t.status).into()
            }
        }
        _ => TaskError::Busy("Another request for this task got there first").into(),
    }
}

/// Writes the step, its messages and the page snapshot, and builds the response.
pub async fn persist(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    input: &StepInput,
    snapshot: &BuiltPage,
    started: Instant,
) -> Result<Value, Error> {
    let mut d = step
        .answer
        .decision
        .clone()
        .ok_or_else(|| Error::internal("persist without a decision"))?;
    let req = &input.request;
    let now: DateTime<Utc> = ctx.clock.now();
    let (hidden, kept) = secrets::hide(ctx, step, &mut d, &snapshot.page, &req.url);
    let query = hidden.scrub(&req.query);
    step.task.status = d.status;
    step.task.usage.add(step.spend.usage);
    step.task.stored.updated_at = now;
    let mut records = records::all(step, &kept, req, snapshot.snapshot_bytes(), now);
    // The decision's record keeps its target as a recipe can find it again.
    if let Some(r) = records.last_mut() {
        let view = crate::agent::page::PageView {
            page: &snapshot.page,
            url: &req.url,
        };
        let title = req.page_title.as_deref();
        let mut mark = crate::agent::recipe::mark(&view, &req.url, title, &r.action);
        mark.used = step.answer.recipe_use.clone();
        r.recipe = Some(mark);
    }
    // The client's report, the user's words and the page's names go into the records too: all
    // of it is scrubbed.
    let records = hidden.scrubbed_all(records);
    let messages = hidden.scrubbed_all(messages(step, &kept, &query, now));
    let store = ctx.store;
    let task_write = async {
        if step.request.is_new {
            let mut task = step.task.clone();
            task.stored.step_count = records.len() as u32;
            store.start_task(&task, &records).await
        } else {
            store
                .record_steps(&records, &step.task, &step.request.lease_owner)
                .await
        }
    };
    let log = crate::debug::entry(
        ctx.retention,
        crate::debug::LogScope {
            tenant_id: &step.tenant_id,
            user_id: &step.user_id,
            task_id: Some(&step.task.id),
        },
        "step",
        &format!(
            "step {} decided: {}",
            step.records.step_index,
            crate::agent::action::redacted(&kept.action)
        ),
        Some(json!({
            "status": d.status,
            "usage": step.spend.usage,
            "llmMs": step.spend.llm_ms,
            "llmCalls": step.spend.llm_calls,
            "pageForm": step.page.form,
            "pageHash": step.page.hash,
            "verification": step.verdicts.verification,
            "correction": step.verdicts.correction,
        })),
        now,
    );
    // A session created with this step carries its changes from the start.
    let mut new_session = step
        .session
        .new
        .as_ref()
        .map(|s| hidden.scrubbed(s).unwrap_or_else(|| s.clone()));
    let url = hidden.scrub(&req.url);
    let changes = match (
        &mut new_session,
        session_changes(step, d.status, &query, &url, &hidden),
    ) {
        (Some(s), Some(c)) => {
            if let Some(w) = c.waiting_task_id {
                s.waiting_task_id = w;
            }
            if let Some(m) = c.memory {
                s.memory = m;
            }
            None
        }
        (_, c) => c,
    };
    // The step and the task's new state first: if that fails nothing else is written.
    match task_write.await {
        Ok(()) => {}
        Err(StoreError::Conflict(_)) => return Err(lost_to(ctx, step).await),
        Err(e) => return Err(e.into()),
    }
    let (stored_messages, snapshot, logged, changed, ()) = tokio::join!(
        store.append_messages_after(
            &step.tenant_id,
            &step.session.id,
            &messages,
            new_session.as_ref(),
            match (&step.session.read, &new_session) {
                (Some(s), _) => KnownSession::Present(s),
                (None, Some(_)) => KnownSession::Missing,
                (None, None) => KnownSession::Unknown,
            },
        ),
        async {
            let internal = |e: Error| StoreError::Internal(e.to_string());
            let masked = snapshot.masked(&hidden).await.map_err(internal)?;
            let compressed = match &masked {
                Some(m) => m,
                None => snapshot.compressed().await.map_err(internal)?,
            };
            ctx.snapshots
                .put_compressed(
                    &step.tenant_id,
                    &step.task.id,
                    step.request.first_index,
                    compressed,
                )
                .await
        },
        store.append_log(&log),
        async {
            match &changes {
                Some(c) => store
                    .update_session(&step.tenant_id, &step.session.id, c, now)
                    .await
                    .map(drop),
                None => Ok(()),
            }
        },
        super::recipe::record(ctx, step, &records),
    );
    // The step is recorded: a failed message, session, snapshot or log write is logged, not
    // fatal.
    let stored_messages = stored_messages.map_err(|e| {
        tracing::warn!(error = %e, "could not store the step's messages");
    });
    for (what, result) in [
        ("the session's changes", changed),
        ("the step's debug log", logged),
        ("the page snapshot", snapshot.map(drop)),
    ] {
        if let Err(e) = result {
            tracing::warn!(error = %e, "could not store {what}");
        }
    }

    let duration_ms = started.elapsed().as_millis() as u64;
    let to_json = |d: &Decision| {
        serde_json::to_value(StepResponse::new(step, d, duration_ms))
            .map(|v| super::response::for_client(v, req.capabilities))
            .map_err(|e| Error::internal(format!("response serialisation: {e}")))
    };
    let response = to_json(&d)?;
    // The copy kept for a retry and sent to the realtime channel holds no secret: a response
    // that types one is kept as a server round, so a retry reads the page again.
    let copy = if kept.action != d.action || kept.chain != d.chain {
        to_json(&withheld(&d))?
    } else {
        response.clone()
    };
    // Events go to the session's channel only when its messages were stored: the session (and
    // so the channel) is this user's.
    if let Ok(stored) = &stored_messages {
        crate::realtime::notify(
            ctx.realtime,
            &step.session.id,
            Some(&step.task.id),
            stored,
            Some(&copy),
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
                &copy,
                keep_until,
            )
            .await
        {
            tracing::warn!(error = %e, "could not store the idempotent response");
        }
    }
    let kinds = step.all_interventions();
    ctx.metrics
        .step(&step_figures(step, d.status, duration_ms, &kinds));
    tracing::info!(
        tenant = %step.tenant_id,
        task = %step.task.id,
        step = step.records.step_index,
        status = ?d.status,
        llm_ms = step.spend.llm_ms,
        llm_calls = step.spend.llm_calls,
        prompt_tokens = step.spend.usage.prompt_tokens,
        page_form = %step.page.form,
        verified = ?step.verdicts.verification.as_ref().map(|v| v.success),
        "step decided"
    );
    Ok(response)
}
