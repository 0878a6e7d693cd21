//! Self-correction after a failed verification: the strategy for the failure (another element
//! with the same role and name, a retry after a delay, another tool, gathering information, a
//! new plan), at most three attempts per plan step, then the task fails. A strategy that names
//! a concrete action goes out without asking the model (if the guard's rules allow it);
//! otherwise the model gets the strategy as a note.

use chrono::{DateTime, Utc};

use super::guard::{review_own, Facts, Review};
use super::{Decision, StepContext};
use crate::agent::action::Action;
use crate::agent::request::InteractRequest;
use crate::domain::correction::{choose, Choice, Correction, Failure, Strategy};
use crate::domain::intervention::Intervention;
use crate::domain::plan::Plan;
use crate::domain::risk::{assess, Context};
use crate::domain::TaskStatus;

/// What the model is told to do for a strategy.
fn hint(strategy: Strategy) -> &'static str {
    match strategy {
        Strategy::AlternativeSelector => {
            "Use another element that does the same (same label or role), or another way to reach the goal."
        }
        Strategy::RetryWithDelay => "Wait for the page, then try again.",
        Strategy::AlternativeTool => {
            "Use another kind of action: selectOption for a list, navigate to a link's URL, fill what the form still needs and use its button (Enter submits nothing with this browser extension)."
        }
        Strategy::GatherInformation => {
            "The target is not on the page: scroll or use findText to find it first."
        }
        Strategy::UpdatePlan => "The plan does not work: make a new plan from the current page.",
    }
}

/// Chooses the correction for a failed verification: a decision when the rules can make it,
/// else `None` with the strategy noted for the model. Nothing happens after a success.
pub fn correct(
    step: &mut StepContext,
    req: &InteractRequest,
    facts: &Facts<'_>,
    now: DateTime<Utc>,
) -> Option<Decision> {
    let v = step.verdicts.verification.clone().filter(|v| v.failed())?;
    let prev = step
        .records
        .history
        .iter()
        .rev()
        .find(|s| s.kind == crate::domain::StepKind::Dom)?
        .clone();
    let query = step.task.goal.query.clone();
    let plan = step
        .task
        .goal
        .plan
        .get_or_insert_with(|| Plan::single(&query, now));
    let attempts = plan.count_attempt();
    let step_name = plan
        .current()
        .map(|s| s.description.clone())
        .unwrap_or(query);
    let action = Action::parse(&prev.action).ok()?;
    let target = prev.before_state.as_ref().and_then(|b| b.target.as_ref());
    let failure = Failure {
        action: action.kind(),
        target,
        code: req.last_action.error_field("code"),
        message: req.last_action.error_field("message"),
        attempts: attempts.saturating_sub(1),
    };
    match choose(&failure, facts.view) {
        Choice::GiveUp { reason } => {
            plan.fail_current();
            step.intervene(Intervention::GaveUp);
            Some(Decision::fail(format!(
                "I could not get \"{}\" done: {reason}. The last attempt failed because {}.",
                crate::text::single_line(&step_name, 120),
                v.reason
            )))
        }
        Choice::Correct {
            strategy,
            reason,
            action: corrected,
        } => {
            step.verdicts.correction = Some(Correction {
                step_index: v.step_index,
                strategy,
                reason: crate::text::single_line(&reason, 300),
                attempt_number: attempts,
                original_step: Some(prev.action.clone()),
                corrected_step: None,
                timestamp: crate::time::iso(now),
            });
            if strategy == Strategy::UpdatePlan {
                step.verdicts.replan = true;
            }
            // A risky action (or one the user confirmed) is never redone by the rules: the
            // model may propose it again, and the risk gate asks the user.
            let risky = prev.before_state.as_ref().is_some_and(|b| {
                b.confirmed
                    || b.target.as_ref().is_some_and(|t| {
                        assess(
                            facts.patterns,
                            &action.kind(),
                            Some(&t.facts()),
                            facts.view,
                            &Context::default(),
                        )
                        .is_some()
                    })
            });
            if let Some(a) = corrected.filter(|_| !risky) {
                let thought = format!("The last action did not work ({}); {reason}.", v.reason);
                if let Review::Accept(p) = review_own(&thought, &a, facts) {
                    if p.confirmation.is_none() {
                        step.intervene(Intervention::ForcedAction);
                        return Some(Decision {
                            status: TaskStatus::Correcting,
                            ..p.decision
                        });
                    }
                }
            }
            step.brief.notes.push(format!(
                "The last action failed: {}. Correction (attempt {attempts} of {}): {reason}. {}",
                v.reason,
                crate::domain::correction::MAX_ATTEMPTS,
                hint(strategy)
            ));
            None
        }
    }
}
