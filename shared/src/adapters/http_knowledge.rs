//! The `Knowledge` adapter for the knowledge extraction service
//! (`GET /api/knowledge/resolve?url&query&tenantId`), its answer read with a size limit. The
//! URL goes out normalised (`domain::site::normalised_url`), never as the caller's text.

use std::time::Duration;

use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};

use crate::ports::knowledge::{Knowledge, KnowledgeError, KnowledgeResult};
use crate::upstream::{exchange, Attempt, LazyClient};

/// Largest answer read from the extraction service.
const MAX_ANSWER_BYTES: usize = 2 * 1024 * 1024;

/// The extraction service over HTTP.
pub struct HttpKnowledge {
    base_url: String,
    token: Option<SecretString>,
    timeout: Duration,
    client: LazyClient,
}

impl std::fmt::Debug for HttpKnowledge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpKnowledge")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl HttpKnowledge {
    pub fn new(base_url: String, token: Option<SecretString>, timeout: Duration) -> Self {
        Self {
            base_url,
            token,
            timeout,
            client: LazyClient::new(Duration::from_secs(3)),
        }
    }
}

#[async_trait]
impl Knowledge for HttpKnowledge {
    async fn resolve(
        &self,
        url: &str,
        query: Option<&str>,
        tenant_id: &str,
    ) -> Result<KnowledgeResult, KnowledgeError> {
        // Only a URL as the domain check reads it goes out (the callers check the host of
        // this same serialisation).
        let (url, _) = crate::domain::site::normalised_url(url)
            .ok_or_else(|| KnowledgeError("not a URL".into()))?;
        let client = self.client.get();
        let mut params = vec![("url", url.as_str()), ("tenantId", tenant_id)];
        if let Some(q) = query {
            params.push(("query", q));
        }
        let mut req = client
            .get(format!(
                "{}/api/knowledge/resolve",
                self.base_url.trim_end_matches('/')
            ))
            .query(&params)
            .timeout(self.timeout);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t.expose_secret());
        }
        // One attempt: knowledge improves a step but is not worth waiting for twice.
        let body = match exchange(req, MAX_ANSWER_BYTES).await {
            Attempt::Done(b) => b,
            Attempt::Retry(why, _) | Attempt::Fatal(why) => return Err(KnowledgeError(why)),
        };
        serde_json::from_slice::<KnowledgeResult>(&body)
            .map_err(|_| KnowledgeError("malformed answer".into()))
    }
}
