//! Phases 5 (Decide) and 6 (Guard), with RunTool: the model's part of a decision, inside the
//! step's deadline, as three states of the step's machine: [`call`] asks (Decide);
//! [`guard_answer`] applies the guard (Guard); [`run_tool`] runs the server tool an answer
//! calls (RunTool), after which the model is asked again — at most [`MAX_TOOLS_PER_REQUEST`]
//! tools per request, a pre-search included, and one corrective retry when an answer cannot be
//! executed, loops or fails the finish check. A round that cannot finish in time ends as a
//! `SERVER` round, never as an error.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::guard::{guard, Facts, Review};
use super::tools::{self, Ran, MAX_TOOLS_PER_REQUEST, MAX_TOOL_STREAK};
use super::{accept, BuiltPage, Decision, StepContext};
use crate::agent::action::Action;
use crate::agent::output::tagged;
use crate::agent::prompt::{self, PromptInput, WebOffer};
use crate::agent::request::InteractRequest;
use crate::agent::step::StepPorts;
use crate::domain::intervention::Intervention;
use crate::domain::loops::tool_streak;
use crate::domain::refusal::{after_refusal, AfterRefusal, Refusals};
use crate::domain::web::SearchRecord;
use crate::domain::{StepKind, TokenUsage};
use crate::error::Error;
use crate::ports::llm::{ChatMessage, LlmError};

/// Model calls of one decision at most: one per tool, one retry, the answer.
pub const MAX_CALLS: usize = MAX_TOOLS_PER_REQUEST + 2;

/// How a decision's model round is going, carried between the Decide, Guard and RunTool
/// states.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Round {
    /// Server tools run (a pre-search included).
    pub tools: usize,
    /// Model calls made.
    pub calls: usize,
    pub retried: bool,
    /// The last tool run, for a round that ends after it.
    pub last: Option<Ran>,
    /// The model's answer, for the guard.
    pub answer: Option<String>,
    /// The corrective exchange added to the next prompt.
    pub correction: Vec<ChatMessage>,
    /// The tool the next RunTool state runs.
    pub tool: Option<ToolCall>,
    /// The task's resume note: shown in the first prompt only, given back when the step
    /// ends without a decision.
    pub resume_note: Option<String>,
    /// The notes carried from earlier requests, likewise.
    #[serde(default)]
    pub carried: Vec<String>,
    pub began: bool,
}

/// A server tool waiting to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// As the model wrote it.
    pub call: String,
    pub thought: String,
    /// The planning answer asked for a search first (`<Search>`).
    pub pre_search: Option<String>,
}

/// What a Decide or Guard state leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Next {
    /// A model answer for the guard.
    Guard,
    /// A server tool to run, then the model again.
    Tool,
    /// The answer was refused: the model is asked once more.
    Retry,
    /// `step.answer.decision` is set.
    Done,
}

/// The prompt for the next call, from the step as it stands.
fn messages(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
) -> Vec<ChatMessage> {
    let ask_plan = step.task.goal.plan.is_none() || step.verdicts.replan;
    let web = if ctx.search.is_none() {
        WebOffer::Unavailable
    } else if offers_pre_search(ctx, step) {
        WebOffer::PreSearch
    } else {
        WebOffer::Available
    };
    if !step.brief.knowledge.is_empty() {
        step.task.seen.used_knowledge = true;
    }
    // The latest googleSearch, unless it is the pre-search answered again.
    let latest: Option<SearchRecord> = step
        .records
        .history
        .iter()
        .rev()
        .find_map(tools::search_of)
        .filter(|r| step.task.seen.pre_search.as_ref() != Some(r));
    let searches: Vec<&SearchRecord> = step
        .task
        .seen
        .pre_search
        .iter()
        .chain(latest.iter())
        .collect();
    let session_notes = step
        .session
        .read
        .as_ref()
        .map(|s| s.memory.clone())
        .unwrap_or_default();
    let _prompting = tracing::debug_span!("interact.prompt").entered();
    let around = around_last_target(ctx, step, built);
    prompt::build(&PromptInput {
        task: &step.task,
        session_notes: &session_notes,
        url: &req.url,
        page_title: req.page_title.as_deref(),
        user_answer: step.request.user_input.as_deref(),
        history: &step.records.history,
        last_action: &req.last_action,
        verification: step.verdicts.verification.as_ref(),
        notes: &step.brief.notes,
        recipe_step: step.brief.recipe_step.as_deref(),
        ask_plan,
        step_index: step.records.step_index,
        knowledge: &step.brief.knowledge,
        web,
        searches: &searches,
        page: around.as_ref().unwrap_or(&built.rendered),
        now: ctx.clock.now(),
        max_steps: ctx.agent.max_steps,
        new_ids: &step.page.new_ids,
        read_page: ctx.agent.read_page,
        structured: ctx
            .agent
            .llm
            .as_ref()
            .is_some_and(|c| c.params.structured != crate::config::llm_params::Structured::Off),
    })
}

/// Tree nodes at most for which the page is rendered again around the last acted-on element
/// (about a millisecond of work at this size; a larger page keeps the rendering it was built
/// with, whose names are kept at the start of the document).
const AROUND_MAX_NODES: usize = 10_000;

/// The page rendered again with its names kept around the task's last acted-on element, when
/// that element is on this page and the rendering built with the page had to cut names.
fn around_last_target(
    ctx: &StepPorts<'_>,
    step: &StepContext,
    built: &BuiltPage,
) -> Option<crate::agent::render::Rendered> {
    let crate::agent::page::PageContent::Tree(nodes) = &built.page.content else {
        return None;
    };
    if built.rendered.form == "tree" || nodes.len() > AROUND_MAX_NODES {
        return None;
    }
    let last = step
        .records
        .history
        .iter()
        .rev()
        .find(|s| s.kind == StepKind::Dom)?;
    let action = Action::parse(&last.action).ok()?;
    let id = action.element().filter(|id| built.page.has_id(id))?;
    let budget = crate::agent::render::Budget {
        max_tokens: ctx.agent.page_tokens,
        chars_per_token: ctx.agent.chars_per_token,
    };
    let words = crate::agent::render::task_words(&step.task.goal.query);
    let hints = crate::agent::render::Hints {
        anchor: Some(id),
        words: &words,
    };
    Some(crate::agent::render::render_for(&built.page, budget, hints))
}

/// The request's screenshot goes with the page's message for a model that takes images — never
/// once the task has typed a password, code or card value (the page may show it anywhere, and
/// a picture cannot be scrubbed), nor while a field on the page holds one.
fn attach_screenshot(
    ctx: &StepPorts<'_>,
    step: &StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
    messages: &mut [ChatMessage],
) {
    let vision = ctx.agent.llm.as_ref().is_some_and(|c| c.vision);
    let Some(shot) = req.screenshot.as_ref().filter(|_| vision) else {
        return;
    };
    if !step.task.seen.secrets.is_empty() {
        return;
    }
    let view = crate::agent::page::PageView {
        page: &built.page,
        url: &req.url,
    };
    if super::secrets::shows_secret(ctx, &view) {
        return;
    }
    if let Some(page_message) = messages.iter_mut().find(|m| m.role == "user") {
        page_message
            .content
            .push_str("\nA screenshot of the page as the user sees it is attached.");
        page_message.images.push(shot.clone());
    }
}

/// A task without organisation knowledge may ask for a web search until its first browser
/// action (a round that ended before planning does not lose the offer).
fn offers_pre_search(ctx: &StepPorts<'_>, step: &StepContext) -> bool {
    ctx.search.is_some()
        && step.task.seen.pre_search.is_none()
        && step.brief.knowledge.is_empty()
        && !step.records.history.iter().any(|s| s.kind == StepKind::Dom)
}

/// Tool records the request may still write: the task's step limit keeps room for the
/// decision's own record.
fn room(ctx: &StepPorts<'_>, step: &StepContext, round: &Round) -> bool {
    let left = ctx
        .agent
        .max_steps
        .saturating_sub(step.records.step_index + 1);
    round.tools < MAX_TOOLS_PER_REQUEST && left > 0
}

/// The step ends without a decision: a SERVER round (the resume note is kept for the next).
fn out_of_time(step: &mut StepContext, round: &Round) -> Next {
    give_back(step, round);
    step.answer.decision = Some(tools::server_round("", "step_deadline", round.last.clone()));
    Next::Done
}

/// What the first prompt showed once, kept for the next request when this one ends without a
/// decision.
fn give_back(step: &mut StepContext, round: &Round) {
    step.task.notes.resume_note = round.resume_note.clone();
    for note in &round.carried {
        step.task.carry_note(note);
    }
}

/// The Decide state: one model call (a tool deferred by the last round runs first instead).
pub async fn call(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    round: &mut Round,
    req: &InteractRequest,
    built: &BuiltPage,
    deadline: Instant,
) -> Result<Next, Error> {
    let llm = ctx.llm.ok_or(Error::LlmNotConfigured)?;
    let model_deadline = super::deadline::model(deadline);
    // A tool the last round could not fit runs first; one that still does not fit is dropped
    // and the model told so (it never waits for ever).
    if !round.began {
        round.began = true;
        if let Some(call) = step.task.pending.pending_tool.take() {
            if let Ok(action) = Action::parse(&call) {
                if room(ctx, step, round) && tools::fits(&action, deadline) {
                    round.tool = Some(ToolCall {
                        call,
                        thought: String::new(),
                        pre_search: None,
                    });
                    return Ok(Next::Tool);
                }
                step.brief.notes.push(format!(
                    "{} could not run: there was no time left for it; decide without it or ask for it again.",
                    crate::text::single_line(&call, 200)
                ));
            }
        }
    }
    if round.calls >= MAX_CALLS || !super::deadline::can_call(deadline) {
        return Ok(out_of_time(step, round));
    }
    // The step reserved one call's tokens; each further call reserves its own.
    if round.calls > 0 && !super::budget::extend(ctx, step).await {
        give_back(step, round);
        step.answer.decision = Some(tools::server_round(
            "The daily token budget is used up for now; I stop this round here.",
            "token_budget",
            round.last.clone(),
        ));
        return Ok(Next::Done);
    }
    // The server's notes kept for this answer, after this request's own (shown once; given
    // back when the step ends without a decision).
    if round.calls == 0 && !step.task.notes.carried_notes.is_empty() {
        round.carried = std::mem::take(&mut step.task.notes.carried_notes);
        step.brief.notes.extend(round.carried.iter().cloned());
    }
    let mut messages = messages(ctx, step, req, built);
    // Shown to the model now: it is not shown again — unless this step ends without a decision.
    if round.calls == 0 {
        round.resume_note = step.task.notes.resume_note.take();
    }
    messages.extend(round.correction.iter().cloned());
    super::secrets::scrub_messages(ctx, step, &mut messages);
    attach_screenshot(ctx, step, req, built, &mut messages);
    round.calls += 1;
    let t = Instant::now();
    let c = match crate::ports::llm::ask(
        llm,
        &messages,
        model_deadline,
        crate::ports::llm::Call {
            cache_key: Some(&step.task.id),
            schema: Some(crate::agent::output::answer_schema()),
        },
    )
    .await
    {
        Ok(c) => c,
        Err(LlmError::Timeout) => {
            step.count_call(TokenUsage::default(), t.elapsed());
            // Out of step time: the task goes on with the next call. A model that timed
            // out while the step still had time is a failing model.
            if !super::deadline::can_call(deadline) {
                return Ok(out_of_time(step, round));
            }
            return Err(Error::Upstream {
                code: "LLM_ERROR",
                message: "The language model did not answer in time".into(),
            });
        }
        Err(LlmError::Unavailable(_)) => return Err(Error::ModelUnavailable),
        Err(LlmError::Upstream(_)) => {
            return Err(Error::Upstream {
                code: "LLM_ERROR",
                message: "The language model refused the request".into(),
            })
        }
    };
    step.count_answer(&c, ctx.agent.model_price(), t.elapsed());
    // A structured answer (JSON) reads as the tagged one.
    let content = crate::agent::output::from_json(&c.content).unwrap_or(c.content);
    // The planning answer of a new task may ask for a web search first.
    if let Some(q) = tagged(&content, "search").filter(|q| !q.is_empty()) {
        let search = Action::GoogleSearch(crate::text::single_line(&q, 400));
        if offers_pre_search(ctx, step)
            && round.tools < MAX_TOOLS_PER_REQUEST
            && tools::fits(&search, deadline)
        {
            round.tool = Some(ToolCall {
                call: String::new(),
                thought: String::new(),
                pre_search: Some(q),
            });
            return Ok(Next::Tool);
        }
    }
    round.answer = Some(content);
    Ok(Next::Guard)
}

/// The Guard state: the server's rules on the answer; an accepted one is acted on (the finish
/// check, a server tool handed to RunTool), a refused one asked again once.
pub async fn guard_answer(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    round: &mut Round,
    req: &InteractRequest,
    built: &BuiltPage,
    facts: &Facts<'_>,
    deadline: Instant,
) -> Next {
    let Some(content) = round.answer.take() else {
        return out_of_time(step, round);
    };
    let facts = Facts {
        step_index: step.records.step_index,
        ..*facts
    };
    let attempt = usize::from(round.retried);
    let done = |step: &mut StepContext, d: Decision| {
        step.answer.decision = Some(d);
        Next::Done
    };
    let (problem, help) = match guard(&content, &facts) {
        Review::Accept(mut p) => {
            let before = step.task.pending.refused;
            // Refused finishes stay counted until a browser action is accepted: a server tool
            // between two finishes does not start them again.
            let finishing = matches!(p.action, Action::Finish(_)) || p.action.is_server_tool();
            step.task.pending.refused.accepted(finishing);
            super::recipe::answered(step, &mut p, &facts);
            match accept::accept(ctx, step, req, built, *p, before.finishes, deadline).await {
                accept::Outcome::Done(d) => return done(step, *d),
                // A refused finish counts with the refusals before it, and with the finishes.
                accept::Outcome::Retry(problem) => {
                    step.task.pending.refused = Refusals {
                        finishes: before.finishes + 1,
                        ..before
                    };
                    step.intervene(Intervention::FinishRefused);
                    (problem, String::new())
                }
                accept::Outcome::Tool(action, call, thought) => {
                    if tool_streak(&step.records.history) >= MAX_TOOL_STREAK {
                        return done(step, Decision::fail(
                        "I keep using server tools without acting on the page, so I am stopping here.",
                    ));
                    }
                    if !room(ctx, step, round) || !tools::fits(&action, deadline) {
                        step.task.pending.pending_tool = Some(call);
                        return done(step, tools::deferred(&action, &thought));
                    }
                    round.tool = Some(ToolCall {
                        call,
                        thought,
                        pre_search: None,
                    });
                    return Next::Tool;
                }
            }
        }
        Review::Refuse(problem) => {
            step.intervene(Intervention::Refused);
            tracing::info!(attempt, problem = %problem, "model answer refused by the guard");
            let help = reask_help(&content, &facts, &step.records.history);
            (problem, help)
        }
        Review::Loop(kind) => {
            step.intervene(Intervention::Loop);
            let problem = format!(
                "it would repeat a loop ({}); choose a different approach",
                kind.describe()
            );
            (problem, String::new())
        }
    };
    step.task.pending.refused.answers += 1;
    let time_left = super::deadline::can_retry(deadline);
    let can_retry = !round.retried && time_left;
    match after_refusal(&mut step.task.pending.refused, can_retry, &problem, &help) {
        AfterRefusal::Retry(note) => {
            round.retried = true;
            round.correction = prompt::correction(&content, &note).to_vec();
            Next::Retry
        }
        // The task goes on with the next request, whose prompt carries the note.
        AfterRefusal::EndRound(note) => {
            // This request's notes (the carried ones among them) go with the next, too.
            step.task.notes.resume_note = round.resume_note.clone();
            for n in step.brief.notes.clone() {
                step.task.carry_note(&n);
            }
            step.task
                .carry_note(&format!("Your last answer was refused: {note}."));
            done(
                step,
                tools::server_round(
                    "I am rethinking my next step.",
                    "refused",
                    round.last.clone(),
                ),
            )
        }
        AfterRefusal::Stop => done(
            step,
            Decision::fail(format!(
                "I could not find a next step that works, so I am stopping: {problem}."
            )),
        ),
    }
}

/// What the re-ask after the refused `answer` adds: the ids near an element it named that the
/// page does not have, the grammar on a real id, the task's last browser action.
fn reask_help(answer: &str, facts: &Facts<'_>, history: &[crate::domain::Step]) -> String {
    let named = crate::agent::output::parse_model_output(answer)
        .ok()
        .and_then(|o| Action::parse_model(&o.action).ok())
        .and_then(|a| a.element().map(str::to_owned))
        .filter(|id| !facts.page.has_id(id));
    let last_ran = (history.iter().rev())
        .find(|s| s.kind == StepKind::Dom && s.tool().is_none())
        .map(|s| s.action.as_str())
        .filter(|a| !a.starts_with("finish(") && !a.starts_with("ask_user("));
    crate::domain::reask::help(named.as_deref(), facts.view, last_ran)
}

/// The RunTool state: the tool runs; the model is asked again with its result. (A planning
/// answer's search runs in the Gather state instead.)
pub async fn run_tool(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    round: &mut Round,
    req: &InteractRequest,
    built: &BuiltPage,
    deadline: Instant,
) {
    let Some(t) = round.tool.take() else {
        return;
    };
    round.tools += 1;
    round.correction.clear();
    if let Ok(action) = Action::parse(&t.call) {
        let ran = tools::run(
            ctx, step, req, built, &action, &t.call, &t.thought, deadline,
        )
        .await;
        round.last = Some(ran);
    }
}
