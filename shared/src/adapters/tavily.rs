//! The `WebSearch` adapter for Tavily (`POST {base}/search`, and `POST {base}/extract` for
//! `readPage`; key as a bearer token): retries
//! 429/5xx/transport failures with backoff inside the caller's deadline, reads the answer with
//! a size limit, bounds every result, and never logs the key, the query or a URL.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};

use crate::config::SearchConfig;
use crate::ports::web_search::{SearchError, SearchHit, SearchQuery, WebSearch};
use crate::text::truncate_chars;
use crate::upstream::{exchange, with_retries, Attempt, GaveUp, LazyClient};

/// Largest answer read.
const MAX_ANSWER_BYTES: usize = 512 * 1024;
/// Longest title, URL and extract kept from a result (the prompt condenses further).
const TITLE_CHARS: usize = 300;
const URL_CHARS: usize = 2_048;
const CONTENT_CHARS: usize = 2_000;

/// Tavily's search API.
pub struct TavilySearch {
    cfg: SearchConfig,
    client: LazyClient,
}

impl std::fmt::Debug for TavilySearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TavilySearch")
            .field("base_url", &self.cfg.base_url)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct Request<'a> {
    query: &'a str,
    search_depth: &'a str,
    max_results: u8,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    include_domains: &'a [String],
    include_answer: bool,
    include_raw_content: bool,
}

#[derive(Deserialize)]
struct Answer {
    results: Vec<Hit>,
}

#[derive(Deserialize)]
struct Hit {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    content: Option<String>,
}

#[derive(Serialize)]
struct ExtractRequest<'a> {
    urls: [&'a str; 1],
    extract_depth: &'a str,
}

#[derive(Deserialize)]
struct Extracted {
    #[serde(default)]
    results: Vec<Page>,
}

#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    raw_content: Option<String>,
}

/// Largest extract answer read (a page's text, as Tavily returns it).
const MAX_EXTRACT_BYTES: usize = 2 * 1024 * 1024;

impl TavilySearch {
    pub fn new(cfg: SearchConfig) -> Self {
        Self {
            cfg,
            client: LazyClient::new(Duration::from_secs(3)),
        }
    }

    fn client(&self) -> &reqwest::Client {
        self.client.get()
    }

    async fn attempt(
        &self,
        q: &SearchQuery<'_>,
        timeout: Duration,
    ) -> Attempt<Vec<SearchHit>, SearchError> {
        let body = Request {
            query: q.query,
            search_depth: self.cfg.depth.as_str(),
            max_results: self.cfg.max_results,
            include_domains: q.include_domains,
            include_answer: false,
            include_raw_content: false,
        };
        let req = self
            .client()
            .post(format!(
                "{}/search",
                self.cfg.base_url.trim_end_matches('/')
            ))
            .bearer_auth(self.cfg.api_key.expose_secret())
            .timeout(timeout)
            .json(&body);
        let bytes = match exchange(req, MAX_ANSWER_BYTES).await {
            Attempt::Done(b) => b,
            Attempt::Retry(why, after) => return Attempt::Retry(why, after),
            Attempt::Fatal(why) => return Attempt::Fatal(SearchError::Failed(why)),
        };
        match serde_json::from_slice::<Answer>(&bytes) {
            Ok(a) => Attempt::Done(hits(a, self.cfg.max_results)),
            Err(_) => Attempt::Fatal(SearchError::Failed("malformed answer".into())),
        }
    }
}

impl TavilySearch {
    async fn extract_attempt(
        &self,
        url: &str,
        max_chars: usize,
        timeout: Duration,
    ) -> Attempt<String, SearchError> {
        let req = self
            .client()
            .post(format!(
                "{}/extract",
                self.cfg.base_url.trim_end_matches('/')
            ))
            .bearer_auth(self.cfg.api_key.expose_secret())
            .timeout(timeout)
            .json(&ExtractRequest {
                urls: [url],
                extract_depth: "basic",
            });
        let bytes = match exchange(req, MAX_EXTRACT_BYTES).await {
            Attempt::Done(b) => b,
            Attempt::Retry(why, after) => return Attempt::Retry(why, after),
            Attempt::Fatal(why) => return Attempt::Fatal(SearchError::Failed(why)),
        };
        match serde_json::from_slice::<Extracted>(&bytes) {
            Ok(e) => match e.results.into_iter().find_map(|p| p.raw_content) {
                Some(text) if !text.trim().is_empty() => {
                    Attempt::Done(truncate_chars(text.trim(), max_chars))
                }
                _ => Attempt::Fatal(SearchError::Failed("the page could not be read".into())),
            },
            Err(_) => Attempt::Fatal(SearchError::Failed("malformed answer".into())),
        }
    }
}

/// The usable results, bounded: an http(s) URL is required, at most `max` are kept.
fn hits(a: Answer, max: u8) -> Vec<SearchHit> {
    a.results
        .into_iter()
        .filter_map(|h| {
            let url = h.url?.trim().to_owned();
            let web = url.starts_with("https://") || url.starts_with("http://");
            (web && url.len() <= URL_CHARS).then(|| SearchHit {
                title: truncate_chars(h.title.as_deref().unwrap_or("").trim(), TITLE_CHARS),
                url,
                content: truncate_chars(h.content.as_deref().unwrap_or("").trim(), CONTENT_CHARS),
            })
        })
        .take(usize::from(max))
        .collect()
}

#[async_trait]
impl WebSearch for TavilySearch {
    async fn search(
        &self,
        q: &SearchQuery<'_>,
        deadline: Instant,
    ) -> Result<Vec<SearchHit>, SearchError> {
        let cfg = &self.cfg;
        with_retries(
            "web search",
            deadline,
            cfg.max_retries,
            cfg.attempt_timeout,
            |t| self.attempt(q, t),
        )
        .await
        .map_err(gave_up)
    }

    async fn extract(
        &self,
        url: &str,
        max_chars: usize,
        deadline: Instant,
    ) -> Result<String, SearchError> {
        let cfg = &self.cfg;
        with_retries(
            "page read",
            deadline,
            cfg.max_retries,
            cfg.attempt_timeout,
            |t| self.extract_attempt(url, max_chars, t),
        )
        .await
        .map_err(gave_up)
    }
}

fn gave_up(e: GaveUp<SearchError>) -> SearchError {
    match e {
        GaveUp::Timeout => SearchError::Timeout,
        GaveUp::Failed(why) => SearchError::Failed(why),
        GaveUp::Fatal(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_without_a_web_url_are_dropped_and_the_rest_bounded() {
        let a: Answer = serde_json::from_value(serde_json::json!({ "results": [
            { "title": "A", "url": "https://a.example/x", "content": "x".repeat(5_000) },
            { "title": "B", "url": "javascript:alert(1)", "content": "b" },
            { "title": "C" },
            { "url": "http://c.example/", "content": null },
            { "title": "D", "url": "https://d.example/" }
        ]}))
        .expect("answer");
        let h = hits(a, 2);
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].content.chars().count(), CONTENT_CHARS);
        assert_eq!(
            (h[1].title.as_str(), h[1].url.as_str()),
            ("", "http://c.example/")
        );
    }
}
