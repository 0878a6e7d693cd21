//! The interact answer, flat as the contract's "Response 200" table describes it.

use serde::{Deserialize, Serialize};

use super::Usage;
use crate::domain::TaskStatus;

/// Timing and position of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    pub duration_ms: u64,
    pub llm_ms: u64,
    pub llm_calls: u32,
    pub step_index: u32,
}

/// `200` of `POST /api/agent/interact`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepResponse {
    pub success: bool,
    pub thought: String,
    pub action: String,
    pub task_id: String,
    pub session_id: String,
    pub has_org_knowledge: bool,
    pub status: TaskStatus,
    pub usage: Usage,
    pub metrics: Metrics,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_question: Option<String>,
}
