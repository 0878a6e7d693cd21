//! One interact step as named phases over a small serializable [`StepContext`]:
//!
//! 1. [`load`]: token revocation, idempotency, rate limits, the task (leased, so one request
//!    at a time), its history, the session and the tenant's allowed domains — one concurrent
//!    round of store calls — then organisation knowledge when the page's domain is allowed.
//! 2. [`decide`]: render the page within budget, build the prompt, ask the model.
//! 3. [`guard`]: the answer must parse, be in the grammar, be quotable for the client and name
//!    an element of this request's page; otherwise the model gets one retry with the problem
//!    fed back, and then the step answers `fail()`.
//! 4. [`persist`]: the step (with the task's new status and the lease released), the session's
//!    messages and the page snapshot — concurrently — then the response.
//!
//! A new task is written only in `persist`, so a failed step leaves nothing behind; an existing
//! task's lease is released on every error path.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::action::Action;
use super::output::parse_model_output;
use super::page::{truncate_chars, Page};
use super::prompt::{self, PromptInput};
use super::render::{render, Budget, Rendered};
use super::request::{InteractRequest, PageInput};
use crate::auth::rate_limit::FixedWindow;
use crate::auth::Principal;
use crate::context::AppContext;
use crate::domain::site::host_of;
use crate::domain::{Message, MessageRole, Session, Step, Task, TaskStatus};
use crate::error::Error;
use crate::knowledge::KnowledgeChunk;
use crate::llm::{ChatMessage, LlmError};
use crate::ports::{KnownSession, Reservation, Store, StoreError};

/// How long an idempotency key remembers its response.
const IDEMPOTENCY_HOURS: i64 = 24;
/// Time kept back from the model for persisting the step.
const PERSIST_RESERVE: Duration = Duration::from_millis(2_500);
/// A corrective second model call is only made with at least this much time left.
const RETRY_MIN_TIME: Duration = Duration::from_secs(3);

/// What a request brings to the step.
#[derive(Debug, Clone)]
pub struct StepInput {
    pub principal: Principal,
    pub request: InteractRequest,
    pub request_id: String,
    pub idempotency_key: Option<String>,
}

/// Token usage summed over a step's model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// What the step decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub thought: String,
    /// In the client's grammar.
    pub action: String,
    pub status: TaskStatus,
    pub user_question: Option<String>,
}

/// The state carried between phases: references and small summaries, never the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepContext {
    pub tenant_id: String,
    pub user_id: String,
    /// Holder id of the task lease (the request id).
    pub lease_owner: String,
    /// The existing task (leased), or `None` for a new one.
    pub task: Option<Task>,
    pub task_id: String,
    pub step_index: u32,
    pub session_id: String,
    /// Set when the session must be created with this step.
    pub new_session: Option<Session>,
    /// The session as read in `load`, when it exists (saves a read when appending messages).
    pub session: Option<Session>,
    /// The user's reply carried by this request (after an `ask_user`).
    pub user_input: Option<String>,
    pub history: Vec<Step>,
    pub has_org_knowledge: bool,
    pub knowledge: Vec<KnowledgeChunk>,
    pub page_hash: String,
    pub page_summary: String,
    pub page_form: String,
    pub decision: Option<Decision>,
    pub usage: Usage,
    pub llm_ms: u64,
    pub llm_calls: u32,
}

/// Runs a whole step and returns the response body.
pub async fn run(ctx: &AppContext, input: StepInput) -> Result<Value, Error> {
    let started = Instant::now();
    let deadline = started + Duration::from_millis(ctx.config.agent.step_deadline_ms);
    // Checked first: without a model nothing is read or written.
    if ctx.llm.is_none() {
        return Err(Error::LlmNotConfigured);
    }
    let loaded = match load(ctx, &input).await? {
        Loaded::Replay(response) => return Ok(response),
        Loaded::Ready(step) => step,
    };
    let page = build_page(&input.request);
    let mut step = *loaded;
    step.page_hash = page.hash.clone();
    step.page_summary = page.summary(input.request.page_title.as_deref());
    let outcome = async {
        let rendered = render(
            &page,
            Budget {
                max_tokens: ctx.config.agent.page_tokens,
                chars_per_token: ctx.config.agent.chars_per_token,
            },
        );
        step.page_form = rendered.form.to_owned();
        decide(ctx, &mut step, &input.request, &page, &rendered, deadline).await?;
        persist(ctx, &step, &input, started).await
    }
    .await;
    match outcome {
        Ok(response) => Ok(response),
        Err(e) => {
            release(ctx, &step, &input).await;
            Err(e)
        }
    }
}

/// Gives back what `load` claimed (task lease, idempotency key) after a failure.
async fn release(ctx: &AppContext, step: &StepContext, input: &StepInput) {
    let lease = step
        .task
        .is_some()
        .then_some((step.task_id.as_str(), step.lease_owner.as_str()));
    hand_back(
        ctx.store.as_ref(),
        &step.tenant_id,
        &step.user_id,
        lease,
        input.idempotency_key.as_deref(),
    )
    .await;
}

/// Releases a task lease `(task, owner)` and abandons an idempotency key, when given. Failures
/// are logged: the lease expires and the key can be retried after it anyway.
async fn hand_back(
    store: &dyn Store,
    tenant_id: &str,
    user_id: &str,
    lease: Option<(&str, &str)>,
    key: Option<&str>,
) {
    if let Some((task_id, owner)) = lease {
        if let Err(e) = store.release_lease(tenant_id, task_id, owner).await {
            tracing::warn!(error = %e, "could not release the task lease");
        }
    }
    if let Some(key) = key {
        if let Err(e) = store.abandon(tenant_id, user_id, key).await {
            tracing::warn!(error = %e, "could not release the idempotency key");
        }
    }
}

fn build_page(req: &InteractRequest) -> Page {
    match &req.page {
        PageInput::Tree(nodes) => Page::from_tree(nodes.clone(), req.viewport),
        PageInput::Dom(dom) => Page::from_dom(dom),
    }
}

/// What `load` produced.
pub enum Loaded {
    /// A retried request whose response is stored.
    Replay(Value),
    Ready(Box<StepContext>),
}

fn not_found_task() -> Error {
    Error::NotFound {
        code: "TASK_NOT_FOUND",
        message: "No such task".into(),
    }
}

/// Phase 1: claims and reads everything the step needs.
pub async fn load(ctx: &AppContext, input: &StepInput) -> Result<Loaded, Error> {
    let p = &input.principal;
    let req = &input.request;
    let now = ctx.clock.now();
    let agent = &ctx.config.agent;
    let window = |limit| FixedWindow {
        limit,
        window_seconds: agent.rate_window_seconds,
    };
    let lease_until = now + chrono::Duration::milliseconds(agent.step_deadline_ms as i64 + 5_000);
    let store = ctx.store.as_ref();
    let (per_user, per_tenant) = (window(agent.rate_per_user), window(agent.rate_per_tenant));
    let user_key = format!("interact-user#{}#{}", p.tenant_id, p.user_id);
    let tenant_key = format!("interact-tenant#{}", p.tenant_id);

    let (not_revoked, reservation, user_rate, tenant_rate, task, history, session, domains) = tokio::join!(
        crate::auth::ensure_not_revoked(ctx, p),
        async {
            match &input.idempotency_key {
                Some(k) => store
                    .reserve(
                        &p.tenant_id,
                        &p.user_id,
                        k,
                        now + chrono::Duration::hours(IDEMPOTENCY_HOURS),
                    )
                    .await
                    .map(Some),
                None => Ok(None),
            }
        },
        per_user.hit(store, &user_key, now),
        per_tenant.hit(store, &tenant_key, now),
        async {
            match &req.task_id {
                Some(id) => store
                    .acquire_lease(&p.tenant_id, id, &input.request_id, lease_until, now)
                    .await
                    .map(Some),
                None => Ok(None),
            }
        },
        async {
            match &req.task_id {
                Some(id) => store.steps(&p.tenant_id, id).await,
                None => Ok(Vec::new()),
            }
        },
        async {
            match &req.session_id {
                Some(id) => store.session(&p.tenant_id, id).await,
                None => Ok(None),
            }
        },
        store.allowed_domains(&p.tenant_id),
    );

    // Whatever fails below must hand back what was claimed here.
    let lease = match (&task, &req.task_id) {
        (Ok(Some(_)), Some(id)) => Some((id.as_str(), input.request_id.as_str())),
        _ => None,
    };
    let key = match reservation {
        Ok(Some(Reservation::New)) => input.idempotency_key.as_deref(),
        _ => None,
    };
    let give_back = |err: Error| async move {
        hand_back(store, &p.tenant_id, &p.user_id, lease, key).await;
        Err(err)
    };

    if let Err(e) = not_revoked {
        return give_back(e).await;
    }
    match reservation {
        Ok(Some(Reservation::Done(response))) => {
            hand_back(store, &p.tenant_id, &p.user_id, lease, None).await;
            return Ok(Loaded::Replay(response));
        }
        Ok(Some(Reservation::Pending)) => {
            return give_back(Error::Conflict {
                code: "TASK_BUSY",
                message: "A request with this Idempotency-Key is still in progress".into(),
            })
            .await;
        }
        Ok(_) => {}
        Err(e) => return give_back(e.into()).await,
    }
    if let Err(e) = user_rate.and(tenant_rate) {
        return give_back(e).await;
    }
    let task = match task {
        Ok(t) => t,
        Err(StoreError::NotFound(_)) => return give_back(not_found_task()).await,
        Err(StoreError::Conflict(_)) => {
            return give_back(Error::Conflict {
                code: "TASK_BUSY",
                message: "Another request for this task is in progress".into(),
            })
            .await
        }
        Err(e) => return give_back(e.into()).await,
    };
    let (history, session, domains) = match (history, session, domains) {
        (Ok(h), Ok(s), Ok(d)) => (h, s, d),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return give_back(e.into()).await,
    };

    if let Some(t) = &task {
        if t.user_id != p.user_id {
            return give_back(not_found_task()).await;
        }
        if t.status.is_finished() {
            return give_back(Error::Conflict {
                code: "TASK_COMPLETED",
                message: format!(
                    "The task is {} and takes no more steps",
                    if t.status == TaskStatus::Completed {
                        "completed"
                    } else {
                        "failed"
                    }
                ),
            })
            .await;
        }
        if t.step_count >= agent.max_steps {
            let mut failed = t.clone();
            failed.status = TaskStatus::Failed;
            failed.lease_owner = None;
            failed.lease_until = None;
            failed.updated_at = now;
            if let Err(e) = store.save_task(&failed).await {
                return give_back(e.into()).await;
            }
            // Saving the failed task cleared its lease; only the key is left to give back.
            hand_back(store, &p.tenant_id, &p.user_id, None, key).await;
            return Err(Error::MaxStepsExceeded {
                max: agent.max_steps,
            });
        }
    }

    // The session: the task's own, else the one the client named (created if unknown), else new.
    let session_id = task
        .as_ref()
        .and_then(|t| t.session_id.clone())
        .or_else(|| req.session_id.clone())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let session = session.filter(|s| s.session_id == session_id);
    if let Some(s) = &session {
        if s.user_id != p.user_id {
            return give_back(Error::NotFound {
                code: "SESSION_NOT_FOUND",
                message: "No such session".into(),
            })
            .await;
        }
    }
    let host = host_of(&req.url).unwrap_or_default();
    let new_session = match (&session, &task) {
        (None, None) => {
            let domain = crate::domain::session::session_domain(None, &req.url);
            Some(Session::new_active(
                session_id.clone(),
                p.tenant_id.clone(),
                p.user_id.clone(),
                req.url.clone(),
                domain.clone(),
                crate::domain::session::auto_title(&domain, Some(&req.query)),
                Some(json!({ "initialQuery": req.query })),
                now,
            ))
        }
        _ => None,
    };

    let user_input = task
        .as_ref()
        .filter(|t| t.status == TaskStatus::NeedsUserInput)
        .map(|_| req.query.clone());

    let has_org_knowledge = !host.is_empty() && domains.iter().any(|d| d.matches(&host));
    let mut knowledge = Vec::new();
    if let (true, Some(k)) = (has_org_knowledge, &ctx.knowledge) {
        let query = task
            .as_ref()
            .map_or(req.query.as_str(), |t| t.query.as_str());
        match k.resolve(&req.url, Some(query), &p.tenant_id).await {
            Ok(r) => knowledge = r.context,
            // Knowledge improves a step but is not needed for one.
            Err(e) => tracing::warn!(error = %e, "knowledge lookup failed; deciding without it"),
        }
    }

    let task_id = task
        .as_ref()
        .map(|t| t.id.clone())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    Ok(Loaded::Ready(Box::new(StepContext {
        tenant_id: p.tenant_id.clone(),
        user_id: p.user_id.clone(),
        lease_owner: input.request_id.clone(),
        step_index: task.as_ref().map_or(0, |t| t.step_count),
        task,
        task_id,
        session_id,
        new_session,
        session,
        user_input,
        history,
        has_org_knowledge,
        knowledge,
        page_hash: String::new(),
        page_summary: String::new(),
        page_form: String::new(),
        decision: None,
        usage: Usage::default(),
        llm_ms: 0,
        llm_calls: 0,
    })))
}

/// Phase 2 (with 3): asks the model until the guard accepts an answer or the retry is used up.
pub async fn decide(
    ctx: &AppContext,
    step: &mut StepContext,
    req: &InteractRequest,
    page: &Page,
    rendered: &Rendered,
    deadline: Instant,
) -> Result<(), Error> {
    let llm = ctx.llm.as_ref().ok_or(Error::LlmNotConfigured)?;
    let answers: Vec<String> = step
        .history
        .iter()
        .filter_map(|s| s.user_input.clone())
        .chain(step.user_input.clone())
        .collect();
    let query = step
        .task
        .as_ref()
        .map_or(req.query.as_str(), |t| t.query.as_str())
        .to_owned();
    let mut messages: Vec<ChatMessage> = prompt::build(&PromptInput {
        query: &query,
        url: &req.url,
        page_title: req.page_title.as_deref(),
        user_answers: &answers,
        history: &step.history,
        last_action: &req.last_action,
        knowledge: &step.knowledge,
        page: rendered,
    });
    let model_deadline = deadline.checked_sub(PERSIST_RESERVE).unwrap_or(deadline);
    for attempt in 0..2 {
        let t = Instant::now();
        let completion = llm.complete(&messages, model_deadline).await;
        step.llm_ms += t.elapsed().as_millis() as u64;
        step.llm_calls += 1;
        let completion = completion.map_err(|e| Error::Upstream {
            code: "LLM_ERROR",
            message: match e {
                LlmError::Timeout => "The language model did not answer in time".into(),
                LlmError::Upstream(_) => "The language model failed after retries".into(),
            },
        })?;
        step.usage.prompt_tokens += completion.prompt_tokens;
        step.usage.completion_tokens += completion.completion_tokens;
        match guard(&completion.content, page) {
            Ok(decision) => {
                step.decision = Some(decision);
                return Ok(());
            }
            Err(problem) => {
                tracing::info!(attempt, problem = %problem, "model answer refused by the guard");
                let time_left = model_deadline.saturating_duration_since(Instant::now());
                if attempt == 0 && time_left >= RETRY_MIN_TIME {
                    messages.extend(prompt::correction(&completion.content, &problem));
                    continue;
                }
                step.decision = Some(Decision {
                    thought: format!(
                        "I could not decide on a valid next step, so I am stopping: {problem}."
                    ),
                    action: "fail()".into(),
                    status: TaskStatus::Failed,
                    user_question: None,
                });
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Phase 3: accepts a model answer only if the client can execute it on this page.
pub fn guard(answer: &str, page: &Page) -> Result<Decision, String> {
    let out = parse_model_output(answer)?;
    let action = Action::parse_model(&out.action)?;
    if let Some(id) = action.element() {
        if !page.ids.contains(id) {
            return Err(format!("element {id} is not on the current page"));
        }
    }
    let client = action.to_client_string()?;
    let mut thought = out.thought.trim().to_owned();
    let (status, user_question) = match &action {
        Action::Finish => (TaskStatus::Completed, None),
        Action::Fail(reason) => {
            if let Some(r) = reason.as_deref().filter(|r| !thought.contains(*r)) {
                thought = if thought.is_empty() {
                    r.to_owned()
                } else {
                    format!("{thought} {r}")
                };
            }
            (TaskStatus::Failed, None)
        }
        Action::AskUser(q) => {
            let question = q
                .clone()
                .filter(|q| !q.trim().is_empty())
                .unwrap_or_else(|| thought.clone());
            if question.trim().is_empty() {
                return Err("ask_user needs a question".into());
            }
            (TaskStatus::NeedsUserInput, Some(question))
        }
        _ => (TaskStatus::Executing, None),
    };
    if thought.is_empty() {
        thought = format!("Next: {client}");
    }
    Ok(Decision {
        thought,
        action: client,
        status,
        user_question,
    })
}

/// Phase 4: writes the step, its messages and the page snapshot, and builds the response.
pub async fn persist(
    ctx: &AppContext,
    step: &StepContext,
    input: &StepInput,
    started: Instant,
) -> Result<Value, Error> {
    let decision = step
        .decision
        .clone()
        .ok_or_else(|| Error::internal("persist without a decision"))?;
    let req = &input.request;
    let now: DateTime<Utc> = ctx.clock.now();
    let expires_at = now.timestamp() + ctx.config.retention.task_seconds;
    let raw_page = match &req.page {
        PageInput::Tree(nodes) => serde_json::to_vec(nodes).unwrap_or_default(),
        PageInput::Dom(dom) => dom.clone().into_bytes(),
    };
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

    let message = |role: MessageRole, content: &str| Message {
        message_id: uuid::Uuid::new_v4().to_string(),
        session_id: step.session_id.clone(),
        tenant_id: step.tenant_id.clone(),
        task_id: Some(step.task_id.clone()),
        role,
        content: content.to_owned(),
        timestamp: now,
        sequence_number: 0,
        status: None,
        action_string: None,
        action_payload: None,
        error: None,
        dom_summary: None,
        snapshot_id: None,
        metadata: None,
        expires_at: Some(expires_at),
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
        &step.tenant_id,
        Some(&step.task_id),
        "step",
        &format!("step {} decided: {}", step.step_index, decision.action),
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
            .put_snapshot(&step.tenant_id, &step.task_id, step.step_index, &raw_page),
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
            return Err(Error::Conflict {
                code: "TASK_BUSY",
                message: "Another request for this task got there first".into(),
            })
        }
        Err(e) => return Err(e.into()),
    }
    // The step is recorded: a failed message or snapshot write is logged, not fatal.
    let stored_messages = stored_messages.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "could not store the step's messages");
        Vec::new()
    });
    if let Err(e) = logged {
        tracing::warn!(error = %e, "could not store the step's debug log");
    }
    if let Err(e) = snapshot {
        tracing::warn!(error = %e, "could not store the page snapshot");
    }

    let mut response = json!({
        "success": true,
        "thought": decision.thought,
        "action": decision.action,
        "taskId": step.task_id,
        "sessionId": step.session_id,
        "hasOrgKnowledge": step.has_org_knowledge,
        "status": decision.status,
        "usage": step.usage,
        "metrics": {
            "durationMs": started.elapsed().as_millis() as u64,
            "llmMs": step.llm_ms,
            "llmCalls": step.llm_calls,
            "stepIndex": step.step_index,
        },
    });
    if let Some(q) = &decision.user_question {
        response["userQuestion"] = Value::String(q.clone());
    }
    crate::realtime::notify(
        ctx,
        &step.session_id,
        Some(&step.task_id),
        &stored_messages,
        Some(&response),
    )
    .await;
    if let Some(key) = &input.idempotency_key {
        if let Err(e) = store
            .complete(&step.tenant_id, &step.user_id, key, &response)
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
