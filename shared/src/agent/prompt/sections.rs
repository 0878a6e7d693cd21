//! Sections of the prompt's user message: the earlier steps (written so that a step's line
//! never changes once written, keeping the prompt's prefix stable for provider caching), the
//! client's report on the last action, the agent's notes, the progress check.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use crate::agent::request::LastAction;
use crate::domain::verdict::Verification;
use crate::domain::{Step, StepKind};
use crate::text::{prompt_line, single_line};

/// Steps shown at most; older ones are only counted. The window moves in blocks of
/// [`HISTORY_BLOCK`] steps so that the shown lines stay the same for several steps.
pub const HISTORY_STEPS: usize = 15;
const HISTORY_BLOCK: usize = 10;
/// Longest thought, action, answer and verdict reason of an earlier step.
const THOUGHT_CHARS: usize = 300;
const ACTION_CHARS: usize = 200;
const ANSWER_CHARS: usize = 500;
const REASON_CHARS: usize = 160;
/// Longest reported outcome.
const OUTCOME_CHARS: usize = 400;
/// Notes shown at most (all keys and values together), per scope.
const NOTES_CHARS: usize = 2_000;

/// The first step shown of `n`.
pub fn window_start(n: usize) -> usize {
    if n <= HISTORY_STEPS {
        0
    } else {
        (n - HISTORY_STEPS).div_ceil(HISTORY_BLOCK) * HISTORY_BLOCK
    }
}

/// The earlier steps, oldest first, each with the verdict on its action when one was made.
pub fn history(u: &mut String, steps: &[Step]) {
    if steps.is_empty() {
        u.push_str("\nNo steps taken yet.\n");
        return;
    }
    let verdicts: HashMap<u32, &Verification> = steps
        .iter()
        .filter_map(|s| s.verification.as_ref())
        .map(|v| (v.step_index, v))
        .collect();
    u.push_str("\nSteps so far (oldest first):\n");
    let start = window_start(steps.len());
    if start > 0 {
        let _ = writeln!(u, "({start} earlier steps not shown)");
    }
    for s in &steps[start..] {
        let _ = write!(u, "{}. ", s.index + 1);
        if let Some(answer) = &s.user_input {
            let _ = write!(
                u,
                "(the user answered: {}) ",
                prompt_line(answer, ANSWER_CHARS)
            );
        }
        let action = prompt_line(&s.action, ACTION_CHARS);
        match s.kind {
            StepKind::ServerTool => {
                let result = s
                    .tool_result
                    .as_ref()
                    .and_then(|r| r.get("message")?.as_str())
                    .unwrap_or("done");
                let _ = write!(u, "[server] {action} -> {}", prompt_line(result, 200));
            }
            StepKind::Dom => {
                let _ = write!(
                    u,
                    "{} -> {action}{}",
                    prompt_line(&s.thought, THOUGHT_CHARS),
                    acted_on(s)
                );
            }
        }
        if let Some(v) = verdicts.get(&s.index) {
            let _ = write!(
                u,
                " => {}: {}",
                if v.success {
                    "worked"
                } else if v.unconfirmed {
                    "unconfirmed"
                } else {
                    "failed"
                },
                prompt_line(&v.reason, REASON_CHARS)
            );
        }
        u.push('\n');
    }
}

/// What a past action acted on and where: ` [btn "Search"] on /cart` (the element's role and
/// name as they were, the page's path). The name is page data: cut, on one line, with no
/// quote or tag in it.
fn acted_on(s: &crate::domain::Step) -> String {
    let Some(b) = &s.before_state else {
        return String::new();
    };
    let mut out = String::new();
    if let Some(t) = &b.target {
        let name: String = prompt_line(&t.name, TARGET_NAME_CHARS)
            .chars()
            .filter(|c| !matches!(c, '"' | '<' | '>' | '`'))
            .collect();
        let _ = write!(out, " [{} \"{name}\"]", prompt_line(&t.role, 12));
    }
    let path = reqwest::Url::parse(&b.url)
        .map(|u| u.path().to_owned())
        .unwrap_or_default();
    if !path.is_empty() {
        let _ = write!(
            out,
            " on {}",
            prompt_line(&path, PATH_CHARS).replace(['<', '>', '"'], "")
        );
    }
    out
}

/// Longest element name and page path a history line shows.
const TARGET_NAME_CHARS: usize = 40;
const PATH_CHARS: usize = 80;

/// The client's report on an action, as one bounded line (nothing in it can start a new line
/// of the prompt).
pub fn outcome_line(last: &LastAction) -> Option<String> {
    let status = last.status.as_deref()?;
    let mut line = status.to_owned();
    if last.error.is_some() {
        let field = |k: &str| last.error_field(k).unwrap_or("");
        let _ = write!(
            line,
            " ({}: {})",
            single_line(field("code"), 64),
            single_line(field("message"), 300)
        );
    }
    if let Some(state) = last
        .result
        .as_ref()
        .and_then(|r| r.get("actualState"))
        .filter(|s| !s.is_null())
    {
        let text = state
            .as_str()
            .map_or_else(|| state.to_string(), str::to_owned);
        let _ = write!(line, "; result: {}", single_line(&text, 200));
    }
    if let Some(ch) = &last.dom_changes {
        let flag = |k: &str| ch.get(k).and_then(|v| v.as_bool()) == Some(true);
        let n = |k: &str| ch.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
        let _ = write!(
            line,
            "; page: {} elements added, {} removed",
            n("addedCount"),
            n("removedCount")
        );
        if flag("urlChanged") {
            line.push_str(", URL changed");
        }
        if flag("dropdownDetected") {
            line.push_str(", a dropdown opened");
        }
    }
    if let Some(o) = &last.client_observations {
        let flag = |k: &str| o.get(k).and_then(|v| v.as_bool());
        for (k, yes, no) in [
            ("didUrlChange", "the URL changed", "the URL stayed"),
            (
                "didDomMutate",
                "the page changed",
                "the page did not change",
            ),
            ("didNetworkOccur", "network activity", "no network activity"),
        ] {
            if let Some(f) = flag(k) {
                let _ = write!(line, "; {}", if f { yes } else { no });
            }
        }
    }
    Some(prompt_line(&line, OUTCOME_CHARS))
}

/// Notes as `key = value` pairs on one line, bounded.
pub fn notes_line(notes: &BTreeMap<String, String>) -> Option<String> {
    if notes.is_empty() {
        return None;
    }
    let joined = notes
        .iter()
        .map(|(k, v)| format!("{} = {}", single_line(k, 64), single_line(v, 300)))
        .collect::<Vec<_>>()
        .join("; ");
    Some(prompt_line(&joined, NOTES_CHARS))
}

/// The progress check every fifth step.
pub fn progress_check(
    step_index: u32,
    steps: &[Step],
    done: usize,
    total: usize,
) -> Option<String> {
    if step_index == 0 || !step_index.is_multiple_of(5) {
        return None;
    }
    let failed = steps
        .iter()
        .rev()
        .filter_map(|s| s.verification.as_ref())
        .take(5)
        .filter(|v| v.failed())
        .count();
    Some(format!(
        "Progress check after {step_index} steps: {done} of {total} plan steps done; {failed} of the last 5 verdicts failed. If you are not getting closer to the goal, change the approach or ask the user."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_window_moves_in_blocks() {
        assert_eq!(window_start(15), 0);
        assert_eq!(window_start(16), 10);
        assert_eq!(window_start(25), 10);
        assert_eq!(window_start(26), 20);
        for n in 16..200 {
            let shown = n - window_start(n);
            assert!((HISTORY_STEPS - HISTORY_BLOCK + 1..=HISTORY_STEPS).contains(&shown));
        }
    }

    #[test]
    fn outcome_lines_are_single_bounded_lines() {
        let last = LastAction {
            status: Some("failure".into()),
            error: Some(serde_json::json!({ "code": "TIMEOUT", "message": "slow\nnext line" })),
            result: Some(serde_json::json!({ "success": false, "actualState": "x".repeat(900) })),
            dom_changes: Some(serde_json::json!({ "addedCount": 2, "urlChanged": true })),
            client_observations: Some(serde_json::json!({ "didDomMutate": false })),
        };
        let line = outcome_line(&last).expect("line");
        assert!(!line.contains('\n') && line.chars().count() <= OUTCOME_CHARS);
        assert!(line.starts_with("failure (TIMEOUT: slow next line)"));
        assert!(line.contains("result: xxx"));
        assert!(outcome_line(&LastAction::default()).is_none());
    }
}
