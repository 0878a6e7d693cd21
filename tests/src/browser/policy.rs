//! The prompt-only policy: an OpenAI-compatible model server that answers each decision
//! prompt the way a competent model would, from the prompt alone — the task, the page block
//! and the history the server wrote — never from the page itself or MiniWoB's globals. It
//! measures what the project must get right whatever the model: that the page as rendered
//! carries what the task needs, and that the server lets a correct action through.
//! Verification requests are answered from their prompt too (the expected change against the
//! page the verifier is shown).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use super::solve::decide;
use crate::scripted::{completion, serve, VERIFY_MODEL};

/// The policy's server.
#[derive(Clone)]
pub struct Policy {
    pub base_url: String,
    /// Decision prompts that got no answer a solver could give (for the test's message).
    pub unsolved: Arc<Mutex<Vec<String>>>,
}

/// The decision prompt of a chat request: its last user message that holds the page (a
/// refusal the server appends after the model's answer is a later, shorter message).
fn last_user(body: &serde_json::Value) -> String {
    let users: Vec<&str> = body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|x| x["role"] == "user")
                .filter_map(|x| x["content"].as_str())
                .collect()
        })
        .unwrap_or_default();
    users
        .iter()
        .rev()
        .find(|u| u.contains("<page "))
        .or(users.last())
        .map_or(String::new(), |u| (*u).to_owned())
}

impl Policy {
    pub async fn start() -> Self {
        let unsolved = Arc::new(Mutex::new(Vec::new()));
        let log = unsolved.clone();
        let dump = std::env::var_os("POLICY_DUMP").map(std::path::PathBuf::from);
        let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let addr = serve(Arc::new(move |req, body, _| {
            if !req.uri().path().ends_with("/chat/completions") {
                return (404, json!({ "error": "not found" }), Duration::ZERO);
            }
            let prompt = last_user(&body);
            let content = if body["model"] == VERIFY_MODEL {
                "<Verdict>yes</Verdict>\n<Confidence>0.9</Confidence>\n<Reason>the page shows the expected change</Reason>".to_owned()
            } else {
                match decide(&prompt) {
                    Ok(answer) => answer,
                    Err(why) => {
                        if let Ok(mut l) = log.lock() {
                            l.push(format!("{why}\n{prompt}"));
                        }
                        format!("<Thought>{why}</Thought>\n<Action>fail(\"{}\")</Action>", why.replace('"', "'"))
                    }
                }
            };
            if let Some(dir) = &dump {
                let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let system = body["messages"][0]["content"].as_str().unwrap_or("");
                let _ = std::fs::write(
                    dir.join(format!("{n:04}.txt")),
                    format!("{system}\n=====\n{prompt}\n=====\n{content}\n"),
                );
            }
            (200, completion("chatcmpl-policy", prompt.len(), &content), Duration::ZERO)
        }))
        .await;
        Self {
            base_url: format!("http://{addr}/v1"),
            unsolved,
        }
    }

    /// The decision prompts no solver could answer, with why.
    pub fn unsolved(&self) -> Vec<String> {
        self.unsolved.lock().map(|l| l.clone()).unwrap_or_default()
    }
}
