//! The `Llm` adapter for any OpenAI-compatible chat-completions endpoint: retries
//! 429/5xx/connection failures with backoff, never past the caller's deadline; collects token
//! usage and never logs the key or the prompt.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};

use crate::config::LlmConfig;
use crate::ports::llm::{ChatMessage, Completion, Llm, LlmError};
use crate::upstream::{
    read_limited, retry_after, transport_reason, with_retries, Attempt, GaveUp, ReadError,
};

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

    async fn attempt(
        &self,
        messages: &[ChatMessage],
        timeout: Duration,
    ) -> Attempt<Completion, LlmError> {
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
            Err(e) => return Attempt::Retry(transport_reason(&e), None),
        };
        let status = resp.status();
        if status.as_u16() == 429 || status.is_server_error() {
            return Attempt::Retry(format!("status {status}"), retry_after(&resp));
        }
        if !status.is_success() {
            return Attempt::Fatal(LlmError::Upstream(format!("status {status}")));
        }
        let body = match read_limited(resp, MAX_RESPONSE_BYTES).await {
            Ok(b) => b,
            Err(ReadError::Timeout) => {
                return Attempt::Retry(crate::upstream::TIMED_OUT.into(), None)
            }
            Err(ReadError::Transport) => {
                return Attempt::Retry("connection failed: body".into(), None)
            }
            Err(ReadError::TooLarge) => {
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

#[async_trait]
impl Llm for OpenAiLlm {
    async fn complete(
        &self,
        messages: &[ChatMessage],
        deadline: Instant,
    ) -> Result<Completion, LlmError> {
        let cfg = &self.cfg;
        with_retries(
            "model call",
            deadline,
            cfg.max_retries,
            cfg.attempt_timeout,
            |timeout| self.attempt(messages, timeout),
        )
        .await
        .map_err(|e| match e {
            GaveUp::Timeout => LlmError::Timeout,
            GaveUp::Failed(why) => LlmError::Upstream(why),
            GaveUp::Fatal(e) => e,
        })
    }
}
