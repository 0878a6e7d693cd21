//! Web search settings (Tavily).

use std::time::Duration;

use secrecy::SecretString;

use super::{parse_num, ConfigError};

/// How thoroughly Tavily searches (`advanced` costs two credits and takes longer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchDepth {
    Basic,
    Advanced,
}

impl SearchDepth {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchDepth::Basic => "basic",
            SearchDepth::Advanced => "advanced",
        }
    }
}

/// Settings of the Tavily adapter.
#[derive(Debug, Clone)]
pub struct SearchConfig {
    pub base_url: String,
    pub api_key: SecretString,
    pub depth: SearchDepth,
    pub max_results: u8,
    /// Longest single attempt (a search is also bounded by the step's deadline).
    pub attempt_timeout: Duration,
    /// Retries after the first attempt (429, 5xx, transport failures).
    pub max_retries: u32,
}

impl SearchConfig {
    /// The search settings; `None` without `TAVILY_API_KEY` (search is off).
    pub fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Option<Self>, ConfigError> {
        let Some(key) = get("TAVILY_API_KEY") else {
            return Ok(None);
        };
        let base_url = get("TAVILY_BASE_URL").unwrap_or_else(|| "https://api.tavily.com".into());
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(ConfigError::Invalid(
                "TAVILY_BASE_URL",
                format!("`{base_url}` is not an http(s) URL"),
            ));
        }
        let depth = match get("SEARCH_DEPTH").as_deref() {
            None | Some("basic") => SearchDepth::Basic,
            Some("advanced") => SearchDepth::Advanced,
            Some(other) => {
                return Err(ConfigError::Invalid(
                    "SEARCH_DEPTH",
                    format!("`{other}` is not `basic` or `advanced`"),
                ))
            }
        };
        Ok(Some(Self {
            base_url,
            api_key: SecretString::from(key),
            depth,
            max_results: parse_num(get, "SEARCH_MAX_RESULTS", 5u8, 1, 10)?,
            attempt_timeout: Duration::from_millis(parse_num(
                get,
                "SEARCH_TIMEOUT_MS",
                6_000u64,
                100,
                30_000,
            )?),
            max_retries: parse_num(get, "SEARCH_MAX_RETRIES", 2u32, 0, 5)?,
        }))
    }
}
