//! The phase function of the interact step's state machine on AWS Step Functions: every Task
//! state of `statemachine/interact-step.asl.json` invokes it with `{ phase, run, ... }`; it
//! runs that phase on the run record and answers the phase's summary — or fails with the
//! stable error name (`Store.Throttled`, `Model.Unavailable`, `Step.Refused`, `Step.Failed`,
//! `Step.Overloaded`) that the definition's `Retry` and `Catch` match.

use lambda_runtime::{Diagnostic, LambdaEvent};
use serde_json::Value;
use shared::agent::step::flow::cloud;
use shared::asl::Failure;
use shared::AppContext;

/// A phase's failure as Lambda reports it: `errorType` is the name the machine matches.
#[derive(Debug)]
pub struct PhaseError(pub Failure);

impl From<PhaseError> for Diagnostic {
    fn from(e: PhaseError) -> Self {
        Diagnostic {
            error_type: e.0.error,
            error_message: e.0.cause,
        }
    }
}

/// Runs the phase the event names.
pub async fn handle(ctx: &AppContext, event: LambdaEvent<Value>) -> Result<Value, PhaseError> {
    let phase = event.payload["phase"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let result = cloud::handle_phase(&ctx.step(), &event.payload).await;
    if let Err(f) = &result {
        tracing::info!(phase = %phase, error = %f.error, "phase failed");
    }
    result.map_err(PhaseError)
}
