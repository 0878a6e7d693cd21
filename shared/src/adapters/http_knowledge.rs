//! The `Knowledge` adapter for the knowledge extraction service
//! (`GET /api/knowledge/resolve?url&query&tenantId`), its answer read with a size limit.

use std::sync::OnceLock;
use std::time::Duration;

use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};

use crate::ports::knowledge::{Knowledge, KnowledgeError, KnowledgeResult};

/// Largest answer read from the extraction service.
const MAX_ANSWER_BYTES: usize = 2 * 1024 * 1024;

/// The extraction service over HTTP.
pub struct HttpKnowledge {
    base_url: String,
    token: Option<SecretString>,
    timeout: Duration,
    client: OnceLock<reqwest::Client>,
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
            client: OnceLock::new(),
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
        let client = self.client.get_or_init(reqwest::Client::new);
        let mut params = vec![("url", url), ("tenantId", tenant_id)];
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
        let resp = req.send().await.map_err(|e| {
            KnowledgeError(if e.is_timeout() {
                "timed out".into()
            } else {
                "unreachable".into()
            })
        })?;
        if !resp.status().is_success() {
            return Err(KnowledgeError(format!("status {}", resp.status())));
        }
        let body = crate::upstream::read_limited(resp, MAX_ANSWER_BYTES)
            .await
            .map_err(|e| KnowledgeError(format!("answer not read: {e:?}")))?;
        serde_json::from_slice::<KnowledgeResult>(&body)
            .map_err(|_| KnowledgeError("malformed answer".into()))
    }
}
