//! Loop detection over a task's recent actions and pages. A looping action is never returned:
//! the model is asked for another one, as after any refused answer
//! ([`super::refusal::after_refusal`]).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopKind {
    /// The same action three times in a row.
    Repeated,
    /// A-B-A-B.
    Alternating,
    /// Five of the last seven actions are the same.
    Frequent,
    /// The page has not changed over four steps.
    Stalled,
}

impl LoopKind {
    pub fn describe(self) -> &'static str {
        match self {
            LoopKind::Repeated => "the same action three times in a row",
            LoopKind::Alternating => "two actions alternating",
            LoopKind::Frequent => "the same action five times in the last seven steps",
            LoopKind::Stalled => "four steps without any change to the page",
        }
    }
}

/// Actions that only observe or wait: repeating them on an unchanged page is a stall too.
fn normalize(action: &str) -> String {
    crate::text::collapse_ws(action)
}

/// Whether the action scrolls the page or a container.
fn scrolls(action: &str) -> bool {
    let a = action.trim_start();
    a.starts_with("scroll(") || a.starts_with("scroll_container(")
}

/// Steps looked back over.
const WINDOW: usize = 7;

/// The same scroll at most this many times in a row, even when each moved the view (a page
/// that shifts by itself — a carousel, a ticker — must not keep a task scrolling).
pub const MAX_SCROLLS_IN_A_ROW: usize = 8;

/// Whether taking `candidate` now would loop. `actions` are the task's earlier actions, oldest
/// first; `hashes` the page hashes before each of them followed by the current page's hash;
/// `views` the same with element positions. Scrolling that moves the view is progress (a long
/// page, a feed that loads more as it scrolls): repeating a scroll is a loop only once that
/// scroll left the view where it was, or after [`MAX_SCROLLS_IN_A_ROW`].
pub fn detect(
    actions: &[&str],
    hashes: &[&str],
    views: &[&str],
    candidate: &str,
) -> Option<LoopKind> {
    // finish/fail/ask_user end or pause the task: never a loop.
    if ["finish(", "fail(", "ask_user("]
        .iter()
        .any(|p| candidate.trim_start().starts_with(p))
    {
        return None;
    }
    // Step k changed something: the page's content, or the view when it scrolled.
    let changed = |k: usize| match (hashes.get(k..k + 2), views.get(k..k + 2)) {
        (Some([a, b]), Some([va, vb])) => a != b || (scrolls(actions[k]) && va != vb),
        (Some([a, b]), _) => a != b,
        _ => true,
    };
    let mut seq: Vec<String> = actions.iter().map(|a| normalize(a)).collect();
    seq.push(normalize(candidate));
    let n = seq.len();
    // The candidate scroll is progress when each of its repeats in the window moved the view,
    // and it has not run too many times in a row.
    let first = actions.len().saturating_sub(WINDOW);
    let in_a_row = seq.iter().rev().take_while(|a| **a == seq[n - 1]).count();
    // A container's scroll position is not on the page the server sees (a textarea's text, a
    // list inside a box): its scrolls count as progress up to the same cap.
    let container = candidate.trim_start().starts_with("scroll_container(");
    let scrolling = scrolls(candidate)
        && in_a_row <= MAX_SCROLLS_IN_A_ROW
        && (container || (first..actions.len()).all(|k| seq[k] != seq[n - 1] || changed(k)));
    // A repeat is a loop only when it changed nothing: a "Next page" that keeps its id, a
    // quantity "+" or an arrow key that moves a selection are progress — up to the cap.
    let last = actions.len().saturating_sub(1);
    if !scrolling
        && n >= 3
        && seq[n - 3..].iter().all(|a| *a == seq[n - 1])
        && (!changed(last) || in_a_row > MAX_SCROLLS_IN_A_ROW)
    {
        return Some(LoopKind::Repeated);
    }
    // A-B-A-B back to the page it was on (or changing nothing): going in circles.
    if n >= 4
        && seq[n - 1] == seq[n - 3]
        && seq[n - 2] == seq[n - 4]
        && seq[n - 1] != seq[n - 2]
        && (hashes.get(n - 1) == hashes.get(n - 3) || (!changed(last) && !changed(last - 1)))
    {
        return Some(LoopKind::Alternating);
    }
    // Five of the last seven, counting only the tries that changed nothing.
    if !scrolling
        && n >= WINDOW
        && (n - WINDOW..n - 1)
            .filter(|&k| seq[k] == seq[n - 1] && !changed(k))
            .count()
            + 1
            >= 5
    {
        return Some(LoopKind::Frequent);
    }
    // The last three actions (four views of the page) changed nothing, and the candidate is
    // one of them: trying it again cannot help. A different candidate (another element, a
    // navigation) gets its chance: marking rows one by one may change nothing the page shows.
    if !scrolling
        && actions.len() >= 3
        && hashes.len() == actions.len() + 1
        && (actions.len() - 3..actions.len()).all(|k| !changed(k))
        && seq[n - 4..n - 1].contains(&seq[n - 1])
    {
        return Some(LoopKind::Stalled);
    }
    None
}

/// Server tools run since the last browser action: a model that only ever calls tools is
/// stopped by this count.
pub fn tool_streak(steps: &[crate::domain::Step]) -> usize {
    steps
        .iter()
        .rev()
        .take_while(|s| s.kind == crate::domain::StepKind::ServerTool)
        .filter(|s| s.tool().is_some())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Detection on a page without positions (views are the content hashes).
    fn d(actions: &[&str], hashes: &[&str], candidate: &str) -> Option<LoopKind> {
        detect(actions, hashes, hashes, candidate)
    }

    #[test]
    fn scrolling_that_moves_the_view_is_progress_until_it_stops_moving() {
        let same = ["p", "p", "p", "p", "p", "p", "p"];
        let down = ["scroll(true, 1)"; 6];
        // Each scroll moved the view: six in a row are fine, on an unchanged content hash.
        let moving = ["v1", "v2", "v3", "v4", "v5", "v6", "v7"];
        assert_eq!(detect(&down, &same, &moving, "scroll(true, 1)"), None);
        assert_eq!(
            detect(&down[..3], &same[..4], &moving[..4], "click(3)"),
            None
        );
        // The last one did not move (the end of the page): a loop, and a stall.
        let stuck = ["v1", "v2", "v3", "v4", "v5", "v6", "v6"];
        assert_eq!(
            detect(&down, &same, &stuck, "scroll(true, 1)"),
            Some(LoopKind::Repeated)
        );
        // Stuck scrolls do not block a click somewhere else.
        assert_eq!(
            detect(
                &down[..3],
                &same[..4],
                &["v1", "v1", "v1", "v1"],
                "click(3)"
            ),
            None
        );
        // A view change from a click is not progress for the stall rule.
        assert_eq!(
            detect(
                &["click(1)", "click(2)", "click(3)"],
                &same[..4],
                &moving[..4],
                "click(2)"
            ),
            Some(LoopKind::Stalled)
        );
        // A container's scrolls leave no trace on the page: up to the cap in a row.
        let box_down = ["scroll_container(5, \"down\")"; 9];
        let flat = ["x"; 10];
        assert_eq!(
            detect(&box_down[..4], &flat[..5], &flat[..5], box_down[0]),
            None
        );
        assert_eq!(
            detect(&box_down, &flat, &flat, box_down[0]),
            Some(LoopKind::Repeated)
        );
        // Another element after a stall is not refused (odd-or-even marks rows one by one).
        assert_eq!(
            detect(
                &["click(1)", "click(2)", "click(3)"],
                &same[..4],
                &moving[..4],
                "click(4)"
            ),
            None
        );
        // A scroll the other way is judged on its own repeats; a stuck one does not block it.
        let mixed = [
            "scroll(true, 1)",
            "scroll(true, 1)",
            "scroll(false, 1)",
            "scroll(false, 1)",
        ];
        let bottom = ["v1", "v2", "v2", "v3", "v4"];
        assert_eq!(
            detect(&mixed, &same[..5], &bottom, "scroll(false, 1)"),
            None
        );
        // Moving or not, the same scroll stops after MAX_SCROLLS_IN_A_ROW.
        let many = ["scroll(true, 1)"; MAX_SCROLLS_IN_A_ROW];
        let views: Vec<String> = (0..=MAX_SCROLLS_IN_A_ROW)
            .map(|k| format!("v{k}"))
            .collect();
        let views: Vec<&str> = views.iter().map(String::as_str).collect();
        let hashes = vec!["p"; MAX_SCROLLS_IN_A_ROW + 1];
        assert_eq!(
            detect(&many, &hashes, &views, "scroll(true, 1)"),
            Some(LoopKind::Repeated)
        );
        assert_eq!(
            detect(&many[1..], &hashes[1..], &views[1..], "scroll(true, 1)"),
            None
        );
        // Clicks repeated between moving scrolls still loop.
        assert_eq!(
            detect(
                &["click(1)", "click(1)"],
                &same[..3],
                &moving[..3],
                "click(1)"
            ),
            Some(LoopKind::Repeated)
        );
    }

    #[test]
    fn each_loop_shape_is_caught_and_progress_is_not() {
        let h = ["1", "2", "3", "4", "5", "6", "7", "8"];
        let flat = ["x"; 8];
        // The same click that changed nothing: a loop; one that changed the page each time
        // (a "Next page" keeping its id, a quantity "+"): progress, up to the cap.
        assert_eq!(
            d(&["click(1)", "click(1)"], &flat[..3], "click(1)"),
            Some(LoopKind::Repeated)
        );
        assert_eq!(d(&["click(1)", "click(1)"], &h[..3], "click(1)"), None);
        let nine = ["click(1)"; 9];
        let pages: Vec<String> = (0..10).map(|k| k.to_string()).collect();
        let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
        assert_eq!(d(&nine[..7], &pages[..8], "click(1)"), None);
        assert_eq!(d(&nine, &pages, "click(1)"), Some(LoopKind::Repeated));
        // A-B-A-B back to the same pages: circles; A-B-A-B onward (Next, then a new page's
        // own Next under the same id): progress.
        assert_eq!(
            d(
                &["click(1)", "click(2)", "click(1)"],
                &["a", "b", "a", "b"],
                "click(2)"
            ),
            Some(LoopKind::Alternating)
        );
        assert_eq!(
            d(&["click(1)", "click(2)", "click(1)"], &h[..4], "click(2)"),
            None
        );
        assert_eq!(
            d(
                &[
                    "click(1)",
                    "click(2)",
                    "click(1)",
                    "click(3)",
                    "click(1)",
                    "click(1 )"
                ],
                &h[..7],
                "click(4)"
            ),
            None,
            "five of seven must include the candidate"
        );
        assert_eq!(
            d(
                &["click(1)", "click(1)", "click(2)", "click(1)", "click(3)", "click(1)"],
                &["1", "1", "1", "2", "2", "2", "2"],
                "click(1)"
            ),
            Some(LoopKind::Frequent)
        );
        assert_eq!(
            d(
                &["click(1)", "click(1)", "click(2)", "click(1)", "click(3)", "click(1)"],
                &h[..7],
                "click(1)"
            ),
            None,
            "tries that changed the page are not counted"
        );
        assert_eq!(
            d(
                &["click(1)", "click(2)", "click(3)"],
                &["x", "x", "x", "x"],
                "click(1)"
            ),
            Some(LoopKind::Stalled)
        );
        assert_eq!(
            d(
                &["click(1)", "click(2)", "click(3)"],
                &["x", "x", "x", "x"],
                "navigate(\"https://a.com/\")"
            ),
            None
        );
        assert_eq!(d(&["click(1)", "click(2)"], &h[..3], "click(3)"), None);
        assert_eq!(
            d(
                &["click(1)", "click(2)", "click(3)"],
                &["a", "x", "x", "x"],
                "click(4)"
            ),
            None,
            "three unchanged views are not yet a stall"
        );
        assert_eq!(d(&["wait(1)", "wait(1)"], &h[..3], "finish()"), None);
        // A long task: only the window is looked at.
        let long = vec!["click(1)"; 5_000];
        let hashes = vec!["x"; 5_001];
        assert_eq!(d(&long, &hashes, "click(1)"), Some(LoopKind::Repeated));
        assert_eq!(d(&long, &hashes, "click(2)"), None);
        assert_eq!(d(&[], &["a"], "click(1)"), None);
    }

    #[test]
    fn the_tool_streak_counts_tools_since_the_last_browser_action() {
        use crate::domain::{Step, StepKind};
        let step = |kind: StepKind, tool: Option<&str>| Step {
            kind,
            tool_result: Some(match tool {
                Some(t) => serde_json::json!({ "tool": t, "message": "ok" }),
                None => serde_json::json!({ "message": "continuing" }),
            }),
            ..Step::new("t", "k", 0, Default::default(), chrono::Utc::now(), 0)
        };
        let tool = |t| step(StepKind::ServerTool, Some(t));
        let dom = step(StepKind::Dom, None);
        let round = step(StepKind::ServerTool, None);
        assert_eq!(tool_streak(&[]), 0);
        assert_eq!(tool_streak(&[tool("recall"), dom.clone()]), 0);
        let steps = [
            tool("remember"),
            dom,
            tool("googleSearch"),
            round,
            tool("googleSearch"),
            tool("verifySuccess"),
        ];
        assert_eq!(tool_streak(&steps), 3, "rounds without a tool do not count");
    }
}
