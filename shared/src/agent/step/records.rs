//! The records a step writes: one per server tool it ran, then one for its decision. All of a
//! request's records share its page snapshot; the first carries the verdict on the previous
//! action, the correction, the client's report and the user's answer.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::{Decision, StepContext};
use crate::agent::request::InteractRequest;
use crate::domain::{BeforeState, Step};

/// A record at `index` of this request's page, with nothing decided yet.
pub fn base(
    step: &StepContext,
    req: &InteractRequest,
    snapshot_bytes: usize,
    index: u32,
    now: DateTime<Utc>,
) -> Step {
    Step {
        before_state: Some(BeforeState {
            url: req.url.clone(),
            title: req.page_title.clone().unwrap_or_default(),
            page_hash: step.page.hash.clone(),
            view_hash: step.page.view_hash.clone(),
            summary: step.page.summary.clone(),
            snapshot_key: Some(crate::ports::snapshot_key(
                &step.tenant_id,
                &step.task.id,
                step.request.first_index,
            )),
            snapshot_bytes,
            form: step.page.form.clone(),
            target: None,
            plan_step: step.task.goal.plan.as_ref().map(|p| p.current_step_index),
            confirmed: false,
            effect: None,
        }),
        ..Step::new(
            &step.tenant_id,
            &step.task.id,
            index,
            (String::new(), String::new()),
            now,
            step.task.stored.expires_at,
        )
    }
}

/// The decision's record (at the step's current index).
fn decision(
    step: &StepContext,
    d: &Decision,
    req: &InteractRequest,
    snapshot_bytes: usize,
    now: DateTime<Utc>,
) -> Step {
    let mut r = base(step, req, snapshot_bytes, step.records.step_index, now);
    r.thought = d.thought.clone();
    r.action = d.tool_call.clone().unwrap_or_else(|| d.action.clone());
    if let Some(b) = r.before_state.as_mut() {
        b.target = d.target.clone();
        b.confirmed = d.confirmed;
        b.effect = d.effect;
    }
    r.expected_outcome = d.expected_outcome.clone();
    r.kind = d.kind;
    r.chain = d.chain.clone();
    r.tool_result = d.tool_result.clone();
    r.usage = serde_json::to_value(step.spend.usage).ok();
    if step.verdicts.plan_changed {
        r.plan = step.task.goal.plan.clone();
    }
    r.timings = Some(json!({
        "llmMs": step.spend.llm_ms,
        "llmCalls": step.spend.llm_calls,
        "phases": step.spend.phases,
        "interventions": step.all_interventions(),
    }));
    r
}

/// Every record of the request, in order: the tool runs, then the decision.
pub fn all(
    step: &StepContext,
    d: &Decision,
    req: &InteractRequest,
    snapshot_bytes: usize,
    now: DateTime<Utc>,
) -> Vec<Step> {
    let mut out = step.records.tool_steps.clone();
    out.push(decision(step, d, req, snapshot_bytes, now));
    let last = &req.last_action;
    if let Some(first) = out.first_mut() {
        first.verification = step
            .verdicts
            .verification
            .clone()
            .filter(|_| !step.verdicts.reused);
        first.correction = step.verdicts.correction.clone();
        first.client_outcome =
            (!last.is_empty()).then(|| serde_json::to_value(last).unwrap_or(Value::Null));
        first.user_input = step.request.user_input.clone();
    }
    out
}
