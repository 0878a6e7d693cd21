//! The `WebSearch` port: a web search engine (adapter: `adapters::tavily`). Results are
//! untrusted text from the web; they only ever reach the prompt, condensed and delimited.

use std::time::Instant;

use async_trait::async_trait;

/// One search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery<'a> {
    pub query: &'a str,
    /// Only results from these hosts (and their subdomains); empty: the open web.
    pub include_domains: &'a [String],
}

pub use crate::domain::web::SearchHit;

/// Why a search gave no results.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("the search did not answer in time")]
    Timeout,
    #[error("the search failed: {0}")]
    Failed(String),
}

/// A web search engine.
#[async_trait]
pub trait WebSearch: Send + Sync {
    /// Searches, giving up at `deadline`.
    async fn search(
        &self,
        query: &SearchQuery<'_>,
        deadline: Instant,
    ) -> Result<Vec<SearchHit>, SearchError>;

    /// The text of the public page at `url`, read by the engine (the server never fetches a
    /// page itself), at most `max_chars`; giving up at `deadline`.
    async fn extract(
        &self,
        _url: &str,
        _max_chars: usize,
        _deadline: Instant,
    ) -> Result<String, SearchError> {
        Err(SearchError::Failed("this engine cannot read pages".into()))
    }
}
