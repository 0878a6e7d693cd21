//! Server tools the model may call in the middle of a decision — the memory tools,
//! `googleSearch`, `verifySuccess` and (opt-in) `readPage`. The server runs them, records each as a `server_tool`
//! step (not part of the client's action history; counted toward the task's step limit) and
//! asks the model again. What does not fit in a round ends it as a `SERVER` round: the client
//! executes nothing and calls again at once.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::memory::{self, MemoryResult};
use super::search::search;
use super::{judge, records, BuiltPage, Decision, StepContext};
use crate::agent::action::Action;
use crate::agent::request::InteractRequest;
use crate::agent::step::StepPorts;
use crate::domain::verdict::SUCCESS_CONFIDENCE;
use crate::domain::web::SearchRecord;
use crate::domain::{Step, StepKind, TaskStatus};

/// Server tools run in one request at most.
pub const MAX_TOOLS_PER_REQUEST: usize = 3;
/// Server tools run in a row without a browser action before the task is stopped.
pub const MAX_TOOL_STREAK: usize = 6;
/// The action sent with a server round: harmless if a client executes it anyway.
pub const SERVER_ROUND_ACTION: &str = "wait(1)";

/// `toolAction { toolName, toolType, parameters, memoryResult? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAction {
    pub tool_name: String,
    pub tool_type: String,
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_result: Option<MemoryResult>,
}

impl ToolAction {
    /// A tool run by the server.
    pub fn server(tool_name: &str, parameters: Value, memory_result: Option<MemoryResult>) -> Self {
        Self {
            tool_name: tool_name.to_owned(),
            tool_type: "SERVER".into(),
            parameters,
            memory_result,
        }
    }
}

/// The tool's name and its parameters as the client sees them (never a result).
pub fn describe(action: &Action) -> (&'static str, Value) {
    match action {
        Action::Remember(k, v) => ("remember", json!({ "key": k, "value": v })),
        Action::Recall(k) => ("recall", json!({ "key": k })),
        Action::ExportToSession(k) => ("exportToSession", json!({ "key": k })),
        Action::GoogleSearch(q) => ("googleSearch", json!({ "query": q })),
        Action::VerifySuccess(d) => ("verifySuccess", json!({ "description": d })),
        Action::ReadPage(q) => ("readPage", json!({ "question": q })),
        _ => ("none", json!({})),
    }
}

/// Whether `action` can run and still leave the model time to answer.
pub fn fits(action: &Action, deadline: Instant) -> bool {
    super::deadline::fits(action, deadline)
}

/// What a tool run leaves for the round's answer when it is the last thing the round does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ran {
    pub tool_action: ToolAction,
    pub message: String,
}

/// Runs the server tool `action` (written `call`) within the step ending at `deadline`, and
/// records it as the request's next step.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
    action: &Action,
    call: &str,
    thought: &str,
    deadline: Instant,
) -> Ran {
    let now = ctx.clock.now();
    let (name, parameters) = describe(action);
    let (mut result, memory_result) = match action {
        Action::GoogleSearch(q) => {
            let record = match earlier_search(step, q) {
                Some(r) => r,
                None => {
                    let secrets = super::secrets::finder(ctx, step);
                    search(
                        ctx,
                        q,
                        &req.url,
                        super::deadline::search(deadline),
                        now,
                        &secrets,
                    )
                    .await
                }
            };
            let message = record.summary();
            (json!({ "message": message, "search": record }), None)
        }
        Action::VerifySuccess(what) => (verify(ctx, step, req, built, what, deadline).await, None),
        Action::ReadPage(q) => (
            super::read_page::run(ctx, step, req, built, q, deadline).await,
            None,
        ),
        _ => {
            // Notes exported earlier in this request count.
            let mut session = step.session.memory.clone().or_else(|| {
                step.session
                    .read
                    .as_ref()
                    .or(step.session.new.as_ref())
                    .map(|s| s.memory.clone())
            });
            match memory::apply(action, &mut step.task.notes.memory, session.as_mut()) {
                Some((r, changed)) => {
                    if changed {
                        step.session.memory = session;
                    }
                    (serde_json::to_value(&r).unwrap_or(Value::Null), Some(r))
                }
                None => (json!({ "message": "that tool is not available" }), None),
            }
        }
    };
    if let Some(o) = result.as_object_mut() {
        o.insert("tool".into(), Value::from(name));
    }
    let message = match &memory_result {
        Some(m) => m.told(),
        None => result
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("done")
            .to_owned(),
    };
    let snapshot_bytes = built.snapshot_bytes();
    let mut record = records::base(step, req, snapshot_bytes, step.records.step_index, now);
    record.thought = thought.to_owned();
    record.action = call.to_owned();
    record.kind = StepKind::ServerTool;
    record.tool_result = Some(result);
    step.records.history.push(record.clone());
    step.records.tool_steps.push(record);
    step.records.step_index += 1;
    Ran {
        tool_action: ToolAction::server(name, parameters, memory_result),
        message,
    }
}

/// The same search made earlier in the task (or as its pre-search): not sent again.
fn earlier_search(step: &StepContext, query: &str) -> Option<SearchRecord> {
    let same = |r: &SearchRecord| r.query.trim().eq_ignore_ascii_case(query.trim());
    step.task
        .seen
        .pre_search
        .clone()
        .filter(|r| same(r) && r.failure.is_none())
        .or_else(|| {
            step.records
                .history
                .iter()
                .rev()
                .filter_map(search_of)
                .find(|r| same(r) && r.failure.is_none())
        })
}

/// The search a `googleSearch` step made.
pub fn search_of(s: &Step) -> Option<SearchRecord> {
    if s.tool() != Some("googleSearch") {
        return None;
    }
    serde_json::from_value(s.tool_result.as_ref()?.get("search")?.clone()).ok()
}

/// `verifySuccess`: the verification model asked whether `what` holds on this page.
async fn verify(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
    what: &str,
    deadline: Instant,
) -> Value {
    let claim = judge::Claim {
        label: "The agent says the task is complete because",
        said: what,
        ask: "is the task complete, as the agent says, judging by the current page?",
    };
    let verdict = judge::ask_claim(ctx, step, &claim, built, req, deadline).await;
    let checked = verdict.is_some();
    let (success, confidence, reason) = match verdict {
        Some(j) => (
            j.success && j.confidence >= SUCCESS_CONFIDENCE,
            j.confidence,
            j.reason,
        ),
        None => (false, 0.0, "it could not be checked now".to_owned()),
    };
    let message = if success {
        format!("verified: {reason}")
    } else {
        format!("not verified: {reason}")
    };
    json!({
        "message": message,
        "description": what,
        "checked": checked,
        "success": success,
        "confidence": confidence,
        "reason": reason,
        "pageHash": step.page.hash,
    })
}

/// The latest `verifySuccess` verdict on the task's completion, made on this very page since
/// the last browser action: whether it confirmed, and why (a check that could not be made
/// does not count).
pub fn verified_here(step: &StepContext) -> Option<(bool, String)> {
    step.records
        .history
        .iter()
        .rev()
        .take_while(|s| s.kind == StepKind::ServerTool)
        .filter(|s| s.tool() == Some("verifySuccess"))
        .filter_map(|s| s.tool_result.as_ref())
        .filter(|r| r.get("checked").and_then(Value::as_bool) == Some(true))
        .find(|r| r.get("pageHash").and_then(Value::as_str) == Some(step.page.hash.as_str()))
        .map(|r| {
            (
                r.get("success").and_then(Value::as_bool) == Some(true),
                r.get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given")
                    .to_owned(),
            )
        })
}

/// A round with no decision: the task goes on with the next call. `ran` is the tool the round
/// ran last, shown to a client that understands server rounds as `toolAction`; `why` is stored
/// with the round. Every other client gets the round's `wait(1)` and its thought only, so what
/// a memory tool did is said in the thought too.
pub fn server_round(thought: &str, why: &str, ran: Option<Ran>) -> Decision {
    let (tool_action, message) = match ran {
        Some(r) => (r.tool_action, r.message),
        None => (
            ToolAction::server("continue", json!({ "reason": why }), None),
            "This step needs more time; I am continuing.".to_owned(),
        ),
    };
    let memory = tool_action.memory_result.is_some();
    let thought = match thought.trim() {
        "" => message,
        t if memory && !t.contains(message.as_str()) => format!("{t} {message}"),
        t => t.to_owned(),
    };
    Decision {
        tool_action: Some(tool_action),
        tool_call: Some("continue()".into()),
        tool_result: Some(json!({ "message": why })),
        kind: StepKind::ServerTool,
        ..Decision::new(thought, SERVER_ROUND_ACTION, TaskStatus::Executing)
    }
}

/// The round that ends because the tool the model asked for does not fit: the next request
/// runs it first. It counts toward the tool streak.
pub fn deferred(action: &Action, thought: &str) -> Decision {
    let (name, parameters) = describe(action);
    let why = format!("{name} runs with the next call");
    let mut d = server_round(
        thought,
        &why,
        Some(Ran {
            tool_action: ToolAction::server(name, parameters, None),
            message: format!("Running {name} next."),
        }),
    );
    d.tool_result = Some(json!({ "tool": name, "deferred": true, "message": why }));
    d
}
