//! Phase 4: the decision. First what the rules decide alone (a confirmed action, a blocker, a
//! cookie banner, a concrete correction); otherwise the model, whose answer passes the guard
//! ([`model`]: server tools run and the model asked again, one corrective retry, the finish
//! check). A step that cannot get an answer within its deadline ends with a SERVER round
//! instead of an error.

use std::time::Instant;

use super::guard::Facts;
use super::{correct, model, shortcut, BuiltPage, Decision, StepContext};
use crate::agent::page::PageView;
use crate::agent::request::InteractRequest;
use crate::context::AppContext;
use crate::domain::plan::Plan;
use crate::domain::{StepKind, TaskStatus};
use crate::error::Error;

pub use model::PERSIST_RESERVE;

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
        Some(d) => {
            // A tool deferred by the last round belongs to a decision that did not happen.
            step.task.pending_tool = None;
            d
        }
        None => model::ask(ctx, step, req, built, &facts, deadline).await?,
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
    // A server round corrects nothing (its verdict is taken up again by the next request).
    if let Some(c) = step
        .correction
        .as_mut()
        .filter(|_| decision.kind == StepKind::Dom)
    {
        if decision.status == TaskStatus::Executing {
            decision.status = TaskStatus::Correcting;
        }
        c.corrected_step = Some(decision.action.clone());
    }
    if step.is_new && step.task.task_type.is_none() {
        step.task.task_type = Some("web_only".into());
    }
    step.decision = Some(decision);
}
