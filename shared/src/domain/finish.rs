//! Whether a task is done when the model says so, on what the server knows: the instruction,
//! the browser actions the task sent, the model's plan, the verdicts and the page now.
//!
//! The model: a finish is premature when something the task asks for is visibly still to do.
//! - **Missing** (refused without asking anyone): the instruction names a control to press
//!   ("… and click Submit"), the page still shows it, no action of the task pressed it, and
//!   the last one filled a field. No other reading is left.
//! - **Doubt** (the finish judge decides): nothing was done yet (no action, no tool); a question is
//!   finished without an answer; a value the instruction quotes was not typed, chosen or
//!   clicked; the model's own plan has steps still open; an action failed lately.
//! - **Done** otherwise: the finish stands without a model call.
//!
//! A finish is never taken on trust ([`check`]): what is missing refuses it; otherwise the
//! finish judge decides — on a doubt, and on a finish with nothing in doubt too (the rules see
//! what is visibly left, not what was done wrong: an early finish after a wrong click leaves
//! nothing visible). Only an answer the page cannot show (the client's tree has no text) stands
//! on the model's word when nothing is in doubt. An answer that only says the task is done
//! ("Done", "Task complete") is no answer.
//!
//! A refused finish tells the model what is missing. A doubt refuses at most
//! [`MAX_REFUSED_FINISHES`] finishes in a row (counted apart from other refused answers); the
//! next one stands, unconfirmed (a judge can be wrong, and a model that keeps saying it is
//! done is told, not trapped — but an unconfirmed finish is never recorded as a recipe). What
//! is missing is refused every time: a model that keeps finishing regardless ends under the
//! loop rules' limit, failed with what is missing named, never "completed" with the form
//! unsent.

use super::facts::PageFacts;
use crate::text::word_starts;

/// Finishes refused in a row for a doubt at most; the next one stands.
pub const MAX_REFUSED_FINISHES: u32 = 2;
/// Quoted values of an instruction looked at, and their length.
const MAX_QUOTED: usize = 8;
const QUOTED_CHARS: std::ops::RangeInclusive<usize> = 2..=120;
/// A control's name compared with the instruction: long enough to mean something.
const CONTROL_NAME_CHARS: std::ops::RangeInclusive<usize> = 3..=40;

/// A browser action the task sent: its name in the grammar (`click`, `setValue`, …), the value
/// it typed or chose, and the normalised name of its target.
#[derive(Debug, Clone, Default)]
pub struct Acted {
    pub action: String,
    pub value: Option<String>,
    pub target: Option<String>,
}

/// What the server knows when the model finishes.
pub struct FinishFacts<'a> {
    pub query: &'a str,
    /// The answer given with `finish("…")`.
    pub answer: Option<&'a str>,
    /// The task's browser actions, in order (actions whose verdict failed included).
    pub acted: &'a [Acted],
    /// The task ran a server tool (a search, a page read, a note).
    pub used_tools: bool,
    /// The model's plan has steps after the current one not completed.
    pub open_plan_steps: bool,
    /// A verdict on one of the last actions failed.
    pub failed_lately: bool,
    pub page: &'a dyn PageFacts,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// Still to do, for the model to read.
    Missing(String),
    /// A reason to ask the finish judge.
    Doubt(String),
    Done,
}

/// Who decides a finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Refused without asking anyone: what is missing, for the model.
    Refuse(String),
    /// The finish judge decides.
    Judge,
    /// The finish stands on the model's word, unconfirmed.
    Stand,
}

/// Who decides a finish on `evidence`, after `refused` finishes refused for a doubt in a row;
/// `unseen_answer`: the finish gives an answer and the page carries no text to check it on.
pub fn check(evidence: Evidence, refused: u32, unseen_answer: bool) -> Check {
    match evidence {
        Evidence::Missing(m) => Check::Refuse(m),
        _ if refused >= MAX_REFUSED_FINISHES => Check::Stand,
        Evidence::Doubt(_) => Check::Judge,
        Evidence::Done if unseen_answer => Check::Stand,
        Evidence::Done => Check::Judge,
    }
}

/// Words an answer that only says the task is done is made of.
const DONE_WORDS: &[&str] = &[
    "done",
    "complete",
    "completed",
    "finished",
    "success",
    "successful",
    "successfully",
    "ok",
    "okay",
    "task",
    "the",
    "is",
    "has",
    "been",
    "all",
    "it",
    "i",
    "have",
    "everything",
    "now",
];

/// Whether `answer` says something besides that the task is done.
pub fn tells(answer: &str) -> bool {
    let lower = answer.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().any(|w| !DONE_WORDS.contains(w))
}

/// The evidence on a finish.
pub fn evidence(f: &FinishFacts<'_>) -> Evidence {
    if let Some(control) = unpressed_control(f) {
        return Evidence::Missing(format!(
            "the task names \"{control}\", which the page still shows, and nothing pressed it after the last field was filled"
        ));
    }
    let answered = f.answer.is_some_and(tells);
    let doubt = if f.acted.is_empty() && !f.used_tools && !answered {
        Some("nothing has been done on the page yet".to_owned())
    } else if asks(f.query) && !answered {
        Some("the task asks a question and the finish gives no answer".to_owned())
    } else if let Some(q) = unused_quote(f) {
        Some(format!(
            "\"{q}\" from the task was not typed, chosen or clicked"
        ))
    } else if f.open_plan_steps {
        Some("the plan has steps still open".to_owned())
    } else if f.failed_lately {
        Some("a recent action did not work".to_owned())
    } else {
        None
    };
    doubt.map_or(Evidence::Done, Evidence::Doubt)
}

/// Lower case, whitespace collapsed.
fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// A control the page shows that the instruction names and no action of the task pressed,
/// when the task's last action filled a field.
fn unpressed_control(f: &FinishFacts<'_>) -> Option<String> {
    let last = f.acted.last()?;
    let filled = matches!(
        last.action.as_str(),
        "setValue" | "selectOption" | "check" | "uncheck"
    );
    if !filled {
        return None;
    }
    let query = norm(f.query);
    let pressed =
        |n: &str| (f.acted.iter()).any(|a| a.target.as_deref().is_some_and(|t| norm(t) == n));
    let press = |role: &str, input: Option<&str>| {
        role == "btn" || matches!(input, Some("submit" | "button"))
    };
    f.page
        .elements()
        .filter(|e| press(&e.role, e.input_type))
        .map(|e| norm(&e.name))
        .find(|n| {
            CONTROL_NAME_CHARS.contains(&n.chars().count())
                && word_starts(&query, n).next().is_some()
                && !pressed(n)
        })
}

/// Openers of an instruction that asks for something to be found out.
const QUESTION_WORDS: &[&str] = &[
    "what", "which", "how", "who", "whom", "whose", "when", "where", "why", "is", "are", "does",
    "do", "did", "can",
];

/// Whether the instruction is a question (its answer is the finding).
fn asks(query: &str) -> bool {
    let q = norm(query);
    let first = q.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
    q.trim_end().ends_with('?') || QUESTION_WORDS.contains(&first)
}

/// A value the instruction quotes that no action typed, chose or clicked, and the answer does
/// not hold.
fn unused_quote(f: &FinishFacts<'_>) -> Option<String> {
    let used = |q: &str| {
        let in_answer = f.answer.is_some_and(|a| norm(a).contains(q));
        in_answer
            || f.acted.iter().any(|a| {
                let value = a.value.as_deref().is_some_and(|v| norm(v).contains(q));
                let target = a.target.as_deref().is_some_and(|t| norm(t).contains(q));
                value || target
            })
    };
    quoted(f.query)
        .into_iter()
        .map(|q| norm(&q))
        .find(|q| !used(q))
}

/// The texts an instruction quotes (`"…"`, `“…”`, `«…»`), each of a bounded length.
fn quoted(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('"', '"'), ('“', '”'), ('«', '»')] {
        let mut rest = query;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else {
                break;
            };
            let q = after[..end].trim();
            if QUOTED_CHARS.contains(&q.chars().count()) && out.len() < MAX_QUOTED {
                out.push(q.to_owned());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::fake::{el, FakePage};

    fn act(action: &str, value: Option<&str>, target: Option<&str>) -> Acted {
        Acted {
            action: action.into(),
            value: value.map(Into::into),
            target: target.map(Into::into),
        }
    }

    fn facts<'a>(query: &'a str, acted: &'a [Acted], page: &'a FakePage) -> FinishFacts<'a> {
        FinishFacts {
            query,
            answer: None,
            acted,
            used_tools: false,
            open_plan_steps: false,
            failed_lately: false,
            page,
        }
    }

    fn form() -> FakePage {
        FakePage::new(
            "https://a.test/form",
            [
                el("1", "inp", "Name"),
                el("2", "btn", "Submit"),
                el("3", "link", "Help"),
            ],
        )
    }

    #[test]
    fn a_form_filled_and_not_pressed_is_missing_its_press() {
        let page = form();
        let typed = [act("setValue", Some("Ada"), Some("name"))];
        let q = "Enter \"Ada\" into the Name field and press Submit.";
        assert!(
            matches!(evidence(&facts(q, &typed, &page)), Evidence::Missing(m) if m.contains("\"submit\""))
        );
        // Pressed: done; pressed before the last field was filled: not a press still to do.
        let pressed = [typed[0].clone(), act("click", None, Some("submit"))];
        assert_eq!(evidence(&facts(q, &pressed, &page)), Evidence::Done);
        let before = [act("click", None, Some("Submit")), typed[0].clone()];
        assert_eq!(evidence(&facts(q, &before, &page)), Evidence::Done);
        // The instruction does not ask for the press: typing was the task.
        let q = "Type \"Ada\" into the Name field.";
        assert_eq!(evidence(&facts(q, &typed, &page)), Evidence::Done);
        // A link of the same name is not a control to press; a name inside a word is not it.
        let q = "Fill in \"Ada\" and read the Helpdesk notes";
        assert_eq!(evidence(&facts(q, &typed, &page)), Evidence::Done);
    }

    #[test]
    fn doubts_go_to_the_judge_and_a_clear_finish_stands() {
        let page = form();
        let none: [Acted; 0] = [];
        let q = "Open the form";
        assert!(
            matches!(evidence(&facts(q, &none, &page)), Evidence::Doubt(d) if d.contains("nothing"))
        );
        let mut f = facts("What is the order total?", &none, &page);
        f.answer = Some("The total is $42.");
        assert_eq!(evidence(&f), Evidence::Done, "answered from the page");
        let clicked = [act("click", None, Some("help"))];
        let f = facts("How many open tickets are there?", &clicked, &page);
        assert!(matches!(evidence(&f), Evidence::Doubt(d) if d.contains("question")));
        let f = facts(
            "Click on the \"Help\" link, then \"Contact\"",
            &clicked,
            &page,
        );
        assert!(matches!(evidence(&f), Evidence::Doubt(d) if d.contains("\"contact\"")));
        let f = facts("Click on the “Help” link", &clicked, &page);
        assert_eq!(evidence(&f), Evidence::Done);
        let mut f = facts("Open help", &clicked, &page);
        f.open_plan_steps = true;
        assert!(matches!(evidence(&f), Evidence::Doubt(d) if d.contains("plan")));
        f.open_plan_steps = false;
        f.failed_lately = true;
        assert!(matches!(evidence(&f), Evidence::Doubt(_)));
    }

    #[test]
    fn an_answer_that_only_says_done_is_no_answer() {
        for said in [
            "Done",
            "done.",
            "Task complete!",
            "The task is completed",
            "OK",
            "",
        ] {
            assert!(!tells(said), "{said:?}");
        }
        for said in ["42", "The total is $42.", "Done: 3 tickets", "Paris"] {
            assert!(tells(said), "{said:?}");
        }
        let page = form();
        let none: [Acted; 0] = [];
        let mut f = facts("How many tickets are open?", &none, &page);
        f.answer = Some("Done");
        assert!(matches!(evidence(&f), Evidence::Doubt(d) if d.contains("nothing")));
    }

    #[test]
    fn every_finish_is_judged_unless_something_is_missing_or_it_was_told_enough() {
        let missing = Evidence::Missing("press Submit".into());
        let doubt = Evidence::Doubt("the plan has steps still open".into());
        assert_eq!(
            check(missing.clone(), 0, false),
            Check::Refuse("press Submit".into())
        );
        assert_eq!(
            check(missing, MAX_REFUSED_FINISHES + 3, true),
            Check::Refuse("press Submit".into()),
            "what is missing is refused every time"
        );
        assert_eq!(check(doubt.clone(), 0, true), Check::Judge);
        assert_eq!(
            check(Evidence::Done, 0, false),
            Check::Judge,
            "never on trust"
        );
        assert_eq!(
            check(Evidence::Done, 0, true),
            Check::Stand,
            "an answer no page shows"
        );
        assert_eq!(check(doubt, MAX_REFUSED_FINISHES, false), Check::Stand);
    }

    #[test]
    fn any_instruction_is_read_within_bounds() {
        let page = form();
        let long = "\"ab\" ".repeat(5_000) + "“";
        let clicked = [act("click", None, Some("help"))];
        assert!(quoted(&long).len() <= MAX_QUOTED);
        let _ = evidence(&facts(&long, &clicked, &page));
        let _ = evidence(&facts("«", &clicked, &page));
    }
}
