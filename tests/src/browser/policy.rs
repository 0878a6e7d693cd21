//! The prompt-only policy: an OpenAI-compatible model server that answers each decision
//! prompt the way a competent model would, from the prompt alone — the task, the page block
//! and the history the server wrote — never from the page itself or MiniWoB's globals. It
//! measures what the project must get right whatever the model: that the page as rendered
//! carries what the task needs, and that the server lets a correct action through.
//!
//! Verification requests (the `VERIFY_MODEL` calls) are answered by an honest judge
//! ([`super::judge`]) from their prompt too: the expected change against the page shown, or
//! whether the task as listed is done on it.
//!
//! With an error mode ([`Errors`], `POLICY_ERRORS`), the policy makes the mistakes real models
//! make at the rates given ([`super::mistakes`]), and counts what it injected ([`Tally`]).
//! `POLICY_DUMP=<dir>` writes every prompt it gets, with its answer and the mistakes made.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use super::judge::judge;
use super::mistakes::{Errors, Kind, Tally};
use super::solve::{decide, Prompt};
use crate::scripted::{completion, serve, VERIFY_MODEL};

/// Prompts written to `POLICY_DUMP` by every policy of the process (one numbering).
static DUMPED: AtomicUsize = AtomicUsize::new(0);

/// The policy's server.
#[derive(Clone)]
pub struct Policy {
    pub base_url: String,
    /// The error mode it runs with (none: the competent policy).
    pub errors: Errors,
    /// Decision prompts that got no answer a solver could give (for the test's message).
    pub unsolved: Arc<Mutex<Vec<String>>>,
    tally: Arc<Mutex<Tally>>,
}

/// The user messages of a chat request.
fn users(body: &serde_json::Value) -> Vec<&str> {
    body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|x| x["role"] == "user")
                .filter_map(|x| x["content"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// The decision prompt of a chat request: its last user message that holds the page (a
/// refusal the server appends after the model's answer is a later, shorter message).
fn last_user(body: &serde_json::Value) -> String {
    let users = users(body);
    users
        .iter()
        .rev()
        .find(|u| u.contains("<page "))
        .or(users.last())
        .map_or(String::new(), |u| (*u).to_owned())
}

/// The answer the server refused, when this request asks the model again after it (the
/// model's own message after the decision prompt).
fn refused_answer(body: &serde_json::Value, prompt: &str) -> Option<String> {
    let messages = body["messages"].as_array()?;
    let at = messages
        .iter()
        .rposition(|m| m["role"] == "user" && m["content"].as_str() == Some(prompt))?;
    messages[at..]
        .iter()
        .rev()
        .find(|m| m["role"] == "assistant")
        .and_then(|m| m["content"].as_str())
        .map(str::to_owned)
}

/// The page's text without what changes from run to run: the loopback port in the address
/// and MiniWoB's countdown.
fn stable(text: &str) -> String {
    static VOLATILE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    VOLATILE
        .get_or_init(|| {
            regex::Regex::new(r#"url="[^"]*"|\d+ / \d+sec|Now: [^\n]*"#).expect("a valid pattern")
        })
        .replace_all(text, "")
        .into_owned()
}

/// What a mistake is drawn on: the prompt as the model sees it, and the number of messages
/// of the request (a re-ask after a refusal is another draw).
fn draw_key(prompt: &str, body: &serde_json::Value) -> String {
    let messages = body["messages"].as_array().map_or(0, Vec::len);
    format!("{messages}\n{}", stable(prompt))
}

impl Policy {
    /// The policy with the error mode of `POLICY_ERRORS`/`POLICY_SEED` (none set: the
    /// competent policy). An unreadable setting is a panic: a run would measure the wrong
    /// thing.
    pub async fn start() -> Self {
        let errors = Errors::from_env().unwrap_or_else(|e| panic!("{e}"));
        Self::start_with(errors).await
    }

    /// The policy making `errors` (whatever the environment says).
    pub async fn start_with(errors: Errors) -> Self {
        let unsolved = Arc::new(Mutex::new(Vec::new()));
        let tally = Arc::new(Mutex::new(Tally::default()));
        let (log, counts, mode) = (unsolved.clone(), tally.clone(), errors.clone());
        let dump = std::env::var_os("POLICY_DUMP").map(std::path::PathBuf::from);
        let addr = serve(Arc::new(move |req, body, _| {
            if !req.uri().path().ends_with("/chat/completions") {
                return (404, json!({ "error": "not found" }), Duration::ZERO);
            }
            let prompt = last_user(&body);
            let key = draw_key(&prompt, &body);
            let task = Prompt::parse(&prompt).task;
            let verifying = body["model"] == VERIFY_MODEL;
            let refused = refused_answer(&body, &prompt);
            let mut wrote = None;
            let (content, made) = if verifying {
                let (verdict, made) = mode.verdict(judge(&prompt), &key);
                (verdict.answer(), made)
            } else if let Some(again) = refused.filter(|_| mode.repeats(&key)) {
                (again, vec![Kind::Repeated])
            } else {
                match decide(&prompt) {
                    Ok(answer) => {
                        let (text, made, action) =
                            mode.mislead_action(&answer, &Prompt::parse(&prompt), &key);
                        wrote = action;
                        (text, made)
                    }
                    Err(why) => {
                        if let Ok(mut l) = log.lock() {
                            l.push(format!("{why}\n{prompt}"));
                        }
                        let answer = format!(
                            "<Thought>{why}</Thought>\n<Action>fail(\"{}\")</Action>",
                            why.replace('"', "'")
                        );
                        (answer, Vec::new())
                    }
                }
            };
            if let Ok(mut t) = counts.lock() {
                if verifying {
                    t.verdicts += 1;
                } else {
                    t.decisions += 1;
                }
                t.add(&task, &made);
                if let Some((kind, action)) = &wrote {
                    t.add_action(&task, *kind, action);
                }
            }
            if let Some(dir) = &dump {
                let n = DUMPED.fetch_add(1, Ordering::Relaxed);
                let system = body["messages"][0]["content"].as_str().unwrap_or("");
                // A re-ask shows what the server told the model after its answer.
                let after: Vec<&str> = users(&body)
                    .into_iter()
                    .skip_while(|u| **u != prompt)
                    .skip(1)
                    .collect();
                let made: Vec<&str> = made.iter().map(|k| k.name()).collect();
                let _ = std::fs::write(
                    dir.join(format!("{n:04}.txt")),
                    format!(
                        "{system}\n=====\n{prompt}\n=====\n{}=====\nmistakes: {}\n{content}\n",
                        after
                            .iter()
                            .map(|a| format!("[then] {a}\n"))
                            .collect::<String>(),
                        made.join(", ")
                    ),
                );
            }
            (
                200,
                completion("chatcmpl-policy", prompt.len(), &content),
                Duration::ZERO,
            )
        }))
        .await;
        Self {
            base_url: format!("http://{addr}/v1"),
            errors,
            unsolved,
            tally,
        }
    }

    /// The decision prompts no solver could answer, with why.
    pub fn unsolved(&self) -> Vec<String> {
        self.unsolved.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The mistakes made so far.
    pub fn tally(&self) -> Tally {
        self.tally.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// How many mistakes of `kind` were made so far.
    pub fn injected(&self, kind: Kind) -> u64 {
        self.tally().by_kind.get(&kind).copied().unwrap_or(0)
    }
}
