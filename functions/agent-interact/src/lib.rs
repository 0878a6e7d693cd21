//! `POST /api/agent/interact`: one step of the action loop. The client sends the page, the URL
//! and the instruction; the answer is the next action, flat, as CONTRACT.md describes. The
//! step itself (load → decide → guard → persist) lives in `shared::agent::step`.

use ::http::{Method, StatusCode};
use shared::agent::request::{read, validate};
use shared::agent::step::{self, StepInput};
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

async fn interact(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    // The signature is checked here; the account is checked with the step's first reads.
    let principal = verify_bearer(ctx, req.headers())?;
    let idempotency_key = idempotency_key(&req)?;
    let parsing = tracing::debug_span!("interact.parse").entered();
    // The body is read in one pass; the phases in other processes read its text again.
    let (request, text) = match read(req.body()) {
        Some(request) => (request?, None),
        // Not a JSON object: the JSON reader says where.
        None => {
            let body = parse_json::<serde_json::Value>(&req)?;
            (validate(&body)?, Some(body.to_string()))
        }
    };
    let body = match ctx.config.agent.orchestrator {
        Orchestrator::InProcess => None,
        // Read above, so UTF-8.
        _ => Some(text.unwrap_or_else(|| String::from_utf8_lossy(req.body()).into_owned())),
    };
    drop(parsing);
    // Compared only when the client sends an `Idempotency-Key`: hashed only then.
    let request_hash = match &idempotency_key {
        Some(_) => http::body_hash(&req),
        None => String::new(),
    };
    let input = StepInput {
        principal,
        request,
        request_id: http::request_id(&req),
        idempotency_key,
        request_hash,
    };
    let response = step::run(ctx, input, body).await?;
    let _responding = tracing::debug_span!("interact.respond").entered();
    Ok(http::json(StatusCode::OK, &response))
}
