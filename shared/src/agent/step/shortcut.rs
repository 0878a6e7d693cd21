//! Decisions the rules make without the model, in order: the user's yes to a confirmation
//! (exactly the confirmed action, once), a blocker the user must clear (captcha, login wall —
//! not on the request that brings the user's answer or resume, which the model reads), the
//! next action the model's last answer left waiting ([`crate::domain::queue`]), a cookie
//! banner the agent dismisses itself. A refusal or an unclear reply becomes a note for the
//! model; so do waiting actions that no longer fit the page.

use super::guard::{review_own, Facts, Review};
use super::{Decision, StepContext};
use crate::agent::action::Action;
use crate::domain::blocker::{cookie_dismissal, detect};
use crate::domain::confirm::PendingConfirmation;
use crate::domain::facts::PageFacts;
use crate::domain::intervention::Intervention;
use crate::domain::outcome::predict;
use crate::domain::queue::{self, ActionQueue};
use crate::domain::TaskStatus;

/// The confirmed action, if it can still run on this page as it was confirmed.
fn confirmed(
    pending: &PendingConfirmation,
    step_index: u32,
    view: &dyn PageFacts,
) -> Option<Decision> {
    if !pending.still_applies(step_index, view) {
        return None;
    }
    let action = Action::parse(&pending.action).ok()?;
    if action.element() != pending.element_id.as_deref() {
        return None;
    }
    let kind = action.kind();
    let target = match kind.target() {
        Some(id) => Some(view.element(id)?),
        None => None,
    };
    Some(Decision {
        expected_outcome: predict(&kind, view, None),
        target: target.map(|t| t.snapshot()),
        confirmed: true,
        ..Decision::new(
            "You confirmed it, so I am going ahead.",
            pending.action.clone(),
            TaskStatus::Executing,
        )
    })
}

/// A decision without the model, or `None` (notes for the model may have been added).
pub fn decide(step: &mut StepContext, facts: &Facts<'_>) -> Option<Decision> {
    // Waiting actions go out only from this request's checks: any other decision drops them.
    let queue = step.task.pending.queue.take();
    if let Some(pending) = step.task.pending.confirmation.take() {
        match step.request.user_input.as_deref().map(|r| pending.reply(r)) {
            // What the confirmed action would type is a typed secret, kept only as its
            // fingerprint: it is not known any more, and `[secret]` is never typed for it.
            Some(Some(true)) if pending.action.contains(crate::domain::secrets::HIDDEN) => {
                step.brief.notes.push(
                    "The user said yes, but what the confirmed action would type is a password, code or card value the server keeps hidden and no longer knows: ask the user to type it into the page themselves."
                        .into(),
                );
            }
            Some(Some(true)) => {
                step.task.pending.declined = false;
                if let Some(d) = confirmed(&pending, step.records.step_index, facts.view) {
                    return Some(d);
                }
                step.brief.notes.push(
                    "The user said yes, but the page changed: the confirmed action cannot run on this page. Ask again before anything risky."
                        .into(),
                );
            }
            Some(Some(false)) => {
                step.task.pending.declined = true;
                step.brief.notes.push(format!(
                    "The user declined ({}). Do not do it: find another way, or finish and say why.",
                    crate::text::single_line(&pending.question, 300)
                ));
            }
            // Unclear: asked once more, saying a plain yes or no is needed (the action
            // must still be there as it was asked about).
            Some(None) if !pending.asked_again && pending.still_applies(step.records.step_index, facts.view) => {
                let question = format!(
                    "I need a plain yes or no to go on. {}",
                    crate::text::single_line(&pending.question, 900)
                );
                step.task.pending.confirmation = Some(PendingConfirmation {
                    step_index: step.records.step_index,
                    asked_again: true,
                    question: pending.question.clone(),
                    ..pending
                });
                step.intervene(Intervention::Confirmation);
                return Some(Decision::ask(
                    "Your reply was not a clear yes or no, so I am asking again.",
                    question,
                ));
            }
            Some(None) => step.brief.notes.push(
                "The user's reply to the confirmation question was not a clear yes: nothing risky was confirmed."
                    .into(),
            ),
            // No reply: the question stays open.
            None => step.task.pending.confirmation = Some(pending),
        }
    }
    // After the user answered or resumed, the model decides how to go on (the page may still
    // show what stopped the task: the user may have solved it another way, or said how).
    let user_spoke = step.request.user_input.is_some() || step.task.notes.resume_note.is_some();
    if let Some(blocker) = detect(facts.view, &step.task.goal.query).filter(|_| !user_spoke) {
        let question = blocker
            .user_message
            .clone()
            .unwrap_or_else(|| blocker.description.clone());
        step.intervene(Intervention::Blocker);
        return Some(Decision {
            status: TaskStatus::AwaitingUser,
            blocker: Some(blocker.clone()),
            ..Decision::ask(format!("{}.", blocker.description), question)
        });
    }
    if let Some(d) = queue.and_then(|q| queued(step, q, facts)) {
        return Some(d);
    }
    let recent: Vec<&str> = step
        .records
        .history
        .iter()
        .rev()
        .filter(|s| s.kind == crate::domain::StepKind::Dom)
        .take(3)
        .map(|s| s.action.as_str())
        .collect();
    let click = cookie_dismissal(facts.view, &step.task.goal.query, &recent)?;
    match review_own(
        "Closing the cookie banner first (declining optional cookies where the site allows it).",
        &click,
        facts,
    ) {
        Review::Accept(p) if p.confirmation.is_none() => {
            step.intervene(Intervention::CookieBanner);
            Some(p.decision)
        }
        _ => None,
    }
}

/// The next action the model's last answer left waiting, if it still fits this page; when it
/// does not, the model is told what did not run and why.
fn queued(step: &mut StepContext, mut q: ActionQueue, facts: &Facts<'_>) -> Option<Decision> {
    // The user spoke (a reply, a resume): the model reads it and decides.
    if step.request.user_input.is_some() || step.task.notes.resume_note.is_some() {
        return None;
    }
    let failed = step
        .verdicts
        .verification
        .as_ref()
        .is_some_and(|v| v.failed());
    let thought = format!("{} ({} of {})", q.thought, q.done + 1, q.total);
    // The queue keeps its page's address as the task keeps it: with typed secrets hidden.
    let url = facts.secrets.scrub(facts.view.url());
    let why = match queue::next(&q, &url, facts.view, failed) {
        // Scrubbed in the record: what it would type is no longer known.
        Ok(item) if item.action.contains(crate::domain::secrets::HIDDEN) => {
            "it held a value that is kept hidden".to_owned()
        }
        Ok(item) => match review_own(&thought, &item.action, facts) {
            Review::Accept(p) if p.confirmation.is_none() => {
                q.items.remove(0);
                q.done += 1;
                step.task.pending.queue = (!q.items.is_empty()).then_some(q);
                return Some(Decision {
                    queued: true,
                    ..p.decision
                });
            }
            Review::Accept(_) => "it needs the user's confirmation".to_owned(),
            Review::Refuse(problem) => problem,
            Review::Loop(kind) => kind.describe().to_owned(),
        },
        Err(stop) => stop.describe(),
    };
    // Named without the values they would type.
    let left: Vec<String> = q
        .items
        .iter()
        .map(|i| match i.action.split_once(", ") {
            Some((head, _))
                if i.action.starts_with("setValue") || i.action.starts_with("selectOption") =>
            {
                format!("{head}, …)")
            }
            _ => i.action.clone(),
        })
        .collect();
    step.task.carry_note(&format!(
        "Not run from your earlier answer: {} ({why}). Decide again from this page.",
        crate::text::single_line(&left.join(", "), 300)
    ));
    None
}
