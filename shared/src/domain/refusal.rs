//! What follows a refused model answer (a loop, an action the client cannot run, a finish the
//! check refused), and when refusals end a task: only [`MAX_IDLE_ROUNDS`] requests in a row
//! without an accepted answer do ([`Refusals`]); each re-ask says more ([`after_refusal`]), and
//! an accepted answer or visible progress starts the count again.

use serde::{Deserialize, Serialize};

/// Requests in a row that end without an accepted answer before the task ends: each asks the
/// model twice (the answer and one re-ask), and each re-ask says more (see [`after_refusal`]).
pub const MAX_IDLE_ROUNDS: u32 = 3;

/// The model's refused answers since its last accepted one, as the task keeps them.
///
/// The task ends for lack of progress, not for a count of answers: only when
/// [`MAX_IDLE_ROUNDS`] requests in a row could not get one answer accepted, each having
/// re-asked with help — the exact grammar, the ids on the page near the one named, the last
/// action that ran. An accepted answer, or a page that shows the last action worked, starts
/// the count again. Refused finishes are counted apart (the finish check's own limit reads
/// them): a doubtful finish is refused only so often, whatever else was refused.
///
/// Stored tasks from before kept a bare count of refused answers; it reads as `answers`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RefusalsWire", rename_all = "camelCase")]
pub struct Refusals {
    /// Answers refused since the last accepted one.
    pub answers: u32,
    /// Requests in a row that ended without an accepted answer.
    pub rounds: u32,
    /// `finish()` answers refused for a doubt since the task's last accepted action.
    pub finishes: u32,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RefusalsWire {
    Count(u32),
    #[serde(rename_all = "camelCase")]
    Parts {
        #[serde(default)]
        answers: u32,
        #[serde(default)]
        rounds: u32,
        #[serde(default)]
        finishes: u32,
    },
}

impl From<RefusalsWire> for Refusals {
    fn from(w: RefusalsWire) -> Self {
        match w {
            RefusalsWire::Count(answers) => Refusals {
                answers,
                ..Refusals::default()
            },
            RefusalsWire::Parts {
                answers,
                rounds,
                finishes,
            } => Refusals {
                answers,
                rounds,
                finishes,
            },
        }
    }
}

impl Refusals {
    /// An answer was accepted: the count starts again (the refused finishes stay until an
    /// action is accepted: a finish refused and then made again is still one in a row).
    pub fn accepted(&mut self, finishing: bool) {
        let finishes = if finishing { self.finishes } else { 0 };
        *self = Refusals {
            finishes,
            ..Refusals::default()
        };
    }

    /// The page showed the last action worked: the task is making progress.
    pub fn progressed(&mut self) {
        *self = Refusals::default();
    }
}

/// What follows a refused answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterRefusal {
    /// Ask the model again in this request, with this note.
    Retry(String),
    /// End the request as a server round; the note goes with the next request's prompt.
    EndRound(String),
    /// [`MAX_IDLE_ROUNDS`] requests in a row got no answer accepted: the task ends.
    Stop,
}

/// The next move after a refused answer (counted in `r`, this one included), whose `problem`
/// is for the model; `can_retry`: this request may still ask the model again; `help`: what the
/// re-ask adds (the grammar, the ids near the one named, the last action that ran). The note
/// grows with the count: the problem and the help first; then how many answers were refused;
/// in the last round, that the task ends unless an answer works, and how to end it instead.
/// A request that cannot ask again ends its round; the last round's end ends the task.
pub fn after_refusal(r: &mut Refusals, can_retry: bool, problem: &str, help: &str) -> AfterRefusal {
    if !can_retry {
        r.rounds += 1;
        if r.rounds >= MAX_IDLE_ROUNDS {
            return AfterRefusal::Stop;
        }
    }
    let mut note = problem.to_owned();
    if !help.is_empty() {
        note = format!("{note}. {help}");
    }
    if r.answers >= 2 {
        note = format!("{note}. That is {} refused answers in a row", r.answers);
    }
    // The next answer is asked in the last round.
    if r.rounds + 1 >= MAX_IDLE_ROUNDS {
        note = format!(
            "{note}. If the next answer cannot run either, the task ends: when no action can work, answer fail(\"why\") or ask_user(\"what you need\")"
        );
    }
    if can_retry {
        AfterRefusal::Retry(note)
    } else {
        AfterRefusal::EndRound(note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_escalate_and_only_rounds_without_progress_end_the_task() {
        let p = "element 205 is not on the current page";
        let help = "Use an id from the page: the nearest are [98] btn \"Submit\"";
        let mut r = Refusals::default();
        let mut moves = Vec::new();
        // Every answer refused: two per request (the answer and one re-ask).
        for k in 0..2 * MAX_IDLE_ROUNDS {
            r.answers += 1;
            let retry = k % 2 == 0;
            moves.push(after_refusal(&mut r, retry, p, help));
        }
        let ends: Vec<bool> = moves.iter().map(|m| *m == AfterRefusal::Stop).collect();
        assert_eq!(ends, [false, false, false, false, false, true]);
        let AfterRefusal::Retry(first) = &moves[0] else {
            panic!("the first refusal is asked again: {moves:?}");
        };
        assert!(first.starts_with(p) && first.contains("[98]"), "{first}");
        assert!(!first.contains("refused answers"), "{first}");
        let AfterRefusal::EndRound(second) = &moves[1] else {
            panic!("a second refusal in one request ends the round: {moves:?}");
        };
        assert!(second.contains("2 refused answers in a row"), "{second}");
        for m in &moves[3..5] {
            let (AfterRefusal::Retry(last) | AfterRefusal::EndRound(last)) = m else {
                panic!("{moves:?}");
            };
            assert!(
                last.contains("the task ends") && last.contains("fail("),
                "{last}"
            );
        }
        assert!(!second.contains("the task ends"), "{second}");
        for m in &moves {
            if let AfterRefusal::Retry(n) | AfterRefusal::EndRound(n) = m {
                assert!(
                    !n.contains("another element"),
                    "help never sends the model to another element: {n}"
                );
            }
        }
    }

    #[test]
    fn an_accepted_answer_or_progress_starts_the_count_again() {
        let mut r = Refusals {
            answers: 5,
            rounds: 2,
            finishes: 1,
        };
        r.accepted(true);
        assert_eq!(
            r,
            Refusals {
                finishes: 1,
                ..Refusals::default()
            },
            "a finish accepted to be checked keeps the refused finishes"
        );
        r.accepted(false);
        assert_eq!(r, Refusals::default());
        r.rounds = 2;
        r.progressed();
        assert_eq!(r, Refusals::default());
    }

    #[test]
    fn a_stored_count_of_refused_answers_is_still_read() {
        let old: Refusals = serde_json::from_str("3").expect("old");
        assert_eq!(old.answers, 3);
        let new: Refusals = serde_json::from_str(r#"{"answers":1,"rounds":2}"#).expect("new");
        assert_eq!((new.answers, new.rounds, new.finishes), (1, 2, 0));
        let back: Refusals =
            serde_json::from_value(serde_json::to_value(new).expect("json")).expect("again");
        assert_eq!(back, new);
    }
}
