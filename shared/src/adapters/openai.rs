//! The `Llm` adapter for any OpenAI-compatible chat-completions endpoint: retries
//! 429/5xx/connection failures with backoff, never past the caller's deadline; collects token
//! usage and never logs the key or the prompt. It sends the parameters the endpoint takes
//! (`llm_params`), and when a 400 names one it refused, resends at once without it and keeps
//! the adapted set for the model's later calls. A key read from Secrets Manager is read again
//! on a 401 (at most once a minute), so a rotated key takes effect without a deploy.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};

use super::llm_answer::{cut_short, media_type, raised, without_thinking};
use crate::config::llm_params::{self, ModelParams, Structured, TokenParam};
use crate::config::{LlmConfig, OpenAiEndpoint, RotatingKey};
use crate::ports::llm::{Call, ChatMessage, Completion, Llm, LlmError};
use crate::upstream::{exchange_or_refusal, model_call, Attempt, LazyClient};

/// Any OpenAI-compatible `/chat/completions` endpoint.
pub struct OpenAiLlm {
    cfg: LlmConfig,
    endpoint: OpenAiEndpoint,
    /// The key sent: `cfg.api_key`, or one read again from Secrets Manager (shared with the
    /// verifier's model).
    key: Arc<RotatingKey>,
    // Built on first use: functions that never call the model pay nothing at cold start.
    client: LazyClient,
    /// What this model takes, adapted from refusals for the life of the process.
    params: Mutex<ModelParams>,
}

impl std::fmt::Debug for OpenAiLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiLlm")
            .field("base_url", &self.endpoint.base_url)
            .field("model", &self.cfg.model)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    /// Structured output as a JSON schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<serde_json::Value>,
    /// Structured output as a forced tool call.
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<serde_json::Value>,
}

/// The name of the structured answer (its schema, its tool).
const ANSWER_NAME: &str = "next_action";

/// The conversation as sent: as is, or with the system prompt as a text part marked
/// `cache_control` (the prefix an Anthropic model behind a gateway caches) and a message's
/// images as `image_url` parts after its text.
#[derive(Serialize)]
#[serde(untagged)]
enum Messages<'a> {
    Plain(&'a [ChatMessage]),
    Parts(Vec<serde_json::Value>),
}

impl<'a> Messages<'a> {
    fn new(messages: &'a [ChatMessage], mark: bool, images: bool) -> Self {
        let with_images = images && messages.iter().any(|m| !m.images.is_empty());
        if !mark && !with_images {
            return Self::Plain(messages);
        }
        Self::Parts(
            messages
                .iter()
                .map(|m| match m.role.as_str() {
                    "system" if mark => serde_json::json!({ "role": "system", "content": [
                        { "type": "text", "text": m.content, "cache_control": { "type": "ephemeral" } }
                    ] }),
                    _ if with_images && !m.images.is_empty() => {
                        let mut parts = vec![serde_json::json!({ "type": "text", "text": m.content })];
                        parts.extend(m.images.iter().map(|b64| serde_json::json!({
                            "type": "image_url",
                            "image_url": { "url": format!("data:{};base64,{b64}", media_type(b64)) }
                        })));
                        serde_json::json!({ "role": m.role, "content": parts })
                    }
                    _ => serde_json::json!({ "role": m.role, "content": m.content }),
                })
                .collect(),
        )
    }
}

/// Most parameter adaptations in one call (each removes or swaps one parameter).
const MAX_ADAPTATIONS: usize = 3;

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
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    /// A string, or an array of parts (gateways in front of Anthropic or Gemini).
    #[serde(default)]
    content: Option<serde_json::Value>,
    /// A forced tool call's arguments carry a structured answer.
    #[serde(default)]
    tool_calls: Vec<ToolCallOut>,
}

#[derive(Deserialize)]
struct ToolCallOut {
    #[serde(default)]
    function: Option<FunctionOut>,
}

#[derive(Deserialize)]
struct FunctionOut {
    #[serde(default)]
    arguments: String,
}

impl ChoiceMessage {
    /// The answer: the first tool call's arguments (only the forced answer tool is offered, so
    /// a preamble beside it is not the answer), else the text.
    fn answer(self) -> String {
        self.tool_calls
            .into_iter()
            .find_map(|c| c.function.map(|f| f.arguments))
            .filter(|a| !a.trim().is_empty())
            .unwrap_or_else(|| text_of(self.content))
    }
}

/// The answer's text: the string, or the text parts joined (thinking parts left out).
fn text_of(content: Option<serde_json::Value>) -> String {
    use serde_json::Value;
    match content {
        Some(Value::String(s)) => s,
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| {
                p.get("type")
                    .and_then(Value::as_str)
                    .is_none_or(|t| matches!(t, "text" | "output_text"))
            })
            .filter_map(|p| p.get("text").and_then(Value::as_str).or(p.as_str()))
            .collect(),
        _ => String::new(),
    }
}

#[derive(Deserialize, Default)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    /// OpenAI's (and compatible gateways') cached part of the prompt.
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize, Default)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: u64,
}

impl OpenAiLlm {
    /// The adapter for `cfg`, when it names an OpenAI-compatible endpoint.
    pub fn from_config(cfg: LlmConfig) -> Option<Self> {
        match cfg.provider.clone() {
            crate::config::LlmProvider::OpenAi(endpoint) => Some(Self::new(cfg, endpoint)),
            crate::config::LlmProvider::Bedrock(_) => None,
        }
    }

    pub fn new(cfg: LlmConfig, endpoint: OpenAiEndpoint) -> Self {
        let params = llm_params::initial(&cfg.params, &endpoint.base_url, &cfg.model);
        Self {
            key: Arc::new(RotatingKey::fixed(endpoint.api_key.clone())),
            endpoint,
            cfg,
            client: LazyClient::new(Duration::from_secs(5)),
            params: Mutex::new(params),
        }
    }

    /// Sends `key` (read again when stale, and on a 401) instead of the configured one.
    pub fn with_key(mut self, key: Arc<RotatingKey>) -> Self {
        self.key = key;
        self
    }

    fn current_params(&self) -> ModelParams {
        match self.params.lock() {
            Ok(p) => p.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn remember(&self, params: ModelParams) {
        match self.params.lock() {
            Ok(mut p) => *p = params,
            Err(poisoned) => *poisoned.into_inner() = params,
        }
    }

    fn client(&self) -> &reqwest::Client {
        self.client.get()
    }

    fn url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.endpoint.base_url.trim_end_matches('/')
        )
    }

    /// One request with `params`, completion limit `cap` and the call's hints.
    fn request(
        &self,
        messages: &[ChatMessage],
        params: &ModelParams,
        (cap, call): (u32, Call<'_>),
        timeout: Duration,
    ) -> reqwest::RequestBuilder {
        let limit = Some(cap);
        let schema = call.schema.filter(|_| params.structured != Structured::Off);
        let json_schema = schema.filter(|_| params.structured == Structured::JsonSchema);
        let tool = schema.filter(|_| params.structured == Structured::Tool);
        let body = ChatRequest {
            model: &self.cfg.model,
            messages: Messages::new(messages, params.cache_control, params.images),
            prompt_cache_key: call.cache_key.filter(|_| params.cache_key),
            response_format: json_schema.map(|s| {
                serde_json::json!({ "type": "json_schema", "json_schema": { "name": ANSWER_NAME, "strict": true, "schema": s } })
            }),
            tools: tool.map(|s| {
                serde_json::json!([{ "type": "function", "function": {
                    "name": ANSWER_NAME, "description": "The next action, with your thought", "parameters": s } }])
            }),
            tool_choice: tool.map(|_| {
                serde_json::json!({ "type": "function", "function": { "name": ANSWER_NAME } })
            }),
            temperature: params.temperature,
            max_tokens: limit.filter(|_| params.token_param == TokenParam::MaxTokens),
            max_completion_tokens: limit
                .filter(|_| params.token_param == TokenParam::MaxCompletionTokens),
            reasoning_effort: params.reasoning_effort.as_deref(),
        };
        let mut req = self.client().post(self.url()).timeout(timeout).json(&body);
        if let Some(v) = &self.endpoint.api_version {
            req = req.query(&[("api-version", v)]);
        }
        let key = self.key.current();
        let key = key.expose_secret();
        if !self.endpoint.api_key_header {
            return req.bearer_auth(key);
        }
        // Marked sensitive like a bearer token, so no debug output shows it.
        match reqwest::header::HeaderValue::from_str(key) {
            Ok(mut v) => {
                v.set_sensitive(true);
                req.header("api-key", v)
            }
            // Not a valid header value: sent as given, for the request to fail as it would.
            Err(_) => req.header("api-key", key),
        }
    }

    async fn attempt(
        &self,
        messages: &[ChatMessage],
        call: Call<'_>,
        timeout: Duration,
    ) -> Attempt<Completion, LlmError> {
        let started = Instant::now();
        self.key.refresh_if_stale().await;
        let mut params = self.current_params();
        let mut adapted = 0;
        let mut cap = self.cfg.max_tokens;
        // The tokens of an answer cut short and asked again.
        let mut spent = (0, 0, 0);
        let mut asked_again = false;
        let mut key_reread = false;
        loop {
            let body = loop {
                let left = timeout.saturating_sub(started.elapsed());
                if left.is_zero() {
                    return Attempt::Retry(crate::upstream::TIMED_OUT.into(), None);
                }
                let refusal = match exchange_or_refusal(
                    self.request(messages, &params, (cap, call), left),
                    MAX_RESPONSE_BYTES,
                )
                .await
                {
                    Attempt::Done(b) => break b,
                    Attempt::Retry(why, after) => return Attempt::Retry(why, after),
                    Attempt::Fatal(r) => r,
                };
                if refusal.status == Some(401) && !key_reread {
                    key_reread = true;
                    if self.key.reread_after_refusal().await {
                        continue;
                    }
                }
                let sent_images = params.images && messages.iter().any(|m| !m.images.is_empty());
                let next = match refusal.status {
                    // A text-only model refuses the screenshot: sent without it from now on.
                    Some(400 | 422)
                        if adapted < MAX_ADAPTATIONS
                            && sent_images
                            && llm_params::refuses_images(&refusal.body) =>
                    {
                        llm_params::adapt(&params, "image_url").map(|p| ("image_url", p))
                    }
                    Some(400 | 422) if adapted < MAX_ADAPTATIONS => {
                        llm_params::refused_param(&params, &refusal.body)
                            .and_then(|name| Some((name, llm_params::adapt(&params, name)?)))
                    }
                    _ => None,
                };
                let Some((name, next)) = next else {
                    return Attempt::Fatal(LlmError::Upstream(refusal.reason));
                };
                tracing::info!(model = %self.cfg.model, parameter = name, "the model refused a parameter; resending without it");
                params = next;
                adapted += 1;
            };
            // Kept for the model's later calls only once a request with them went through.
            if adapted > 0 {
                self.remember(params.clone());
            }
            let Ok(r) = serde_json::from_slice::<ChatResponse>(&body) else {
                return Attempt::Fatal(LlmError::Upstream("malformed completion".into()));
            };
            let usage = r.usage.unwrap_or_default();
            let cached = usage.prompt_tokens_details.map_or(0, |d| d.cached_tokens);
            let (prompt_tokens, completion_tokens, cached_tokens) = (
                spent.0 + usage.prompt_tokens,
                spent.1 + usage.completion_tokens,
                spent.2 + cached,
            );
            let (text, finish) = match r.choices.into_iter().next() {
                Some(c) => (c.message.answer(), c.finish_reason),
                None => (String::new(), None),
            };
            let content = without_thinking(&text).to_owned();
            // Once, with room to answer: a model that thinks out of the cap can leave nothing.
            if cut_short(finish.as_deref(), &content) && !asked_again && raised(cap) > cap {
                asked_again = true;
                tracing::info!(model = %self.cfg.model, cap, "the answer was cut at the token limit; asking again with more room");
                cap = raised(cap);
                spent = (prompt_tokens, completion_tokens, cached_tokens);
                continue;
            }
            return Attempt::Done(Completion {
                content,
                prompt_tokens,
                completion_tokens,
                cached_tokens,
                cache_write_tokens: 0,
            });
        }
    }
}

/// Largest completion response read (a completion of `LLM_MAX_TOKENS` is far smaller).
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

#[async_trait]
impl Llm for OpenAiLlm {
    async fn complete_for(
        &self,
        messages: &[ChatMessage],
        deadline: Instant,
        call: Call<'_>,
    ) -> Result<Completion, LlmError> {
        model_call("model call", deadline, &self.cfg, |timeout| {
            self.attempt(messages, call, timeout)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinking_before_the_answer_is_left_out() {
        let answer = "<Thought>t</Thought><Action>click(1)</Action>";
        assert_eq!(
            without_thinking(&format!(
                "<think>draft <Action>click(9)</Action></think>\n{answer}"
            )),
            answer
        );
        // The opening tag left out by the chat template.
        assert_eq!(without_thinking(&format!("draft</think>{answer}")), answer);
        assert_eq!(
            without_thinking(&format!("<THINKING>x</THINKING> {answer}")),
            answer
        );
        // Cut off while thinking: nothing after it is an answer.
        assert_eq!(without_thinking("<think>still going <Action>click(9)"), "");
        assert_eq!(without_thinking(answer), answer);
    }

    #[test]
    fn an_answer_cut_before_its_action_is_asked_again_once_with_more_room() {
        assert!(cut_short(Some("length"), ""));
        assert!(!cut_short(Some("length"), "<Action>click(1)</Action>"));
        assert!(!cut_short(Some("stop"), ""));
        assert_eq!(
            (raised(800), raised(4_000), raised(16_000)),
            (4_000, 8_000, 16_384)
        );
    }

    #[test]
    fn thinking_is_cut_on_character_boundaries_and_in_one_pass_whatever_the_text() {
        let answer = "<Action>click(1)</Action>";
        // Multibyte text around and inside the tags (byte offsets must stay on boundaries).
        let t = format!("<think>ünïcödé 思考 </think>ß{answer}");
        assert_eq!(without_thinking(&t), format!("ß{answer}"));
        assert_eq!(without_thinking("思考<think>"), "思考");
        // Nested and repeated blocks: what follows the last closing tag.
        let nested = format!("<think><think>a</think>b</think>{answer}");
        assert_eq!(without_thinking(&nested), answer);
        // A megabyte of opening tags: one pass, nothing left.
        let huge = "<think>".repeat(150_000);
        assert_eq!(without_thinking(&huge), "");
        let parts = serde_json::json!([{ "type": "thinking", "text": "no" }, { "type": "text", "text": answer }, 7, null]);
        assert_eq!(text_of(Some(parts)), answer);
    }

    fn answer(status: &str, body: &str) -> &'static str {
        let text = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        Box::leak(text.into_boxed_str())
    }

    fn model_at(url: &str) -> OpenAiLlm {
        let env = |k: &str| match k {
            "LLM_API_KEY" => Some("sk-old".to_owned()),
            "LLM_BASE_URL" => Some(url.to_owned()),
            "LLM_MODEL" => Some("gpt-4o-mini".to_owned()),
            "LLM_MAX_RETRIES" => Some("0".to_owned()),
            _ => None,
        };
        let cfg = crate::config::AgentConfig::from_lookup(env).expect("config");
        OpenAiLlm::from_config(cfg.llm.expect("llm")).expect("an OpenAI-compatible endpoint")
    }

    /// The model's key as read at cold start, read again on any 401 (no minute between).
    fn rotating(vault: &Arc<crate::ports::secrets::memory::MemorySecrets>) -> Arc<RotatingKey> {
        let rereads = crate::config::Rereads {
            after_refusal: Duration::ZERO,
            max_age: Duration::from_secs(3600),
        };
        let refresh = crate::config::KeyRefresh::new(vault.clone(), "llm".into(), rereads);
        Arc::new(RotatingKey::rotating(
            secrecy::SecretString::from("sk-old".to_owned()),
            refresh,
        ))
    }

    const REFUSED: &str = r#"{"error":{"message":"Incorrect API key provided"}}"#;
    const DONE: &str = r#"{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#;

    /// A model at a loopback server answering `answers`, whose key "sk-old" is read again
    /// from a secret holding `stored`; the server's requests and the secret's reads.
    async fn scripted(
        answers: Vec<&'static str>,
        stored: &str,
    ) -> (
        OpenAiLlm,
        tokio::task::JoinHandle<Vec<String>>,
        Arc<crate::ports::secrets::memory::MemorySecrets>,
    ) {
        let (url, served) = crate::adapters::loopback::answer_each(answers, false).await;
        let vault = Arc::new(crate::ports::secrets::memory::MemorySecrets::with(&[(
            "llm", stored,
        )]));
        (model_at(&url).with_key(rotating(&vault)), served, vault)
    }

    #[tokio::test]
    async fn a_401_reads_a_rotated_key_once_and_resends_with_it() {
        let ok = answer("200 OK", DONE);
        let (llm, served, vault) =
            scripted(vec![answer("401 Unauthorized", REFUSED), ok, ok], "sk-new").await;
        let deadline = Instant::now() + Duration::from_secs(20);
        let done = llm
            .complete(&[ChatMessage::user("hi")], deadline)
            .await
            .expect("answered with the new key");
        assert_eq!(done.content, "ok");
        llm.complete(&[ChatMessage::user("again")], deadline)
            .await
            .expect("answered");
        let requests = served.await.expect("served");
        let bearer = |r: &String| r.to_ascii_lowercase().contains("bearer sk-new");
        assert!(requests[0].to_ascii_lowercase().contains("bearer sk-old"));
        assert!(
            bearer(&requests[1]) && bearer(&requests[2]),
            "kept from then on"
        );
        assert_eq!(vault.reads(), 1);
    }

    #[tokio::test]
    async fn a_401_with_an_unchanged_key_is_the_providers_refusal_not_a_loop() {
        let (llm, served, vault) =
            scripted(vec![answer("401 Unauthorized", REFUSED)], "sk-old").await;
        let deadline = Instant::now() + Duration::from_secs(20);
        let err = llm
            .complete(&[ChatMessage::user("hi")], deadline)
            .await
            .expect_err("refused");
        assert!(!format!("{err}").contains("sk-old"), "{err}");
        assert_eq!(served.await.expect("served").len(), 1);
        assert_eq!(vault.reads(), 1);
    }
}
