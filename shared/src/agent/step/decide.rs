//! Phase 4: the decision. First what the rules decide alone (a confirmed action, a blocker, a
//! cookie banner, a concrete correction); otherwise the model, whose answer passes the guard
//! — one corrective retry when it cannot be executed, loops or is refused by the finish check
//! — and whose server tools run here. A step that cannot get an answer within its deadline
//! ends with a SERVER round instead of an error.

use std::time::{Duration, Instant};

use super::guard::{guard, Facts, Proposal, Review};
use super::{correct, judge, memory, shortcut, BuiltPage, Decision, StepContext};
use crate::agent::action::Action;
use crate::agent::page::PageView;
use crate::agent::prompt::{self, PromptInput};
use crate::agent::request::InteractRequest;
use crate::context::AppContext;
use crate::domain::plan::Plan;
use crate::domain::verdict::SUCCESS_CONFIDENCE;
use crate::domain::{StepKind, TaskStatus, TokenUsage};
use crate::error::Error;
use crate::llm::{ChatMessage, LlmError};

/// Time kept back from the model for persisting the step.
pub const PERSIST_RESERVE: Duration = Duration::from_millis(2_500);
/// A corrective second model call is only made with at least this much time left.
const RETRY_MIN_TIME: Duration = Duration::from_secs(3);
/// A model call is only started with at least this much time left.
const CALL_MIN_TIME: Duration = Duration::from_millis(1_500);

/// Decides the step: `step.decision` is set on success.
pub async fn decide(
    ctx: &AppContext,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
    deadline: Instant,
) -> Result<(), Error> {
    let now = ctx.clock.now();
    let view = PageView {
        page: &built.page,
        url: &req.url,
    };
    let history = step.history.clone();
    let dom: Vec<_> = history.iter().filter(|s| s.kind == StepKind::Dom).collect();
    let actions: Vec<&str> = dom.iter().map(|s| s.action.as_str()).collect();
    let mut hashes: Vec<&str> = dom
        .iter()
        .map(|s| s.before_state.as_ref().map_or("", |b| b.page_hash.as_str()))
        .collect();
    hashes.push(&built.page.hash);
    let facts = Facts {
        page: &built.page,
        view: &view,
        patterns: &ctx.config.agent.risk,
        actions: &actions,
        hashes: &hashes,
        step_index: step.step_index,
    };
    let ruled = match shortcut::decide(step, &facts) {
        Some(d) => Some(d),
        None => correct::correct(step, req, &facts, now),
    };
    let decision = match ruled {
        Some(d) => d,
        None => ask_model(ctx, step, req, built, &facts, deadline).await?,
    };
    finish_step(step, decision, now);
    Ok(())
}

/// The plan and the correction brought in line with the decision.
fn finish_step(step: &mut StepContext, mut decision: Decision, now: chrono::DateTime<chrono::Utc>) {
    let plan = step
        .task
        .plan
        .get_or_insert_with(|| Plan::single(&step.task.query, now));
    match decision.status {
        TaskStatus::Completed => plan.complete_all(),
        TaskStatus::Failed => plan.fail_current(),
        _ => {}
    }
    if let Some(c) = step.correction.as_mut() {
        if decision.kind == StepKind::Dom && decision.status == TaskStatus::Executing {
            decision.status = TaskStatus::Correcting;
        }
        c.corrected_step = Some(decision.action.clone());
    }
    if step.is_new && step.task.task_type.is_none() {
        step.task.task_type = Some("web_only".into());
    }
    step.decision = Some(decision);
}

/// What the model proposed, once the server has acted on it.
enum Outcome {
    Done(Box<Decision>),
    /// Refused: the problem, for a corrective retry.
    Retry(String),
}

/// Asks the model until an answer is accepted or the retry is used up.
async fn ask_model(
    ctx: &AppContext,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
    facts: &Facts<'_>,
    deadline: Instant,
) -> Result<Decision, Error> {
    let llm = ctx.llm.clone().ok_or(Error::LlmNotConfigured)?;
    let ask_plan = step.task.plan.is_none() || step.replan;
    let session_notes = step
        .session
        .as_ref()
        .map(|s| s.memory.clone())
        .unwrap_or_default();
    let mut messages: Vec<ChatMessage> = prompt::build(&PromptInput {
        task: &step.task,
        session_notes: &session_notes,
        url: &req.url,
        page_title: req.page_title.as_deref(),
        user_answer: step.user_input.as_deref(),
        history: &step.history,
        last_action: &req.last_action,
        verification: step.verification.as_ref(),
        notes: &step.notes,
        ask_plan,
        step_index: step.step_index,
        knowledge: &step.knowledge,
        page: &built.rendered,
    });
    // Shown to the model now: it is not shown again — unless this step ends without a decision.
    let resume_note = step.task.resume_note.take();
    let out_of_time = |step: &mut StepContext| {
        step.task.resume_note = resume_note.clone();
        Ok(memory::deadline_round("step_deadline"))
    };
    let model_deadline = deadline.checked_sub(PERSIST_RESERVE).unwrap_or(deadline);
    for attempt in 0..2 {
        let left = model_deadline.saturating_duration_since(Instant::now());
        if left < CALL_MIN_TIME {
            return out_of_time(step);
        }
        let t = Instant::now();
        let completion = llm.complete(&messages, model_deadline).await;
        let c = match completion {
            Ok(c) => c,
            Err(LlmError::Timeout) => {
                step.count_call(TokenUsage::default(), t.elapsed());
                // Out of step time: the task goes on with the next call. A model that timed
                // out while the step still had time is a failing model.
                if model_deadline.saturating_duration_since(Instant::now()) < CALL_MIN_TIME {
                    return out_of_time(step);
                }
                return Err(Error::Upstream {
                    code: "LLM_ERROR",
                    message: "The language model did not answer in time".into(),
                });
            }
            Err(LlmError::Upstream(_)) => {
                return Err(Error::Upstream {
                    code: "LLM_ERROR",
                    message: "The language model failed after retries".into(),
                })
            }
        };
        step.count_call(
            TokenUsage {
                prompt_tokens: c.prompt_tokens,
                completion_tokens: c.completion_tokens,
            },
            t.elapsed(),
        );
        let time_left = model_deadline.saturating_duration_since(Instant::now()) >= RETRY_MIN_TIME;
        let can_retry = attempt == 0 && time_left;
        let problem = match guard(&c.content, facts) {
            Review::Accept(p) => match accept(ctx, step, req, built, *p, attempt, deadline).await {
                Outcome::Done(d) => return Ok(*d),
                Outcome::Retry(problem) => problem,
            },
            Review::Refuse(problem) => {
                tracing::info!(attempt, problem = %problem, "model answer refused by the guard");
                problem
            }
            Review::Loop(kind) => {
                step.task.loops += 1;
                if step.task.loops >= 2 || attempt > 0 {
                    return Ok(Decision::fail(format!(
                        "I am going in circles ({}), so I am stopping here.",
                        kind.describe()
                    )));
                }
                format!(
                    "it would repeat a loop ({}); choose a different approach",
                    kind.describe()
                )
            }
        };
        if can_retry {
            messages.extend(prompt::correction(&c.content, &problem));
            continue;
        }
        // The first answer was refused but there is no time to ask again: the task goes on
        // with the next call rather than failing for good.
        if attempt == 0 {
            return out_of_time(step);
        }
        return Ok(Decision::fail(format!(
            "I could not decide on a valid next step, so I am stopping: {problem}."
        )));
    }
    Err(Error::internal(
        "the decision loop ended without a decision",
    ))
}

/// Acts on an accepted proposal: the plan, the task type, the risk gate's question, memory
/// tools and the finish check.
async fn accept(
    ctx: &AppContext,
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
    let finishing = matches!(p.action, Action::Finish);
    let check = finishing && !chat_only && needs_finish_check(step);
    update_plan(step, &p, now, !finishing);
    if let Some(c) = &p.confirmation {
        step.task.confirmation = Some(c.clone());
    }
    match &p.action {
        Action::Finish if chat_only => {
            step.task.task_type = Some("chat_only".into());
            Outcome::Done(Box::new(p.decision))
        }
        Action::Finish if check => {
            let descriptions: Vec<String> = step
                .task
                .plan
                .as_ref()
                .map(|pl| pl.steps.iter().map(|s| s.description.clone()).collect())
                .unwrap_or_default();
            let question = judge::finish_question(
                &step.task.query,
                &descriptions,
                &step.history,
                &p.decision.thought,
                built,
                &req.url,
            );
            match judge::ask(ctx, step, &question, deadline).await {
                Some(j) if !(j.success && j.confidence >= SUCCESS_CONFIDENCE) => {
                    let reason = j.reason;
                    if attempt == 0 {
                        return Outcome::Retry(format!(
                            "the task is not complete yet ({reason}); continue with the next action"
                        ));
                    }
                    Outcome::Done(Box::new(Decision::ask(
                        format!("I think the task is done, but a check says otherwise: {reason}"),
                        "Is the task complete, or what is still missing?",
                    )))
                }
                // Confirmed, or no verdict could be had: the agent's word stands.
                _ => Outcome::Done(Box::new(p.decision)),
            }
        }
        a if a.is_server_tool() => {
            let mut session = step
                .session
                .as_ref()
                .or(step.new_session.as_ref())
                .map(|s| s.memory.clone());
            let Some((result, changed)) = memory::apply(a, &mut step.task.memory, session.as_mut())
            else {
                return Outcome::Retry("that tool is not available".into());
            };
            if changed {
                step.session_memory = session;
            }
            Outcome::Done(Box::new(memory::tool_decision(
                &p.decision.thought,
                a,
                p.decision.action.clone(),
                result,
            )))
        }
        _ => Outcome::Done(Box::new(p.decision)),
    }
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
    let recent = step.history.len().saturating_sub(3);
    let failed = step.history[recent..]
        .iter()
        .filter_map(|s| s.verification.as_ref())
        .chain(step.verification.as_ref())
        .any(|v| !v.success);
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
        }
        (Some(plan), Some(d)) if step.replan => plan.replan_from_current(d),
        _ => {}
    }
    let verified = step.verification.as_ref().is_none_or(|v| v.success);
    if let (Some(plan), Some(k), true) = (step.task.plan.as_mut(), p.plan_step, verified && advance)
    {
        plan.move_to(k);
    }
}
