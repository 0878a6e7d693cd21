//! The agent step's settings: the model, the knowledge service, web search, limits and the
//! prompt budget.

use std::time::Duration;

use secrecy::SecretString;

use super::{parse_num, ConfigError, SearchConfig};
use crate::config::llm_params::{
    is_azure, is_reasoning_model, is_vision_model, Choice, ParamSettings, Structured, TokenParam,
};
use crate::domain::cost::{Price, PriceTable, MAX_PRICES, MAX_PRICE_KEY_CHARS};
use crate::domain::risk::{RiskKind, RiskPatterns};

/// Where the model is (`LLM_PROVIDER`).
#[derive(Debug, Clone)]
pub enum LlmProvider {
    /// Any OpenAI-compatible chat-completions endpoint, with a key.
    OpenAi(OpenAiEndpoint),
    /// Amazon Bedrock's Converse API, with the function's own AWS credentials.
    Bedrock(BedrockEndpoint),
}

/// An OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiEndpoint {
    pub base_url: String,
    pub api_key: SecretString,
    /// The key goes in `api-key` (Azure OpenAI) instead of `Authorization: Bearer`.
    pub api_key_header: bool,
    /// `api-version` query parameter (Azure OpenAI).
    pub api_version: Option<String>,
}

/// Amazon Bedrock in a region.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BedrockEndpoint {
    /// `AWS_REGION` (Lambda sets it); the SDK's usual sources when unset.
    pub region: Option<String>,
    /// `BEDROCK_ENDPOINT_URL`: a VPC endpoint, or a local Converse-compatible server.
    pub endpoint_url: Option<String>,
}

/// Settings of the model adapter.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    pub provider: LlmProvider,
    /// The model's name (OpenAI-compatible) or Bedrock model id, inference profile id or ARN.
    pub model: String,
    pub max_tokens: u32,
    /// Longest single attempt.
    pub attempt_timeout: Duration,
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Which parameters to send (completion limit, temperature, reasoning effort).
    pub params: ParamSettings,
    /// The page's screenshot goes with the prompt when the request has one (`LLM_VISION`:
    /// `auto` by the model's name, `on`, `off`).
    pub vision: bool,
}

/// The agent step: model, knowledge service, limits and prompt budget.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// `None` when no key is configured: interact answers 503 `LLM_NOT_CONFIGURED`.
    pub llm: Option<LlmConfig>,
    pub knowledge: Option<KnowledgeConfig>,
    /// `None` when no `TAVILY_API_KEY` is set: no web search.
    pub search: Option<SearchConfig>,
    pub max_steps: u32,
    /// Budget of one interact request (API Gateway cuts at 30 s).
    pub step_deadline_ms: u64,
    pub rate_per_user: u64,
    pub rate_per_tenant: u64,
    pub rate_window_seconds: i64,
    pub page_tokens: usize,
    pub chars_per_token: f64,
    /// Model for verdicts on ambiguous outcomes and finish checks; `None`: the main model.
    pub verify_model: Option<String>,
    /// Tokens a tenant's model calls may use per UTC day; `None`: no budget.
    pub tenant_daily_tokens: Option<u64>,
    /// The risk gate's words: the defaults plus `RISK_*_WORDS`.
    pub risk: RiskPatterns,
    /// Who runs the step's state machine (`ORCHESTRATOR`).
    pub orchestrator: Orchestrator,
    /// A file the in-process executor appends each execution's largest state size to
    /// (`STATE_SIZE_REPORT`; the test command checks the largest over the suite).
    pub state_report: Option<std::path::PathBuf>,
    /// Form fills of one answer go out together as `chainedActions` (`CHAINED_ACTIONS=on`, for
    /// a client known to run them); off (the default), the server keeps the rest of an answer
    /// and sends it one action per request.
    pub chained_actions: bool,
    /// USD per million tokens per model: the defaults and `LLM_PRICES`.
    pub prices: PriceTable,
    /// The model may call `readPage("question")`: the search provider reads the current public
    /// page and a model call answers from it (`READ_PAGE=tavily`; needs `TAVILY_API_KEY`).
    pub read_page: bool,
    /// A verified run becomes the tenant's recipe and later runs replay it (`RECIPES`).
    pub recipes: RecipeSettings,
}

/// Recipes: on for each tenant or off, how long one lasts, how many a tenant and a member keep,
/// and after how many agreeing runs of two members or more one is promoted (0: only by an
/// administrator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecipeSettings {
    pub enabled: bool,
    pub ttl_days: i64,
    pub per_tenant: usize,
    pub per_member: usize,
    pub promote_after: u32,
    /// An instruction worded a little differently binds too (`RECIPE_MATCH=approximate`).
    pub approximate: bool,
}

impl RecipeSettings {
    pub fn limits(&self) -> crate::ports::recipes::RecipeLimits {
        crate::ports::recipes::RecipeLimits {
            per_tenant: self.per_tenant,
            per_member: self.per_member,
        }
    }

    pub fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        Ok(Self {
            enabled: one_of(get, "RECIPES", &[("tenant", true), ("off", false)])?,
            ttl_days: parse_num(get, "RECIPE_TTL_DAYS", 30, 1, 365)?,
            per_tenant: parse_num(get, "RECIPES_PER_TENANT", 500, 1, 10_000)?,
            per_member: parse_num(get, "RECIPES_PER_MEMBER", 50, 1, 10_000)?,
            promote_after: parse_num(get, "RECIPE_PROMOTE_AFTER_RUNS", 0, 0, 10_000)?,
            approximate: one_of(
                get,
                "RECIPE_MATCH",
                &[("exact", false), ("approximate", true)],
            )?,
        })
    }
}

/// Who runs `statemachine/interact-step.asl.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Orchestrator {
    /// The in-process interpreter (`ORCHESTRATOR=inprocess`, the default).
    InProcess,
    /// AWS Step Functions Express, started synchronously (`ORCHESTRATOR=stepfunctions` with
    /// `STATE_MACHINE_ARN`); every Task state invokes the phase function.
    StepFunctions { state_machine_arn: String },
}

impl Orchestrator {
    fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        match get("ORCHESTRATOR").as_deref().map(str::trim) {
            None | Some("") | Some("inprocess") => Ok(Self::InProcess),
            Some("stepfunctions") => match get("STATE_MACHINE_ARN") {
                Some(arn) if arn.starts_with("arn:") => Ok(Self::StepFunctions {
                    state_machine_arn: arn,
                }),
                Some(other) => Err(ConfigError::Invalid(
                    "STATE_MACHINE_ARN",
                    format!("`{other}` is not an ARN"),
                )),
                None => Err(ConfigError::Missing(
                    "STATE_MACHINE_ARN",
                    "ORCHESTRATOR=stepfunctions needs the state machine's ARN",
                )),
            },
            Some(other) => Err(ConfigError::Invalid(
                "ORCHESTRATOR",
                format!("`{other}` is not inprocess or stepfunctions"),
            )),
        }
    }
}

/// The knowledge extraction service.
#[derive(Debug, Clone)]
pub struct KnowledgeConfig {
    pub base_url: String,
    pub token: Option<SecretString>,
    pub timeout_ms: u64,
}

/// The model used when `LLM_MODEL` is not set.
pub const DEFAULT_MODEL: &str = "gpt-5-mini";

/// `LLM_TOKEN_PARAM`, `LLM_TEMPERATURE` and `LLM_REASONING_EFFORT` (each `auto` by default).
fn param_settings(get: &impl Fn(&str) -> Option<String>) -> Result<ParamSettings, ConfigError> {
    let token_param = match get("LLM_TOKEN_PARAM").as_deref() {
        None | Some("auto") => None,
        Some("max_tokens") => Some(TokenParam::MaxTokens),
        Some("max_completion_tokens") => Some(TokenParam::MaxCompletionTokens),
        Some("omit") => Some(TokenParam::Omit),
        Some(_) => {
            return Err(ConfigError::Invalid(
                "LLM_TOKEN_PARAM",
                "must be auto, max_tokens, max_completion_tokens or omit".into(),
            ))
        }
    };
    let temperature = match get("LLM_TEMPERATURE").as_deref() {
        None | Some("auto") => Choice::Auto,
        Some("omit") => Choice::Omit,
        Some(t) => match t.parse::<f32>() {
            Ok(v) if (0.0..=2.0).contains(&v) => Choice::Value(v),
            _ => {
                return Err(ConfigError::Invalid(
                    "LLM_TEMPERATURE",
                    "must be auto, omit or a number from 0 to 2".into(),
                ))
            }
        },
    };
    let reasoning_effort = match get("LLM_REASONING_EFFORT").as_deref() {
        None | Some("auto") => Choice::Auto,
        Some("omit") => Choice::Omit,
        Some(e) if e.len() <= 16 && e.bytes().all(|b| b.is_ascii_lowercase()) => {
            Choice::Value(e.to_owned())
        }
        Some(_) => {
            return Err(ConfigError::Invalid(
                "LLM_REASONING_EFFORT",
                "must be auto, omit or an effort such as none, minimal, low, medium, high".into(),
            ))
        }
    };
    let prompt_cache = one_of(
        get,
        "LLM_PROMPT_CACHE",
        &[
            ("auto", Choice::Auto),
            ("on", Choice::Value(true)),
            ("off", Choice::Omit),
        ],
    )?;
    let structured = one_of(
        get,
        "LLM_STRUCTURED_OUTPUT",
        &[
            ("off", Structured::Off),
            ("json_schema", Structured::JsonSchema),
            ("tool", Structured::Tool),
        ],
    )?;
    Ok(ParamSettings {
        token_param,
        temperature,
        reasoning_effort,
        prompt_cache,
        structured,
    })
}

/// The value of the variable `name` among `options` (the first when unset), or an error that
/// lists them.
fn one_of<T: Clone>(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    options: &[(&str, T)],
) -> Result<T, ConfigError> {
    let Some(raw) = get(name) else {
        return Ok(options[0].1.clone());
    };
    if let Some((_, v)) = options.iter().find(|(k, _)| *k == raw) {
        return Ok(v.clone());
    }
    let names: Vec<&str> = options.iter().map(|(k, _)| *k).collect();
    let (last, rest) = names.split_last().unwrap_or((&"", &[]));
    Err(ConfigError::Invalid(
        name,
        format!("must be {} or {last}", rest.join(", ")),
    ))
}

/// The price table: the defaults with `LLM_PRICES` (a JSON object of model name to
/// `{"input", "cachedInput", "cacheWrite"?, "output"}` in USD per million tokens) on top.
fn price_table(get: &impl Fn(&str) -> Option<String>) -> Result<PriceTable, ConfigError> {
    const NAME: &str = "LLM_PRICES";
    let Some(raw) = get(NAME).filter(|v| !v.trim().is_empty()) else {
        return Ok(PriceTable::default());
    };
    let invalid = |why: String| ConfigError::Invalid(NAME, why);
    let entries: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&raw).map_err(|e| {
            invalid(format!(
                "must be a JSON object of model name to {{\"input\", \"cachedInput\", \"output\"}} \
                 (USD per million tokens): {e}"
            ))
        })?;
    if entries.len() > MAX_PRICES {
        return Err(invalid(format!("holds more than {MAX_PRICES} models")));
    }
    let mut prices = Vec::with_capacity(entries.len());
    for (model, v) in entries {
        if model.trim().is_empty() || model.chars().count() > MAX_PRICE_KEY_CHARS {
            return Err(invalid(format!(
                "model names must be 1 to {MAX_PRICE_KEY_CHARS} characters"
            )));
        }
        let price: Price = serde_json::from_value(v)
            .map_err(|e| invalid(format!("the price of {model:?}: {e}")))?;
        if let Some(problem) = price.problem() {
            return Err(invalid(format!("the price of {model:?}: {problem}")));
        }
        prices.push((model, price));
    }
    Ok(PriceTable::with(prices))
}

impl AgentConfig {
    /// The price of the main model, when the table has one.
    pub fn model_price(&self) -> Option<Price> {
        self.prices.lookup(&self.llm.as_ref()?.model)
    }

    /// The price of the verification model (the main model when no other is set).
    pub fn verifier_price(&self) -> Option<Price> {
        match &self.verify_model {
            Some(m) => self.prices.lookup(m),
            None => self.model_price(),
        }
    }
}

/// Refuses a URL that is not http(s), naming the variable.
fn check_http_url(name: &'static str, url: &str) -> Result<(), ConfigError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(ConfigError::Invalid(
            name,
            format!("`{url}` is not an http(s) URL"),
        ))
    }
}

impl AgentConfig {
    /// Reads the agent's variables.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let bedrock = one_of(
            &get,
            "LLM_PROVIDER",
            &[("openai", false), ("bedrock", true)],
        )?;
        let (provider, model) = if bedrock {
            let model = get("BEDROCK_MODEL_ID").ok_or(ConfigError::Missing(
                "BEDROCK_MODEL_ID",
                "LLM_PROVIDER=bedrock needs the model id, inference profile id or ARN (e.g. \
                 us.amazon.nova-2-lite-v1:0)",
            ))?;
            let endpoint = BedrockEndpoint {
                region: get("AWS_REGION").or_else(|| get("AWS_DEFAULT_REGION")),
                endpoint_url: get("BEDROCK_ENDPOINT_URL"),
            };
            if let Some(url) = &endpoint.endpoint_url {
                check_http_url("BEDROCK_ENDPOINT_URL", url)?;
            }
            (Some(LlmProvider::Bedrock(endpoint)), model)
        } else {
            match get("LLM_API_KEY").or_else(|| get("OPENAI_API_KEY")) {
                None => (None, String::new()),
                Some(key) => {
                    let base_url =
                        get("LLM_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".into());
                    check_http_url("LLM_BASE_URL", &base_url)?;
                    let api_key_header = match get("LLM_API_KEY_HEADER").as_deref() {
                        None | Some("auto") => is_azure(&base_url),
                        Some("authorization") => false,
                        Some("api-key") => true,
                        Some(_) => {
                            return Err(ConfigError::Invalid(
                                "LLM_API_KEY_HEADER",
                                "must be auto, authorization or api-key".into(),
                            ))
                        }
                    };
                    let endpoint = OpenAiEndpoint {
                        base_url,
                        api_key: SecretString::from(key),
                        api_key_header,
                        api_version: get("LLM_API_VERSION"),
                    };
                    let model = get("LLM_MODEL").unwrap_or_else(|| DEFAULT_MODEL.into());
                    (Some(LlmProvider::OpenAi(endpoint)), model)
                }
            }
        };
        let llm = match provider {
            None => None,
            Some(provider) => {
                // A reasoning model thinks out of the same cap: 800 tokens can leave it no
                // room to answer (an empty completion cut at "length").
                let default_cap = if is_reasoning_model(&model) {
                    4_000
                } else {
                    800
                };
                let vision = one_of(
                    &get,
                    "LLM_VISION",
                    &[("auto", None), ("on", Some(true)), ("off", Some(false))],
                )?
                .unwrap_or_else(|| is_vision_model(&model));
                let params = param_settings(&get)?;
                if matches!(provider, LlmProvider::Bedrock(_))
                    && params.structured != Structured::Off
                {
                    return Err(ConfigError::Invalid(
                        "LLM_STRUCTURED_OUTPUT",
                        "applies to OpenAI-compatible endpoints; with LLM_PROVIDER=bedrock leave \
                         it off (answers come in the tagged format)"
                            .into(),
                    ));
                }
                Some(LlmConfig {
                    provider,
                    params,
                    vision,
                    model,
                    max_tokens: parse_num(&get, "LLM_MAX_TOKENS", default_cap, 16, 16_384)?,
                    attempt_timeout: std::time::Duration::from_millis(parse_num(
                        &get,
                        "LLM_TIMEOUT_MS",
                        20_000,
                        100,
                        120_000,
                    )?),
                    max_retries: parse_num(&get, "LLM_MAX_RETRIES", 2, 0, 5)?,
                })
            }
        };
        let verify_model = match &llm {
            Some(LlmConfig {
                provider: LlmProvider::Bedrock(_),
                ..
            }) => get("BEDROCK_VERIFY_MODEL_ID"),
            _ => get("LLM_VERIFY_MODEL"),
        };
        let knowledge = match get("EXTRACTION_SERVICE_URL") {
            None => None,
            Some(base_url) => {
                check_http_url("EXTRACTION_SERVICE_URL", &base_url)?;
                Some(KnowledgeConfig {
                    base_url,
                    token: get("EXTRACTION_SERVICE_TOKEN").map(SecretString::from),
                    timeout_ms: parse_num(&get, "KNOWLEDGE_TIMEOUT_MS", 3_000, 100, 20_000)?,
                })
            }
        };
        let chars_per_token: f64 = parse_num(
            &get,
            "PROMPT_CHARS_PER_TOKEN",
            crate::agent::render::DEFAULT_CHARS_PER_TOKEN,
            1.0,
            8.0,
        )?;
        Ok(Self {
            llm,
            knowledge,
            prices: price_table(&get)?,
            read_page: match get("READ_PAGE").as_deref() {
                None | Some("off") => false,
                Some("tavily") if get("TAVILY_API_KEY").is_some() => true,
                Some("tavily") => {
                    return Err(ConfigError::Invalid(
                        "READ_PAGE",
                        "tavily needs TAVILY_API_KEY".into(),
                    ))
                }
                Some(_) => {
                    return Err(ConfigError::Invalid(
                        "READ_PAGE",
                        "must be tavily or off".into(),
                    ))
                }
            },
            search: SearchConfig::from_lookup(&get)?,
            orchestrator: Orchestrator::from_lookup(&get)?,
            state_report: get("STATE_SIZE_REPORT").map(Into::into),
            chained_actions: one_of(&get, "CHAINED_ACTIONS", &[("off", false), ("on", true)])?,
            recipes: RecipeSettings::from_lookup(&get)?,
            max_steps: parse_num(&get, "MAX_TASK_STEPS", 50, 1, 1_000)?,
            step_deadline_ms: parse_num(&get, "STEP_DEADLINE_MS", 25_000, 1_000, 900_000)?,
            rate_per_user: parse_num(&get, "INTERACT_RATE_PER_USER", 30, 1, 100_000)?,
            rate_per_tenant: parse_num(&get, "INTERACT_RATE_PER_TENANT", 300, 1, 1_000_000)?,
            rate_window_seconds: parse_num(&get, "INTERACT_RATE_WINDOW_SECONDS", 60, 1, 3_600)?,
            page_tokens: parse_num(&get, "PROMPT_PAGE_TOKENS", 6_000, 200, 200_000)?,
            chars_per_token,
            verify_model,
            tenant_daily_tokens: match parse_num(
                &get,
                "TENANT_DAILY_TOKEN_BUDGET",
                0u64,
                0,
                1 << 40,
            )? {
                0 => None,
                n => Some(n),
            },
            risk: {
                let words = |name: &str| -> Vec<String> {
                    get(name)
                        .map(|v| {
                            v.split(',')
                                .map(|w| w.trim().to_lowercase())
                                .filter(|w| !w.is_empty() && w.chars().count() <= 60)
                                .take(200)
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let mut p = RiskPatterns::default();
                p.add(RiskKind::Payment, words("RISK_PAYMENT_WORDS"));
                p.add(RiskKind::Deletion, words("RISK_DELETION_WORDS"));
                p.add(RiskKind::Sending, words("RISK_SENDING_WORDS"));
                p.add(RiskKind::Credentials, words("RISK_CREDENTIAL_WORDS"));
                p.add(RiskKind::Sharing, words("RISK_SHARING_WORDS"));
                p.add(RiskKind::Security, words("RISK_SECURITY_WORDS"));
                p.add(RiskKind::Subscription, words("RISK_SUBSCRIPTION_WORDS"));
                p
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::one_of;

    #[test]
    fn a_choice_is_read_among_its_options_and_an_unknown_one_is_named() {
        fn env(v: Option<&'static str>) -> impl Fn(&str) -> Option<String> {
            move |_| v.map(str::to_owned)
        }
        let opts = [("off", 0), ("json_schema", 1), ("tool", 2)];
        assert_eq!(one_of(&env(None), "X", &opts).ok(), Some(0));
        assert_eq!(one_of(&env(Some("tool")), "X", &opts).ok(), Some(2));
        let e = one_of(&env(Some("maybe")), "LLM_STRUCTURED_OUTPUT", &opts)
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("LLM_STRUCTURED_OUTPUT") && e.contains("must be off, json_schema or tool"),
            "{e}"
        );
    }

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn bedrock_takes_its_model_ids_and_region_and_needs_no_key() {
        let c = super::AgentConfig::from_lookup(env(&[
            ("LLM_PROVIDER", "bedrock"),
            (
                "BEDROCK_MODEL_ID",
                "global.anthropic.claude-haiku-4-5-20251001-v1:0",
            ),
            ("BEDROCK_VERIFY_MODEL_ID", "us.amazon.nova-micro-v1:0"),
            ("LLM_VERIFY_MODEL", "gpt-5-nano"),
            ("AWS_REGION", "eu-west-1"),
        ]))
        .expect("config");
        let llm = c.llm.expect("a model without a key");
        assert_eq!(llm.model, "global.anthropic.claude-haiku-4-5-20251001-v1:0");
        assert!(llm.vision);
        let super::LlmProvider::Bedrock(endpoint) = llm.provider else {
            panic!("bedrock")
        };
        assert_eq!(endpoint.region.as_deref(), Some("eu-west-1"));
        assert_eq!(c.verify_model.as_deref(), Some("us.amazon.nova-micro-v1:0"));

        let missing = super::AgentConfig::from_lookup(env(&[("LLM_PROVIDER", "bedrock")]))
            .expect_err("no model id");
        assert!(
            missing
                .to_string()
                .starts_with("BEDROCK_MODEL_ID is not set"),
            "{missing}"
        );
        let unknown = super::AgentConfig::from_lookup(env(&[("LLM_PROVIDER", "vertex")]))
            .expect_err("unknown provider");
        assert!(
            unknown.to_string().contains("must be openai or bedrock"),
            "{unknown}"
        );
        let structured = super::AgentConfig::from_lookup(env(&[
            ("LLM_PROVIDER", "bedrock"),
            ("BEDROCK_MODEL_ID", "amazon.nova-lite-v1:0"),
            ("LLM_STRUCTURED_OUTPUT", "tool"),
        ]))
        .expect_err("structured output is the OpenAI adapter's");
        assert!(
            structured
                .to_string()
                .starts_with("LLM_STRUCTURED_OUTPUT is invalid"),
            "{structured}"
        );
        // The OpenAI-compatible default still needs its key.
        assert!(super::AgentConfig::from_lookup(env(&[]))
            .expect("config")
            .llm
            .is_none());
    }
}

#[cfg(test)]
mod price_tests {
    use super::AgentConfig;

    fn config(pairs: &[(&str, &str)]) -> Result<AgentConfig, super::ConfigError> {
        AgentConfig::from_lookup(crate::config::lookup_of(pairs))
    }

    #[test]
    fn the_models_are_priced_from_the_defaults_and_llm_prices() {
        let c = config(&[
            ("LLM_API_KEY", "k"),
            ("LLM_MODEL", "gpt-4o-mini"),
            ("LLM_VERIFY_MODEL", "my-judge"),
        ])
        .expect("config");
        assert_eq!(c.model_price().map(|p| p.output), Some(0.60));
        assert_eq!(c.verifier_price(), None, "an unknown model has no price");
        let c = config(&[
            ("LLM_API_KEY", "k"),
            ("LLM_MODEL", "gpt-4o-mini"),
            ("LLM_VERIFY_MODEL", "my-judge"),
            (
                "LLM_PRICES",
                r#"{"my-judge": {"input": 0.5, "cachedInput": 0.1, "output": 1.5}, "gpt-4o-mini": {"input": 0.2, "cachedInput": 0.1, "output": 0.8}}"#,
            ),
        ])
        .expect("config");
        assert_eq!(c.verifier_price().map(|p| p.output), Some(1.5));
        assert_eq!(c.model_price().map(|p| p.input), Some(0.2));
        // Without a second model, verdicts cost what the main model costs.
        let c = config(&[("LLM_API_KEY", "k"), ("LLM_MODEL", "gpt-5-mini")]).expect("config");
        assert_eq!(c.verifier_price(), c.model_price());
    }

    #[test]
    fn a_bad_price_table_is_refused_naming_the_model_and_figure() {
        for (raw, says) in [
            ("[1, 2]", "must be a JSON object"),
            (
                r#"{"m": {"input": 1}}"#,
                "the price of \"m\": missing field",
            ),
            (
                r#"{"m": {"input": -1, "cachedInput": 0, "output": 1}}"#,
                "input must be a number from 0",
            ),
            (
                r#"{"m": {"input": 1, "cachedInput": 0, "output": 1, "typo": 2}}"#,
                "unknown field `typo`",
            ),
            (
                r#"{"": {"input": 1, "cachedInput": 0, "output": 1}}"#,
                "model names must be",
            ),
        ] {
            let e = config(&[("LLM_API_KEY", "k"), ("LLM_PRICES", raw)])
                .expect_err(raw)
                .to_string();
            assert!(
                e.starts_with("LLM_PRICES is invalid") && e.contains(says),
                "{raw}: {e}"
            );
        }
    }
}
