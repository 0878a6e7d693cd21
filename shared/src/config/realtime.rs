//! Realtime events over the Pusher HTTP API (`PUSHER_*`).

use secrecy::SecretString;

use super::{parse_num, ConfigError};

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
