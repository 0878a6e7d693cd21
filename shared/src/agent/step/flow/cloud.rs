//! AWS Step Functions Express as the executor: the interact function writes the run record
//! (compressed, with the page snapshots, under the tenant) and starts the machine
//! synchronously; every Task state invokes the phase function (`functions/agent-phase`),
//! which reads the run record, runs its phase and writes the record back. The Knowledge and
//! WebSearch states only read it, so the Parallel state's branches never race.

use serde_json::Value;

use super::{answer, failure, phases, RunState};
use crate::agent::request::read;
use crate::agent::step::StepPorts;
use crate::agent::step::{page, StepInput};
use crate::asl::Failure;
use crate::error::Error;
use crate::ports::StoreError;

/// The run record is kept as snapshot 0 of the pseudo task `run-<id>` of the tenant.
fn record_of(id: &str) -> String {
    format!("run-{id}")
}

async fn save(ctx: &StepPorts<'_>, run: &RunState) -> Result<(), Error> {
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
async fn restore(ctx: &StepPorts<'_>, event: &Value, with_page: bool) -> Result<RunState, Error> {
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
    let name = event["phase"].as_str().unwrap_or_default().to_owned();
    let read_only = matches!(name.as_str(), "knowledge" | "webSearch");
    let needs_page = !read_only && !matches!(name.as_str(), "load" | "respond" | "release");
    let mut run = match restore(ctx, event, needs_page).await {
        Ok(r) => r,
        Err(e) => {
            crate::error::log_error(&e);
            return Err(Failure::new(
                e.state_error(),
                "the run could not be restored",
            ));
        }
    };
    if read_only {
        let out = match phases::GatherArgs::of(&run) {
            Ok(args) => phases::gather(ctx, &name, args).await,
            Err(e) => Err(e),
        };
        return out.map_err(|e| failure(&mut run, &e));
    }
    let out = phases::phase(ctx, &mut run, &name, event).await;
    let out = out.map_err(|e| failure(&mut run, &e));
    if matches!(name.as_str(), "respond" | "release") {
        forget(ctx, run.tenant_id(), &run.id).await;
    } else if let Err(e) = save(ctx, &run).await {
        crate::error::log_error(&e);
        return Err(Failure::new(e.state_error(), "the run could not be saved"));
    }
    out
}

#[cfg(all(test, feature = "embedded"))]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::auth::Principal;
    use crate::clock::{Clock, SystemClock};
    use crate::config::Config;
    use crate::domain::Role;

    #[tokio::test]
    async fn a_run_record_gives_the_phases_the_request_as_sent_unknown_fields_and_all() {
        let config = Config::from_lookup(|k| match k {
            "JWT_SECRET" => Some("0123456789abcdef0123456789abcdef".into()),
            "STORE" => Some("memory".into()),
            _ => None,
        })
        .expect("config");
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let stores = crate::context::open_stores(&config.store, clock.clone())
            .await
            .expect("stores");
        let app = crate::context::AppContext::with_parts(config, stores, clock);
        let ctx = app.step();
        // Fields no JSON value holds, where the server reads nothing: the phases in other
        // processes read the body as the interact function did.
        let body = format!(
            r#"{{"url":"about:blank","query":"go","dom":"<a id=1>x</a>","later":1e400,"deep":{}1{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        let request = read(body.as_bytes()).expect("object").expect("valid");
        let principal = Principal {
            user_id: "u1".into(),
            tenant_id: "acme".into(),
            email: "ada@acme.com".into(),
            jti: "j1".into(),
            expires_at: chrono::Utc::now(),
            role: Role::Member,
        };
        let input = StepInput {
            principal,
            request: request.clone(),
            request_id: "r1".into(),
            idempotency_key: None,
            request_hash: String::new(),
        };
        let raw = serde_json::value::RawValue::from_string(body).expect("JSON");
        let run = RunState::new(input.clone(), Some(raw), 30_000);
        save(&ctx, &run).await.expect("saved");
        // The version before read the record's body as a JSON value: it still can (a body
        // whose every number fits one).
        let plain = r#"{"url":"about:blank","query":"go","dom":"<a id=1>x</a>","later":[[1]]}"#;
        let raw = serde_json::value::RawValue::from_string(plain.into()).expect("JSON");
        let earlier = RunState::new(input, Some(raw), 30_000);
        save(&ctx, &earlier).await.expect("saved");
        let record = ctx
            .snapshots
            .snapshot("acme", &record_of(&earlier.id), 0)
            .await;
        let record: Value = serde_json::from_slice(&record.ok().flatten().unwrap_or_default())
            .expect("the record is JSON");
        assert_eq!(record["body"]["later"], serde_json::json!([[1]]));
        let event = serde_json::json!({ "run": { "id": run.id, "tenant": "acme" } });
        let back = restore(&ctx, &event, false).await.expect("restored");
        assert_eq!(back.input.map(|i| i.request), Some(request));
        // Another tenant's name for the run finds nothing.
        let other = serde_json::json!({ "run": { "id": run.id, "tenant": "globex" } });
        assert!(restore(&ctx, &other, false).await.is_err());
    }
}
