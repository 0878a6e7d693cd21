//! The `Knowledge` port: the tenant's organisation knowledge for a page (adapter:
//! `adapters::http_knowledge`). Only asked for pages matching one of the tenant's
//! allowed-domain patterns; chunks only ever go into the prompt, never to the extension from
//! interact.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::domain::knowledge::KnowledgeChunk;

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
