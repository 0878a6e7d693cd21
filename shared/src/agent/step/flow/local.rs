//! The in-process executor: the interpreter runs the definition and every Task state runs its
//! phase on the run held in memory (no serialization, no round trip).

use std::io::Write;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::Mutex;
use tracing::Instrument;

use super::{answer, failure, machine, phases, Phase, RunState};
use crate::agent::step::StepPorts;
use crate::asl::{self, Failure, Options, TaskRunner};
use crate::error::Error;

/// How long the machine runs past the step's deadline before it is cut: the definition's
/// 29 s limit less the default 25 s deadline.
const GRACE: Duration = Duration::from_secs(4);

struct Local<'a> {
    ctx: &'a StepPorts<'a>,
    run: Mutex<RunState>,
}

#[async_trait]
impl TaskRunner for Local<'_> {
    async fn run(&self, _state: &str, _resource: &str, input: Value) -> Result<Value, Failure> {
        let payload = &input["Payload"];
        let name = payload["phase"].as_str().unwrap_or_default();
        let span = tracing::debug_span!("interact.phase", phase = name);
        let out = async {
            let Some(phase) = Phase::parse(name) else {
                return Err(Error::internal(format!("no phase named {name}")));
            };
            if phase.read_only() {
                // Run at once by the Parallel state: the run is not held meanwhile.
                let args = phases::GatherArgs::of(&*self.run.lock().await)?;
                return phases::gather(self.ctx, phase, args).await;
            }
            let mut run = self.run.lock().await;
            let out = phases::phase(self.ctx, &mut run, phase, payload).await;
            if let Some(built) = run.built.as_ref().filter(|_| phase == Phase::Load) {
                // In this process the page lives until persist: compress its snapshot
                // meanwhile (the cloud flow's phase functions compress at persist).
                built.start_compressing();
            }
            out
        }
        .instrument(span)
        .await;
        match out {
            // Shaped like the Lambda integration's answer, which the definition selects from.
            Ok(v) => Ok(json!({ "Payload": v, "StatusCode": 200 })),
            Err(e) => Err(failure(&mut *self.run.lock().await, &e)),
        }
    }
}

/// Appends the execution's largest state to the report file, when one is configured.
fn report(ctx: &StepPorts<'_>, e: &asl::Execution) {
    let Some(path) = &ctx.agent.state_report else {
        return;
    };
    let line = format!("{} {}\n", e.largest_state, e.path.join(">"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path);
    if let Ok(mut f) = file {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Runs the step's machine in this process.
pub async fn execute(ctx: &StepPorts<'_>, run: RunState) -> Result<Value, Error> {
    let machine = machine()?;
    let input = run.execution_input();
    let local = Local {
        ctx,
        run: Mutex::new(run),
    };
    let opts = {
        let run = local.run.lock().await;
        Options {
            name: run.id.clone(),
            // A deadline set longer than the cloud's (a slow local model) is the machine's too.
            at_least: Some(run.deadline().saturating_duration_since(Instant::now()) + GRACE),
            ..Options::default()
        }
    };
    let e = asl::execute(machine, input, &local, &opts).await;
    report(ctx, &e);
    tracing::debug!(
        states = e.path.len(),
        largest_state = e.largest_state,
        path = %e.path.join(">"),
        "step machine finished"
    );
    let mut run = local.run.into_inner();
    let result = match e.output {
        Ok(output) => answer(&output),
        // Only a fault of the machine itself gets here (every phase's error is caught).
        Err(f) => match run.failure.take() {
            Some(r) => Err(Error::Relayed(Box::new(r))),
            // The machine ran out of time (or failed) inside a phase, so its Release state
            // never ran: run it here, or the task stays claimed and the step's counts held
            // until they expire. It answers 503 with Retry-After for a timeout.
            None => {
                let error = json!({ "error": { "Error": f.error, "Cause": f.cause } });
                match phases::phase(ctx, &mut run, Phase::Release, &error).await {
                    Ok(output) => answer(&output),
                    Err(e) => Err(e),
                }
            }
        },
    };
    // The request, its page and their renderings are thousands of small allocations: they
    // are freed on the blocking pool, not while the client waits for the answer.
    tokio::task::spawn_blocking(move || drop(run));
    result
}
