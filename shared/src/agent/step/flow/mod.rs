//! The step as a state machine: `statemachine/interact-step.asl.json` names the phases and the
//! paths between them, and one of two executors runs it — the in-process interpreter
//! ([`crate::asl`], the default) or AWS Step Functions Express ([`cloud`]), whose Task states
//! invoke the phase function. Either way a phase gets the [`RunState`] (the request, the page
//! and the step's context: in memory here, in the run record between Lambda invocations) and
//! the machine's state carries references and small summaries only.

pub mod cloud;
mod local;
mod phases;

use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

pub use phases::{gather, phase, GatherArgs, Phase};

use super::decide::Round;
use super::{BuiltPage, StepContext, StepInput};
use crate::agent::step::StepPorts;
use crate::asl::Machine;
use crate::auth::Principal;
use crate::config::Orchestrator;
use crate::error::{Error, Relayed};

/// The definition, as deployed.
pub const DEFINITION: &str = include_str!("../../../../../statemachine/interact-step.asl.json");

/// The definition's substitutions for the in-process executor. Deployed, the template gives
/// the phase function's ARN and the stack's partition (`aws`, `aws-cn`, `aws-us-gov`); here
/// every Task runs the phase named in its payload, so they only have to parse.
pub const LOCAL_SUBSTITUTIONS: &[(&str, &str)] =
    &[("PhaseFunctionArn", "phase"), ("Partition", "aws")];

/// The definition compiled for the in-process executor.
pub fn machine() -> Result<&'static Machine, Error> {
    static MACHINE: OnceLock<Result<Machine, String>> = OnceLock::new();
    MACHINE
        .get_or_init(|| Machine::parse(DEFINITION, LOCAL_SUBSTITUTIONS))
        .as_ref()
        .map_err(|e| Error::internal(format!("the step's state machine: {e}")))
}

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// What a request's step carries from phase to phase.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunState {
    pub id: String,
    pub principal: Option<Principal>,
    pub request_id: String,
    pub idempotency_key: Option<String>,
    pub request_hash: String,
    /// The request body as sent, kept in the record as JSON (so a phase function of the
    /// version before, which read it as a JSON value, reads it too); the phase function reads
    /// it again with the one-pass reader and builds the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Box<RawValue>>,
    pub started_unix_ms: i64,
    pub deadline_unix_ms: i64,
    /// The request as validated (in memory only).
    #[serde(skip)]
    pub input: Option<StepInput>,
    /// The page (in memory only; built again from the body by the phase function).
    #[serde(skip)]
    pub built: Option<BuiltPage>,
    pub step: Option<Box<StepContext>>,
    #[serde(default)]
    pub round: Round,
    /// The answer: the replayed one, or the step's once persisted.
    pub response: Option<Value>,
    /// The error answer of the phase that failed.
    pub failure: Option<Relayed>,
    /// The lease and idempotency key were handed back.
    #[serde(default)]
    pub released: bool,
}

impl RunState {
    /// A run of `input` that must end by `deadline_ms` from now.
    pub fn new(input: StepInput, body: Option<Box<RawValue>>, deadline_ms: u64) -> Self {
        let now = unix_ms();
        Self {
            id: uuid::Uuid::new_v4().to_string(),
            principal: Some(input.principal.clone()),
            request_id: input.request_id.clone(),
            idempotency_key: input.idempotency_key.clone(),
            request_hash: input.request_hash.clone(),
            body,
            started_unix_ms: now,
            deadline_unix_ms: now + deadline_ms as i64,
            input: Some(input),
            ..Self::default()
        }
    }

    /// The tenant the run belongs to (its record is kept under it).
    pub fn tenant_id(&self) -> &str {
        self.principal.as_ref().map_or("", |p| p.tenant_id.as_str())
    }

    /// The step's deadline as an instant of this process.
    pub fn deadline(&self) -> Instant {
        let left = (self.deadline_unix_ms - unix_ms()).max(0) as u64;
        Instant::now() + Duration::from_millis(left)
    }

    /// When the request started, as an instant of this process.
    pub fn started(&self) -> Instant {
        let gone = (unix_ms() - self.started_unix_ms).max(0) as u64;
        Instant::now()
            .checked_sub(Duration::from_millis(gone))
            .unwrap_or_else(Instant::now)
    }

    /// Microseconds since the request started.
    pub fn elapsed_us(&self) -> u64 {
        self.started().elapsed().as_micros() as u64
    }

    /// The execution's input: references only.
    pub fn execution_input(&self) -> Value {
        json!({
            "run": { "id": self.id, "tenant": self.tenant_id() },
            "decide": { "next": "start", "calls": 0 },
        })
    }
}

/// A phase's error as the machine sees it (the answer is kept for the Release state).
pub fn failure(run: &mut RunState, e: &Error) -> crate::asl::Failure {
    crate::error::log_error(e);
    let relayed = crate::error::relay(e);
    let cause = relayed.body["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    run.failure = Some(relayed);
    crate::asl::Failure::new(e.state_error(), cause)
}

/// The machine's answer (`{ status, body, headers }`) as the step's result.
pub fn answer(output: &Value) -> Result<Value, Error> {
    let status = output["status"].as_u64().unwrap_or(500) as u16;
    let body = output.get("body").cloned().unwrap_or(Value::Null);
    if status == 200 {
        return Ok(body);
    }
    Err(Error::Relayed(Box::new(Relayed {
        status,
        body,
        retry_after: output["headers"]["Retry-After"]
            .as_str()
            .and_then(|s| s.parse().ok()),
    })))
}

/// Runs a whole step through the state machine and returns the response body.
pub async fn run(
    ctx: &StepPorts<'_>,
    input: StepInput,
    body: Option<Box<RawValue>>,
) -> Result<Value, Error> {
    // Checked first: without a model nothing is read or written.
    if ctx.llm.is_none() {
        return Err(Error::LlmNotConfigured);
    }
    let run = RunState::new(input, body, ctx.agent.step_deadline_ms);
    match &ctx.agent.orchestrator {
        Orchestrator::InProcess => local::execute(ctx, run).await,
        Orchestrator::StepFunctions { state_machine_arn } => {
            cloud::execute(ctx, state_machine_arn, run).await
        }
    }
}
