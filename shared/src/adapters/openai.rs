//! The `Llm` adapter for any OpenAI-compatible chat-completions endpoint: retries
//! 429/5xx/connection failures with backoff, never past the caller's deadline; collects token
//! usage and never logs the key or the prompt.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};

use crate::config::LlmConfig;
use crate::ports::llm::{ChatMessage, Completion, Llm, LlmError};
use crate::upstream::{exchange, with_retries, Attempt, GaveUp, LazyClient};

/// Any OpenAI-compatible `/chat/completions` endpoint.
pub struct OpenAiLlm {
    cfg: LlmConfig,
    // Built on first use: functions that never call the model pay nothing at cold start.
    client: LazyClient,
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
            client: LazyClient::new(Duration::from_secs(5)),
        }
    }

    fn client(&self) -> &reqwest::Client {
        self.client.get()
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
        let req = self
            .client()
            .post(self.url())
            .bearer_auth(self.cfg.api_key.expose_secret())
            .timeout(timeout)
            .json(&body);
        let body = match exchange(req, MAX_RESPONSE_BYTES).await {
            Attempt::Done(b) => b,
            Attempt::Retry(why, after) => return Attempt::Retry(why, after),
            Attempt::Fatal(why) => return Attempt::Fatal(LlmError::Upstream(why)),
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
            GaveUp::Failed(why) => LlmError::Unavailable(why),
            GaveUp::Fatal(e) => e,
        })
    }
}
