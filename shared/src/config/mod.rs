//! Typed configuration from an explicit list of environment variables. Every function reads
//! the same variables; a missing or invalid one stops start-up with a message naming it.
//! Secrets are wrapped so they cannot be printed by accident.

mod agent;
pub mod llm_params;
mod metrics;
mod origins;
mod realtime;
mod search;
mod secrets;
mod store;
mod tools;
mod variables;

pub use agent::{
    AgentConfig, BedrockEndpoint, KnowledgeConfig, LlmConfig, LlmProvider, OpenAiEndpoint,
    Orchestrator, RecipeSettings,
};
pub use metrics::{MetricsConfig, DEFAULT_NAMESPACE};
pub use origins::{parse_origins, OriginRule};
pub use realtime::RealtimeConfig;
pub use search::{SearchConfig, SearchDepth};
pub use secrets::{
    references as secret_references, KeyRefresh, LoadedSecrets, Rereads, RotatingKey, SecretRef,
    SECRET_SETTINGS,
};
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
    /// `None` only where no token is signed or checked (see [`Config::require_token_key`]).
    pub secret: Option<SecretString>,
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
    /// The key of the fingerprints that recognise typed secrets on later pages
    /// (`FINGERPRINT_KEY`, else `JWT_SECRET`). Never rotated while tasks live: a task's
    /// fingerprints are only as good as the key they were made with.
    pub fingerprint_key: SecretString,
    /// Longest a key read from Secrets Manager is used before it is read again
    /// (`SECRET_REFRESH_SECONDS`): the most a rotation takes to reach every warm container.
    pub secret_max_age: std::time::Duration,
    /// Embedded Metric Format lines (`METRICS*`).
    pub metrics: MetricsConfig,
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

        let secret = get("JWT_SECRET");
        if let Some(secret) = &secret {
            check_key_length("JWT_SECRET", secret)?;
        }
        let agent = AgentConfig::from_lookup(&lookup)?;
        let fingerprint_key = match (get("FINGERPRINT_KEY"), &secret) {
            (Some(key), _) => {
                check_key_length("FINGERPRINT_KEY", &key)?;
                SecretString::from(key)
            }
            (None, Some(jwt)) => SecretString::from(jwt.clone()),
            // No model, so no step runs in this function and nothing is fingerprinted.
            (None, None) if agent.llm.is_none() => SecretString::from(random_key()),
            (None, None) => {
                return Err(ConfigError::Missing(
                    "FINGERPRINT_KEY",
                    "a function that runs steps needs FINGERPRINT_KEY (or JWT_SECRET) to \
                     recognise typed secrets; a random string of at least 32 bytes",
                ))
            }
        };
        let jwt = JwtConfig {
            secret: secret.map(SecretString::from),
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
            agent,
            fingerprint_key,
            secret_max_age: std::time::Duration::from_secs(parse_num(
                &get,
                "SECRET_REFRESH_SECONDS",
                300,
                1,
                86_400,
            )?),
            realtime: RealtimeConfig::from_lookup(&lookup)?,
            metrics: MetricsConfig::from_lookup(&lookup)?,
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

    /// Refuses to start a function that signs or checks tokens without the signing key.
    pub fn require_token_key(&self) -> Result<(), ConfigError> {
        match self.jwt.secret {
            Some(_) => Ok(()),
            None => Err(ConfigError::Missing(
                "JWT_SECRET",
                "set it (or JWT_SECRET_ARN, its secret in Secrets Manager) to a random string of \
                 at least 32 bytes (e.g. `openssl rand -base64 48`)",
            )),
        }
    }

    /// A short description safe to log: no secrets.
    pub fn summary(&self) -> String {
        format!(
            "store={:?} origins={} max_body_bytes={} token_ttl={}s jwt_key_bytes={}",
            self.store,
            self.allowed_origins.len(),
            self.max_body_bytes,
            self.jwt.ttl_seconds,
            self.jwt
                .secret
                .as_ref()
                .map_or(0, |s| s.expose_secret().len())
        )
    }
}

/// Refuses a signing or fingerprint key shorter than [`MIN_JWT_SECRET_BYTES`].
fn check_key_length(name: &'static str, key: &str) -> Result<(), ConfigError> {
    if key.len() < MIN_JWT_SECRET_BYTES {
        return Err(ConfigError::Invalid(
            name,
            format!(
                "must be at least {MIN_JWT_SECRET_BYTES} bytes, got {}",
                key.len()
            ),
        ));
    }
    Ok(())
}

/// 32 random bytes as hex.
fn random_key() -> String {
    hex::encode(rand::random::<[u8; 32]>())
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
    fn missing_jwt_secret_names_the_variable_where_tokens_are_checked() {
        let c = Config::from_lookup(lookup(&[])).expect("a function without tokens starts");
        let err = c.require_token_key().unwrap_err();
        assert!(
            err.to_string().starts_with("JWT_SECRET is not set"),
            "{err}"
        );
        assert!(err.to_string().contains("JWT_SECRET_ARN"), "{err}");
        let c = Config::from_lookup(lookup(&[("JWT_SECRET", KEY)])).expect("config");
        assert!(c.require_token_key().is_ok());
    }

    #[test]
    fn the_fingerprint_key_is_its_own_or_the_signing_key_and_needed_to_run_steps() {
        let own = "f".repeat(40);
        let c = Config::from_lookup(lookup(&[("JWT_SECRET", KEY), ("FINGERPRINT_KEY", &own)]))
            .expect("config");
        assert_eq!(c.fingerprint_key.expose_secret(), own);
        let c = Config::from_lookup(lookup(&[("JWT_SECRET", KEY)])).expect("config");
        assert_eq!(c.fingerprint_key.expose_secret(), KEY);
        let c = Config::from_lookup(lookup(&[("FINGERPRINT_KEY", &own)])).expect("no jwt");
        assert!(c.jwt.secret.is_none());
        let err =
            Config::from_lookup(lookup(&[("LLM_API_KEY", "sk"), ("LLM_MODEL", "m")])).unwrap_err();
        assert!(
            err.to_string().starts_with("FINGERPRINT_KEY is not set"),
            "{err}"
        );
        let err = Config::from_lookup(lookup(&[("FINGERPRINT_KEY", "short")])).unwrap_err();
        assert!(
            err.to_string().starts_with("FINGERPRINT_KEY is invalid"),
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

/// A lookup of the variables in `pairs` (tests).
#[cfg(test)]
pub(crate) fn lookup_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}

/// The configuration reference's table (`docs/configuration.md`), from [`VARIABLES`].
pub fn reference_table() -> String {
    let mut out = String::from("| variable | default | meaning |\n|---|---|---|\n");
    for (name, default, meaning) in VARIABLES {
        out.push_str(&format!("| `{name}` | {default} | {meaning} |\n"));
    }
    out
}

#[cfg(test)]
mod reference {
    const BEGIN: &str = "<!-- BEGIN generated from shared/src/config/variables.rs by scripts/config-reference; do not edit -->\n";
    const END: &str = "<!-- END generated -->";

    /// `docs/configuration.md` holds the table generated from the variables the code reads;
    /// with `UPDATE_DOCS=1` (`scripts/config-reference`) this test writes it instead.
    #[test]
    fn the_configuration_reference_is_the_table_of_the_variables_read() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/configuration.md");
        let doc = std::fs::read_to_string(&path).expect("docs/configuration.md");
        let (head, rest) = doc.split_once(BEGIN).expect("the BEGIN marker");
        let (_, tail) = rest.split_once(END).expect("the END marker");
        let current = format!("{head}{BEGIN}{}{END}{tail}", super::reference_table());
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &current).expect("write docs/configuration.md");
        } else {
            assert!(
                doc == current,
                "docs/configuration.md is stale: run scripts/config-reference"
            );
        }
    }
}
