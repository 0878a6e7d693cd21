//! A chunk of the organisation's knowledge, as the knowledge service gives it and the prompt
//! quotes it.

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
