//! One interact step as named phases over a small serializable [`StepContext`], run by the
//! state machine `statemachine/interact-step.asl.json` ([`flow`]):
//!
//! 1. Load ([`load`]): three rounds of concurrent store calls — authentication with the reads
//!    that claim nothing (session, history, allowed domains); then the claims (the user's rate
//!    count, the idempotency key, the task lease) and the admission of the request; then the
//!    tenant's rate count and token budget with the page ([`page`], built on the blocking
//!    pool). Nothing is counted or claimed for a request whose token or account is refused,
//!    and page work starts only for requests within the user's limit.
//! 2. Verify ([`verify`]): the previous action checked against this page — rules first, a
//!    (cheaper) model only when the evidence is ambiguous.
//! 3. Correct | Plan ([`plan`]): decisions the rules can make ([`shortcut`]: a confirmed
//!    risky action, a blocker, a cookie banner; [`correct`]: a concrete correction).
//! 4. Gather ([`search`] and the knowledge port): organisation knowledge ‖ the web search a
//!    new task's planning answer asked for.
//! 5. Decide ([`decide`]): one model call.
//! 6. Guard ([`guard`], run by [`decide`]): the answer's grammar, element, loops, the risk
//!    gate, chains and, for `finish()`, a success check ([`accept`]); a server tool goes to
//!    RunTool ([`tools`], [`memory`]) and the model is asked again, within bounds.
//! 7. Persist ([`persist`]): the step with the task's new state (the lease released), the
//!    session's messages and the page snapshot — concurrently.
//! 8. Respond ([`response`]).
//!
//! The same numbering is `docs/architecture.md`'s and each phase module's header's.
//!
//! The step's time has one owner ([`deadline`]): every reserve kept back from the request's
//! deadline, and whether a model call, a retry, a verdict, a search or a page read still fits.
//! The phases that spend time ask it and import nothing from each other for it.
//!
//! A new task is written only in `persist`, so a failed step leaves nothing behind. A refused
//! request hands back everything `load` claimed; a step that fails after asking the model hands
//! back its lease and idempotency key (the Release state), and its rate counts stay.

mod accept;
mod budget;
mod correct;
mod deadline;
mod decide;
pub mod flow;
mod guard;
mod judge;
mod load;
mod memory;
mod page;
mod persist;
mod plan;
mod ports;
mod read_page;
mod recipe;
mod records;
mod response;
mod search;
mod secrets;
mod shortcut;
mod tools;
mod verify;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use decide::MAX_CALLS as MAX_MODEL_CALLS;
pub use guard::{guard, Facts, Proposal, Review};
pub use load::{Admitted, Loaded};
pub use memory::MemoryResult;
pub use page::{in_time, on_builder, BuiltPage};
pub use persist::persist;
pub use ports::StepPorts;
pub use response::StepResponse;
pub use tools::{ToolAction, MAX_TOOLS_PER_REQUEST};

use super::request::InteractRequest;
use crate::auth::Principal;
use crate::domain::blocker::BlockerInfo;
use crate::domain::chain::{ChainItem, ChainMetadata};
use crate::domain::correction::Correction;
use crate::domain::facts::ElementSnapshot;
use crate::domain::intervention::{note, Intervention};
use crate::domain::outcome::ExpectedOutcome;
use crate::domain::verdict::Verification;
use crate::domain::{Session, Step, StepKind, Task, TaskStatus, TokenUsage};
use crate::error::Error;
use crate::ports::knowledge::KnowledgeChunk;

/// What a request brings to the step.
#[derive(Debug, Clone)]
pub struct StepInput {
    pub principal: Principal,
    pub request: InteractRequest,
    pub request_id: String,
    pub idempotency_key: Option<String>,
    /// SHA-256 of the request body (hex): a key reused with another body is refused.
    pub request_hash: String,
}

/// What the step decided: the response's action fields and what is stored with the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub thought: String,
    /// In the client's grammar.
    pub action: String,
    pub status: TaskStatus,
    pub user_question: Option<String>,
    pub expected_outcome: Option<ExpectedOutcome>,
    /// The action's target as it was decided on (for corrections).
    pub target: Option<ElementSnapshot>,
    /// Every action of a chain (the first is `action`).
    pub chain: Vec<ChainItem>,
    pub chain_metadata: Option<ChainMetadata>,
    /// A server tool that ran (the client executes nothing).
    pub tool_action: Option<ToolAction>,
    /// The server tool call as written, stored as the step's action.
    pub tool_call: Option<String>,
    /// What is stored as the step's tool result (a server round's reason).
    pub tool_result: Option<Value>,
    pub blocker: Option<BlockerInfo>,
    pub missing_information: Vec<String>,
    pub kind: StepKind,
    /// The action is one the user confirmed.
    pub confirmed: bool,
    /// The action is the rest of the model's earlier answer, kept on the server.
    pub queued: bool,
    /// What the model declared the action does (`<Effect>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<crate::domain::risk::Effect>,
}

impl Decision {
    /// A decision with nothing but its thought, action and status.
    pub fn new(thought: impl Into<String>, action: impl Into<String>, status: TaskStatus) -> Self {
        Self {
            thought: thought.into(),
            action: action.into(),
            status,
            user_question: None,
            expected_outcome: None,
            target: None,
            chain: Vec::new(),
            chain_metadata: None,
            tool_action: None,
            tool_call: None,
            tool_result: None,
            blocker: None,
            missing_information: Vec::new(),
            kind: StepKind::Dom,
            confirmed: false,
            queued: false,
            effect: None,
        }
    }

    /// The task fails with `thought` as the reason.
    pub fn fail(thought: impl Into<String>) -> Self {
        Self::new(thought, "fail()", TaskStatus::Failed)
    }

    /// The user is asked `question`.
    pub fn ask(thought: impl Into<String>, question: impl Into<String>) -> Self {
        Self {
            user_question: Some(question.into()),
            ..Self::new(thought, "ask_user()", TaskStatus::NeedsUserInput)
        }
    }
}

/// The state carried between phases: references and small summaries, never the page. The
/// fields are grouped by what they are about, each group by the phase that writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepContext {
    // Load: who asks, about which task, with what (written once).
    pub tenant_id: String,
    pub user_id: String,
    /// This request's hold on the task and what it brings besides the page.
    pub request: RequestPart,
    /// The task as this step leaves it (a new one is made in `load`; every phase may change it).
    pub task: Task,
    /// The task's session.
    pub session: SessionPart,
    /// What `load` (and the rules, for new elements) read off the page.
    pub page: PageDigest,
    /// Verify and Correct | Plan: the verdict on the previous action and what follows from it.
    pub verdicts: Verdicts,
    /// What the model is given besides the task and the page (Gather, and the rules' notes).
    pub brief: Brief,
    /// The task's records: those stored before this request, then the server tools it ran.
    pub records: Records,
    /// Decide, Guard and RunTool: the answer and what the server's rules did to it.
    pub answer: Answer,
    /// Every phase that spends: tokens, calls, time.
    pub spend: Spend,
}

/// This request's hold on the task and what it brings besides the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPart {
    /// Holder id of the task lease (the request id).
    pub lease_owner: String,
    /// The task starts with this step: nothing is stored yet and no lease is held.
    pub is_new: bool,
    /// The index of the request's first record (its page snapshot is stored under it); the
    /// records' `step_index` is the index of the next record.
    pub first_index: u32,
    /// The request's time as the store's claims saw it.
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// The user's reply carried by this request (after `ask_user` or a blocker).
    pub user_input: Option<String>,
}

/// The task's session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPart {
    pub id: String,
    /// Set when the session must be created with this step.
    pub new: Option<Session>,
    /// The session as read in `load`, when it exists (saves a read when appending messages).
    pub read: Option<Session>,
    /// Session notes changed by `exportToSession`.
    pub memory: Option<std::collections::BTreeMap<String, String>>,
}

/// The verdict on the previous action and what follows from it (Verify, Correct | Plan).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdicts {
    /// The verdict on the previous action.
    pub verification: Option<Verification>,
    /// The verdict was made by an earlier request (which then ended as a server round) and is
    /// already stored.
    pub reused: bool,
    /// The correction chosen after a failed verification.
    pub correction: Option<Correction>,
    /// The plan is to be made again from here.
    pub replan: bool,
    /// This step made the task's plan or made it again (kept with its record).
    pub plan_changed: bool,
}

/// What the model is given besides the task and the page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Brief {
    /// The tenant has organisation knowledge for the page's domain (the Knowledge state asks
    /// for it).
    pub org_knowledge: bool,
    /// Gather: what was found for the task.
    pub knowledge: Vec<KnowledgeChunk>,
    /// Lines for the model from the server's own rules (a correction to make, a refusal);
    /// they live for this request (the task's carried notes live until the next).
    pub notes: Vec<String>,
    /// The recipe step the model is asked for, as recorded (shown as data, not instructions).
    pub recipe_step: Option<String>,
}

/// The task's records: those stored before this request, then the server tools it ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Records {
    pub history: Vec<Step>,
    /// The records of the server tools this request ran (also at the end of `history`).
    pub tool_steps: Vec<Step>,
    /// The index of the next record.
    pub step_index: u32,
}

/// The step's answer and what the server's rules did to it (Decide, Guard and RunTool).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub decision: Option<Decision>,
    /// What the server's rules did to this step (see [`Intervention`]).
    pub interventions: Vec<Intervention>,
    /// The model's `finish()` was confirmed (by the finish judge, or a `verifySuccess` on this
    /// page): only such a run is recorded as a recipe.
    pub finish_confirmed: bool,
    /// The step came from the task's recipe (replayed, or healed by the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe_use: Option<crate::domain::recipe::book::RecipeUse>,
}

/// What `load` read off the request's page (the page itself stays out of the state).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageDigest {
    pub hash: String,
    /// The page's view hash (content and positions; see `Page::view`).
    #[serde(default)]
    pub view_hash: String,
    pub summary: String,
    /// The rendering the prompt got.
    pub form: String,
    /// Elements new since the task's last page (marked in the prompt; set by the rules).
    #[serde(default)]
    pub new_ids: Vec<String>,
    /// This page's element hashes, kept with the task when the step answers with a browser
    /// action ([`crate::domain::marks`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub marks: String,
}

/// What the step cost: written by every model call and the budget's reservation, kept with the
/// step and reported in `metrics`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Spend {
    pub usage: TokenUsage,
    pub llm_ms: u64,
    pub llm_calls: u32,
    /// Tokens reserved from the tenant's daily budget (settled after the step, in the window
    /// of `started_at`).
    pub budget_reserved: u64,
    /// When each phase ended.
    pub phases: Phases,
}

/// Microseconds from the start of a request to the end of `load` (with the page), `verify`
/// and `decide` (model time included); stored with the step for the benchmarks and debugging.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Phases {
    pub loaded_us: u64,
    pub verified_us: u64,
    pub decided_us: u64,
}

impl StepContext {
    /// Notes an intervention of the server's rules.
    pub fn intervene(&mut self, kind: Intervention) {
        note(&mut self.answer.interventions, kind);
    }

    /// Every intervention of the step, those read off its verdict and correction included.
    pub fn all_interventions(&self) -> Vec<Intervention> {
        let mut all = Vec::new();
        if (self.verdicts.verification.as_ref()).is_some_and(|v| v.failed()) {
            note(&mut all, Intervention::FailedVerdict);
        }
        if self.verdicts.correction.is_some() {
            note(&mut all, Intervention::Correction);
        }
        for k in &self.answer.interventions {
            note(&mut all, *k);
        }
        all
    }

    /// Adds a model call's answer (its tokens, priced at `price`) and time.
    pub fn count_answer(
        &mut self,
        c: &crate::ports::llm::Completion,
        price: Option<crate::domain::cost::Price>,
        elapsed: Duration,
    ) {
        let usage = crate::domain::cost::usage(
            price.as_ref(),
            c.prompt_tokens,
            c.cached_tokens,
            c.cache_write_tokens,
            c.completion_tokens,
        );
        self.count_call(usage, elapsed);
    }

    /// Adds a model call's usage and time.
    pub fn count_call(&mut self, usage: TokenUsage, elapsed: Duration) {
        self.spend.usage.add(usage);
        self.spend.llm_ms += elapsed.as_millis() as u64;
        self.spend.llm_calls += 1;
    }
}

/// Runs a whole step through the step's state machine and returns the response body;
/// `body` (the request as sent) is kept only when the phases run in other processes.
pub async fn run(
    ctx: &StepPorts<'_>,
    input: StepInput,
    body: Option<Box<serde_json::value::RawValue>>,
) -> Result<Value, Error> {
    flow::run(ctx, input, body).await
}
