//! An accepted model answer acted on: the plan and the task type brought in line, the risk
//! gate's pending confirmation kept, `finish()` checked on the server's evidence
//! ([`crate::domain::finish`]: what is missing refuses it; otherwise a `verifySuccess` made on
//! this page or else the verification model decides, and a confirmed finish is marked so — only
//! such a run is recorded as a recipe) and server tools handed back to run.

use std::time::Instant;

use super::guard::Proposal;
use super::{judge, tools, BuiltPage, Decision, StepContext};
use crate::agent::action::Action;
use crate::agent::request::InteractRequest;
use crate::agent::step::StepPorts;
use crate::domain::finish::{self, evidence, Acted, Check, Evidence, FinishFacts};
use crate::domain::intervention::Intervention;
use crate::domain::plan::Plan;
use crate::domain::verdict::SUCCESS_CONFIDENCE;
use crate::domain::StepKind;

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
    refused_finishes: u32,
    deadline: Instant,
) -> Outcome {
    let now = ctx.clock.now();
    let chat_only = step.request.is_new && p.task_type.as_deref() == Some("chat_only");
    // Whether finish() is checked is decided on the plan as it was: naming the last plan step
    // does not complete the others.
    let finishing = matches!(p.action, Action::Finish(_));
    let verified = tools::verified_here(step);
    let answer = match &p.action {
        Action::Finish(a) => a.as_deref(),
        _ => None,
    };
    // An answer read from the page's text cannot be checked on a page sent without text (the
    // client's tree lists elements only): with nothing in doubt, the agent's word stands there.
    let unseen_answer = answer.is_some_and(finish::tells)
        && matches!(built.page.content, crate::agent::page::PageContent::Tree(_));
    let view = crate::agent::page::PageView {
        page: &built.page,
        url: &req.url,
    };
    // The user's no to a risky step decided: a finish that says so stands (unconfirmed).
    let check = (finishing && !chat_only && !step.task.pending.declined).then(|| {
        finish::check(
            finish_evidence(step, answer, &view),
            refused_finishes,
            unseen_answer,
        )
    });
    update_plan(step, &p, now, !finishing);
    if let Some(note) = &p.memory {
        step.task.notes.memory_note = note.clone();
    }
    if let Some(c) = &p.confirmation {
        step.intervene(Intervention::Confirmation);
        step.task.pending.confirmation = Some(c.clone());
    }
    match &p.action {
        Action::Finish(_) if chat_only => {
            step.task.goal.task_type = Some("chat_only".into());
            Outcome::Done(Box::new(p.decision))
        }
        Action::Finish(_) if check.is_some() => {
            let verdict = match check {
                Some(Check::Refuse(missing)) => Some((false, missing)),
                Some(Check::Judge) => match verified {
                    Some(v) => Some(v),
                    None => {
                        judge_finish(ctx, step, req, built, &p.decision.thought, deadline).await
                    }
                },
                _ => None,
            };
            match verdict {
                // Told what is missing, the model carries on, or finishes again (a completed
                // answer is never turned into "Is the task complete?" for the user).
                Some((false, reason)) => {
                    Outcome::Retry(format!(
                        "the task is not complete yet ({reason}); continue with the next action, or finish again if it is"
                    ))
                }
                Some((true, _)) => {
                    step.answer.finish_confirmed = true;
                    Outcome::Done(Box::new(p.decision))
                }
                // No verdict could be had, or the model was told often enough: the agent's
                // word stands, unconfirmed (no recipe is recorded from it).
                None => Outcome::Done(Box::new(p.decision)),
            }
        }
        a if a.is_server_tool() => Outcome::Tool(
            a.clone(),
            p.decision.action.clone(),
            p.decision.thought.clone(),
        ),
        _ => {
            // The model moved on from the user's no: a later finish is checked again.
            step.task.pending.declined = false;
            keep_rest(step, &p);
            Outcome::Done(Box::new(p.decision))
        }
    }
}

/// The answer's further actions: those that wait for the next requests, and a note for the
/// model's next answer naming those that will not run.
fn keep_rest(step: &mut StepContext, p: &Proposal) {
    step.task.pending.queue = p.queue.clone();
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

/// The server's evidence on the model's finish (giving `answer`): the task's browser actions,
/// its plan and its verdicts, and the page now.
pub fn finish_evidence(
    step: &StepContext,
    answer: Option<&str>,
    view: &crate::agent::page::PageView<'_>,
) -> Evidence {
    let acted: Vec<Acted> = (step.records.history.iter())
        .filter(|s| s.kind == StepKind::Dom && s.tool().is_none())
        .filter_map(|s| {
            let (name, value) = crate::agent::action::name_and_value(&s.action)?;
            let target = s.recipe.as_ref().and_then(|r| r.target.as_ref());
            let browser = !matches!(name, "finish" | "fail" | "ask_user");
            browser.then(|| Acted {
                action: name.to_owned(),
                value,
                target: target.map(|t| t.name.clone()),
            })
        })
        .collect();
    let open_plan_steps = step.task.goal.plan.as_ref().is_some_and(|p| {
        p.steps.iter().any(|s| {
            s.index > p.current_step_index
                && !matches!(s.status, crate::domain::plan::StepStatus::Completed)
        })
    });
    // The last three verdicts, wherever they are stored (server tool records included).
    let failed_lately = (step.records.history.iter().rev())
        .filter_map(|s| s.verification.as_ref())
        .take(3)
        .chain(step.verdicts.verification.as_ref())
        .any(|v| v.failed());
    evidence(&FinishFacts {
        query: &step.task.goal.query,
        answer,
        acted: &acted,
        used_tools: step.records.history.iter().any(|s| s.tool().is_some()),
        open_plan_steps,
        failed_lately,
        page: view,
    })
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
    match (&mut step.task.goal.plan, descriptions) {
        (None, d) => {
            step.task.goal.plan = d
                .and_then(|d| Plan::from_descriptions(d, now))
                .or_else(|| Some(Plan::single(&step.task.goal.query, now)));
            step.verdicts.plan_changed = true;
        }
        (Some(plan), Some(d)) if step.verdicts.replan => {
            plan.replan_from_current(d);
            step.verdicts.plan_changed = true;
        }
        _ => {}
    }
    let verified = step
        .verdicts
        .verification
        .as_ref()
        .is_none_or(|v| !v.failed());
    if let (Some(plan), Some(k), true) = (
        step.task.goal.plan.as_mut(),
        p.plan_step,
        verified && advance,
    ) {
        plan.move_to(k);
    }
}
