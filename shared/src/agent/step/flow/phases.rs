//! The Task states' work, by phase name: each reads and updates the [`RunState`] and returns
//! the small summary the machine's Choice states look at.

use serde::Deserialize;
use serde_json::{json, Value};

use super::RunState;
use crate::agent::prompt::KNOWLEDGE_CHARS;
use crate::agent::request::InteractRequest;
use crate::agent::step::decide::{self, Next, Round};
use crate::agent::step::StepPorts;
use crate::agent::step::{
    budget, load, page, persist, plan, search, secrets, verify, BuiltPage, Loaded, StepContext,
    StepInput,
};
use crate::domain::web::SearchRecord;
use crate::error::Error;
use crate::ports::knowledge::KnowledgeChunk;
use crate::text::truncate_chars;

/// A phase of the step: what a Task state of `statemachine/interact-step.asl.json` runs, named
/// by its payload's `phase` (a test holds that every Task state names one and every phase has
/// a state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Load,
    Verify,
    Correct,
    Plan,
    Knowledge,
    WebSearch,
    Decide,
    Guard,
    Tool,
    Persist,
    Respond,
    Release,
}

impl Phase {
    pub const ALL: [Phase; 12] = [
        Phase::Load,
        Phase::Verify,
        Phase::Correct,
        Phase::Plan,
        Phase::Knowledge,
        Phase::WebSearch,
        Phase::Decide,
        Phase::Guard,
        Phase::Tool,
        Phase::Persist,
        Phase::Respond,
        Phase::Release,
    ];

    /// The name the definition's payloads use.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Verify => "verify",
            Phase::Correct => "correct",
            Phase::Plan => "plan",
            Phase::Knowledge => "knowledge",
            Phase::WebSearch => "webSearch",
            Phase::Decide => "decide",
            Phase::Guard => "guard",
            Phase::Tool => "tool",
            Phase::Persist => "persist",
            Phase::Respond => "respond",
            Phase::Release => "release",
        }
    }

    pub fn parse(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Reads the run without changing it: run at once by the Parallel state.
    pub fn read_only(self) -> bool {
        matches!(self, Phase::Knowledge | Phase::WebSearch)
    }

    /// Needs the page built again when it runs in a process of its own.
    pub fn needs_page(self) -> bool {
        !self.read_only() && !matches!(self, Phase::Load | Phase::Respond | Phase::Release)
    }
}

fn missing(what: &str) -> Error {
    Error::internal(format!("the {what} of the run is missing"))
}

fn step_of(run: &mut RunState) -> Result<&mut StepContext, Error> {
    run.step.as_deref_mut().ok_or_else(|| missing("step"))
}

/// What the phases after Load work on: the step, the request, the page and the model round.
struct Parts<'a> {
    step: &'a mut StepContext,
    req: &'a InteractRequest,
    input: &'a StepInput,
    built: &'a BuiltPage,
    round: &'a mut Round,
}

fn parts(run: &mut RunState) -> Result<Parts<'_>, Error> {
    match (
        run.step.as_deref_mut(),
        run.input.as_ref(),
        run.built.as_ref(),
    ) {
        (Some(step), Some(input), Some(built)) => Ok(Parts {
            step,
            req: &input.request,
            input,
            built,
            round: &mut run.round,
        }),
        _ => Err(missing("page")),
    }
}

/// Runs `phase` over `run`; `input` is the Task's payload.
pub async fn phase(
    ctx: &StepPorts<'_>,
    run: &mut RunState,
    phase: Phase,
    input: &Value,
) -> Result<Value, Error> {
    match phase {
        Phase::Load => load_phase(ctx, run).await,
        Phase::Verify => {
            let deadline = run.deadline();
            let started = run.started();
            let Parts {
                step, req, built, ..
            } = parts(run)?;
            verify::verify(ctx, step, req, built, deadline).await;
            let verdict = match &step.verdicts.verification {
                Some(v) if v.failed() => "failed",
                Some(v) if v.unconfirmed => "unconfirmed",
                Some(_) => "passed",
                None => "none",
            };
            step.spend.phases.verified_us = started.elapsed().as_micros() as u64;
            Ok(json!({ "verdict": verdict }))
        }
        Phase::Correct | Phase::Plan => {
            let Parts {
                step, req, built, ..
            } = parts(run)?;
            let decided = plan::rules(ctx, step, req, built);
            Ok(json!({ "decided": decided }))
        }
        Phase::Knowledge | Phase::WebSearch => gather(ctx, phase, GatherArgs::of(run)?).await,
        Phase::Decide => decide_phase(ctx, run, input).await,
        Phase::Guard => guard_phase(ctx, run).await,
        Phase::Tool => {
            let deadline = run.deadline();
            let p = parts(run)?;
            decide::run_tool(ctx, p.step, p.round, p.req, p.built, deadline).await;
            Ok(json!({ "tools": p.round.tools }))
        }
        Phase::Persist => persist_phase(ctx, run).await,
        Phase::Respond => {
            if let Some(step) = run.step.as_deref() {
                budget::settle(ctx, step).await;
            }
            let body = run.response.clone().ok_or_else(|| missing("response"))?;
            Ok(json!({ "status": 200, "body": body, "headers": {} }))
        }
        Phase::Release => Ok(release(ctx, run, &input["error"]).await),
    }
}

async fn load_phase(ctx: &StepPorts<'_>, run: &mut RunState) -> Result<Value, Error> {
    let deadline = run.deadline();
    let input = run.input.as_mut().ok_or_else(|| missing("request"))?;
    // Under way (when a builder is free) while the step's reads and claims wait on the store.
    let page_job = page::start(ctx, &mut input.request, deadline);
    let reads = load::read(ctx, input).await?;
    let admitted = match load::claim(ctx, input, reads).await? {
        Loaded::Replay(response) => {
            // Kept by any version of the server: sent as this client can run it.
            let client = input.request.capabilities;
            run.response = Some(super::super::response::for_client(response, client));
            return Ok(json!({ "replay": true, "isNew": false, "knowledge": false }));
        }
        Loaded::Ready(admitted) => *admitted,
    };
    let (mut step, built) = load::enter(ctx, input, admitted, page_job).await?;
    secrets::observe(ctx, &mut step, &built, &input.request.url);
    step.spend.phases.loaded_us = run.started().elapsed().as_micros() as u64;
    let out = json!({ "replay": false, "isNew": step.request.is_new, "knowledge": step.brief.org_knowledge });
    run.step = Some(step);
    run.built = Some(built);
    Ok(out)
}

/// What the Knowledge and WebSearch states need: they only read the run, so they may run at
/// once (in another process each, on Step Functions).
#[derive(Debug, Clone)]
pub struct GatherArgs {
    tenant_id: String,
    url: String,
    query: String,
    search: Option<String>,
    deadline: std::time::Instant,
    /// The task's typed secrets (a search holding one is not sent).
    secrets: Vec<crate::domain::secrets::SecretMark>,
}

impl GatherArgs {
    pub fn of(run: &RunState) -> Result<Self, Error> {
        let step = run.step.as_deref().ok_or_else(|| missing("step"))?;
        let input = run.input.as_ref().ok_or_else(|| missing("request"))?;
        Ok(Self {
            tenant_id: step.tenant_id.clone(),
            url: input.request.url.clone(),
            query: step.task.goal.query.clone(),
            search: run.round.tool.as_ref().and_then(|t| t.pre_search.clone()),
            deadline: run.deadline(),
            secrets: step.task.seen.secrets.clone(),
        })
    }
}

/// The Knowledge state (the chunks the prompt can show, no more) or the WebSearch state.
pub async fn gather(ctx: &StepPorts<'_>, phase: Phase, args: GatherArgs) -> Result<Value, Error> {
    if phase == Phase::WebSearch {
        let Some(q) = args.search else {
            return Ok(json!({}));
        };
        let until = super::super::deadline::search(args.deadline);
        let secrets = secrets::key(ctx).finder(&args.secrets);
        let record = search::search(ctx, &q, &args.url, until, ctx.clock.now(), &secrets).await;
        return Ok(json!({ "search": record }));
    }
    let Some(k) = ctx.knowledge else {
        return Ok(json!({ "chunks": [] }));
    };
    let chunks = match k
        .resolve(&args.url, Some(&args.query), &args.tenant_id)
        .await
    {
        Ok(r) => r.context,
        // Knowledge improves a step but is not needed for one.
        Err(e) => {
            tracing::warn!(error = %e, "knowledge lookup failed; deciding without it");
            Vec::new()
        }
    };
    let mut used = 0;
    let mut kept = Vec::new();
    for mut c in chunks {
        if used >= KNOWLEDGE_CHARS {
            break;
        }
        c.content = truncate_chars(&c.content, KNOWLEDGE_CHARS - used).to_string();
        c.document_title = truncate_chars(&c.document_title, 120).to_string();
        c.metadata = None;
        used += c.content.chars().count();
        kept.push(c);
    }
    Ok(json!({ "chunks": kept }))
}

#[derive(Deserialize, Default)]
struct Gathered {
    #[serde(default)]
    chunks: Vec<KnowledgeChunk>,
    #[serde(default)]
    search: Option<SearchRecord>,
}

/// Takes in what the Gather state found (idempotent: Decide runs again after every tool).
fn take_gathered(run: &mut RunState, gathered: &Value) -> Result<(), Error> {
    let parts: Vec<Gathered> = serde_json::from_value(gathered.clone()).unwrap_or_default();
    let step = step_of(run)?;
    let chunks: Vec<KnowledgeChunk> = parts.iter().flat_map(|p| p.chunks.clone()).collect();
    if !chunks.is_empty() {
        step.brief.knowledge = chunks;
    }
    let record = parts.into_iter().find_map(|p| p.search);
    if let (Some(record), None) = (record, &step.task.seen.pre_search) {
        // Knowledge first: a search is shown only when no knowledge came back.
        if step.brief.knowledge.is_empty() {
            step.task.seen.pre_search = Some(record);
        }
        run.round.tools += 1;
        run.round.tool = None;
        run.round.correction.clear();
    }
    Ok(())
}

async fn decide_phase(
    ctx: &StepPorts<'_>,
    run: &mut RunState,
    input: &Value,
) -> Result<Value, Error> {
    take_gathered(run, &input["gathered"])?;
    let deadline = run.deadline();
    let p = parts(run)?;
    let next = decide::call(ctx, p.step, p.round, p.req, p.built, deadline).await?;
    let searching = p
        .round
        .tool
        .as_ref()
        .is_some_and(|t| t.pre_search.is_some());
    let next = match next {
        Next::Tool if searching => "search",
        Next::Tool => "tool",
        Next::Guard => "guard",
        Next::Retry | Next::Done => "done",
    };
    Ok(json!({ "next": next, "calls": p.round.calls }))
}

async fn guard_phase(ctx: &StepPorts<'_>, run: &mut RunState) -> Result<Value, Error> {
    let deadline = run.deadline();
    let p = parts(run)?;
    let history = p.step.records.history.clone();
    let known = plan::Known::new(
        &history,
        p.req,
        p.built,
        plan::said(p.step),
        secrets::finder(ctx, p.step),
    );
    let facts = known.facts(ctx, p.step.records.step_index);
    let next = decide::guard_answer(ctx, p.step, p.round, p.req, p.built, &facts, deadline).await;
    let next = match next {
        Next::Tool => "tool",
        Next::Retry => "retry",
        Next::Guard | Next::Done => "done",
    };
    Ok(json!({ "next": next, "tools": p.round.tools }))
}

async fn persist_phase(ctx: &StepPorts<'_>, run: &mut RunState) -> Result<Value, Error> {
    let started = run.started();
    let elapsed = run.elapsed_us();
    let last = run.round.last.clone();
    let Parts {
        step, input, built, ..
    } = parts(run)?;
    plan::ensure_decision(step, last);
    plan::finish_step(step, ctx.clock.now());
    step.spend.phases.decided_us = elapsed;
    let response = persist(ctx, step, input, built, started).await?;
    run.response = Some(response);
    Ok(json!({ "stored": true }))
}

/// The Release state: what the step claimed is handed back and the error answered.
async fn release(ctx: &StepPorts<'_>, run: &mut RunState, error: &Value) -> Value {
    if let (Some(step), Some(input), false) =
        (run.step.as_deref(), run.input.as_ref(), run.released)
    {
        budget::settle(ctx, step).await;
        load::release(ctx, step, input).await;
        run.released = true;
    }
    let relayed = run.failure.clone().unwrap_or_else(|| {
        // A failure of the machine itself (a timeout, the phase function): nothing was
        // answered yet.
        let name = error["Error"].as_str().unwrap_or("States.Runtime");
        tracing::error!(error = name, "the step's state machine failed");
        let e = if name == "States.Timeout" {
            Error::Overloaded("the step could not finish in time")
        } else {
            Error::internal(name)
        };
        crate::error::relay(&e)
    });
    let headers = match relayed.retry_after {
        Some(s) => json!({ "Retry-After": s.to_string() }),
        None => json!({}),
    };
    json!({ "status": relayed.status, "body": relayed.body, "headers": headers })
}

#[cfg(test)]
mod tests {
    use super::Phase;
    use serde_json::Value;

    /// The `phase` each Task state's payload names, in Parallel branches too.
    fn named(states: &Value, out: &mut Vec<String>) {
        for state in states.as_object().into_iter().flat_map(|m| m.values()) {
            if let Some(name) = state["Parameters"]["Payload"]["phase"].as_str() {
                out.push(name.to_owned());
            } else if state["Type"] == "Task" {
                out.push(String::new());
            }
            for branch in state["Branches"].as_array().into_iter().flatten() {
                named(&branch["States"], out);
            }
        }
    }

    /// One vocabulary: every Task state of the definition runs a phase of [`Phase`], and every
    /// phase has its state.
    #[test]
    fn every_task_state_names_a_phase_and_every_phase_has_a_state() {
        let definition: Value = serde_json::from_str(super::super::DEFINITION).expect("JSON");
        let mut names = Vec::new();
        named(&definition["States"], &mut names);
        for name in &names {
            assert!(Phase::parse(name).is_some(), "a Task state runs {name:?}");
        }
        for phase in Phase::ALL {
            assert!(
                names.iter().any(|n| n == phase.name()),
                "no state runs {phase:?}"
            );
        }
    }
}
