//! Typed configuration from an explicit list of environment variables. Every function reads
//! the same variables; a missing or invalid one stops start-up with a message naming it.
//! Secrets are wrapped so they cannot be printed by accident.

use std::path::PathBuf;

use secrecy::{ExposeSecret, SecretString};

/// Smallest accepted JWT signing key: 256 bits, the HS256 output size.
pub const MIN_JWT_SECRET_BYTES: usize = 32;

/// Start-up configuration errors. Each names the variable to fix.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{0} is not set: {1}")]
    Missing(&'static str, &'static str),
    #[error("{0} is invalid: {1}")]
    Invalid(&'static str, String),
}

/// Where state lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// The embedded single-file database (and a blob directory for snapshots) under a data
    /// directory; survives restarts.
    Embedded { data_dir: PathBuf },
    /// Everything in memory; gone when the process ends (tests).
    Memory,
    /// DynamoDB (single table) and S3 (snapshots).
    DynamoDb(AwsStoreConfig),
}

/// DynamoDB/S3 settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsStoreConfig {
    pub table: String,
    pub bucket: String,
    /// Endpoint override for both services (a local DynamoDB/S3-compatible server); S3 then
    /// uses path-style addressing.
    pub endpoint: Option<String>,
    /// Region; when unset the SDK's usual sources decide (Lambda sets `AWS_REGION`).
    pub region: Option<String>,
}

/// How long task data is kept, and when an untouched task counts as abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub task_seconds: i64,
    pub idle_seconds: i64,
}

impl StoreConfig {
    /// Reads `STORE`, `DATA_DIR`, `TABLE_NAME`, `SNAPSHOT_BUCKET`, `AWS_ENDPOINT_URL` and
    /// `AWS_REGION` (tools that need only the store use this alone).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        match get("STORE").as_deref().unwrap_or("embedded") {
            "embedded" => Ok(StoreConfig::Embedded {
                data_dir: PathBuf::from(get("DATA_DIR").unwrap_or_else(|| ".data".into())),
            }),
            "memory" => Ok(StoreConfig::Memory),
            "dynamodb" => Ok(StoreConfig::DynamoDb(AwsStoreConfig {
                table: get("TABLE_NAME").ok_or(ConfigError::Missing(
                    "TABLE_NAME",
                    "STORE=dynamodb needs the table name",
                ))?,
                bucket: get("SNAPSHOT_BUCKET").ok_or(ConfigError::Missing(
                    "SNAPSHOT_BUCKET",
                    "STORE=dynamodb needs the snapshot bucket",
                ))?,
                endpoint: get("AWS_ENDPOINT_URL"),
                region: get("AWS_REGION"),
            })),
            other => Err(ConfigError::Invalid(
                "STORE",
                format!("`{other}` is not one of: embedded, memory, dynamodb"),
            )),
        }
    }
}

/// Token signing and validation settings.
#[derive(Debug, Clone)]
pub struct JwtConfig {
    pub secret: SecretString,
    pub issuer: String,
    pub audience: String,
    pub ttl_seconds: i64,
}

/// Login throttling: failed attempts allowed per window before `429`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimits {
    pub max_failures_per_email: u64,
    pub max_failures_per_address: u64,
    pub window_seconds: i64,
}

/// An allowed CORS origin: one exact origin, or any `chrome-extension://` origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginRule {
    Exact(String),
    AnyExtension,
}

impl OriginRule {
    /// Whether a request's `Origin` header value is allowed by this rule.
    pub fn allows(&self, origin: &str) -> bool {
        match self {
            OriginRule::Exact(o) => o == origin,
            OriginRule::AnyExtension => origin
                .strip_prefix("chrome-extension://")
                .is_some_and(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric())),
        }
    }
}

/// The agent step: model, knowledge service, limits and prompt budget.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// `None` when no key is configured: interact answers 503 `LLM_NOT_CONFIGURED`.
    pub llm: Option<crate::llm::LlmConfig>,
    pub knowledge: Option<KnowledgeConfig>,
    pub max_steps: u32,
    /// Budget of one interact request (API Gateway cuts at 30 s).
    pub step_deadline_ms: u64,
    pub rate_per_user: u64,
    pub rate_per_tenant: u64,
    pub rate_window_seconds: i64,
    pub page_tokens: usize,
    pub chars_per_token: f64,
}

/// The knowledge extraction service.
#[derive(Debug, Clone)]
pub struct KnowledgeConfig {
    pub base_url: String,
    pub token: Option<SecretString>,
    pub timeout_ms: u64,
}

/// Variables naming the model key, in the order they are read.
pub const LLM_KEY_VARIABLES: &str = "LLM_API_KEY or OPENAI_API_KEY";

impl AgentConfig {
    /// Reads the agent's variables.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let llm = match get("LLM_API_KEY").or_else(|| get("OPENAI_API_KEY")) {
            None => None,
            Some(key) => {
                let base_url =
                    get("LLM_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".into());
                if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
                    return Err(ConfigError::Invalid(
                        "LLM_BASE_URL",
                        format!("`{base_url}` is not an http(s) URL"),
                    ));
                }
                Some(crate::llm::LlmConfig {
                    base_url,
                    api_key: SecretString::from(key),
                    model: get("LLM_MODEL").unwrap_or_else(|| "gpt-4o-mini".into()),
                    max_tokens: parse_num(&get, "LLM_MAX_TOKENS", 800, 16, 16_384)?,
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
        let knowledge = match get("EXTRACTION_SERVICE_URL") {
            None => None,
            Some(base_url) => {
                if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
                    return Err(ConfigError::Invalid(
                        "EXTRACTION_SERVICE_URL",
                        format!("`{base_url}` is not an http(s) URL"),
                    ));
                }
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
            max_steps: parse_num(&get, "MAX_TASK_STEPS", 50, 1, 1_000)?,
            step_deadline_ms: parse_num(&get, "STEP_DEADLINE_MS", 25_000, 1_000, 900_000)?,
            rate_per_user: parse_num(&get, "INTERACT_RATE_PER_USER", 30, 1, 100_000)?,
            rate_per_tenant: parse_num(&get, "INTERACT_RATE_PER_TENANT", 300, 1, 1_000_000)?,
            rate_window_seconds: parse_num(&get, "INTERACT_RATE_WINDOW_SECONDS", 60, 1, 3_600)?,
            page_tokens: parse_num(&get, "PROMPT_PAGE_TOKENS", 6_000, 200, 200_000)?,
            chars_per_token,
        })
    }
}

/// A Pusher-protocol server (Pusher cloud or self-hosted Sockudo) for realtime events.
#[derive(Debug, Clone)]
pub struct RealtimeConfig {
    pub app_id: String,
    pub key: String,
    pub secret: SecretString,
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

impl RealtimeConfig {
    /// Reads `PUSHER_*`; `None` when `PUSHER_APP_ID`, `PUSHER_KEY` or `PUSHER_SECRET` is unset.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let (Some(app_id), Some(key), Some(secret)) = (
            get("PUSHER_APP_ID"),
            get("PUSHER_KEY"),
            get("PUSHER_SECRET"),
        ) else {
            return Ok(None);
        };
        let scheme = get("PUSHER_SCHEME").unwrap_or_else(|| "https".into());
        if scheme != "http" && scheme != "https" {
            return Err(ConfigError::Invalid(
                "PUSHER_SCHEME",
                format!("`{scheme}` is not http or https"),
            ));
        }
        let host = match (get("PUSHER_HOST"), get("PUSHER_CLUSTER")) {
            (Some(h), _) => h,
            (None, Some(c)) => format!("api-{c}.pusher.com"),
            (None, None) => "api.pusherapp.com".into(),
        };
        let default_port = if scheme == "https" { 443 } else { 80 };
        Ok(Some(Self {
            app_id,
            key,
            secret: SecretString::from(secret),
            port: parse_num(&get, "PUSHER_PORT", default_port, 1, 65_535)?,
            scheme,
            host,
        }))
    }
}

/// Everything a function needs from its environment.
#[derive(Debug, Clone)]
pub struct Config {
    pub jwt: JwtConfig,
    pub allowed_origins: Vec<OriginRule>,
    pub max_body_bytes: usize,
    pub store: StoreConfig,
    pub login_limits: LoginLimits,
    pub retention: Retention,
    pub agent: AgentConfig,
    pub realtime: Option<RealtimeConfig>,
    /// Whether `/api/debug/*` answers (403 otherwise).
    pub debug_routes: bool,
}

/// Every variable read, with its default and meaning (the README's table is built from this).
pub const VARIABLES: &[(&str, &str, &str)] = &[
    (
        "JWT_SECRET",
        "(required; local-api generates one)",
        "HS256 signing key for access tokens, at least 32 bytes",
    ),
    (
        "JWT_ISSUER",
        "browser-agent",
        "`iss` claim written and required",
    ),
    (
        "JWT_AUDIENCE",
        "browser-agent-extension",
        "`aud` claim written and required",
    ),
    (
        "ACCESS_TOKEN_TTL_SECONDS",
        "43200",
        "lifetime of an access token (60..=2592000)",
    ),
    (
        "ALLOWED_ORIGINS",
        "(none; local-api: chrome-extension://*)",
        "comma-separated CORS origins; `chrome-extension://*` allows any extension",
    ),
    (
        "MAX_BODY_BYTES",
        "5242880",
        "request bodies above this answer 413",
    ),
    (
        "STORE",
        "embedded",
        "`embedded` (single-file database in DATA_DIR), `memory` or `dynamodb` (DynamoDB + S3)",
    ),
    (
        "DATA_DIR",
        ".data",
        "directory of the embedded database, its snapshot blobs and local-api's generated key",
    ),
    (
        "TABLE_NAME",
        "(required with STORE=dynamodb)",
        "the DynamoDB table",
    ),
    (
        "SNAPSHOT_BUCKET",
        "(required with STORE=dynamodb)",
        "the S3 bucket for page snapshots",
    ),
    (
        "AWS_ENDPOINT_URL",
        "(AWS)",
        "endpoint override for DynamoDB and S3 (a local compatible server; S3 path-style)",
    ),
    (
        "AWS_REGION",
        "(from the environment)",
        "AWS region (Lambda sets it)",
    ),
    (
        "TASK_RETENTION_HOURS",
        "168",
        "how long tasks, steps, messages and snapshots are kept",
    ),
    (
        "TASK_IDLE_MINUTES",
        "30",
        "the cleanup marks active tasks untouched this long `interrupted`",
    ),
    (
        "LOGIN_MAX_FAILURES_PER_EMAIL",
        "5",
        "failed logins per email per window before 429",
    ),
    (
        "LOGIN_MAX_FAILURES_PER_ADDRESS",
        "20",
        "failed logins per client address per window before 429",
    ),
    (
        "LOGIN_FAILURE_WINDOW_SECONDS",
        "900",
        "length of the login-failure window",
    ),
    (
        "LLM_API_KEY",
        "(none: interact answers 503)",
        "key of the OpenAI-compatible model endpoint (`OPENAI_API_KEY` also read)",
    ),
    (
        "LLM_BASE_URL",
        "https://api.openai.com/v1",
        "base URL of the chat-completions endpoint",
    ),
    (
        "LLM_MODEL",
        "gpt-4o-mini",
        "model name sent with every request",
    ),
    ("LLM_TIMEOUT_MS", "20000", "longest single model call"),
    (
        "LLM_MAX_RETRIES",
        "2",
        "retries on 429, 5xx and connection errors (within the step deadline)",
    ),
    ("LLM_MAX_TOKENS", "800", "completion token limit"),
    (
        "EXTRACTION_SERVICE_URL",
        "(none: no organisation knowledge)",
        "knowledge extraction service base URL",
    ),
    (
        "EXTRACTION_SERVICE_TOKEN",
        "(none)",
        "bearer token for the extraction service",
    ),
    (
        "KNOWLEDGE_TIMEOUT_MS",
        "3000",
        "timeout of a knowledge lookup",
    ),
    (
        "MAX_TASK_STEPS",
        "50",
        "steps per task before 400 MAX_STEPS_EXCEEDED",
    ),
    (
        "STEP_DEADLINE_MS",
        "25000",
        "time budget of one interact request (API Gateway cuts at 30 s)",
    ),
    (
        "INTERACT_RATE_PER_USER",
        "30",
        "interact requests per user per window",
    ),
    (
        "INTERACT_RATE_PER_TENANT",
        "300",
        "interact requests per tenant per window",
    ),
    (
        "INTERACT_RATE_WINDOW_SECONDS",
        "60",
        "length of the interact rate window",
    ),
    (
        "PROMPT_PAGE_TOKENS",
        "6000",
        "token budget of the page in the prompt",
    ),
    (
        "PROMPT_CHARS_PER_TOKEN",
        "2.5",
        "characters per token assumed when budgeting (measured on rendered pages)",
    ),
    (
        "PUSHER_APP_ID",
        "(none: no realtime events)",
        "Pusher/Sockudo app id (with PUSHER_KEY and PUSHER_SECRET)",
    ),
    ("PUSHER_KEY", "(none)", "Pusher/Sockudo app key"),
    (
        "PUSHER_SECRET",
        "(none)",
        "Pusher/Sockudo app secret (signs events and channel auth)",
    ),
    (
        "PUSHER_HOST",
        "api.pusherapp.com",
        "Pusher HTTP API host (or `api-<PUSHER_CLUSTER>.pusher.com`; Sockudo's host)",
    ),
    ("PUSHER_PORT", "443", "Pusher HTTP API port (80 with http)"),
    ("PUSHER_SCHEME", "https", "`https` or `http`"),
    (
        "DEBUG_ROUTES",
        "false (local-api: true)",
        "whether `/api/debug/*` answers; 403 when off",
    ),
    ("RUST_LOG", "info", "log filter (tracing EnvFilter syntax)"),
];

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads configuration through `lookup` (a variable name to its value, if set).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };

        let secret = get("JWT_SECRET").ok_or(ConfigError::Missing(
            "JWT_SECRET",
            "set it to a random string of at least 32 bytes (e.g. `openssl rand -base64 48`)",
        ))?;
        if secret.len() < MIN_JWT_SECRET_BYTES {
            return Err(ConfigError::Invalid(
                "JWT_SECRET",
                format!(
                    "must be at least {MIN_JWT_SECRET_BYTES} bytes, got {}",
                    secret.len()
                ),
            ));
        }
        let jwt = JwtConfig {
            secret: SecretString::from(secret),
            issuer: get("JWT_ISSUER").unwrap_or_else(|| "browser-agent".into()),
            audience: get("JWT_AUDIENCE").unwrap_or_else(|| "browser-agent-extension".into()),
            ttl_seconds: parse_num(&get, "ACCESS_TOKEN_TTL_SECONDS", 43_200, 60, 2_592_000)?,
        };

        let allowed_origins = match get("ALLOWED_ORIGINS") {
            None => Vec::new(),
            Some(raw) => parse_origins(&raw)?,
        };

        let store = StoreConfig::from_lookup(&lookup)?;

        Ok(Self {
            jwt,
            allowed_origins,
            max_body_bytes: parse_num(
                &get,
                "MAX_BODY_BYTES",
                5 * 1024 * 1024,
                1024,
                64 * 1024 * 1024,
            )?,
            store,
            login_limits: LoginLimits {
                max_failures_per_email: parse_num(
                    &get,
                    "LOGIN_MAX_FAILURES_PER_EMAIL",
                    5,
                    1,
                    10_000,
                )?,
                max_failures_per_address: parse_num(
                    &get,
                    "LOGIN_MAX_FAILURES_PER_ADDRESS",
                    20,
                    1,
                    100_000,
                )?,
                window_seconds: parse_num(&get, "LOGIN_FAILURE_WINDOW_SECONDS", 900, 1, 86_400)?,
            },
            retention: Retention::from_lookup(&lookup)?,
            agent: AgentConfig::from_lookup(&lookup)?,
            realtime: RealtimeConfig::from_lookup(&lookup)?,
            debug_routes: match get("DEBUG_ROUTES").as_deref() {
                None | Some("false") | Some("0") => false,
                Some("true") | Some("1") => true,
                Some(other) => {
                    return Err(ConfigError::Invalid(
                        "DEBUG_ROUTES",
                        format!("`{other}` is not true or false"),
                    ))
                }
            },
        })
    }

    /// A short description safe to log: no secrets.
    pub fn summary(&self) -> String {
        format!(
            "store={:?} origins={} max_body_bytes={} token_ttl={}s jwt_key_bytes={}",
            self.store,
            self.allowed_origins.len(),
            self.max_body_bytes,
            self.jwt.ttl_seconds,
            self.jwt.secret.expose_secret().len()
        )
    }
}

impl Retention {
    /// Reads `TASK_RETENTION_HOURS` and `TASK_IDLE_MINUTES`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let hours: i64 = parse_num(&get, "TASK_RETENTION_HOURS", 168, 1, 24 * 365)?;
        let minutes: i64 = parse_num(&get, "TASK_IDLE_MINUTES", 30, 1, 24 * 60 * 30)?;
        Ok(Self {
            task_seconds: hours * 3600,
            idle_seconds: minutes * 60,
        })
    }
}

fn parse_num<T>(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: T,
    min: T,
    max: T,
) -> Result<T, ConfigError>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let Some(raw) = get(name) else {
        return Ok(default);
    };
    let v: T = raw
        .parse()
        .map_err(|_| ConfigError::Invalid(name, format!("`{raw}` is not a whole number")))?;
    if v < min || v > max {
        return Err(ConfigError::Invalid(
            name,
            format!("{v} is outside {min}..={max}"),
        ));
    }
    Ok(v)
}

/// Parses `ALLOWED_ORIGINS`: comma-separated origins, each `scheme://host[:port]`, or
/// `chrome-extension://*`.
pub fn parse_origins(raw: &str) -> Result<Vec<OriginRule>, ConfigError> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|o| {
            if o == "chrome-extension://*" {
                return Ok(OriginRule::AnyExtension);
            }
            let valid = o.split_once("://").is_some_and(|(scheme, rest)| {
                !scheme.is_empty() && !rest.is_empty() && !rest.contains('/') && !rest.contains('*')
            });
            if valid {
                Ok(OriginRule::Exact(o.trim_end_matches('/').to_owned()))
            } else {
                Err(ConfigError::Invalid(
                    "ALLOWED_ORIGINS",
                    format!("`{o}` is not an origin like chrome-extension://<id>"),
                ))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    const KEY: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn missing_jwt_secret_names_the_variable() {
        let err = Config::from_lookup(lookup(&[])).unwrap_err();
        assert!(
            err.to_string().starts_with("JWT_SECRET is not set"),
            "{err}"
        );
    }

    #[test]
    fn short_jwt_secret_is_refused() {
        let err = Config::from_lookup(lookup(&[("JWT_SECRET", "short")])).unwrap_err();
        assert_eq!(
            err,
            ConfigError::Invalid("JWT_SECRET", "must be at least 32 bytes, got 5".into())
        );
    }

    #[test]
    fn defaults_apply_when_only_the_key_is_set() {
        let c = Config::from_lookup(lookup(&[("JWT_SECRET", KEY)])).expect("config");
        assert_eq!(c.jwt.ttl_seconds, 43_200);
        assert_eq!(c.max_body_bytes, 5 * 1024 * 1024);
        assert_eq!(
            c.store,
            StoreConfig::Embedded {
                data_dir: ".data".into()
            }
        );
        assert!(c.allowed_origins.is_empty());
        assert!(!c.summary().contains(KEY));
    }

    #[test]
    fn numbers_out_of_range_name_the_variable() {
        let err = Config::from_lookup(lookup(&[("JWT_SECRET", KEY), ("MAX_BODY_BYTES", "abc")]))
            .unwrap_err();
        assert!(err.to_string().starts_with("MAX_BODY_BYTES is invalid"));
        let err =
            Config::from_lookup(lookup(&[("JWT_SECRET", KEY), ("STORE", "mongo")])).unwrap_err();
        assert!(err.to_string().starts_with("STORE is invalid"));
    }

    #[test]
    fn dynamodb_store_needs_table_and_bucket() {
        let err =
            StoreConfig::from_lookup(lookup(&[("STORE", "dynamodb"), ("SNAPSHOT_BUCKET", "b")]))
                .unwrap_err();
        assert!(
            err.to_string().starts_with("TABLE_NAME is not set"),
            "{err}"
        );
        let err = StoreConfig::from_lookup(lookup(&[("STORE", "dynamodb"), ("TABLE_NAME", "t")]))
            .unwrap_err();
        assert!(
            err.to_string().starts_with("SNAPSHOT_BUCKET is not set"),
            "{err}"
        );
        let cfg = StoreConfig::from_lookup(lookup(&[
            ("STORE", "dynamodb"),
            ("TABLE_NAME", "t"),
            ("SNAPSHOT_BUCKET", "b"),
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:5000"),
        ]))
        .expect("config");
        assert_eq!(
            cfg,
            StoreConfig::DynamoDb(AwsStoreConfig {
                table: "t".into(),
                bucket: "b".into(),
                endpoint: Some("http://127.0.0.1:5000".into()),
                region: None,
            })
        );
    }

    #[test]
    fn origins_parse_exact_and_any_extension() {
        let rules = parse_origins("chrome-extension://abc, chrome-extension://*").expect("ok");
        assert!(rules[0].allows("chrome-extension://abc"));
        assert!(!rules[0].allows("chrome-extension://abd"));
        assert!(rules[1].allows("chrome-extension://okgejcdoafbdgghppenbjkpbodbfflil"));
        assert!(!rules[1].allows("https://evil.example"));
        assert!(!rules[1].allows("chrome-extension://"));
        assert!(parse_origins("https://x.com/path").is_err());
    }
}

#[cfg(test)]
mod readme {
    /// The README's configuration table must list every variable with its real default.
    #[test]
    fn readme_documents_every_variable_and_default() {
        let readme = include_str!("../../README.md");
        for (name, default, _) in super::VARIABLES {
            let row = readme
                .lines()
                .find(|l| l.starts_with(&format!("| `{name}` |")))
                .unwrap_or_else(|| panic!("README has no row for {name}"));
            let shown = default
                .trim_start_matches('(')
                .split([')', ';'])
                .next()
                .unwrap_or(default);
            assert!(
                row.contains(shown),
                "README row for {name} lacks default {default}: {row}"
            );
        }
    }
}
