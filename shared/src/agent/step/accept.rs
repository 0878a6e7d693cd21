//! An accepted model answer acted on: the plan and the task type brought in line, the risk
//! gate's pending confirmation kept, `finish()` checked (by a `verifySuccess` made on this
//! page, else by the verification model) and server tools handed back to run.

use std::time::Instant;

use super::guard::Proposal;
use super::{judge, tools, BuiltPage, Decision, StepContext};
use crate::agent::action::Action;
use crate::agent::request::InteractRequest;
use crate::agent::step::StepPorts;
use crate::domain::intervention::Intervention;
use crate::domain::plan::Plan;
use crate::domain::verdict::SUCCESS_CONFIDENCE;

/// What the model proposed, once the server has acted on it.
pub enum Outcome {
    Done(Box<Decision>),
    /// Refused: the problem, for a corrective retry.
    Retry(String),
    /// A server tool to run (the action, as written, and the model's thought).
    Tool(Action, String, String),
}

/// Acts on an accepted proposal: the plan, the task type, the risk gate's question, memory
/// tools and the finish check.
pub async fn accept(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
    p: Proposal,
    attempt: usize,
    deadline: Instant,
) -> Outcome {
    let now = ctx.clock.now();
    let chat_only = step.is_new && p.task_type.as_deref() == Some("chat_only");
    // Whether finish() is checked is decided on the plan as it was: naming the last plan step
    // does not complete the others.
    let finishing = matches!(p.action, Action::Finish(_));
    let verified = tools::verified_here(step);
    // An answer read from the page's text cannot be checked on a page sent without text (the
    // client's tree lists elements only): the agent's word stands there.
    let answer_unseen = matches!(&p.action, Action::Finish(Some(_)))
        && matches!(built.page.content, crate::agent::page::PageContent::Tree(_));
    let check = finishing
        && !chat_only
        && !answer_unseen
        && (needs_finish_check(step) || matches!(verified, Some((false, _))));
    update_plan(step, &p, now, !finishing);
    if let Some(note) = &p.memory {
        step.task.memory_note = note.clone();
    }
    if let Some(c) = &p.confirmation {
        step.intervene(Intervention::Confirmation);
        step.task.confirmation = Some(c.clone());
    }
    match &p.action {
        Action::Finish(_) if chat_only => {
            step.task.task_type = Some("chat_only".into());
            Outcome::Done(Box::new(p.decision))
        }
        Action::Finish(_) if check => {
            let verdict = match verified {
                Some(v) => Some(v),
                None => judge_finish(ctx, step, req, built, &p.decision.thought, deadline).await,
            };
            match verdict {
                Some((false, reason)) => {
                    if attempt == 0 {
                        return Outcome::Retry(format!(
                            "the task is not complete yet ({reason}); continue with the next action, or finish again if it is"
                        ));
                    }
                    // Told, the model finishes again: its word stands (a completed answer is
                    // never turned into "Is the task complete?" for the user).
                    Outcome::Done(Box::new(p.decision))
                }
                // Confirmed, or no verdict could be had: the agent's word stands.
                _ => Outcome::Done(Box::new(p.decision)),
            }
        }
        a if a.is_server_tool() => Outcome::Tool(
            a.clone(),
            p.decision.action.clone(),
            p.decision.thought.clone(),
        ),
        _ => {
            keep_rest(step, &p);
            Outcome::Done(Box::new(p.decision))
        }
    }
}

/// The answer's further actions: those that wait for the next requests, and a note for the
/// model's next answer naming those that will not run.
fn keep_rest(step: &mut StepContext, p: &Proposal) {
    step.task.queue = p.queue.clone();
    if p.dropped.is_empty() {
        return;
    }
    let list: Vec<String> = p
        .dropped
        .iter()
        .map(|(a, why)| format!("{a} ({why})"))
        .collect();
    step.task.carry_note(&format!(
        "Only part of your answer with several actions runs; not run: {}. Decide them again if they are still needed.",
        list.join("; ")
    ));
}

/// The verification model's verdict on finishing: whether the task is complete, and why.
async fn judge_finish(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
    thought: &str,
    deadline: Instant,
) -> Option<(bool, String)> {
    let claim = judge::Claim {
        label: "The agent says",
        said: thought,
        ask: "is the task complete?",
    };
    let j = judge::ask_claim(ctx, step, &claim, built, req, deadline).await?;
    Some((j.success && j.confidence >= SUCCESS_CONFIDENCE, j.reason))
}

/// Whether `finish()` needs a success check: plan steps are still open, or a verification
/// failed lately.
fn needs_finish_check(step: &StepContext) -> bool {
    let open = step.task.plan.as_ref().is_some_and(|p| {
        p.steps.iter().any(|s| {
            s.index > p.current_step_index
                && !matches!(s.status, crate::domain::plan::StepStatus::Completed)
        })
    });
    // The last three verdicts, wherever they are stored (server tool records included).
    let failed = step
        .history
        .iter()
        .rev()
        .filter_map(|s| s.verification.as_ref())
        .take(3)
        .chain(step.verification.as_ref())
        .any(|v| v.failed());
    open || failed
}

/// The plan from the answer (a new task's, or a re-plan), and (with `advance`) the step the
/// action works on.
fn update_plan(
    step: &mut StepContext,
    p: &Proposal,
    now: chrono::DateTime<chrono::Utc>,
    advance: bool,
) {
    let descriptions = p.plan.as_ref().map(|d| d.iter().map(String::as_str));
    match (&mut step.task.plan, descriptions) {
        (None, d) => {
            step.task.plan = d
                .and_then(|d| Plan::from_descriptions(d, now))
                .or_else(|| Some(Plan::single(&step.task.query, now)));
            step.plan_changed = true;
        }
        (Some(plan), Some(d)) if step.replan => {
            plan.replan_from_current(d);
            step.plan_changed = true;
        }
        _ => {}
    }
    let verified = step.verification.as_ref().is_none_or(|v| !v.failed());
    if let (Some(plan), Some(k), true) = (step.task.plan.as_mut(), p.plan_step, verified && advance)
    {
        plan.move_to(k);
    }
}
