//! A task's plan: the steps the agent means to take, which one it is on, and how each went.
//! Shapes follow the contract (`plan { steps: [{ id: "step_<n>", index, description, status,
//! toolType, reasoning?, expectedOutcome? }], currentStepIndex, createdAt }`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Most steps a plan keeps.
pub const MAX_PLAN_STEPS: usize = 12;
/// Longest description of a step.
pub const MAX_STEP_CHARS: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    Active,
    Completed,
    Failed,
}

/// Where a plan step runs: in the browser, on the server (search, memory), or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ToolType {
    Dom,
    Server,
    Mixed,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// `step_<index>`.
    pub id: String,
    pub index: usize,
    pub description: String,
    pub status: StepStatus,
    pub tool_type: ToolType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_outcome: Option<Value>,
    /// Corrections tried on this step (at most three before the task stops). Stored with the
    /// task, not part of the contract's plan step.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A task's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub steps: Vec<PlanStep>,
    pub current_step_index: usize,
    pub created_at: DateTime<Utc>,
}

fn step(index: usize, description: &str, tool_type: ToolType) -> PlanStep {
    PlanStep {
        id: format!("step_{index}"),
        index,
        description: crate::text::single_line(description, MAX_STEP_CHARS),
        status: if index == 0 {
            StepStatus::Active
        } else {
            StepStatus::Pending
        },
        tool_type,
        reasoning: None,
        expected_outcome: None,
        attempts: 0,
    }
}

impl Plan {
    /// A plan of the given step descriptions (empty ones dropped, at most
    /// [`MAX_PLAN_STEPS`]); `None` when none is usable.
    pub fn from_descriptions<'a>(
        descriptions: impl IntoIterator<Item = &'a str>,
        now: DateTime<Utc>,
    ) -> Option<Plan> {
        let steps: Vec<PlanStep> = descriptions
            .into_iter()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .take(MAX_PLAN_STEPS)
            .enumerate()
            .map(|(k, d)| {
                let server = {
                    let l = d.to_lowercase();
                    l.contains("search the web") || l.starts_with("remember")
                };
                step(
                    k,
                    d,
                    if server {
                        ToolType::Server
                    } else {
                        ToolType::Dom
                    },
                )
            })
            .collect();
        (!steps.is_empty()).then_some(Plan {
            steps,
            current_step_index: 0,
            created_at: now,
        })
    }

    /// The plan used when the planner's answer is unusable: one step, the task itself.
    pub fn single(task: &str, now: DateTime<Utc>) -> Plan {
        Plan {
            steps: vec![step(0, task, ToolType::Dom)],
            current_step_index: 0,
            created_at: now,
        }
    }

    /// The step being worked on.
    pub fn current(&self) -> Option<&PlanStep> {
        self.steps.get(self.current_step_index)
    }

    fn current_mut(&mut self) -> Option<&mut PlanStep> {
        self.steps.get_mut(self.current_step_index)
    }

    /// The previous action was verified: the current step is done when the decision moves on
    /// to a later step (`next`), which becomes active.
    pub fn move_to(&mut self, next: usize) {
        let next = next.min(self.steps.len().saturating_sub(1));
        if next <= self.current_step_index {
            return;
        }
        for s in &mut self.steps[self.current_step_index..next] {
            s.status = StepStatus::Completed;
        }
        self.current_step_index = next;
        if let Some(s) = self.current_mut() {
            s.status = StepStatus::Active;
        }
    }

    /// Every step done (the task finished).
    pub fn complete_all(&mut self) {
        for s in &mut self.steps {
            s.status = StepStatus::Completed;
        }
        self.current_step_index = self.steps.len().saturating_sub(1);
    }

    /// The current step failed (the task stops).
    pub fn fail_current(&mut self) {
        if let Some(s) = self.current_mut() {
            s.status = StepStatus::Failed;
        }
    }

    /// Counts a correction on the current step; returns how many it has had.
    pub fn count_attempt(&mut self) -> u32 {
        match self.current_mut() {
            Some(s) => {
                s.attempts += 1;
                s.attempts
            }
            None => 0,
        }
    }

    /// An action on the current step worked: its earlier failures were got over, and its
    /// corrections count again from none.
    pub fn clear_attempts(&mut self) {
        if let Some(s) = self.current_mut() {
            s.attempts = 0;
        }
    }

    /// Steps not done yet after the current one.
    pub fn pending(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s.status, StepStatus::Pending))
            .count()
    }

    /// Replaces the steps from the current one on with new ones (a re-plan keeps what was
    /// done).
    pub fn replan_from_current<'a>(&mut self, descriptions: impl IntoIterator<Item = &'a str>) {
        let done = self.current_step_index;
        let kept: Vec<PlanStep> = self.steps.drain(..done).collect();
        let fresh: Vec<&str> = descriptions
            .into_iter()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .take(MAX_PLAN_STEPS.saturating_sub(done).max(1))
            .collect();
        if fresh.is_empty() {
            self.steps.splice(0..0, kept);
            return;
        }
        self.steps = kept;
        for (k, d) in fresh.into_iter().enumerate() {
            let mut s = step(done + k, d, ToolType::Dom);
            s.status = if k == 0 {
                StepStatus::Active
            } else {
                StepStatus::Pending
            };
            self.steps.push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        Utc::now()
    }

    #[test]
    fn a_plan_from_the_model_is_numbered_bounded_and_starts_active() {
        let long = "x".repeat(500);
        let mut many = vec!["Open the search", "", "Type the query", long.as_str()];
        many.extend(std::iter::repeat_n("more", 20));
        let p = Plan::from_descriptions(many, now()).expect("plan");
        assert_eq!(p.steps.len(), MAX_PLAN_STEPS);
        assert_eq!(p.steps[1].id, "step_1");
        assert_eq!(p.steps[1].description, "Type the query");
        assert!(p.steps[2].description.chars().count() <= MAX_STEP_CHARS);
        assert_eq!(p.steps[0].status, StepStatus::Active);
        assert_eq!(p.steps[3].status, StepStatus::Pending);
        assert!(Plan::from_descriptions(["", "  "], now()).is_none());
        let json = serde_json::to_value(&p).expect("json");
        assert_eq!(json["steps"][0]["toolType"], "DOM");
        assert_eq!(json["currentStepIndex"], 0);
        assert!(json["steps"][0].get("attempts").is_none());
    }

    #[test]
    fn steps_complete_as_the_work_moves_on_and_a_replan_keeps_what_was_done() {
        let mut p = Plan::from_descriptions(["a", "b", "c", "d"], now()).expect("plan");
        p.move_to(2);
        assert_eq!(
            p.steps.iter().map(|s| s.status).collect::<Vec<_>>(),
            vec![
                StepStatus::Completed,
                StepStatus::Completed,
                StepStatus::Active,
                StepStatus::Pending
            ]
        );
        p.move_to(1);
        assert_eq!(p.current_step_index, 2, "never backwards");
        assert_eq!(p.pending(), 1);
        assert_eq!(p.count_attempt(), 1);
        assert_eq!(p.count_attempt(), 2);
        p.clear_attempts();
        assert_eq!(
            p.count_attempt(),
            1,
            "a success in between starts the count again"
        );
        assert_eq!(p.count_attempt(), 2);
        p.replan_from_current(["c2", "d2", "e2"]);
        assert_eq!(
            p.steps
                .iter()
                .map(|s| s.description.as_str())
                .collect::<Vec<_>>(),
            vec!["a", "b", "c2", "d2", "e2"]
        );
        assert_eq!(p.steps[2].id, "step_2");
        assert_eq!(p.steps[2].status, StepStatus::Active);
        assert_eq!(p.steps[2].attempts, 0);
        p.complete_all();
        assert!(p.steps.iter().all(|s| s.status == StepStatus::Completed));
        let mut single = Plan::single("Buy a shirt", now());
        single.fail_current();
        assert_eq!(single.steps[0].status, StepStatus::Failed);
    }
}
