//! A scripted OpenAI-compatible model for the browser scenarios: it follows a list of
//! intents that name elements by their accessible name, and finds each element's id in the
//! page block of the prompt it gets, as a model reading the page would. Verification requests
//! (the verifier model) are confirmed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use crate::scripted::{completion, serve, VERIFY_MODEL};

/// One choice of the scripted model.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    Click(&'static str),
    SetValue(&'static str, &'static str),
    Select(&'static str, &'static str),
    Tick(&'static str),
    Press(&'static str),
    /// Scrolls a page down until an element with this name is on the page (then goes on).
    ScrollUntil(&'static str),
    /// `findText` of the second text until an element named by the first is on the page.
    FindUntil(&'static str, &'static str),
    Navigate(&'static str),
    GoBack,
    Hover(&'static str),
    /// `findText` of this text, once.
    Find(&'static str),
    /// `wait(seconds)`.
    Wait(u32),
    /// `finish("…")` with this answer.
    Answer(&'static str),
    /// Several field fills in one answer (a chain).
    Chain(Vec<Intent>),
    /// `finish()` with this answer as the thought.
    Finish(&'static str),
    /// Not an action: the prompt must tell the model that the last action failed, with the
    /// client's message containing this text (then the script goes on).
    FailureShown(&'static str),
    /// An action written as it is (a server tool: `remember("k", "v")`, `googleSearch("q")`).
    Raw(&'static str),
    /// Not an action: the next answer comes this many milliseconds late (a slow model).
    Slow(u64),
}

/// The element ids whose line in the page block shows this accessible name, and the page's URL.
fn find(prompt: &str, name: &str) -> Option<String> {
    let page = &prompt[prompt.rfind("<page ")?..];
    let page = &page[..page.find("</page>").unwrap_or(page.len())];
    let quoted = format!("\"{}\"", name.to_lowercase());
    // A line marked new since the last page starts `*[id]`.
    page.lines()
        .map(|l| l.strip_prefix('*').unwrap_or(l))
        .filter(|l| l.starts_with('['))
        .find(|l| l.to_lowercase().contains(&quoted))
        .and_then(|l| l.get(1..l.find(']')?).map(str::to_owned))
}

/// Whether the prompt reports a failed last action whose error contains `text`, outside the
/// page block (where the page's own text could say anything).
fn failure_shown(prompt: &str, text: &str) -> bool {
    let outside = prompt.rfind("<page ").map_or(prompt, |at| &prompt[..at]);
    let lower = outside.to_lowercase();
    lower.contains("fail") && lower.contains(&text.to_lowercase())
}

/// Quotes a text argument with a quote character it does not contain.
pub fn quoted(text: &str) -> String {
    let q = ['"', '\'', '`']
        .into_iter()
        .find(|q| !text.contains(*q))
        .unwrap_or('"');
    format!("{q}{text}{q}")
}

/// The `<Action>` for one intent on this prompt's page, or why there is none.
fn action(intent: &Intent, prompt: &str) -> Result<String, String> {
    let id = |name: &str| {
        find(prompt, name).ok_or_else(|| format!("no element named {name:?} on the page"))
    };
    Ok(match intent {
        Intent::Click(n) => format!("click({})", id(n)?),
        Intent::SetValue(n, v) => format!("setValue({}, {})", id(n)?, quoted(v)),
        Intent::Select(n, v) => format!("selectOption({}, {})", id(n)?, quoted(v)),
        Intent::Tick(n) => format!("check({})", id(n)?),
        Intent::Press(k) => format!("press({})", quoted(k)),
        Intent::ScrollUntil(_) => "scroll(true, 1)".to_owned(),
        Intent::FindUntil(_, text) => format!("findText({})", quoted(text)),
        Intent::Navigate(u) => format!("navigate({})", quoted(u)),
        Intent::GoBack => "goBack()".to_owned(),
        Intent::Hover(n) => format!("hover({})", id(n)?),
        Intent::Find(text) => format!("findText({})", quoted(text)),
        Intent::Wait(s) => format!("wait({s})"),
        Intent::Answer(a) => format!("finish({})", quoted(a)),
        Intent::Finish(_) => "finish()".to_owned(),
        Intent::Raw(a) => (*a).to_owned(),
        Intent::Chain(_) => return Err("a chain inside a chain".into()),
        Intent::FailureShown(_) | Intent::Slow(_) => return Err("not an action".into()),
    })
}

#[derive(Default)]
struct State {
    script: VecDeque<Intent>,
    /// What went wrong, for the test's message.
    errors: Vec<String>,
    calls: usize,
    /// Every main-model prompt since the script was set: the system message, a newline, the
    /// user message.
    prompts: Vec<String>,
    /// How late the answer being made comes.
    delay: Duration,
}

/// The scripted model server.
#[derive(Clone)]
pub struct BrowserModel {
    pub base_url: String,
    state: Arc<Mutex<State>>,
}

/// The answer for the next intent on this prompt.
fn next(s: &mut State, prompt: &str) -> String {
    loop {
        let Some(intent) = s.script.front().cloned() else {
            s.errors.push("the script is used up".into());
            return "<Thought>Nothing left to do.</Thought>\n<Action>fail()</Action>".into();
        };
        let thought = format!("Scripted step: {intent:?}");
        let actions: Result<Vec<String>, String> = match &intent {
            Intent::ScrollUntil(n) | Intent::FindUntil(n, _) if find(prompt, n).is_some() => {
                s.script.pop_front();
                continue;
            }
            Intent::ScrollUntil(_) | Intent::FindUntil(..) => {
                action(&intent, prompt).map(|a| vec![a])
            }
            Intent::Chain(items) => items.iter().map(|i| action(i, prompt)).collect(),
            Intent::Finish(answer) => {
                s.script.pop_front();
                return format!("<Thought>{answer}</Thought>\n<Action>finish()</Action>");
            }
            Intent::Slow(ms) => {
                s.script.pop_front();
                s.delay = Duration::from_millis(*ms);
                continue;
            }
            Intent::FailureShown(text) => {
                s.script.pop_front();
                if !failure_shown(prompt, text) {
                    s.errors.push(format!(
                        "the prompt does not show the failed action's error {text:?}"
                    ));
                }
                continue;
            }
            other => action(other, prompt).map(|a| vec![a]),
        };
        return match actions {
            Ok(actions) => {
                if !matches!(intent, Intent::ScrollUntil(_) | Intent::FindUntil(..)) {
                    s.script.pop_front();
                }
                let lines: Vec<String> = actions
                    .iter()
                    .map(|a| format!("<Action>{a}</Action>"))
                    .collect();
                format!("<Thought>{thought}</Thought>\n{}", lines.join("\n"))
            }
            Err(e) => {
                s.errors.push(format!("{intent:?}: {e}"));
                format!("<Thought>{e}</Thought>\n<Action>fail()</Action>")
            }
        };
    }
}

impl BrowserModel {
    pub async fn start() -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        let addr = serve(Arc::new(move |req, body, _| {
            if !req.uri().path().ends_with("/chat/completions") {
                return (404, json!({ "error": "not found" }), Duration::ZERO);
            }
            // Every message of a role, in order: a corrective exchange after a refused answer
            // comes after the message with the page.
            let text_of = |role: &str| {
                body["messages"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|x| x["role"] == role)
                    .filter_map(|x| x["content"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let prompt = text_of("user");
            let (content, delay) = if body["model"] == VERIFY_MODEL {
                ("<Verdict>yes</Verdict>\n<Confidence>0.9</Confidence>\n<Reason>the page shows it</Reason>".to_owned(), Duration::ZERO)
            } else {
                let Ok(mut s) = st.lock() else {
                    return (500, json!({ "error": "lock" }), Duration::ZERO);
                };
                s.calls += 1;
                s.prompts.push(format!("{}\n{prompt}", text_of("system")));
                let content = next(&mut s, &prompt);
                (content, std::mem::take(&mut s.delay))
            };
            (200, completion("chatcmpl-browser", prompt.len(), &content), delay)
        }))
        .await;
        Self {
            base_url: format!("http://{addr}/v1"),
            state,
        }
    }

    /// Replaces the script.
    pub fn script(&self, intents: Vec<Intent>) {
        if let Ok(mut s) = self.state.lock() {
            s.script = intents.into();
            s.errors.clear();
            s.calls = 0;
            s.prompts.clear();
            s.delay = Duration::ZERO;
        }
    }

    /// What went wrong since the script was set.
    pub fn errors(&self) -> Vec<String> {
        self.state
            .lock()
            .map(|s| s.errors.clone())
            .unwrap_or_default()
    }

    /// The main-model prompts since the script was set (system, newline, user message).
    pub fn prompts(&self) -> Vec<String> {
        self.state
            .lock()
            .map(|s| s.prompts.clone())
            .unwrap_or_default()
    }

    /// Main-model calls since the script was set.
    pub fn calls(&self) -> usize {
        self.state.lock().map(|s| s.calls).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_elements_by_name_in_the_page_block() {
        let prompt = "task \"Search\"\n<page url=\"http://a.test/\" form=\"tree\">\n[12] inp \"Search products\"\n[14] btn \"Search\"\n</page>";
        assert_eq!(find(prompt, "search").as_deref(), Some("14"));
        assert_eq!(find(prompt, "Search products").as_deref(), Some("12"));
        assert_eq!(find(prompt, "Cart"), None);
        assert_eq!(quoted("St James's"), "\"St James's\"");
        assert_eq!(quoted("say \"hi\""), "'say \"hi\"'");
    }
}
