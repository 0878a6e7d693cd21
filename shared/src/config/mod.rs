//! Typed configuration from an explicit list of environment variables. Every function reads
//! the same variables; a missing or invalid one stops start-up with a message naming it.
//! Secrets are wrapped so they cannot be printed by accident.

mod agent;
mod origins;
mod realtime;
mod search;
mod store;
mod tools;
mod variables;

pub use agent::{AgentConfig, KnowledgeConfig, LlmConfig, Orchestrator, LLM_KEY_VARIABLES};
pub use origins::{parse_origins, OriginRule};
pub use realtime::RealtimeConfig;
pub use search::{SearchConfig, SearchDepth};
pub use store::{AwsStoreConfig, Retention, StoreConfig};
pub use tools::{ExecRunner, ToolsConfig};
pub use variables::VARIABLES;

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
    /// Server-hosted agent tools (`/api/v1/agent/*`).
    pub tools: ToolsConfig,
}

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
            tools: ToolsConfig::from_lookup(&lookup)?,
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

pub(crate) fn parse_num<T>(
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
        let readme = include_str!("../../../README.md");
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
