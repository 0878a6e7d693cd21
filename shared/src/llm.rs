//! The `Llm` port and its adapter for any OpenAI-compatible chat-completions endpoint. The
//! adapter retries 429/5xx/connection failures with backoff, never past the caller's
//! deadline; it collects token usage and never logs the key or the prompt.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};

pub use crate::config::LlmConfig;

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: "system".into(),
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: "user".into(),
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: "assistant".into(),
            content: content.into(),
        }
    }
}

/// A model answer with its token usage.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    pub content: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// Why a completion failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// The deadline passed before an answer came.
    #[error("the model did not answer in time")]
    Timeout,
    /// The endpoint kept failing, or refused the request.
    #[error("the model endpoint failed: {0}")]
    Upstream(String),
}

/// A chat-completions model.
#[async_trait]
pub trait Llm: Send + Sync {
    /// Completes `messages`, giving up at `deadline`.
    async fn complete(
        &self,
        messages: &[ChatMessage],
        deadline: Instant,
    ) -> Result<Completion, LlmError>;
}

/// Any OpenAI-compatible `/chat/completions` endpoint.
pub struct OpenAiLlm {
    cfg: LlmConfig,
    // Built on first use: functions that never call the model pay nothing at cold start.
    client: OnceLock<reqwest::Client>,
}

impl std::fmt::Debug for OpenAiLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiLlm")
            .field("base_url", &self.cfg.base_url)
            .field("model", &self.cfg.model)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
    temperature: f32,
    max_tokens: u32,
}

#[derive(Deserialize)]
struct ChatResponse {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

enum Attempt {
    Done(Completion),
    Retry(String, Option<Duration>),
    Fatal(LlmError),
}

impl OpenAiLlm {
    pub fn new(cfg: LlmConfig) -> Self {
        Self {
            cfg,
            client: OnceLock::new(),
        }
    }

    fn client(&self) -> &reqwest::Client {
        self.client.get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(5))
                .pool_idle_timeout(Duration::from_secs(60))
                .build()
                .unwrap_or_default()
        })
    }

    fn url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.cfg.base_url.trim_end_matches('/')
        )
    }

    async fn attempt(&self, messages: &[ChatMessage], timeout: Duration) -> Attempt {
        let body = ChatRequest {
            model: &self.cfg.model,
            messages,
            temperature: 0.0,
            max_tokens: self.cfg.max_tokens,
        };
        let sent = self
            .client()
            .post(self.url())
            .bearer_auth(self.cfg.api_key.expose_secret())
            .timeout(timeout)
            .json(&body)
            .send()
            .await;
        let resp = match sent {
            Ok(r) => r,
            Err(e) if e.is_timeout() => return Attempt::Retry("attempt timed out".into(), None),
            Err(e) => {
                return Attempt::Retry(format!("connection failed: {}", without_url(&e)), None)
            }
        };
        let status = resp.status();
        if status.as_u16() == 429 || status.is_server_error() {
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok())
                .map(Duration::from_secs);
            return Attempt::Retry(format!("status {status}"), retry_after);
        }
        if !status.is_success() {
            return Attempt::Fatal(LlmError::Upstream(format!("status {status}")));
        }
        let body = match crate::upstream::read_limited(resp, MAX_RESPONSE_BYTES).await {
            Ok(b) => b,
            Err(crate::upstream::ReadError::Timeout) => {
                return Attempt::Retry("attempt timed out".into(), None)
            }
            Err(crate::upstream::ReadError::Transport) => {
                return Attempt::Retry("connection failed: body".into(), None)
            }
            Err(crate::upstream::ReadError::TooLarge) => {
                return Attempt::Fatal(LlmError::Upstream("oversized completion".into()))
            }
        };
        match serde_json::from_slice::<ChatResponse>(&body) {
            Ok(r) => {
                let content = r
                    .choices
                    .into_iter()
                    .next()
                    .and_then(|c| c.message.content)
                    .unwrap_or_default();
                let usage = r.usage.unwrap_or(Usage {
                    prompt_tokens: 0,
                    completion_tokens: 0,
                });
                Attempt::Done(Completion {
                    content,
                    prompt_tokens: usage.prompt_tokens,
                    completion_tokens: usage.completion_tokens,
                })
            }
            Err(_) => Attempt::Fatal(LlmError::Upstream("malformed completion".into())),
        }
    }
}

/// Largest completion response read (a completion of `LLM_MAX_TOKENS` is far smaller).
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// reqwest errors print the URL; keep it (and any key in it) out of messages.
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_connect() {
        "connect"
    } else if e.is_request() {
        "request"
    } else {
        "transport"
    };
    kind.to_owned()
}

#[async_trait]
impl Llm for OpenAiLlm {
    async fn complete(
        &self,
        messages: &[ChatMessage],
        deadline: Instant,
    ) -> Result<Completion, LlmError> {
        let mut last = String::new();
        for attempt in 0..=self.cfg.max_retries {
            let left = deadline.saturating_duration_since(Instant::now());
            if left < Duration::from_millis(200) {
                return Err(if last.is_empty() {
                    LlmError::Timeout
                } else {
                    LlmError::Upstream(last)
                });
            }
            match self
                .attempt(messages, left.min(self.cfg.attempt_timeout))
                .await
            {
                Attempt::Done(c) => return Ok(c),
                Attempt::Fatal(e) => return Err(e),
                Attempt::Retry(why, retry_after) => {
                    tracing::warn!(attempt, reason = %why, "model call failed; retrying if time allows");
                    last = why;
                    let backoff = retry_after
                        .unwrap_or(Duration::from_millis(250 << attempt.min(4)))
                        .min(Duration::from_secs(2));
                    if Instant::now() + backoff >= deadline {
                        break;
                    }
                    tokio::time::sleep(backoff).await;
                }
            }
        }
        if last == "attempt timed out" {
            Err(LlmError::Timeout)
        } else {
            Err(LlmError::Upstream(last))
        }
    }
}
