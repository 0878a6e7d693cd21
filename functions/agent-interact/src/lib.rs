//! `POST /api/agent/interact`: one step of the action loop. The client sends the page, the URL
//! and the instruction; the answer is the next action, flat, as CONTRACT.md describes. The
//! step itself (load → decide → guard → persist) lives in `shared::agent::step`.

use ::http::{Method, StatusCode};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use shared::agent::request::{read, validate, InteractRequest};
use shared::agent::step::{self, StepInput};
use shared::auth::{check_account, Principal};
use shared::config::Orchestrator;
use shared::http::guard::verify_bearer;
use shared::http::{self, parse_json, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-interact",
    methods: &[Method::POST],
    path: "/api/agent/interact",
};

/// Longest `Idempotency-Key` accepted.
const MAX_IDEMPOTENCY_KEY: usize = 128;

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, interact).await
}

fn idempotency_key(req: &Request) -> Result<Option<String>, Error> {
    let Some(v) = req.headers().get("idempotency-key") else {
        return Ok(None);
    };
    let key = v.to_str().unwrap_or("").trim();
    let ok = !key.is_empty()
        && key.len() <= MAX_IDEMPOTENCY_KEY
        && key.chars().all(|c| c.is_ascii_graphic());
    if !ok {
        return Err(Error::field(
            "Idempotency-Key",
            format!("must be 1 to {MAX_IDEMPOTENCY_KEY} visible ASCII characters"),
        ));
    }
    Ok(Some(key.to_owned()))
}

/// Bodies larger than this are read on a page builder (off the async workers, one per core at
/// a time with the page builds): a 5 MB tree takes tens of milliseconds to read.
const INLINE_BODY_BYTES: usize = 256 * 1024;

/// What the body says: the request, the body kept for phases in other processes, and its hash
/// (for an `Idempotency-Key` only).
type Read = (InteractRequest, Option<Box<RawValue>>, String);

/// Reads the body in one pass (and hashes it when `hashed`); the phases in other processes
/// (`kept`) read its text again.
fn read_body(req: &Request, kept: bool, hashed: bool) -> Result<Read, Error> {
    let _parsing = tracing::debug_span!("interact.parse").entered();
    let (request, text) = match read(req.body()) {
        Some(request) => (request?, None),
        // Not a JSON object: the JSON reader says where.
        None => {
            let body = parse_json::<serde_json::Value>(req)?;
            (validate(&body)?, Some(body.to_string()))
        }
    };
    let body = if kept {
        // Read above, so UTF-8 and JSON.
        let text = text.unwrap_or_else(|| String::from_utf8_lossy(req.body()).into_owned());
        Some(RawValue::from_string(text).map_err(Error::internal)?)
    } else {
        None
    };
    let hash = if hashed {
        http::body_hash(req)
    } else {
        String::new()
    };
    Ok((request, body, hash))
}

/// What is wrong with a request's input, said only to a valid account: a revoked token or a
/// disabled user gets 401 whatever it sent (the account is otherwise checked with the step's
/// first reads).
async fn refused_input(ctx: &AppContext, principal: &Principal, problem: Error) -> Error {
    let mut account = principal.clone();
    match check_account(ctx.store.as_ref(), ctx.clock.now(), &mut account).await {
        Ok(_) => problem,
        Err(e) => e,
    }
}

async fn interact(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    // The signature is checked here; the account is checked with the step's first reads.
    let principal = verify_bearer(ctx, req.headers()).await?;
    let idempotency_key = match idempotency_key(&req) {
        Ok(key) => key,
        Err(e) => return Err(refused_input(ctx, &principal, e).await),
    };
    let request_id = http::request_id(&req);
    let kept = !matches!(ctx.config.agent.orchestrator, Orchestrator::InProcess);
    // Compared only when the client sends an `Idempotency-Key`: hashed only then.
    let hashed = idempotency_key.is_some();
    let read = if req.body().len() <= INLINE_BODY_BYTES {
        read_body(&req, kept, hashed)
    } else {
        let deadline = Instant::now() + Duration::from_millis(ctx.config.agent.step_deadline_ms);
        let job = step::on_builder("reading the body", move || read_body(&req, kept, hashed));
        step::in_time(deadline, async { job.await? }).await
    };
    let (request, body, request_hash) = match read {
        Ok(read) => read,
        Err(e) => return Err(refused_input(ctx, &principal, e).await),
    };
    let input = StepInput {
        principal,
        request,
        request_id,
        idempotency_key,
        request_hash,
    };
    let response = step::run(&ctx.step(), input, body).await?;
    let _responding = tracing::debug_span!("interact.respond").entered();
    Ok(http::json(StatusCode::OK, &response))
}
