//! Phase 8 (Respond): the interact answer, flat as the contract's "Response 200" table
//! describes it: every field that applies to the step, and none that does not.

use serde::Serialize;

use super::{Decision, StepContext, ToolAction};
use crate::agent::request::Capabilities;

/// An answer as `client` can run it — the one place that decides it, for every answer: a fresh
/// one, the copy kept for a retry or sent to the realtime channel, and a stored one replayed.
/// A server round's `toolAction` goes only to a client that understands server rounds (any
/// other gets the round's `wait(1)` and its thought: the shipping extension throws on a SERVER
/// `toolAction`), and a chain only to one that runs chains (the extension fails its first
/// item; the guard makes no chain for such a client — its fills wait on the server — so only a
/// stored answer replayed can lose one here).
pub fn for_client(mut answer: serde_json::Value, client: Capabilities) -> serde_json::Value {
    if let Some(o) = answer.as_object_mut() {
        if !client.server_rounds {
            o.remove("toolAction");
        }
        if !client.chained_actions {
            o.remove("chainedActions");
            o.remove("chainMetadata");
        }
    }
    answer
}
use crate::domain::blocker::BlockerInfo;
use crate::domain::chain::{ChainItem, ChainMetadata};
use crate::domain::correction::Correction;
use crate::domain::intervention::Intervention;
use crate::domain::outcome::ExpectedOutcome;
use crate::domain::plan::{Plan, StepStatus, ToolType};
use crate::domain::verdict::Verification;
use crate::domain::{TaskStatus, TokenUsage};

/// Timing and position of a step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    pub duration_ms: u64,
    pub llm_ms: u64,
    pub llm_calls: u32,
    pub step_index: u32,
    /// What the server's rules did to this step, when anything.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub interventions: Vec<Intervention>,
    /// The step came from the task's recipe: replayed without the model, or healed by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipe: Option<crate::domain::recipe::book::RecipeUse>,
}

/// A plan step as the contract shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStepView<'a> {
    pub id: &'a str,
    pub index: usize,
    pub description: &'a str,
    pub status: StepStatus,
    pub tool_type: ToolType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_outcome: Option<&'a serde_json::Value>,
}

/// `plan { steps, currentStepIndex, createdAt }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanView<'a> {
    pub steps: Vec<PlanStepView<'a>>,
    pub current_step_index: usize,
    pub created_at: String,
}

impl<'a> From<&'a Plan> for PlanView<'a> {
    fn from(p: &'a Plan) -> Self {
        Self {
            steps: p
                .steps
                .iter()
                .map(|s| PlanStepView {
                    id: &s.id,
                    index: s.index,
                    description: &s.description,
                    status: s.status,
                    tool_type: s.tool_type,
                    reasoning: s.reasoning.as_deref(),
                    expected_outcome: s.expected_outcome.as_ref(),
                })
                .collect(),
            current_step_index: p.current_step_index,
            created_at: crate::time::iso(p.created_at),
        }
    }
}

/// One piece of information the agent needs from the user.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingInfo<'a> {
    pub field: &'a str,
    /// `PRIVATE_DATA`: only the user has it (the model's `<Missing>` items are the user's own
    /// data or decisions; what the web knows it searches for instead).
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub description: &'a str,
}

/// `reasoning` as the side panel reads it: an object (a string shows "Unknown • 50 %").
/// Sent with a question to the user: the source is the user, and the agent is certain it
/// needs the answer (it does not go on without one).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reasoning<'a> {
    pub source: &'static str,
    pub confidence: f64,
    pub reasoning: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing_info: Vec<MissingInfo<'a>>,
}

impl<'a> Reasoning<'a> {
    fn asking(d: &'a Decision) -> Self {
        Self {
            source: "ASK_USER",
            confidence: 1.0,
            reasoning: &d.thought,
            missing_info: d
                .missing_information
                .iter()
                .map(|m| MissingInfo {
                    field: m,
                    kind: "PRIVATE_DATA",
                    description: m,
                })
                .collect(),
        }
    }
}

/// `200` of `POST /api/agent/interact`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepResponse<'a> {
    pub success: bool,
    pub thought: &'a str,
    pub action: &'a str,
    pub task_id: &'a str,
    pub session_id: &'a str,
    pub has_org_knowledge: bool,
    pub status: TaskStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_step: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_steps: Option<usize>,
    pub usage: TokenUsage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<&'a Verification>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correction: Option<&'a Correction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_outcome: Option<&'a ExpectedOutcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_action: Option<&'a ToolAction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_type: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub chained_actions: &'a [ChainItem],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_metadata: Option<&'a ChainMetadata>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_question: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub missing_information: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocker_info: Option<&'a BlockerInfo>,
    pub metrics: Metrics,
}

impl<'a> StepResponse<'a> {
    /// The response for `step` and its decision (what a client is sent of it: [`for_client`]).
    pub fn new(step: &'a StepContext, d: &'a Decision, duration_ms: u64) -> Self {
        let plan = step.task.goal.plan.as_ref();
        let asks = d.user_question.is_some();
        Self {
            success: true,
            thought: &d.thought,
            action: &d.action,
            task_id: &step.task.id,
            session_id: &step.session.id,
            has_org_knowledge: step.task.seen.used_knowledge,
            status: d.status,
            plan: plan.map(PlanView::from),
            current_step: plan.map(|p| p.current_step_index),
            total_steps: plan.map(|p| p.steps.len()),
            usage: step.spend.usage,
            verification: step.verdicts.verification.as_ref(),
            correction: step.verdicts.correction.as_ref(),
            expected_outcome: d.expected_outcome.as_ref(),
            tool_action: d.tool_action.as_ref(),
            task_type: step.task.goal.task_type.as_deref(),
            chained_actions: &d.chain,
            chain_metadata: d.chain_metadata.as_ref(),
            user_question: d.user_question.as_deref(),
            missing_information: &d.missing_information,
            reasoning: asks.then(|| Reasoning::asking(d)),
            blocker_info: d.blocker.as_ref(),
            metrics: Metrics {
                duration_ms,
                llm_ms: step.spend.llm_ms,
                llm_calls: step.spend.llm_calls,
                step_index: step.records.step_index,
                interventions: step.all_interventions(),
                recipe: step.answer.recipe_use.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_client_gets_only_the_answer_shapes_it_runs() {
        let answer = json!({ "success": true, "thought": "Noted.", "action": "wait(1)",
            "toolAction": { "toolName": "remember", "toolType": "SERVER", "parameters": {} },
            "chainedActions": [{ "action": "click(1)" }], "chainMetadata": { "safeToChain": true } });
        let extension = for_client(answer.clone(), Capabilities::default());
        assert_eq!(
            extension,
            json!({ "success": true, "thought": "Noted.", "action": "wait(1)" })
        );
        let all = Capabilities {
            server_rounds: true,
            chained_actions: true,
        };
        assert_eq!(for_client(answer.clone(), all), answer);
        let rounds_only = Capabilities {
            server_rounds: true,
            ..Capabilities::default()
        };
        let v = for_client(answer, rounds_only);
        assert!(v.get("toolAction").is_some() && v.get("chainedActions").is_none());
    }
}
