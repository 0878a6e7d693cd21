//! Phase 3 (Correct | Plan): what the rules decide alone (a confirmed action, a blocker, a
//! cookie banner, a concrete correction), the facts the guard reviews an answer against, and
//! the decision brought in line with the plan and the correction before it is stored.

use super::guard::Facts;
use super::{correct, recipe, shortcut, BuiltPage, StepContext};
use crate::agent::page::PageView;
use crate::agent::request::InteractRequest;
use crate::domain::marks;
use crate::domain::plan::Plan;
use crate::domain::secrets::Finder;
use crate::domain::{Step, StepKind, TaskStatus};

/// What the guard's facts borrow: the page and the task's earlier browser actions.
pub struct Known<'a> {
    view: PageView<'a>,
    built: &'a BuiltPage,
    actions: Vec<&'a str>,
    hashes: Vec<&'a str>,
    views: Vec<&'a str>,
    said: String,
    secrets: Finder,
    /// The client runs `chainedActions`.
    client_chains: bool,
    /// The page's title (`pageTitle`).
    title: Option<&'a str>,
}

/// What the user wrote for the task: the task itself and the reply this request carries.
pub fn said(step: &StepContext) -> String {
    match &step.request.user_input {
        Some(reply) => format!("{}\n{reply}", step.task.goal.query),
        None => step.task.goal.query.clone(),
    }
}

impl<'a> Known<'a> {
    pub fn new(
        history: &'a [Step],
        req: &'a InteractRequest,
        built: &'a BuiltPage,
        said: String,
        secrets: Finder,
    ) -> Self {
        let dom: Vec<&Step> = history.iter().filter(|s| s.kind == StepKind::Dom).collect();
        let (mut hashes, mut views): (Vec<&str>, Vec<&str>) = dom
            .iter()
            .map(|s| {
                s.before_state
                    .as_ref()
                    .map_or(("", ""), |b| (b.page_hash.as_str(), b.view_hash()))
            })
            .unzip();
        hashes.push(&built.page.hash);
        views.push(&built.page.view);
        Self {
            view: PageView {
                page: &built.page,
                url: &req.url,
            },
            built,
            actions: dom.iter().map(|s| s.action.as_str()).collect(),
            hashes,
            views,
            said,
            secrets,
            client_chains: req.capabilities.chained_actions,
            title: req.page_title.as_deref(),
        }
    }

    /// The facts at the request's record `step_index`.
    pub fn facts(&'a self, ctx: &'a super::StepPorts<'_>, step_index: u32) -> Facts<'a> {
        Facts {
            page: &self.built.page,
            view: &self.view,
            patterns: &ctx.agent.risk,
            actions: &self.actions,
            hashes: &self.hashes,
            views: &self.views,
            step_index,
            said: &self.said,
            secrets: &self.secrets,
            // Only to a client that says it runs them (the shipping extension does not).
            chains: ctx.agent.chained_actions && self.client_chains,
            title: self.title,
        }
    }
}

/// The Correct and Plan states: a decision the rules make without the model (the shortcuts,
/// then — after a failed action — a concrete correction). Whether one was made.
pub fn rules(
    ctx: &super::StepPorts<'_>,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
) -> bool {
    let now = ctx.clock.now();
    note_new_elements(step, req, built);
    let history = step.records.history.clone();
    let known = Known::new(
        &history,
        req,
        built,
        said(step),
        super::secrets::finder(ctx, step),
    );
    let facts = known.facts(ctx, step.records.step_index);
    let user_spoke = step.request.user_input.is_some() || step.task.notes.resume_note.is_some();
    let ruled = shortcut::decide(step, &facts)
        .or_else(|| recipe::replay(step, &facts))
        .or_else(|| correct::correct(step, req, &facts, now));
    // What the user said (a no, an unclear reply, a resume) is the model's to read, whatever
    // this step's rules did first (a cookie banner closed): the recipe is left to the model.
    // Only a yes that runs the confirmed action lets it go on — or an unclear reply the same
    // question is asked again about (the next reply decides).
    let asked_again = step
        .task
        .pending
        .confirmation
        .as_ref()
        .is_some_and(|c| c.asked_again && c.step_index == step.records.step_index);
    if user_spoke && !asked_again && !ruled.as_ref().is_some_and(|d| d.confirmed) {
        recipe::leave_to_model(step);
    }
    match ruled {
        Some(d) => {
            // A tool deferred by the last round belongs to a decision that did not happen.
            step.task.pending.pending_tool = None;
            step.answer.decision = Some(d);
            true
        }
        None => false,
    }
}

/// The elements new since the task's last page, and this page's hashes kept for the next.
fn note_new_elements(step: &mut StepContext, req: &InteractRequest, built: &BuiltPage) {
    let view = PageView {
        page: &built.page,
        url: &req.url,
    };
    let now = marks::of(&view);
    step.page.new_ids = marks::new_ids(&view, &marks::decode(&step.task.seen.page_marks));
    // Kept with the task once this request answers with a browser action (see `finish_step`):
    // after a SERVER round the next request still compares with the page before.
    step.page.marks = marks::encode(&now);
}

/// The plan and the correction brought in line with the decision.
pub fn finish_step(step: &mut StepContext, now: chrono::DateTime<chrono::Utc>) {
    let Some(mut decision) = step.answer.decision.take() else {
        return;
    };
    if decision.kind == StepKind::Dom {
        step.task.seen.page_marks = std::mem::take(&mut step.page.marks);
    }
    let plan = step
        .task
        .goal
        .plan
        .get_or_insert_with(|| Plan::single(&step.task.goal.query, now));
    match decision.status {
        TaskStatus::Completed => plan.complete_all(),
        TaskStatus::Failed => plan.fail_current(),
        _ => {}
    }
    // A server round corrects nothing (its verdict is taken up again by the next request).
    if let Some(c) = step
        .verdicts
        .correction
        .as_mut()
        .filter(|_| decision.kind == StepKind::Dom)
    {
        if decision.status == TaskStatus::Executing {
            decision.status = TaskStatus::Correcting;
        }
        c.corrected_step = Some(decision.action.clone());
    }
    if step.request.is_new && step.task.goal.task_type.is_none() {
        step.task.goal.task_type = Some("web_only".into());
    }
    step.answer.decision = Some(decision);
}

/// The decision is missing only when the machine left the tool loop at its bound: the round
/// ends as a SERVER round.
pub fn ensure_decision(step: &mut StepContext, last: Option<super::tools::Ran>) {
    if step.answer.decision.is_none() {
        step.answer.decision = Some(super::tools::server_round("", "tool_limit", last));
    }
}
