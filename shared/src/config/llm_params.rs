//! Which request parameters a chat-completions endpoint takes, as pure rules: what to send
//! first (from the settings, the endpoint's host and the model's name) and how to adapt when
//! the endpoint refuses a parameter with a 400 that names it. OpenAI's current models refuse
//! `max_tokens` (they take `max_completion_tokens`) and any `temperature` but the default;
//! self-hosted servers (vLLM, Ollama, llama.cpp) and most other providers take `max_tokens`.

use serde_json::Value;

/// How the completion limit is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenParam {
    MaxTokens,
    MaxCompletionTokens,
    Omit,
}

/// A setting that is either chosen by the rules below, left out, or given.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice<T> {
    Auto,
    Omit,
    Value(T),
}

/// The operator's settings (`LLM_TOKEN_PARAM`, `LLM_TEMPERATURE`, `LLM_REASONING_EFFORT`,
/// `LLM_PROMPT_CACHE`).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSettings {
    pub token_param: Option<TokenParam>,
    pub temperature: Choice<f32>,
    pub reasoning_effort: Choice<String>,
    /// Prompt-cache hints: `Value(false)` never, `Value(true)` both kinds, `Auto` by provider.
    pub prompt_cache: Choice<bool>,
    /// How a decision's answer is asked for (`LLM_STRUCTURED_OUTPUT`).
    pub structured: Structured,
}

/// How a decision's answer is asked for: the tagged text the prompt describes (the default,
/// which every model can give), a JSON schema (`response_format`), or a forced tool call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Structured {
    #[default]
    Off,
    JsonSchema,
    Tool,
}

impl Default for ParamSettings {
    fn default() -> Self {
        Self {
            token_param: None,
            temperature: Choice::Auto,
            reasoning_effort: Choice::Auto,
            prompt_cache: Choice::Auto,
            structured: Structured::Off,
        }
    }
}

/// The parameters sent to one model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelParams {
    pub token_param: TokenParam,
    pub temperature: Option<f32>,
    pub reasoning_effort: Option<String>,
    /// `prompt_cache_key` (the task's id): OpenAI routes a task's calls to the same cache.
    pub cache_key: bool,
    /// The system prompt as a content part marked `cache_control` (an Anthropic model behind
    /// an OpenAI-compatible gateway caches the marked prefix).
    pub cache_control: bool,
    /// Structured output for decisions (dropped when the provider refuses it).
    pub structured: Structured,
    /// Image parts are sent (dropped when the model refuses them: a text-only model).
    pub images: bool,
}

/// The host of a base URL, lowercased.
fn host(base_url: &str) -> String {
    crate::domain::site::host_of(base_url).unwrap_or_default()
}

/// Azure OpenAI (the `api-key` header, deployments in the path, `api-version`).
pub fn is_azure(base_url: &str) -> bool {
    let h = host(base_url);
    h.ends_with(".openai.azure.com") || h.ends_with(".cognitiveservices.azure.com")
}

/// OpenAI's own API or Azure OpenAI: the endpoints that take `max_completion_tokens`.
pub fn is_openai(base_url: &str) -> bool {
    host(base_url) == "api.openai.com" || is_azure(base_url)
}

/// A model's own name: lowercased, without a gateway's `vendor/` prefix, and without a
/// Bedrock id's geography and vendor (`us.anthropic.claude-…` is `claude-…`, an inference
/// profile's ARN its id's).
fn model_name(model: &str) -> String {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    const GEOGRAPHIES: [&str; 8] = [
        "global.", "us.", "us-gov.", "eu.", "apac.", "jp.", "au.", "ca.",
    ];
    const VENDORS: [&str; 10] = [
        "anthropic.",
        "amazon.",
        "meta.",
        "mistral.",
        "cohere.",
        "ai21.",
        "deepseek.",
        "openai.",
        "qwen.",
        "writer.",
    ];
    let rest = GEOGRAPHIES
        .iter()
        .find_map(|g| name.strip_prefix(g))
        .unwrap_or(&name);
    match VENDORS.iter().find_map(|v| rest.strip_prefix(v)) {
        Some(own) => own.to_owned(),
        None => name.clone(),
    }
}

/// OpenAI's reasoning models (o-series, GPT-5 family except the chat variants): they refuse
/// sampling parameters and take a reasoning effort.
pub fn is_reasoning_model(model: &str) -> bool {
    let name = model_name(model);
    let family = ["o1", "o3", "o4", "gpt-5"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.']))
    });
    family && !name.contains("-chat")
}

/// Whether a model takes images, by its name: OpenAI's GPT-4o, GPT-4.1, GPT-5 and o-series
/// (o3, o4), Claude, Gemini, Amazon Nova (but Micro), and open vision models (`-vl`, `vision`,
/// LLaVA, Pixtral, Llama 3.2 11B/90B, Llama 4), also by their Bedrock ids.
pub fn is_vision_model(model: &str) -> bool {
    let name = model_name(model);
    let prefixes = [
        "gpt-4o",
        "gpt-4.1",
        "gpt-5",
        "o3",
        "o4",
        "claude",
        "gemini",
        "llava",
        "pixtral",
        "llama-4",
        // On Bedrock: Nova (but Micro), Llama 3.2 11B/90B and Llama 4, Pixtral.
        "nova-lite",
        "nova-pro",
        "nova-premier",
        "nova-2-lite",
        "llama3-2-11b",
        "llama3-2-90b",
        "llama4",
        "pixtral-large",
    ];
    let marks = ["-vl", "vision", "qvq"];
    // o1-mini and o3-mini read text only.
    let text_only = ["-audio", "o1-mini", "o3-mini", "o1-preview"];
    (prefixes.iter().any(|p| name.starts_with(p)) && !text_only.iter().any(|t| name.contains(t)))
        || marks.iter().any(|m| name.contains(m))
}

/// What to send first.
pub fn initial(settings: &ParamSettings, base_url: &str, model: &str) -> ModelParams {
    let openai = is_openai(base_url);
    let reasoning = is_reasoning_model(model);
    let token_param = settings.token_param.unwrap_or(if openai || reasoning {
        TokenParam::MaxCompletionTokens
    } else {
        TokenParam::MaxTokens
    });
    let temperature = match &settings.temperature {
        Choice::Value(t) => Some(*t),
        Choice::Omit => None,
        Choice::Auto => (!reasoning).then_some(0.0),
    };
    let reasoning_effort = match &settings.reasoning_effort {
        Choice::Value(e) => Some(e.clone()),
        Choice::Omit => None,
        // Little thinking: steps need a quick, short decision, but "minimal" picks worse
        // elements on real pages. (A gateway that refuses it gets it adapted away.)
        Choice::Auto if reasoning => Some("low".to_owned()),
        Choice::Auto => None,
    };
    let name = model_name(model);
    let (cache_key, cache_control) = match settings.prompt_cache {
        // On: both hints (a provider that refuses one gets it adapted away).
        Choice::Value(on) => (on, on),
        Choice::Omit => (false, false),
        // OpenAI caches on its own and takes the key; an Anthropic model caches only what is
        // marked, which its own OpenAI-compatible endpoint does not take.
        Choice::Auto => (
            openai,
            !openai && name.contains("claude") && host(base_url) != "api.anthropic.com",
        ),
    };
    ModelParams {
        token_param,
        temperature,
        reasoning_effort,
        cache_key,
        cache_control,
        structured: settings.structured,
        images: true,
    }
}

/// The parameters this request sends, by wire name.
fn sent(params: &ModelParams) -> Vec<&'static str> {
    let mut names = Vec::new();
    match params.token_param {
        TokenParam::MaxTokens => names.push("max_tokens"),
        TokenParam::MaxCompletionTokens => names.push("max_completion_tokens"),
        TokenParam::Omit => {}
    }
    if params.temperature.is_some() {
        names.push("temperature");
    }
    if params.reasoning_effort.is_some() {
        names.push("reasoning_effort");
    }
    if params.cache_key {
        names.push("prompt_cache_key");
    }
    if params.cache_control {
        names.push("cache_control");
    }
    match params.structured {
        Structured::Off => {}
        Structured::JsonSchema => names.push("response_format"),
        Structured::Tool => names.extend(["tools", "tool_choice"]),
    }
    names
}

/// Phrases of a message that refuses a parameter itself (not, say, a value too large for the
/// context): OpenAI, Azure, vLLM (pydantic) and others.
const REFUSAL_PHRASES: [&str; 5] = [
    "unsupported parameter",
    "unsupported value",
    "extra_forbidden",
    "unrecognized request argument",
    "not supported",
];

/// The sent parameter a refusal (a 400/422 body) names: the error's `param` field, else, in a
/// message that says a parameter is refused, the one it mentions first (OpenAI: "Unsupported
/// parameter: 'max_tokens' … Use 'max_completion_tokens' instead"; vLLM: "extra_forbidden …
/// 'max_completion_tokens'").
pub fn refused_param(params: &ModelParams, body: &[u8]) -> Option<&'static str> {
    let names = sent(params);
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let error = if v["error"].is_object() {
        &v["error"]
    } else {
        &v
    };
    if let Some(p) = error["param"].as_str() {
        if let Some(n) = names.iter().find(|n| **n == p) {
            return Some(n);
        }
    }
    let message = match error["message"].as_str() {
        Some(m) => m.to_owned(),
        None => String::from_utf8_lossy(body).into_owned(),
    };
    let lower = message.to_ascii_lowercase();
    if !REFUSAL_PHRASES.iter().any(|p| lower.contains(p)) {
        return None;
    }
    names
        .iter()
        .filter_map(|n| {
            let at = [format!("'{n}'"), format!("\"{n}\""), format!("`{n}`")]
                .iter()
                .filter_map(|q| message.find(q.as_str()))
                .min()?;
            Some((at, *n))
        })
        .min()
        .map(|(_, n)| n)
}

/// Whether a refusal (a 400/422 body) is about image content: a model that reads text only.
pub fn refuses_images(body: &[u8]) -> bool {
    let lower = String::from_utf8_lossy(&body[..body.len().min(4_096)]).to_ascii_lowercase();
    lower.contains("image")
}

/// The parameters to retry with after `name` was refused, or `None` when there is nothing
/// left to change.
pub fn adapt(params: &ModelParams, name: &str) -> Option<ModelParams> {
    let mut next = params.clone();
    match name {
        "max_tokens" => next.token_param = TokenParam::MaxCompletionTokens,
        "max_completion_tokens" => next.token_param = TokenParam::MaxTokens,
        "temperature" => next.temperature = None,
        "reasoning_effort" => next.reasoning_effort = None,
        "prompt_cache_key" => next.cache_key = false,
        "cache_control" => next.cache_control = false,
        // Without structured output the answer comes as the tagged text the prompt describes.
        "response_format" | "tools" | "tool_choice" => next.structured = Structured::Off,
        "image_url" => next.images = false,
        _ => return None,
    }
    (next != *params).then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPENAI: &str = "https://api.openai.com/v1";
    const AZURE: &str = "https://acme.openai.azure.com/openai/deployments/gpt5";
    const VLLM: &str = "http://127.0.0.1:8000/v1";

    #[test]
    fn vision_models_are_known_by_name() {
        for m in [
            "gpt-4o-mini",
            "gpt-5-mini",
            "openai/gpt-4.1",
            "claude-sonnet-4-5",
            "gemini-2.5-flash",
            "Qwen/Qwen2.5-VL-7B-Instruct",
            "llava:13b",
            // Bedrock ids, inference profiles and their ARNs.
            "global.anthropic.claude-haiku-4-5-20251001-v1:0",
            "anthropic.claude-3-5-sonnet-20241022-v2:0",
            "us.amazon.nova-lite-v1:0",
            "arn:aws:bedrock:eu-west-1:1:inference-profile/eu.amazon.nova-pro-v1:0",
            "us.meta.llama3-2-90b-instruct-v1:0",
        ] {
            assert!(is_vision_model(m), "{m}");
        }
        for m in [
            "gpt-3.5-turbo",
            "qwen3:8b",
            "deepseek-r1",
            "gpt-4o-audio-preview",
            "llama3.1",
            "us.amazon.nova-micro-v1:0",
            "meta.llama3-70b-instruct-v1:0",
            "mistral.mistral-large-2407-v1:0",
        ] {
            assert!(!is_vision_model(m), "{m}");
        }
    }

    #[test]
    fn openai_reasoning_models_get_max_completion_tokens_and_no_temperature() {
        let p = initial(&ParamSettings::default(), OPENAI, "gpt-5-mini");
        assert_eq!(p.token_param, TokenParam::MaxCompletionTokens);
        assert_eq!(p.temperature, None);
        assert_eq!(p.reasoning_effort.as_deref(), Some("low"));
        let o = initial(&ParamSettings::default(), AZURE, "o4-mini");
        assert_eq!(o.reasoning_effort.as_deref(), Some("low"));
        let chat = initial(&ParamSettings::default(), OPENAI, "gpt-5-chat-latest");
        assert_eq!(chat.temperature, Some(0.0));
        assert_eq!(chat.reasoning_effort, None);
        let classic = initial(&ParamSettings::default(), OPENAI, "gpt-4.1-mini");
        assert_eq!(classic.token_param, TokenParam::MaxCompletionTokens);
        assert_eq!(classic.temperature, Some(0.0));
    }

    #[test]
    fn self_hosted_servers_get_max_tokens_and_temperature_zero() {
        for model in ["Qwen/Qwen2.5-7B-Instruct", "llama3.1:8b", "gpt-oss-20b"] {
            let p = initial(&ParamSettings::default(), VLLM, model);
            assert_eq!(p.token_param, TokenParam::MaxTokens, "{model}");
            assert_eq!(p.temperature, Some(0.0), "{model}");
            assert_eq!(p.reasoning_effort, None, "{model}");
        }
        assert!(!is_reasoning_model("o10"));
        assert!(is_reasoning_model("openai/gpt-5.1"));
        assert!(is_reasoning_model("o3"));
    }

    #[test]
    fn settings_win_over_the_rules() {
        let s = ParamSettings {
            token_param: Some(TokenParam::Omit),
            temperature: Choice::Value(0.2),
            reasoning_effort: Choice::Omit,
            prompt_cache: Choice::Omit,
            structured: Structured::Off,
        };
        let p = initial(&s, OPENAI, "gpt-5");
        assert_eq!(
            p,
            ModelParams {
                token_param: TokenParam::Omit,
                temperature: Some(0.2),
                reasoning_effort: None,
                cache_key: false,
                cache_control: false,
                structured: Structured::Off,
                images: true,
            }
        );
    }

    #[test]
    fn refusals_name_the_parameter_and_adapt_once() {
        let p = initial(&ParamSettings::default(), VLLM, "gpt-5");
        let p = ModelParams {
            token_param: TokenParam::MaxTokens,
            temperature: Some(0.0),
            ..p
        };
        let openai = br#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#;
        assert_eq!(refused_param(&p, openai), Some("max_tokens"));
        let no_param = br#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."}}"#;
        assert_eq!(refused_param(&p, no_param), Some("max_tokens"));
        let next = adapt(&p, "max_tokens").expect("adapted");
        assert_eq!(next.token_param, TokenParam::MaxCompletionTokens);
        let temp = br#"{"error":{"message":"Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}"#;
        assert_eq!(refused_param(&next, temp), Some("temperature"));
        let last = adapt(&next, "temperature").expect("adapted");
        assert_eq!(last.temperature, None);
        assert_eq!(adapt(&last, "temperature"), None, "nothing left to change");
        let vllm = br#"{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens'), 'msg': 'Extra inputs are not permitted'}]","type":"BadRequestError","param":null,"code":400}"#;
        assert_eq!(refused_param(&last, vllm), Some("max_completion_tokens"));
        assert_eq!(
            refused_param(&last, b"{\"error\":\"context too long\"}"),
            None
        );
        assert_eq!(
            refused_param(&last, b"not json 'temperature'"),
            None,
            "not sent"
        );
        // A parameter named in an error that refuses something else is left alone.
        let too_long = br#"{"object":"error","message":"'max_tokens' or 'max_completion_tokens' is too large: 800. This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}"#;
        assert_eq!(refused_param(&p, too_long), None);
    }

    #[test]
    fn hosts_are_read_from_the_url() {
        assert!(is_azure("https://x.cognitiveservices.azure.com/openai/v1/"));
        assert!(!is_openai("https://api.openai.com.evil.example/v1"));
        assert!(!is_openai("https://evil.example/?u=api.openai.com"));
        assert!(is_openai("https://user@API.OpenAI.com:443/v1"));
    }

    #[test]
    fn cache_hints_go_where_the_provider_takes_them() {
        let hints = |base: &str, model: &str| {
            let p = initial(&ParamSettings::default(), base, model);
            (p.cache_key, p.cache_control)
        };
        assert_eq!(hints(OPENAI, "gpt-5-mini"), (true, false));
        assert_eq!(hints(AZURE, "gpt-4.1"), (true, false));
        assert_eq!(
            hints(
                "https://openrouter.ai/api/v1",
                "anthropic/claude-sonnet-4.5"
            ),
            (false, true)
        );
        assert_eq!(
            hints("https://api.anthropic.com/v1", "claude-sonnet-4-5"),
            (false, false)
        );
        assert_eq!(hints(VLLM, "Qwen/Qwen3-32B"), (false, false));
        let off = ParamSettings {
            prompt_cache: Choice::Omit,
            ..ParamSettings::default()
        };
        let p = initial(&off, OPENAI, "gpt-5-mini");
        assert!(!p.cache_key && !p.cache_control);
        // Refused by name: dropped.
        let on = initial(&ParamSettings::default(), OPENAI, "gpt-5-mini");
        assert!(!adapt(&on, "prompt_cache_key").expect("adapted").cache_key);
    }
}
