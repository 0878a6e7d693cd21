//! Allowed CORS origins (`ALLOWED_ORIGINS`).

use super::ConfigError;

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
