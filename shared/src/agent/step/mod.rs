//! One interact step as named phases over a small serializable [`StepContext`]:
//!
//! 1. [`load`]: three rounds of concurrent store calls — authentication with the reads that
//!    claim nothing (history, session, allowed domains); then the claims (the user's rate
//!    count, the idempotency key, the task lease) and the admission of the request; then the
//!    tenant's rate count with the organisation knowledge and the page. Nothing is counted or
//!    claimed for a request whose token or account is refused, the tenant is counted only for
//!    requests within the user's limit, and page work starts only for those.
//! 2. [`page`]: the page model and its rendering, built on the blocking pool (bounded CPU
//!    work, a bounded number at a time, inside the step deadline).
//! 3. [`decide`]: build the prompt, ask the model.
//! 4. [`guard`]: the answer must parse, be in the grammar, be quotable for the client and name
//!    an element of this request's page; otherwise the model gets one retry with the problem
//!    fed back, and then the step answers `fail()`.
//! 5. [`persist`]: the step (with the task's new status and the lease released), the session's
//!    messages and the page snapshot — concurrently — then the response.
//!
//! A new task is written only in `persist`, so a failed step leaves nothing behind. A refused
//! request hands back everything `load` claimed; a step that fails after asking the model hands
//! back its lease and idempotency key, and its rate counts stay (the model was asked).

mod decide;
mod guard;
mod load;
mod page;
mod persist;
mod response;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use decide::decide;
pub use guard::guard;
pub use load::{Admitted, Loaded};
pub use page::BuiltPage;
pub use persist::persist;
pub use response::StepResponse;

use super::request::InteractRequest;
use crate::auth::Principal;
use crate::context::AppContext;
use crate::domain::{Session, Step, Task, TaskStatus};
use crate::error::Error;
use crate::knowledge::KnowledgeChunk;

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

/// Token usage summed over a step's model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// What the step decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub thought: String,
    /// In the client's grammar.
    pub action: String,
    pub status: TaskStatus,
    pub user_question: Option<String>,
}

/// The state carried between phases: references and small summaries, never the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepContext {
    pub tenant_id: String,
    pub user_id: String,
    /// Holder id of the task lease (the request id).
    pub lease_owner: String,
    /// The existing task (leased), or `None` for a new one.
    pub task: Option<Task>,
    pub task_id: String,
    pub step_index: u32,
    pub session_id: String,
    /// Set when the session must be created with this step.
    pub new_session: Option<Session>,
    /// The session as read in `load`, when it exists (saves a read when appending messages).
    pub session: Option<Session>,
    /// The user's reply carried by this request (after an `ask_user`).
    pub user_input: Option<String>,
    pub history: Vec<Step>,
    pub has_org_knowledge: bool,
    pub knowledge: Vec<KnowledgeChunk>,
    pub page_hash: String,
    pub page_summary: String,
    pub page_form: String,
    pub decision: Option<Decision>,
    pub usage: Usage,
    pub llm_ms: u64,
    pub llm_calls: u32,
}

/// Runs a whole step and returns the response body.
pub async fn run(ctx: &AppContext, mut input: StepInput) -> Result<Value, Error> {
    let started = Instant::now();
    let deadline = started + Duration::from_millis(ctx.config.agent.step_deadline_ms);
    // Checked first: without a model nothing is read or written.
    if ctx.llm.is_none() {
        return Err(Error::LlmNotConfigured);
    }
    // An unauthenticated request claims nothing and costs no page work; a refused one hands
    // back what it claimed.
    let reads = load::read(ctx, &input).await?;
    let admitted = match load::claim(ctx, &input, reads).await? {
        Loaded::Replay(response) => return Ok(response),
        Loaded::Ready(admitted) => *admitted,
    };
    let page_job = page::start(ctx, &mut input.request, deadline);
    let (step, built) = load::enter(ctx, &input, admitted, page_job).await?;
    let mut step = *step;
    let outcome = async {
        decide(ctx, &mut step, &input.request, &built, deadline).await?;
        persist(ctx, &step, &input, &built.snapshot, started).await
    }
    .await;
    match outcome {
        Ok(response) => Ok(response),
        Err(e) => {
            load::release(ctx, &step, &input).await;
            Err(e)
        }
    }
}
