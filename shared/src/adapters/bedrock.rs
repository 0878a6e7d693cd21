//! The `Llm` adapter for Amazon Bedrock's Converse API (`aws-sdk-bedrockruntime`, default
//! features off, over the project's HTTPS client and credentials like the other SDK clients):
//! every model Bedrock serves (Claude, Nova, Llama, Mistral, …) with the function's own role,
//! no key to keep. The same prompt as the OpenAI-compatible adapter: the system messages as
//! Converse `system`, the rest as `messages` (consecutive turns of one role merged, as Converse
//! wants them alternating), the screenshot as an image block, the completion cap as
//! `inferenceConfig.maxTokens`.
//!
//! Prompt caching: a `cachePoint` after the system prompt, for the models that cache (Claude,
//! Nova); a model that refuses it gets none from then on, as a text-only model that refuses the
//! image gets none. Retries (throttling, a model not ready, 5xx, a timed-out attempt) are this
//! adapter's, with backoff inside the caller's deadline; the SDK's own are off. A refusal the
//! operator must fix (model access, a wrong model id) says what to enable, never AWS's text.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_sdk_bedrockruntime::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_bedrockruntime::operation::converse::{ConverseError, ConverseOutput};
use aws_sdk_bedrockruntime::types::{
    CachePointBlock, CachePointType, ContentBlock, ConversationRole, ImageBlock, ImageFormat,
    ImageSource, InferenceConfiguration, Message, StopReason, SystemContentBlock,
};
use base64::Engine as _;

use super::llm_answer::{cut_short, media_type, raised, without_thinking};
use crate::config::llm_params::{self, Choice};
use crate::config::{BedrockEndpoint, LlmConfig};
use crate::ports::llm::{Call, ChatMessage, Completion, Llm, LlmError};
use crate::upstream::{model_call, Attempt, TIMED_OUT};

/// Amazon Bedrock's Converse API for one model.
pub struct BedrockLlm {
    cfg: LlmConfig,
    endpoint: BedrockEndpoint,
    /// Built on first use (no I/O then either): functions that never call the model pay
    /// nothing at cold start.
    client: tokio::sync::OnceCell<aws_sdk_bedrockruntime::Client>,
    /// A cache point follows the system prompt (off once the model refuses it).
    cache_points: AtomicBool,
    /// Images are sent (off once the model refuses them).
    images: AtomicBool,
    /// `LLM_TEMPERATURE` (0 by default, none for reasoning models).
    temperature: Option<f32>,
}

impl std::fmt::Debug for BedrockLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BedrockLlm")
            .field("model", &self.cfg.model)
            .field("region", &self.endpoint.region)
            .finish_non_exhaustive()
    }
}

/// What one request sends besides the messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sent {
    cache_points: bool,
    images: bool,
}

impl BedrockLlm {
    pub fn new(cfg: LlmConfig, endpoint: BedrockEndpoint) -> Self {
        // LLM_PROMPT_CACHE: on forces the cache point, off leaves it out, auto by model.
        let cache_points = match cfg.params.prompt_cache {
            Choice::Value(on) => on,
            Choice::Auto => caches_prompts(&cfg.model),
            Choice::Omit => false,
        };
        // The same sampling as the OpenAI-compatible adapter: 0 unless a reasoning model.
        let temperature = llm_params::initial(&cfg.params, "", &cfg.model).temperature;
        Self {
            temperature,
            images: AtomicBool::new(cfg.vision),
            cache_points: AtomicBool::new(cache_points),
            cfg,
            endpoint,
            client: tokio::sync::OnceCell::new(),
        }
    }

    /// With a client made elsewhere (the tests' static credentials and loopback endpoint).
    #[cfg(test)]
    fn with_client(cfg: LlmConfig, client: aws_sdk_bedrockruntime::Client) -> Self {
        let me = Self::new(cfg, BedrockEndpoint::default());
        let _ = me.client.set(client);
        me
    }

    async fn client(&self) -> &aws_sdk_bedrockruntime::Client {
        self.client
            .get_or_init(|| async {
                let sdk = super::aws::sdk_config(self.endpoint.region.as_deref()).await;
                let mut conf = aws_sdk_bedrockruntime::config::Builder::from(&sdk)
                    // This adapter retries, inside the step's deadline.
                    .retry_config(aws_sdk_bedrockruntime::config::retry::RetryConfig::disabled());
                if let Some(url) = &self.endpoint.endpoint_url {
                    conf = conf.endpoint_url(url);
                }
                aws_sdk_bedrockruntime::Client::from_conf(conf.build())
            })
            .await
    }

    fn sent(&self) -> Sent {
        Sent {
            cache_points: self.cache_points.load(Ordering::Relaxed),
            images: self.images.load(Ordering::Relaxed),
        }
    }

    async fn attempt(
        &self,
        messages: &[ChatMessage],
        timeout: Duration,
    ) -> Attempt<Completion, LlmError> {
        let started = Instant::now();
        let mut cap = self.cfg.max_tokens;
        let mut spent = Completion::default();
        let mut adapted = 0;
        let mut asked_again = false;
        loop {
            let left = timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Attempt::Retry(TIMED_OUT.into(), None);
            }
            let sent = self.sent();
            let (system, turns) = match converse_parts(messages, sent) {
                Ok(parts) => parts,
                Err(why) => return Attempt::Fatal(LlmError::Upstream(why.into())),
            };
            let request = self
                .client()
                .await
                .converse()
                .model_id(&self.cfg.model)
                .set_system(Some(system))
                .set_messages(Some(turns))
                .inference_config(
                    InferenceConfiguration::builder()
                        .max_tokens(i32::try_from(cap).unwrap_or(i32::MAX))
                        .set_temperature(self.temperature)
                        .build(),
                )
                .send();
            let output = match tokio::time::timeout(left, request).await {
                Err(_) => return Attempt::Retry(TIMED_OUT.into(), None),
                Ok(Ok(output)) => output,
                Ok(Err(e)) => match self.refusal(e, sent) {
                    Refusal::Adapted if adapted < 2 => {
                        adapted += 1;
                        continue;
                    }
                    Refusal::Adapted => {
                        return Attempt::Fatal(LlmError::Upstream(
                            "Bedrock refused the request".into(),
                        ))
                    }
                    Refusal::Retry(why) => return Attempt::Retry(why, None),
                    Refusal::Fatal(e) => return Attempt::Fatal(e),
                },
            };
            let answer = read_output(output, &spent);
            // Once, with room to answer: a model that thinks out of the cap can leave nothing.
            let length = answer.cut.then_some("length");
            if cut_short(length, &answer.completion.content) && !asked_again && raised(cap) > cap {
                asked_again = true;
                tracing::info!(model = %self.cfg.model, cap, "the answer was cut at the token limit; asking again with more room");
                cap = raised(cap);
                spent = answer.completion;
                continue;
            }
            return Attempt::Done(answer.completion);
        }
    }

    /// What a failed call means: a setting to drop (remembered), a retry, or a refusal.
    fn refusal(&self, e: SdkError<ConverseError>, sent: Sent) -> Refusal {
        let kind = classify(&e);
        match kind {
            Kind::Invalid { mentions_cache } if sent.cache_points && mentions_cache => {
                tracing::info!(model = %self.cfg.model, "the model refused the cache point; sending none from now on");
                self.cache_points.store(false, Ordering::Relaxed);
                Refusal::Adapted
            }
            Kind::Invalid { .. } if sent.images && refuses_images(&e) => {
                tracing::info!(model = %self.cfg.model, "the model refused the image; sending text only from now on");
                self.images.store(false, Ordering::Relaxed);
                Refusal::Adapted
            }
            other => {
                // AWS's words stay in the function's log (cut short), never in an answer.
                let said: String = e.message().unwrap_or("").chars().take(300).collect();
                tracing::warn!(model = %self.cfg.model, code = e.code().unwrap_or("none"), message = %said, "Bedrock refused the call");
                other.into_refusal(&self.cfg.model, self.endpoint.region.as_deref())
            }
        }
    }
}

enum Refusal {
    Adapted,
    Retry(String),
    Fatal(LlmError),
}

/// The error classes the adapter tells apart.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// Throttled, not ready, a 5xx or the network: worth another try.
    Transient(String),
    /// The model took too long.
    Timeout,
    /// The model is not enabled for this account, or the role may not call it.
    Denied,
    /// No such model (or inference profile) in the region.
    NotFound,
    /// A request Bedrock will not take as sent.
    Invalid { mentions_cache: bool },
    /// A model that must be called through an inference profile, called directly.
    NeedsProfile,
    /// The call could not be made here (no credentials, no region).
    NotMade,
    /// Anything else.
    Other(String),
}

impl Kind {
    fn into_refusal(self, model: &str, region: Option<&str>) -> Refusal {
        let region = region.unwrap_or("this region");
        match self {
            Kind::Transient(why) => Refusal::Retry(why),
            Kind::Timeout => Refusal::Retry(TIMED_OUT.into()),
            Kind::Denied => Refusal::Fatal(LlmError::Upstream(format!(
                "Bedrock denied access to {model}: enable the model for the account in the \
                 Bedrock console in {region} (Anthropic models ask for a use-case form once; an \
                 administrator's first call subscribes the account to a third-party model), \
                 and grant the function's role bedrock:InvokeModel on it"
            ))),
            Kind::NeedsProfile => Refusal::Fatal(LlmError::Upstream(format!(
                "Bedrock serves {model} only through an inference profile: set BEDROCK_MODEL_ID to \
                 the profile id (e.g. global.<model id> or us.<model id>)"
            ))),
            Kind::NotMade => Refusal::Fatal(LlmError::Upstream(
                "the Bedrock call could not be made: no AWS credentials or region".into(),
            )),
            Kind::NotFound => Refusal::Fatal(LlmError::Upstream(format!(
                "Bedrock has no model {model} in {region}: check BEDROCK_MODEL_ID (a model that \
                 needs one is called through an inference profile, e.g. us.<model id>)"
            ))),
            Kind::Invalid { .. } => Refusal::Fatal(LlmError::Upstream(format!(
                "Bedrock refused the request to {model} as invalid: check that BEDROCK_MODEL_ID \
                 names a model that supports the Converse API"
            ))),
            Kind::Other(code) => Refusal::Fatal(LlmError::Upstream(format!(
                "Bedrock refused the call ({code})"
            ))),
        }
    }
}

fn classify(e: &SdkError<ConverseError>) -> Kind {
    match e {
        SdkError::TimeoutError(_) => return Kind::Timeout,
        SdkError::DispatchFailure(_) => return Kind::Transient("Bedrock unreachable".into()),
        SdkError::ResponseError(_) => return Kind::Transient("malformed Bedrock answer".into()),
        SdkError::ConstructionFailure(_) => return Kind::NotMade,
        _ => {}
    }
    let code = e.code().unwrap_or("");
    let message = e.message().unwrap_or("").to_ascii_lowercase();
    match code {
        "ThrottlingException"
        | "ServiceUnavailableException"
        | "ModelNotReadyException"
        | "InternalServerException"
        | "ModelErrorException" => Kind::Transient(code.to_owned()),
        "ModelTimeoutException" => Kind::Timeout,
        "AccessDeniedException" => Kind::Denied,
        "ResourceNotFoundException" => Kind::NotFound,
        "ValidationException"
            if message.contains("inference profile") || message.contains("on-demand") =>
        {
            Kind::NeedsProfile
        }
        "ValidationException" => Kind::Invalid {
            mentions_cache: message.contains("cach") && message.contains("support"),
        },
        "" => match e.raw_response().map(|r| r.status().as_u16()) {
            Some(429) | Some(500..=599) => Kind::Transient("Bedrock failed".into()),
            _ => Kind::Other("no code".into()),
        },
        other => Kind::Other(other.to_owned()),
    }
}

/// A refusal that names the image (a text-only model).
fn refuses_images(e: &SdkError<ConverseError>) -> bool {
    let message = e.message().unwrap_or("").to_ascii_lowercase();
    message.contains("image") && message.contains("support")
}

/// The models that cache a marked prefix on Bedrock: Anthropic's Claude and Amazon's Nova.
pub fn caches_prompts(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    name.contains("anthropic.claude") || name.contains("amazon.nova")
}

/// The Converse `system` blocks and `messages`: system messages first (then the cache point),
/// the rest merged into alternating turns that begin with the user's.
fn converse_parts(
    messages: &[ChatMessage],
    sent: Sent,
) -> Result<(Vec<SystemContentBlock>, Vec<Message>), &'static str> {
    let mut system: Vec<SystemContentBlock> = messages
        .iter()
        .filter(|m| m.role == "system" && !m.content.trim().is_empty())
        .map(|m| SystemContentBlock::Text(m.content.clone()))
        .collect();
    if sent.cache_points && !system.is_empty() {
        system.push(SystemContentBlock::CachePoint(cache_point()?));
    }
    let mut turns: Vec<(ConversationRole, Vec<ContentBlock>)> = Vec::new();
    for m in messages.iter().filter(|m| m.role != "system") {
        let role = match m.role.as_str() {
            "assistant" => ConversationRole::Assistant,
            _ => ConversationRole::User,
        };
        // Converse refuses a blank text block (an empty refused answer sent back as the
        // assistant's turn, say): it is said in words.
        let text = match m.content.trim().is_empty() {
            true => "(no answer)".to_owned(),
            false => m.content.clone(),
        };
        let mut blocks = vec![ContentBlock::Text(text)];
        if sent.images && role == ConversationRole::User {
            blocks.extend(m.images.iter().filter_map(|b64| image_block(b64)));
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    if turns.first().map(|(r, _)| r) != Some(&ConversationRole::User) {
        return Err("a conversation for Bedrock must begin with the user's turn");
    }
    turns
        .into_iter()
        .map(|(role, content)| {
            Message::builder()
                .role(role)
                .set_content(Some(content))
                .build()
                .map_err(|_| "a message could not be built")
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|turns| (system, turns))
}

fn cache_point() -> Result<CachePointBlock, &'static str> {
    CachePointBlock::builder()
        .r#type(CachePointType::Default)
        .build()
        .map_err(|_| "a cache point could not be built")
}

/// A screenshot (base64 JPEG, PNG or WebP) as an image block; `None` when it is not base64.
fn image_block(b64: &str) -> Option<ContentBlock> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    let format = match media_type(b64) {
        "image/png" => ImageFormat::Png,
        "image/webp" => ImageFormat::Webp,
        _ => ImageFormat::Jpeg,
    };
    ImageBlock::builder()
        .format(format)
        .source(ImageSource::Bytes(bytes.into()))
        .build()
        .ok()
        .map(ContentBlock::Image)
}

/// A Converse answer read: its text (reasoning blocks left out), usage added to what an
/// earlier, cut-short try `spent`, and whether it stopped at the token limit.
struct Answer {
    completion: Completion,
    cut: bool,
}

fn read_output(output: ConverseOutput, spent: &Completion) -> Answer {
    let text: String = match output.output {
        Some(aws_sdk_bedrockruntime::types::ConverseOutput::Message(m)) => m
            .content
            .into_iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => String::new(),
    };
    let tokens = |n: Option<i32>| u64::try_from(n.unwrap_or(0)).unwrap_or(0);
    let usage = output.usage;
    let input = tokens(usage.as_ref().map(|u| u.input_tokens));
    let cache_read = tokens(usage.as_ref().and_then(|u| u.cache_read_input_tokens));
    let cache_write = tokens(usage.as_ref().and_then(|u| u.cache_write_input_tokens));
    let output_tokens = tokens(usage.as_ref().map(|u| u.output_tokens));
    Answer {
        cut: output.stop_reason == StopReason::MaxTokens,
        completion: Completion {
            content: without_thinking(&text).to_owned(),
            // Every input token the model read: uncached, read from and written to the cache.
            prompt_tokens: spent.prompt_tokens + input + cache_read + cache_write,
            completion_tokens: spent.completion_tokens + output_tokens,
            cached_tokens: spent.cached_tokens + cache_read,
            cache_write_tokens: spent.cache_write_tokens + cache_write,
        },
    }
}

#[async_trait]
impl Llm for BedrockLlm {
    /// Converse has no per-call cache key (the cache point marks the prefix), and decisions
    /// are asked for in the tagged text format.
    async fn complete_for(
        &self,
        messages: &[ChatMessage],
        deadline: Instant,
        _call: Call<'_>,
    ) -> Result<Completion, LlmError> {
        model_call("Bedrock call", deadline, &self.cfg, |timeout| {
            self.attempt(messages, timeout)
        })
        .await
    }
}

#[cfg(test)]
#[path = "bedrock_tests.rs"]
mod tests;
