//! Phase 2 (Verify): the previous action verified on this request's page, before anything is
//! decided. Evidence: what the client reported (`lastActionStatus`, `lastActionError`,
//! `lastActionResult`, `domChanges`, `clientObservations`) and the server's own comparison of
//! the page before the action (URL, hash, the target) with this one, against the expectations
//! stored with the action (and with each chained action). The rules decide whenever the
//! evidence does; only an ambiguous case asks the verification model.

use std::time::Instant;

use serde_json::Value;

use super::{judge, BuiltPage, StepContext};
use crate::agent::page::PageView;
use crate::agent::request::{InteractRequest, LastAction};
use crate::agent::step::StepPorts;
use crate::domain::chain::ChainItem;
use crate::domain::outcome::{check, Before, Check, DomExpectation};
use crate::domain::verdict::{
    verdict, ClientReport, Verdict, Verification, MET_CONFIDENCE, SUCCESS_CONFIDENCE,
};
use crate::domain::{Step, StepKind};

/// The client's report, read from the request.
pub fn client_report(last: &LastAction) -> ClientReport<'_> {
    let flag = |v: &Option<Value>, k: &str| v.as_ref().and_then(|v| v.get(k)?.as_bool());
    let counts = last.dom_changes.as_ref().map(|c| {
        let n = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0);
        n("addedCount") + n("removedCount")
    });
    let signals = [
        flag(&last.dom_changes, "urlChanged"),
        counts.map(|n| n > 0),
        flag(&last.client_observations, "didUrlChange"),
        flag(&last.client_observations, "didDomMutate"),
    ];
    let changed = if signals.contains(&Some(true)) {
        Some(true)
    } else if signals.iter().any(Option::is_some) {
        Some(false)
    } else {
        None
    };
    ClientReport {
        status: last.status.as_deref(),
        error: last.error.as_ref().map(|_| {
            (
                last.error_field("code").unwrap_or(""),
                last.error_field("message").unwrap_or(""),
            )
        }),
        result_success: last
            .result
            .as_ref()
            .and_then(|r| r.get("success")?.as_bool()),
        changed,
    }
}

/// The expectations of a step: its action's and each chained action's.
pub fn expectations_of(step: &Step) -> Vec<DomExpectation> {
    let mut all: Vec<DomExpectation> = step
        .expected_outcome
        .as_ref()
        .map(|e| e.dom_expectations.clone())
        .unwrap_or_default();
    for item in step.chain.iter().skip(1) {
        all.extend(chained_expectation(item));
    }
    all
}

fn chained_expectation(item: &ChainItem) -> Option<DomExpectation> {
    let element_id = item.target_element_id.clone();
    Some(match item.action_type.as_str() {
        "setValue" | "selectOption" => DomExpectation::ValueEquals {
            element_id,
            value: item
                .client_verification_checks
                .first()?
                .expected_value
                .clone()?,
        },
        "check" => DomExpectation::StateHas {
            element_id,
            state: "checked".into(),
        },
        "uncheck" => DomExpectation::StateLacks {
            element_id,
            state: "checked".into(),
        },
        _ => return None,
    })
}

/// What the page shows now, in a line: the checks, or the URL.
fn actual_state(checks: &[Check], view: &PageView<'_>) -> String {
    let parts: Vec<&str> = checks
        .iter()
        .map(|c| match c {
            Check::Met(m) | Check::Unmet(m) | Check::Unknown(m) => m.as_str(),
        })
        .collect();
    if parts.is_empty() {
        format!("the page is {}", crate::text::single_line(view.url, 200))
    } else {
        crate::text::single_line(&parts.join("; "), 300)
    }
}

/// Why `prev`'s action, which ran, is not what the instruction `query` asks for
/// ([`crate::domain::aim`]), on the page it left; `marks`: the page it was decided on, as the
/// task keeps it.
fn misdirected_action(
    query: &str,
    prev: &Step,
    view: &PageView<'_>,
    marks: &str,
) -> Option<String> {
    let action = crate::agent::action::Action::parse(&prev.action).ok()?;
    let before = prev.before_state.as_ref()?;
    let target = before.target.as_ref()?;
    // The page moved on: another address, or elements came or went (a section opened, a
    // dialog or banner closed) — a way to what the instruction names, not a choice of its own.
    let last = crate::domain::marks::decode(marks);
    let moved = (!before.url.is_empty() && before.url != view.url)
        || crate::domain::marks::gained(view, &last)
        || crate::domain::marks::lost(view, &last);
    crate::domain::aim::misdirected(query, &action.kind(), target, view, moved)
}

/// Verifies the previous step's action and stores the verdict in `step.verdicts.verification`.
pub async fn verify(
    ctx: &StepPorts<'_>,
    step: &mut StepContext,
    req: &InteractRequest,
    built: &BuiltPage,
    deadline: Instant,
) {
    // After server rounds (the client executed nothing) the verdict made on the last browser
    // action still stands: it is reused, not made again.
    let trailing = step
        .records
        .history
        .iter()
        .rev()
        .take_while(|s| s.kind == StepKind::ServerTool);
    if let Some(v) = trailing.filter_map(|s| s.verification.clone()).last() {
        step.verdicts.verification = Some(v);
        step.verdicts.reused = true;
        return;
    }
    let Some(prev) = step.records.history.last().cloned() else {
        return;
    };
    let Some(expected) = prev.expected_outcome.as_ref() else {
        return;
    };
    if prev.kind != StepKind::Dom {
        return;
    }
    let view = PageView {
        page: &built.page,
        url: &req.url,
    };
    let report = client_report(&req.last_action);
    let before = prev.before_state.as_ref().map(|b| Before {
        url: &b.url,
        hash: &b.page_hash,
    });
    let expectations = super::secrets::expectations_on(
        &super::secrets::finder(ctx, step),
        expectations_of(&prev),
        &view,
    );
    // A new title is a change the tree does not show (a search that only retitles the page).
    let retitled = prev.before_state.as_ref().is_some_and(|b| {
        !b.title.is_empty() && req.page_title.as_deref().is_some_and(|t| t != b.title)
    });
    let changed = if retitled { Some(true) } else { report.changed };
    let checks = check(&expectations, before.as_ref(), &view, changed);
    let now = ctx.clock.now();
    let actual = actual_state(&checks, &view);
    let mut v = match verdict(&report, &checks) {
        Verdict::Decided {
            success,
            confidence,
            reason,
        } => Verification::new(prev.index, success, confidence, reason, now),
        Verdict::Ambiguous { reason } => {
            let question =
                judge::outcome_question(&step.task.goal.query, &prev, &report, &actual, built, req);
            match judge::ask(ctx, step, &question, deadline).await {
                // A judge that leans to yes without confidence confirms nothing.
                Some(j) if j.success && j.confidence < SUCCESS_CONFIDENCE => {
                    let mut v = Verification::unconfirmed(prev.index, j.reason, now);
                    v.by_model = true;
                    v
                }
                Some(j) => {
                    let mut v =
                        Verification::new(prev.index, j.success, j.confidence, j.reason, now);
                    v.by_model = true;
                    v
                }
                // Nobody could tell: not confirmed, and not a failure either.
                None => Verification::unconfirmed(
                    prev.index,
                    format!("could not be confirmed: {reason}"),
                    now,
                ),
            }
        }
    };
    // The action ran; whether it was the one the instruction asks for is another question.
    if v.success {
        if let Some(why) = misdirected_action(
            &step.task.goal.query,
            &prev,
            &view,
            &step.task.seen.page_marks,
        ) {
            v = Verification::unconfirmed(prev.index, why, now);
        }
    }
    v.expected_state = Some(expected.description.clone());
    v.actual_state = Some(actual);
    // The model moved on from a failure (with or without naming the plan step) and the page
    // shows it worked: the step's correction attempts start again. (A wait, or an action
    // that only completed without an error, shows nothing was got over.)
    if v.success && v.confidence >= MET_CONFIDENCE {
        if let Some(plan) = step.task.goal.plan.as_mut() {
            plan.clear_attempts();
        }
        // Answers refused before the model got out of a loop no longer count toward ending it.
        step.task.pending.refused.progressed();
    }
    step.verdicts.verification = Some(v);
}
