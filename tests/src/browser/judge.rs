//! The prompt-only policy's verifier: answers the server's verification requests (the
//! `LLM_VERIFY_MODEL` calls built in `shared/src/agent/step/judge.rs`) from the judge prompt
//! alone, as an honest model would — never a blanket yes.
//!
//! - "is the task complete?" (before a `finish()`, and for `verifySuccess`): yes when the page
//!   shows the episode's end (MiniWoB's START cover, or its reward panel with a reward);
//!   otherwise the solver is asked what it would do next on this task and page with the steps
//!   listed: a field the task gives a value for that is empty or holds another, a box still
//!   to tick, a section still collapsed, or a click no listed step has made yet is named as
//!   missing (no). A click the steps already show made (the form's submit) is done (yes), and
//!   so is a page on which the solver finds nothing left to act on (the task's controls are
//!   gone).
//! - "did the action have the expected effect?": the expected change against the page: a
//!   typed value, a chosen option or a box's state is read from the element's line (yes or
//!   no); a failed client report is a no; a click the page shows no trace of cannot be told
//!   either way from the page text (a selection the text does not show), so the verdict is
//!   a yes without confidence, which the server takes as unconfirmed.

use super::solve::{next_action, shows_end, El, Prompt};

/// A verdict as the judge writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub yes: bool,
    pub confidence: f64,
    pub reason: String,
}

impl Verdict {
    fn yes(confidence: f64, reason: impl Into<String>) -> Self {
        Self {
            yes: true,
            confidence,
            reason: reason.into(),
        }
    }

    fn no(confidence: f64, reason: impl Into<String>) -> Self {
        Self {
            yes: false,
            confidence,
            reason: reason.into(),
        }
    }

    /// The answer in the judge's format.
    pub fn answer(&self) -> String {
        format!(
            "<Verdict>{}</Verdict>\n<Confidence>{}</Confidence>\n<Reason>{}</Reason>",
            if self.yes { "yes" } else { "no" },
            self.confidence,
            self.reason.replace(['<', '>'], "")
        )
    }
}

/// The value of a `Label: value` line of the prompt (before the page block).
fn line<'a>(prompt: &'a str, label: &str) -> Option<&'a str> {
    let head = prompt.rfind("<page ").map_or(prompt, |at| &prompt[..at]);
    head.lines()
        .find_map(|l| l.strip_prefix(label))
        .map(str::trim)
}

/// The verdict on a judge prompt.
pub fn judge(prompt: &str) -> Verdict {
    if prompt.contains("Question: did the action have the expected effect?") {
        outcome(prompt)
    } else {
        complete(prompt)
    }
}

/// An element's words for a reason.
fn label(e: &El) -> String {
    let name = e.name.chars().take(40).collect::<String>();
    if name.is_empty() {
        format!("element {} ({})", e.id, e.kind)
    } else {
        format!("{:?} (element {})", name, e.id)
    }
}

/// The element id an action is on, and its text argument.
fn target(action: &str) -> Option<(String, String, Option<String>)> {
    let (name, rest) = action.split_once('(')?;
    let inner = rest.strip_suffix(')')?;
    let (id, arg) = match inner.split_once(',') {
        Some((id, arg)) => (id, Some(arg.trim())),
        None => (inner, None),
    };
    let unquote = |a: &str| {
        a.trim()
            .trim_matches(|c| matches!(c, '"' | '\'' | '`'))
            .to_owned()
    };
    Some((name.trim().to_owned(), unquote(id), arg.map(unquote)))
}

/// Whether the task names element `e`: a button, or an element whose name (or kind) the
/// task's words hold.
fn names(task: &str, e: &El) -> bool {
    let task = task.to_lowercase();
    let name = e.name.trim().to_lowercase();
    e.is_button()
        || (!name.is_empty() && task.contains(&name))
        || task.contains(&format!("\"{}\"", e.kind.to_lowercase()))
}

/// MiniWoB's reward panel (HTML pages show it): the last reward, once the episode has one.
fn last_reward(p: &Prompt) -> Option<f64> {
    let at = p.els.iter().position(|e| e.named("Last reward:"))?;
    p.els.get(at + 1)?.name.trim().parse().ok()
}

/// "Is the task complete?" from the task, the steps listed and the page.
fn complete(prompt: &str) -> Verdict {
    let p = Prompt::parse(prompt);
    if shows_end(&p) {
        return Verdict::yes(0.9, "the page shows the task's result (its START cover)");
    }
    match last_reward(&p) {
        Some(r) if r > 0.0 => return Verdict::yes(0.9, format!("the page shows a reward of {r}")),
        Some(r) => {
            return Verdict::no(
                0.85,
                format!("the page reports the attempt failed (reward {r})"),
            )
        }
        None => {}
    }
    let action = match next_action(&p) {
        Ok(a) => a,
        // Nothing the task acts on is left on the page: it moved on.
        Err(why) => {
            return Verdict::yes(0.75, format!("nothing on the page is left to do ({why})"))
        }
    };
    let Some((name, id, arg)) = target(&action) else {
        return Verdict::no(0.8, format!("{action} is still to do"));
    };
    let el = p.els.iter().find(|e| e.id == id);
    let what = el.map_or_else(|| format!("element {id}"), label);
    match name.as_str() {
        "setValue" => {
            let want = arg.unwrap_or_default();
            let shown = el.and_then(|e| e.value.clone()).unwrap_or_default();
            let why = if shown.trim().is_empty() {
                format!("{what} is empty; the task gives {want:?}")
            } else {
                format!("{what} holds {shown:?}, not {want:?}")
            };
            Verdict::no(0.9, why)
        }
        "selectOption" => Verdict::no(
            0.9,
            format!("{:?} is not chosen in {what}", arg.unwrap_or_default()),
        ),
        "wait" => Verdict::no(
            0.85,
            "the task's wait and the click after it are still to do",
        ),
        "click" => match el {
            Some(e) if e.is_toggle() => Verdict::no(
                0.9,
                if e.checked() {
                    format!("{what} is checked, the task does not want it")
                } else {
                    format!("{what} is not checked yet")
                },
            ),
            Some(e) if e.states.contains("collapsed") => {
                Verdict::no(0.85, format!("{what} is still collapsed"))
            }
            // A click the steps show made is done when it is what the task names (its button,
            // the element it quotes); another one (a tab, a folder to look in) means the
            // task's target is not shown yet.
            Some(e) if p.clicked(&id) > 0 && !names(&p.task, e) => Verdict::no(
                0.8,
                format!("what the task names is not on the page yet ({what} is still to look in)"),
            ),
            _ if p.clicked(&id) > 0 => Verdict::yes(
                0.85,
                format!("the steps show {what} clicked and nothing else is left"),
            ),
            _ => Verdict::no(
                0.9,
                format!("{what} has not been clicked (no step shows it)"),
            ),
        },
        _ => Verdict::no(0.8, format!("{action} is still to do")),
    }
}

/// "Did the action have the expected effect?" from the expected change and the page.
fn outcome(prompt: &str) -> Verdict {
    let p = Prompt::parse(prompt);
    let action = line(prompt, "Action taken:").unwrap_or("");
    let expected = line(prompt, "Expected:").unwrap_or("the expected change");
    let report = line(prompt, "Client report:").unwrap_or("");
    if report.contains("status failure") || report.contains("status error") {
        return Verdict::no(0.9, "the client reported that the action failed");
    }
    let changed = report.contains("page changed: yes");
    let Some((name, id, arg)) = target(action) else {
        return Verdict::yes(0.75, "the action completed without an error");
    };
    let Some(el) = p.els.iter().find(|e| e.id == id) else {
        return if changed {
            Verdict::yes(0.8, "the page changed: the element acted on is gone")
        } else {
            Verdict::yes(0.5, "the element is not on the page shown: cannot tell")
        };
    };
    let what = label(el);
    match name.as_str() {
        "setValue" | "selectOption" => {
            let want = arg.unwrap_or_default();
            let shown = el.value.clone().unwrap_or_default();
            if el.holds(&want) {
                Verdict::yes(0.95, format!("{what} shows {want:?}"))
            } else if shown.trim().is_empty() {
                Verdict::no(0.85, format!("{what} is empty, expected {want:?}"))
            } else {
                Verdict::no(0.85, format!("{what} shows {shown:?}, expected {want:?}"))
            }
        }
        "check" | "uncheck" => {
            let want = name == "check";
            if el.checked() == want {
                Verdict::yes(0.95, format!("{what} is {name}ed"))
            } else {
                Verdict::no(0.85, format!("{what} is not {name}ed"))
            }
        }
        _ if changed => Verdict::yes(0.8, format!("the page changed after {action}")),
        // The page text shows no trace of the click: a selection it does not show, or nothing.
        _ => Verdict::yes(
            0.5,
            format!("the page shows no visible change for: {expected}; cannot tell"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DONE: &str = "Task: Enter \"Tora\" into the text field and press Submit.\nStep 1: setValue(1, \"Tora\")\nStep 2: click(38)\nThe agent says: done\n<page url=\"u\" title=\"t\" note=\"n\">\n[53] btn \"START\"\n[1] inp =Tora\n[38] btn \"Submit\" (focused)\n</page>\nQuestion: is the task complete?";

    #[test]
    fn a_finished_episode_is_complete() {
        assert!(judge(DONE).yes);
        let no_cover = DONE.replace("[53] btn \"START\"\n", "");
        let v = judge(&no_cover);
        assert!(v.yes && v.confidence >= 0.7, "{v:?}");
    }

    #[test]
    fn what_is_missing_is_named() {
        let empty = "Task: Enter \"Tora\" into the text field and press Submit.\nThe agent says: done\n<page url=\"u\" title=\"t\" note=\"n\">\n[1] inp\n[38] btn \"Submit\"\n</page>\nQuestion: is the task complete?";
        let v = judge(empty);
        assert!(!v.yes && v.reason.contains("empty"), "{v:?}");
        let unsent = "Task: Enter \"Tora\" into the text field and press Submit.\nStep 1: setValue(1, \"Tora\")\nThe agent says: done\n<page url=\"u\" title=\"t\" note=\"n\">\n[1] inp =Tora\n[38] btn \"Submit\"\n</page>\nQuestion: is the task complete?";
        let v = judge(unsent);
        assert!(!v.yes && v.reason.contains("Submit"), "{v:?}");
        let html = "Task: Enter \"ab\" into the text field and press Submit.\nThe agent says: done\n<page url=\"u\" title=\"t\" note=\"n\">\n<div id=\"1\"><input id=\"2\" type=\"text\" value=\"a\"><button id=\"3\">Submit</button></div>\n</page>\nQuestion: is the task complete?";
        let v = judge(html);
        assert!(!v.yes && v.reason.contains("holds \"a\""), "{v:?}");
        // Every tab opened and the link the task names not shown: not done.
        let tabs = "Task: Switch between the tabs to find and click on the link \"ut.\".\nStep 1: click(6)\nStep 2: click(8)\nThe agent says: done\n<page url=\"u\" title=\"t\" note=\"n\">\n<ul id=\"4\"><li id=\"5\" role=\"tab\" aria-selected=\"false\"><a id=\"6\" href=\"#tabs-1\">Tab #1</a></li><li id=\"7\" role=\"tab\" aria-selected=\"true\"><a id=\"8\" href=\"#tabs-2\">Tab #2</a></li></ul><p id=\"9\">Nunc <span id=\"10\">at</span></p>\n</page>\nQuestion: is the task complete?";
        let v = judge(tabs);
        assert!(!v.yes && v.reason.contains("Tab #1"), "{v:?}");
    }

    #[test]
    fn outcomes_are_read_from_the_page() {
        let q = |action: &str, page: &str, changed: &str| {
            format!("Task: x\nAction taken: {action}\nExpected: e\nClient report: status success, page changed: {changed}\n<page url=\"u\" title=\"t\" note=\"n\">\n{page}\n</page>\nQuestion: did the action have the expected effect?")
        };
        assert!(judge(&q("setValue(1, \"a\")", "[1] inp =a", "no")).yes);
        assert!(!judge(&q("setValue(1, \"a\")", "[1] inp =b", "no")).yes);
        let unsure = judge(&q("click(2)", "[2] btn \"Odd\"", "no"));
        assert!(unsure.yes && unsure.confidence < 0.7);
        assert!(judge(&q("click(2)", "[2] btn \"Odd\"", "yes")).yes);
    }
}
