//! The model's part of a decision, inside the step's deadline: ask; review the answer (the
//! guard); run the server tools it calls and ask again (at most
//! [`MAX_TOOLS_PER_REQUEST`] per request, a pre-search included); one corrective retry when
//! an answer cannot be executed, loops or fails the finish check. A round that cannot finish
//! in time ends as a `SERVER` round, never as an error.

use std::time::{Duration, Instant};

use super::guard::{guard, Facts, Review};
use super::tools::{self, Ran, MAX_TOOLS_PER_REQUEST, MAX_TOOL_STREAK};
use super::{accept, BuiltPage, Decision, StepContext};
use crate::agent::action::Action;
use crate::agent::output::tagged;
use crate::agent::prompt::{self, PromptInput, WebOffer};
use crate::agent::request::InteractRequest;
use crate::context::AppContext;
use crate::domain::loops::tool_streak;
use crate::domain::web::SearchRecord;
use crate::domain::{StepKind, TokenUsage};
use crate::error::Error;
use crate::ports::llm::{ChatMessage, LlmError};

/// Time kept back from the model for persisting the step.
pub const PERSIST_RESERVE: Duration = Duration::from_millis(2_500);
/// A corrective second model call is only made with at least this much time left.
const RETRY_MIN_TIME: Duration = Duration::from_secs(3);
/// A model call is only started with at least this much time left.
pub const CALL_MIN_TIME: Duration = Duration::from_millis(1_500);
/// Model calls of one decision at most: one per tool, one retry, the answer.
const MAX_CALLS: usize = MAX_TOOLS_PER_REQUEST + 2;

/// How a round is going.
#[derive(Default)]
struct Round {
    tools: usize,
    retried: bool,
    /// The last tool run, for a round that ends after it.
    last: Option<Ran>,
}

/// The prompt for the next call, from the step as it stands.
fn messages(
    ctx: &AppContext,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
) -> Vec<ChatMessage> {
    let ask_plan = step.task.plan.is_none() || step.replan;
    let web = if ctx.search.is_none() {
        WebOffer::Unavailable
    } else if offers_pre_search(ctx, step) {
        WebOffer::PreSearch
    } else {
        WebOffer::Available
    };
    if !step.knowledge.is_empty() {
        step.task.used_knowledge = true;
    }
    // The latest googleSearch, unless it is the pre-search answered again.
    let latest: Option<SearchRecord> = step
        .history
        .iter()
        .rev()
        .find_map(tools::search_of)
        .filter(|r| step.task.pre_search.as_ref() != Some(r));
    let searches: Vec<&SearchRecord> = step.task.pre_search.iter().chain(latest.iter()).collect();
    let session_notes = step
        .session
        .as_ref()
        .map(|s| s.memory.clone())
        .unwrap_or_default();
    prompt::build(&PromptInput {
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
        web,
        searches: &searches,
        page: &built.rendered,
    })
}

/// A task without organisation knowledge may ask for a web search until its first browser
/// action (a round that ended before planning does not lose the offer).
fn offers_pre_search(ctx: &AppContext, step: &StepContext) -> bool {
    ctx.search.is_some()
        && step.task.pre_search.is_none()
        && step.knowledge.is_empty()
        && !step.history.iter().any(|s| s.kind == StepKind::Dom)
}

/// Tool records the request may still write: the task's step limit keeps room for the
/// decision's own record.
fn room(ctx: &AppContext, step: &StepContext, round: &Round) -> bool {
    let left = ctx
        .config
        .agent
        .max_steps
        .saturating_sub(step.step_index + 1);
    round.tools < MAX_TOOLS_PER_REQUEST && left > 0
}

/// Asks the model until an answer is accepted, the tools are used up or time runs out.
pub async fn ask(
    ctx: &AppContext,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
    facts: &Facts<'_>,
    deadline: Instant,
) -> Result<Decision, Error> {
    let llm = ctx.llm.clone().ok_or(Error::LlmNotConfigured)?;
    let model_deadline = deadline.checked_sub(PERSIST_RESERVE).unwrap_or(deadline);
    let mut round = Round::default();
    // A tool the last round could not fit runs first; one that still does not fit is dropped
    // and the model told so (it never waits for ever).
    if let Some(call) = step.task.pending_tool.take() {
        if let Ok(action) = Action::parse(&call) {
            if room(ctx, step, &round) && tools::fits(&action, deadline) {
                let ran = tools::run(ctx, step, req, built, &action, &call, "", deadline).await;
                round.tools += 1;
                round.last = Some(ran);
            } else {
                step.notes.push(format!(
                    "{} could not run: there was no time left for it; decide without it or ask for it again.",
                    crate::text::single_line(&call, 200)
                ));
            }
        }
    }
    let mut messages = messages(ctx, step, req, built);
    // Shown to the model now: it is not shown again — unless this step ends without a decision.
    let resume_note = step.task.resume_note.take();
    let out_of_time = |step: &mut StepContext, round: Round| {
        step.task.resume_note = resume_note.clone();
        Ok(tools::server_round("", "step_deadline", round.last))
    };
    for call in 0..MAX_CALLS {
        if model_deadline.saturating_duration_since(Instant::now()) < CALL_MIN_TIME {
            return out_of_time(step, round);
        }
        // The step reserved one call's tokens; each further call reserves its own.
        if call > 0 && !super::budget::extend(ctx, step).await {
            let mut d = tools::server_round("", "token_budget", round.last);
            d.thought = "The daily token budget is used up for now; I stop this round here.".into();
            step.task.resume_note = resume_note.clone();
            return Ok(d);
        }
        let t = Instant::now();
        let c = match llm.complete(&messages, model_deadline).await {
            Ok(c) => c,
            Err(LlmError::Timeout) => {
                step.count_call(TokenUsage::default(), t.elapsed());
                // Out of step time: the task goes on with the next call. A model that timed
                // out while the step still had time is a failing model.
                if model_deadline.saturating_duration_since(Instant::now()) < CALL_MIN_TIME {
                    return out_of_time(step, round);
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
        // The planning answer of a new task may ask for a web search first.
        if let Some(q) = tagged(&c.content, "search").filter(|q| !q.is_empty()) {
            let search = Action::GoogleSearch(crate::text::single_line(&q, 400));
            if offers_pre_search(ctx, step)
                && round.tools < MAX_TOOLS_PER_REQUEST
                && tools::fits(&search, deadline)
            {
                let until = tools::search_deadline(deadline);
                let now = ctx.clock.now();
                let record = super::search::search(ctx, &q, &req.url, until, now).await;
                step.task.pre_search = Some(record);
                round.tools += 1;
                messages = self::messages(ctx, step, req, built);
                continue;
            }
        }
        let facts = Facts {
            step_index: step.step_index,
            ..*facts
        };
        let attempt = usize::from(round.retried);
        let problem = match guard(&c.content, &facts) {
            Review::Accept(p) => {
                match accept::accept(ctx, step, req, built, *p, attempt, deadline).await {
                    accept::Outcome::Done(d) => return Ok(*d),
                    accept::Outcome::Retry(problem) => problem,
                    accept::Outcome::Tool(action, call, thought) => {
                        if tool_streak(&step.history) >= MAX_TOOL_STREAK {
                            return Ok(Decision::fail(
                                "I keep using server tools without acting on the page, so I am stopping here.",
                            ));
                        }
                        if !room(ctx, step, &round) || !tools::fits(&action, deadline) {
                            step.task.pending_tool = Some(call);
                            return Ok(tools::deferred(&action, &thought));
                        }
                        let ran =
                            tools::run(ctx, step, req, built, &action, &call, &thought, deadline)
                                .await;
                        round.tools += 1;
                        round.last = Some(ran);
                        messages = self::messages(ctx, step, req, built);
                        continue;
                    }
                }
            }
            Review::Refuse(problem) => {
                tracing::info!(attempt, problem = %problem, "model answer refused by the guard");
                problem
            }
            Review::Loop(kind) => {
                step.task.loops += 1;
                if step.task.loops >= 2 || round.retried {
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
        let time_left = model_deadline.saturating_duration_since(Instant::now()) >= RETRY_MIN_TIME;
        if !round.retried && time_left {
            round.retried = true;
            messages.extend(prompt::correction(&c.content, &problem));
            continue;
        }
        // The answer was refused but there is no time to ask again: the task goes on with
        // the next call rather than failing for good.
        if !round.retried {
            return out_of_time(step, round);
        }
        return Ok(Decision::fail(format!(
            "I could not decide on a valid next step, so I am stopping: {problem}."
        )));
    }
    out_of_time(step, round)
}
