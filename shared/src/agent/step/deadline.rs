//! The step's time, in one place: every reserve kept back from the request's deadline and
//! every "is there still time for this" rule. The phases that spend time (the model, the
//! verifier, a search, a page read) ask here and import nothing from each other for it.
//!
//! From the end backwards: [`PERSIST_RESERVE`] for storing the step; before that the model's
//! answers must be in (`model`); a verdict keeps [`DECISION_RESERVE`] for the decision after
//! it; a search or page read keeps one model call ([`CALL_MIN_TIME`]) after it and takes at
//! most [`SEARCH_BUDGET`].

use std::time::{Duration, Instant};

use crate::agent::action::Action;

/// Time kept back from the model for persisting the step.
pub const PERSIST_RESERVE: Duration = Duration::from_millis(2_500);
/// A model call is only started with at least this much time left.
pub const CALL_MIN_TIME: Duration = Duration::from_millis(1_500);
/// A corrective second model call is only made with at least this much time left.
pub const RETRY_MIN_TIME: Duration = Duration::from_secs(3);
/// Time kept back for the decision after a verdict.
pub const DECISION_RESERVE: Duration = Duration::from_millis(6_000);
/// The longest and shortest time a verdict is given.
pub const VERDICT_LONGEST: Duration = Duration::from_secs(10);
pub const VERDICT_SHORTEST: Duration = Duration::from_millis(1_500);
/// A search is only started with at least this much time left.
pub const MIN_SEARCH_TIME: Duration = Duration::from_millis(800);
/// The longest a search (or page read) may take out of a step.
pub const SEARCH_BUDGET: Duration = Duration::from_secs(8);

/// When the model's answers must be in, for a step ending at `end`.
pub fn model(end: Instant) -> Instant {
    end.checked_sub(PERSIST_RESERVE).unwrap_or(end)
}

/// Time left before `at`.
fn left(at: Instant) -> Duration {
    at.saturating_duration_since(Instant::now())
}

/// Whether a model call can still be started.
pub fn can_call(end: Instant) -> bool {
    left(model(end)) >= CALL_MIN_TIME
}

/// Whether a corrective call can still be made.
pub fn can_retry(end: Instant) -> bool {
    left(model(end)) >= RETRY_MIN_TIME
}

/// When a verdict must be in (the decision still to come), or `None` when there is too little
/// time for one.
pub fn verdict(end: Instant) -> Option<Instant> {
    let until = end
        .checked_sub(PERSIST_RESERVE + DECISION_RESERVE)?
        .min(Instant::now() + VERDICT_LONGEST);
    (left(until) >= VERDICT_SHORTEST).then_some(until)
}

/// When a search or page read must be in: one model call left after it, at most
/// [`SEARCH_BUDGET`].
pub fn search(end: Instant) -> Instant {
    let model = model(end);
    model
        .checked_sub(CALL_MIN_TIME)
        .unwrap_or(model)
        .min(Instant::now() + SEARCH_BUDGET)
}

/// When a page read's answering call must be in (the model's own call still to come).
pub fn read_answer(end: Instant) -> Instant {
    let model = model(end);
    model.checked_sub(CALL_MIN_TIME).unwrap_or(model)
}

/// Whether the server tool `action` can run and still leave the model time to answer (a
/// memory tool takes no time).
pub fn fits(action: &Action, end: Instant) -> bool {
    let left = left(model(end));
    match action {
        Action::GoogleSearch(_) => left >= MIN_SEARCH_TIME + CALL_MIN_TIME,
        // The page read, the answering call, then the model's own.
        Action::ReadPage(_) => left >= MIN_SEARCH_TIME + CALL_MIN_TIME + CALL_MIN_TIME,
        Action::VerifySuccess(_) => verdict(end).is_some(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_spender_keeps_what_comes_after_it() {
        let end = Instant::now() + Duration::from_secs(25);
        assert!(can_call(end) && can_retry(end));
        let v = verdict(end).expect("time for a verdict");
        assert!(v <= end - PERSIST_RESERVE - DECISION_RESERVE);
        assert!(search(end) <= model(end) - CALL_MIN_TIME);
        assert!(fits(&Action::GoogleSearch("q".into()), end));
        let soon = Instant::now() + PERSIST_RESERVE + Duration::from_millis(1_000);
        assert!(!can_call(soon) && !can_retry(soon) && verdict(soon).is_none());
        assert!(!fits(&Action::ReadPage("q".into()), soon));
        assert!(
            fits(&Action::Recall("k".into()), soon),
            "a memory tool takes no time"
        );
    }
}
