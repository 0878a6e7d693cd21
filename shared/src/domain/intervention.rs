//! What the server did to a step besides carrying out the model's answer: each kind is a rule
//! that stopped, changed or questioned what the model (or the client) did. Reported per step
//! in the interact answer's `metrics.interventions` and kept with the step's record, so that a
//! benchmark, the operator and the tests can count how often each rule gets in the way.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intervention {
    /// The verdict on the previous action was a failure.
    FailedVerdict,
    /// A correction ran after a failed action (a note to the model, or an action of its own).
    Correction,
    /// The rules chose the step's action themselves (a concrete correction).
    ForcedAction,
    /// The rules gave the plan step up and failed the task.
    GaveUp,
    /// The model's answer could not be executed and was refused.
    Refused,
    /// The model's answer would have repeated a loop.
    Loop,
    /// `finish()` was refused by the finish check.
    FinishRefused,
    /// The server asked the user a question of its own (not the model's, not a confirmation).
    AskUser,
    /// The risk gate turned the action into a question to the user.
    Confirmation,
    /// A login wall or challenge stopped the task for the user.
    Blocker,
    /// The server dismissed a cookie banner before the model's turn.
    CookieBanner,
}

/// Adds `kind` once.
pub fn note(list: &mut Vec<Intervention>, kind: Intervention) {
    if !list.contains(&kind) {
        list.push(kind);
    }
}
