//! The `Knowledge` port: the tenant's organisation knowledge for a page, from the knowledge
//! extraction service (`GET /api/knowledge/resolve?url&query&tenantId`). Only called for
//! pages matching one of the tenant's allowed-domain patterns; chunks only ever go into the
//! prompt, never to the extension from interact.

use std::sync::OnceLock;
use std::time::Duration;

use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One chunk of a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KnowledgeChunk {
    pub id: String,
    pub content: String,
    #[serde(default)]
    pub document_title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Where a chunk came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    pub document_id: String,
    #[serde(default)]
    pub document_title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<Value>,
}

/// What the extraction service returned.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct KnowledgeResult {
    #[serde(default)]
    pub context: Vec<KnowledgeChunk>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Vec<Citation>>,
}

/// The knowledge source failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("knowledge service: {0}")]
pub struct KnowledgeError(pub String);

/// Organisation knowledge for a page.
#[async_trait]
pub trait Knowledge: Send + Sync {
    async fn resolve(
        &self,
        url: &str,
        query: Option<&str>,
        tenant_id: &str,
    ) -> Result<KnowledgeResult, KnowledgeError>;
}

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
