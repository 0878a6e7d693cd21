//! Tasks (one user instruction carried out over many steps) and their steps (one action
//! each). A task is written by one request at a time (a lease) and every change bumps its
//! version; step N is appended by exactly one writer.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::chain::ChainItem;
use super::confirm::PendingConfirmation;
use super::correction::Correction;
use super::facts::ElementSnapshot;
use super::outcome::ExpectedOutcome;
use super::plan::Plan;
use super::verdict::Verification;
use super::web::SearchRecord;

/// Why a request cannot act on its task or session. These are domain outcomes; the HTTP layer
/// maps each to the contract's status and code in one place (`http::error`).
/// A task or session refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskError {
    /// Unknown task, or another user's or tenant's (indistinguishable).
    #[error("no such task")]
    NotFound,
    /// Another request holds the task (or the idempotency key) right now.
    #[error("task busy: {0}")]
    Busy(&'static str),
    /// The task is completed or failed.
    #[error("task is {0:?}")]
    Finished(TaskStatus),
    /// The task's session was archived (the task is marked failed).
    #[error("task's session is archived")]
    Archived,
    /// The task reached its step limit (it is marked failed).
    #[error("task reached its limit of {max} steps")]
    StepLimit { max: u32 },
    /// Unknown session, or another user's or tenant's (indistinguishable).
    #[error("no such session")]
    SessionNotFound,
    /// A client-chosen session id that another account already uses.
    #[error("session id taken")]
    SessionTaken,
}

/// Where a task stands; the names are the contract's `status` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Planning,
    Executing,
    Verifying,
    Correcting,
    Completed,
    Failed,
    NeedsUserInput,
    AwaitingUser,
    /// Idle for longer than the configured time (the cleanup function sets it).
    Interrupted,
}

impl TaskStatus {
    /// Finished for good: further interacts answer `409 TASK_COMPLETED`.
    pub fn is_finished(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed)
    }

    /// Waiting for the user: a question (`needs_user_input`) or a blocker (`awaiting_user`).
    pub fn asks_user(self) -> bool {
        matches!(self, TaskStatus::NeedsUserInput | TaskStatus::AwaitingUser)
    }

    /// Still being worked on (not finished, not interrupted): candidates for the idle sweep.
    pub fn is_active(self) -> bool {
        !self.is_finished() && self != TaskStatus::Interrupted
    }
}

/// A task of one user in one tenant. Its parts are flattened when stored: the stored item
/// keeps one attribute per field, as before the parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    pub tenant_id: String,
    pub user_id: String,
    #[serde(default)]
    pub session_id: Option<String>,
    pub status: TaskStatus,
    /// What the user asked, where, and the agent's plan for it.
    #[serde(flatten)]
    pub goal: Goal,
    /// The store's bookkeeping: records, version, lease and lifetime.
    #[serde(flatten)]
    pub stored: Stored,
    /// Tokens its model calls used so far.
    #[serde(default)]
    pub usage: TokenUsage,
    /// What the next request must take up: a question, a queue, a tool, refusals.
    #[serde(flatten)]
    pub pending: Pending,
    /// Notes for the model, each living as long as its field says.
    #[serde(flatten)]
    pub notes: Notes,
    /// What the task saw: searches, knowledge, typed secrets, the last page.
    #[serde(flatten)]
    pub seen: Seen,
    /// The tenant's recipe this task follows, and where it is in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe: Option<super::recipe::run::RecipeRun>,
}

/// What the user asked, where, and the agent's plan for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Goal {
    pub query: String,
    pub url: String,
    /// What the task is: a browser task, or a question answered without the browser.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    #[serde(default)]
    pub plan: Option<Plan>,
}

/// The store's bookkeeping of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stored {
    /// Steps appended so far (the next step's index).
    pub step_count: u32,
    /// Bumped by every save; saves are conditional on it.
    pub version: u64,
    /// The request currently working on the task, and until when (epoch seconds).
    #[serde(default)]
    pub lease_owner: Option<String>,
    #[serde(default)]
    pub lease_until: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// When the task and everything belonging to it may be deleted (epoch seconds).
    pub expires_at: i64,
}

impl Stored {
    /// The same, its lease cleared, updated at `now`.
    pub fn unleased(&self, now: DateTime<Utc>) -> Stored {
        Stored {
            lease_owner: None,
            lease_until: None,
            updated_at: now,
            ..self.clone()
        }
    }
}

/// What the next request must take up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    /// A risky action waiting for the user's yes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<PendingConfirmation>,
    /// The user's last answer to a risky step was no: a finish right after it stands on that
    /// decision (never put to the finish judge, never recorded) until the model moves on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub declined: bool,
    /// A server tool the model asked for that did not fit in its round: the next request runs
    /// it first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_tool: Option<String>,
    /// The rest of the model's last multi-action answer, sent one per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<super::queue::ActionQueue>,
    /// Model answers refused since the last accepted one (loops, actions the client cannot
    /// run, finishes the check refused): [`super::refusal::MAX_IDLE_ROUNDS`] requests in a row
    /// without an accepted answer end the task.
    #[serde(default, alias = "loops")]
    pub refused: super::refusal::Refusals,
}

/// The notes a task keeps for the model, by how long each lives. (The step's own notes, for
/// this request only, are the step's brief.)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notes {
    /// Until the task ends: what the agent chose to keep (`remember`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub memory: BTreeMap<String, String>,
    /// Until the model writes another: its running note (`<Memory>`), shown with each later
    /// decision.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub memory_note: String,
    /// Until the model's next answer: notes from the server's rules (a request that makes no
    /// model call keeps them), at most [`MAX_CARRIED_NOTES`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carried_notes: Vec<String>,
    /// Until the next decision: what the user said when resuming the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_note: Option<String>,
}

/// What the task saw on the way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Seen {
    /// The web search made while planning (when the organisation had no knowledge to offer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_search: Option<SearchRecord>,
    /// Organisation knowledge went into one of the task's prompts (`hasOrgKnowledge`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub used_knowledge: bool,
    /// Fingerprints of what was typed into password, code and card fields during the task
    /// (never the values: see [`super::secrets`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<super::secrets::SecretMark>,
    /// The last page's element hashes ([`super::marks`]): what is new on the next is marked.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub page_marks: String,
}

/// Notes kept for the next model answer at most; the oldest go first.
pub const MAX_CARRIED_NOTES: usize = 4;
/// Longest note kept.
const CARRIED_NOTE_CHARS: usize = 600;

impl Task {
    /// Keeps `note` for the model's next answer.
    pub fn carry_note(&mut self, note: &str) {
        if self.notes.carried_notes.len() >= MAX_CARRIED_NOTES {
            self.notes.carried_notes.remove(0);
        }
        self.notes
            .carried_notes
            .push(crate::text::single_line(note, CARRIED_NOTE_CHARS));
    }
}

/// Tokens used by model calls, and what they cost when the models have prices
/// ([`super::cost`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Every input token, cached ones included.
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of `prompt_tokens`, those read from the provider's prompt cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// Estimated cost in micro-dollars (USD × 10⁶) of the calls whose model has a price;
    /// absent when none had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micros: Option<u64>,
    /// Some call's model had no price: `cost_micros`, when present, is only part of the cost.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unpriced: bool,
}

impl TokenUsage {
    pub fn add(&mut self, other: TokenUsage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
        self.cost_micros = match (self.cost_micros, other.cost_micros) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        self.unpriced |= other.unpriced;
    }

    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// The estimated cost in USD, when there is one.
    pub fn cost_usd(&self) -> Option<f64> {
        self.cost_micros.map(|m| m as f64 / 1e6)
    }
}

/// What kind of step a record is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A browser action the client executed.
    #[default]
    Dom,
    /// A server tool (memory, search): not part of the client's action history, but it counts
    /// toward the task's step limit.
    ServerTool,
}

/// Whether a request may take the next step of a task (the task as leased for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// No task yet: this request starts one.
    Start,
    /// The task takes this request as its next step.
    Continue,
    /// Another user's task: answered exactly like a missing one.
    NotFound,
    /// The task is completed or failed.
    Finished(TaskStatus),
    /// The task has taken its last allowed step; it is to be marked failed.
    StepLimit,
    /// The task's session is archived: the task is ended (to be marked failed unless it is
    /// finished already).
    Archived { finished: bool },
}

/// The admission rule for a task and a request by `user_id` (`archived`: the task's session
/// is archived).
pub fn admission(task: Option<&Task>, user_id: &str, max_steps: u32, archived: bool) -> Admission {
    match task {
        None => Admission::Start,
        Some(t) if t.user_id != user_id => Admission::NotFound,
        Some(t) if archived => Admission::Archived {
            finished: t.status.is_finished(),
        },
        Some(t) if t.status.is_finished() => Admission::Finished(t.status),
        Some(t) if t.stored.step_count >= max_steps => Admission::StepLimit,
        Some(_) => Admission::Continue,
    }
}

impl Task {
    /// Whether the task waits for the user: it asked, or it was resumed and has not decided
    /// since. A request without `taskId` in its session continues it, and the request's text
    /// is the user's answer.
    pub fn waits_for_user(&self) -> bool {
        self.status.asks_user()
            || (self.status == TaskStatus::Executing && self.notes.resume_note.is_some())
    }

    /// A new task for `query` on `url`, created at `now`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: String,
        tenant_id: String,
        user_id: String,
        session_id: Option<String>,
        query: String,
        url: String,
        now: DateTime<Utc>,
        expires_at: i64,
    ) -> Task {
        Task {
            id,
            tenant_id,
            user_id,
            session_id,
            status: TaskStatus::Executing,
            goal: Goal {
                query,
                url,
                task_type: None,
                plan: None,
            },
            stored: Stored {
                step_count: 0,
                version: 0,
                lease_owner: None,
                lease_until: None,
                created_at: now,
                updated_at: now,
                expires_at,
            },
            usage: TokenUsage::default(),
            pending: Pending::default(),
            notes: Notes::default(),
            seen: Seen::default(),
            recipe: None,
        }
    }

    /// The task executing again at `now` after the user resolved what it waited for (`note`:
    /// what the user said, for the next decision); refused when it is finished or a request
    /// holds it.
    pub fn resumed_at(&self, now: DateTime<Utc>, note: Option<String>) -> Result<Task, TaskError> {
        if self.status.is_finished() {
            return Err(TaskError::Finished(self.status));
        }
        if self
            .stored
            .lease_until
            .is_some_and(|until| until > now.timestamp())
        {
            return Err(TaskError::Busy(
                "Another request for this task is in progress",
            ));
        }
        let mut task = Task {
            status: TaskStatus::Executing,
            stored: self.stored.unleased(now),
            ..self.clone()
        };
        task.notes.resume_note = note;
        Ok(task)
    }

    /// The task marked failed at `now`, its lease cleared (the step limit was reached).
    pub fn failed_at(&self, now: DateTime<Utc>) -> Task {
        Task {
            status: TaskStatus::Failed,
            stored: self.stored.unleased(now),
            ..self.clone()
        }
    }
}

/// Enough to find a task and what belongs to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRef {
    pub tenant_id: String,
    pub task_id: String,
    #[serde(default)]
    pub session_id: Option<String>,
}

/// What the page looked like before a step's action (the page itself is in the snapshot
/// store).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeState {
    pub url: String,
    /// The page's title as the client sent it (empty: not sent).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    pub page_hash: String,
    /// The page's hash with element positions: whether a scroll moved the view.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub view_hash: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_key: Option<String>,
    #[serde(default)]
    pub snapshot_bytes: usize,
    /// How the page was rendered for the prompt.
    #[serde(default)]
    pub form: String,
    /// The action's target as it was (for verification and corrections).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<ElementSnapshot>,
    /// The plan step the action worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_step: Option<usize>,
    /// The action ran on the user's confirmation (it is never repeated without asking).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirmed: bool,
    /// What the model declared the action does (`<Effect>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<crate::domain::risk::Effect>,
}

impl BeforeState {
    /// The view hash; a record from before view hashes were kept stands in with its content
    /// hash.
    pub fn view_hash(&self) -> &str {
        if self.view_hash.is_empty() {
            &self.page_hash
        } else {
            &self.view_hash
        }
    }
}

/// One step of a task: the action decided, what the page looked like before it, and what
/// came of it. Large payloads (the page itself) live in the snapshot store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub tenant_id: String,
    pub task_id: String,
    pub index: u32,
    pub thought: String,
    pub action: String,
    #[serde(default)]
    pub before_state: Option<BeforeState>,
    /// What the action should bring about.
    #[serde(default)]
    pub expected_outcome: Option<ExpectedOutcome>,
    /// The verdict on the previous step's action, made when this step was decided.
    #[serde(default)]
    pub verification: Option<Verification>,
    /// The correction this step made.
    #[serde(default)]
    pub correction: Option<Correction>,
    /// What the client reported about the previous action.
    #[serde(default)]
    pub client_outcome: Option<Value>,
    /// The user's reply to a question, when this step's request carried one.
    #[serde(default)]
    pub user_input: Option<String>,
    #[serde(default)]
    pub kind: StepKind,
    /// The chained actions that went out with this step's action.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<ChainItem>,
    /// What a server tool answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<Value>,
    #[serde(default)]
    pub usage: Option<Value>,
    #[serde(default)]
    pub timings: Option<Value>,
    /// The task's plan as this step made or remade it (absent when the step kept the plan):
    /// the inspector's plan history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<super::plan::Plan>,
    /// What a recipe needs of this step (its target as it can be found again, the page's
    /// pattern), and whether the step came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe: Option<super::recipe::book::StepRecipe>,
    pub created_at: DateTime<Utc>,
    pub expires_at: i64,
}

impl Step {
    /// Record `index` of a task with its thought and action, nothing else known yet.
    pub fn new(
        tenant_id: &str,
        task_id: &str,
        index: u32,
        (thought, action): (String, String),
        created_at: DateTime<Utc>,
        expires_at: i64,
    ) -> Self {
        Step {
            tenant_id: tenant_id.to_owned(),
            task_id: task_id.to_owned(),
            index,
            thought,
            action,
            before_state: None,
            expected_outcome: None,
            verification: None,
            correction: None,
            client_outcome: None,
            user_input: None,
            kind: StepKind::Dom,
            chain: Vec::new(),
            tool_result: None,
            usage: None,
            timings: None,
            plan: None,
            recipe: None,
            created_at,
            expires_at,
        }
    }

    /// The server tool this step ran (`googleSearch`, `remember`, ...): `None` for browser
    /// actions and for rounds that ran no tool (a deadline, a deferred tool).
    pub fn tool(&self) -> Option<&str> {
        if self.kind != StepKind::ServerTool {
            return None;
        }
        self.tool_result.as_ref()?.get("tool")?.as_str()
    }
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;
