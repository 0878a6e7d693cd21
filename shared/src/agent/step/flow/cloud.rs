//! AWS Step Functions Express as the executor: the interact function writes the run record
//! (compressed, with the page snapshots, under the tenant) and starts the machine
//! synchronously; every Task state invokes the phase function (`functions/agent-phase`),
//! which reads the run record, runs its phase and writes the record back. The Knowledge and
//! WebSearch states only read it, so the Parallel state's branches never race.

use serde_json::Value;

use super::{answer, failure, phases, Phase, RunState};
use crate::agent::request::read;
use crate::agent::step::StepPorts;
use crate::agent::step::{page, StepInput};
use crate::asl::Failure;
use crate::error::Error;
use crate::ports::StoreError;

/// The run record is kept as snapshot 0 of the pseudo task `run-<id>` of the tenant.
pub(crate) fn record_of(id: &str) -> String {
    format!("run-{id}")
}

pub(crate) async fn save(ctx: &StepPorts<'_>, run: &RunState) -> Result<(), Error> {
    let bytes = serde_json::to_vec(run).map_err(Error::internal)?;
    ctx.snapshots
        .put_snapshot(run.tenant_id(), &record_of(&run.id), 0, &bytes)
        .await?;
    Ok(())
}

async fn forget(ctx: &StepPorts<'_>, tenant_id: &str, id: &str) {
    if let Err(e) = ctx
        .snapshots
        .delete_snapshots(tenant_id, &record_of(id))
        .await
    {
        tracing::warn!(error = %e, "the run record could not be deleted");
    }
}

/// Runs the step on Step Functions: the record, then one synchronous execution.
pub async fn execute(ctx: &StepPorts<'_>, arn: &str, run: RunState) -> Result<Value, Error> {
    save(ctx, &run).await?;
    let started = ctx
        .executions
        .run_sync(arn, &run.id, run.execution_input().to_string())
        .await;
    let out = match started {
        Ok(out) => out,
        Err(e) => {
            forget(ctx, run.tenant_id(), &run.id).await;
            return Err(Error::Store(StoreError::Unavailable(e)));
        }
    };
    if out.succeeded {
        let output: Value = serde_json::from_str(out.output.as_deref().unwrap_or("{}"))
            .map_err(|e| Error::internal(format!("step machine output: {e}")))?;
        return answer(&output);
    }
    // Every phase's error is caught by the machine: only a fault of the machine itself (or
    // of the Release state) ends here.
    forget(ctx, run.tenant_id(), &run.id).await;
    Err(Error::internal(format!(
        "step machine {}: {}",
        out.status,
        out.error.unwrap_or_default()
    )))
}

/// The run named by a phase event, with its request validated and its page built again.
pub(crate) async fn restore(
    ctx: &StepPorts<'_>,
    event: &Value,
    with_page: bool,
) -> Result<RunState, Error> {
    let id = event["run"]["id"].as_str().unwrap_or_default();
    let tenant = event["run"]["tenant"].as_str().unwrap_or_default();
    let bytes = ctx
        .snapshots
        .snapshot(tenant, &record_of(id), 0)
        .await?
        .ok_or_else(|| Error::internal("the run record is missing"))?;
    let mut run: RunState = serde_json::from_slice(&bytes).map_err(Error::internal)?;
    if run.tenant_id() != tenant {
        return Err(Error::internal("the run record belongs to another tenant"));
    }
    let body = run.body.as_deref().map_or("", |b| b.get());
    let request = read(body.as_bytes())
        .ok_or_else(|| Error::internal("the run record's request is not a JSON object"))??;
    let principal = run
        .principal
        .clone()
        .ok_or_else(|| Error::internal("the run record has no principal"))?;
    let mut input = StepInput {
        principal,
        request,
        request_id: run.request_id.clone(),
        idempotency_key: run.idempotency_key.clone(),
        request_hash: run.request_hash.clone(),
    };
    if with_page && run.step.is_some() {
        run.built = Some(page::start(ctx, &mut input.request, run.deadline()).await?);
    }
    run.input = Some(input);
    Ok(run)
}

/// The phase function: runs the phase an event names (`{ phase, run: { id, tenant }, ... }`)
/// and answers its summary, or the error name the machine's Retry and Catch match.
pub async fn handle_phase(ctx: &StepPorts<'_>, event: &Value) -> Result<Value, Failure> {
    let name = event["phase"].as_str().unwrap_or_default();
    let Some(phase) = Phase::parse(name) else {
        let e = Error::internal(format!("no phase named {name}"));
        crate::error::log_error(&e);
        return Err(Failure::new(e.state_error(), "no such phase"));
    };
    let mut run = match restore(ctx, event, phase.needs_page()).await {
        Ok(r) => r,
        Err(e) => {
            crate::error::log_error(&e);
            return Err(Failure::new(
                e.state_error(),
                "the run could not be restored",
            ));
        }
    };
    if phase.read_only() {
        let out = match phases::GatherArgs::of(&run) {
            Ok(args) => phases::gather(ctx, phase, args).await,
            Err(e) => Err(e),
        };
        return out.map_err(|e| failure(&mut run, &e));
    }
    let out = phases::phase(ctx, &mut run, phase, event).await;
    let out = out.map_err(|e| failure(&mut run, &e));
    if matches!(phase, Phase::Respond | Phase::Release) {
        forget(ctx, run.tenant_id(), &run.id).await;
    } else if let Err(e) = save(ctx, &run).await {
        crate::error::log_error(&e);
        return Err(Failure::new(e.state_error(), "the run could not be saved"));
    }
    out
}
