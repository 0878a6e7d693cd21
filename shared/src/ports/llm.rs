//! The `Llm` port: a chat model (adapters: `adapters::openai` for OpenAI-compatible endpoints,
//! `adapters::bedrock` for Amazon Bedrock's Converse API).

use std::time::Instant;

use async_trait::async_trait;

pub use crate::config::LlmConfig;

pub use crate::domain::chat::ChatMessage;

/// A model answer with its token usage.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    pub content: String,
    /// Every input token the model read, cached or not.
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of `prompt_tokens`, those read from the provider's prompt cache.
    pub cached_tokens: u64,
    /// Of `prompt_tokens`, those written to the prompt cache (Bedrock bills them apart).
    pub cache_write_tokens: u64,
}

/// Why a completion failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// The deadline passed before an answer came.
    #[error("the model did not answer in time")]
    Timeout,
    /// The endpoint refused the request (a 4xx, a malformed answer).
    #[error("the model endpoint failed: {0}")]
    Upstream(String),
    /// The endpoint kept failing (429, 5xx, connection) after the adapter's retries.
    #[error("the model endpoint is unavailable: {0}")]
    Unavailable(String),
}

/// A chat-completions model.
#[async_trait]
pub trait Llm: Send + Sync {
    /// Completes `messages`, giving up at `deadline`.
    async fn complete(
        &self,
        messages: &[ChatMessage],
        deadline: Instant,
    ) -> Result<Completion, LlmError> {
        self.complete_for(messages, deadline, Call::default()).await
    }

    /// [`Llm::complete`] with the call's hints: a provider that caches prompts by key or by
    /// marked prefix gets `call.cache_key`, and one configured for structured output gets
    /// `call.schema` as the answer's JSON schema.
    async fn complete_for(
        &self,
        messages: &[ChatMessage],
        deadline: Instant,
        call: Call<'_>,
    ) -> Result<Completion, LlmError>;
}

/// What a model call may tell the provider besides the messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct Call<'a> {
    /// The conversation (a task) the call belongs to, for prompt caching.
    pub cache_key: Option<&'a str>,
    /// The answer's JSON schema, for a provider configured for structured output
    /// (`LLM_STRUCTURED_OUTPUT`); the answer then comes as that JSON.
    pub schema: Option<&'a serde_json::Value>,
}

impl<'a> Call<'a> {
    pub fn keyed(cache_key: &'a str) -> Self {
        Self {
            cache_key: Some(cache_key),
            schema: None,
        }
    }
}

/// One model call, timed on its own (`interact.model_call`): the benchmarks take the model's
/// time out of the server's overhead.
pub async fn ask(
    llm: &dyn Llm,
    messages: &[ChatMessage],
    deadline: Instant,
    call: Call<'_>,
) -> Result<Completion, LlmError> {
    use tracing::Instrument;
    llm.complete_for(messages, deadline, call)
        .instrument(tracing::debug_span!("interact.model_call"))
        .await
}
