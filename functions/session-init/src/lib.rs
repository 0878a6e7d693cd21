//! `POST /api/session/init`: makes sure the client-made session exists under the caller's
//! tenant. Idempotent: an existing id answers `created: false`; an id another account already
//! uses answers `409 SESSION_ID_TAKEN` (ids name global realtime channels). `url` may be any
//! URL (the side panel sends its own `chrome-extension://` page) or absent (the shipping client
//! sends none while its session list is not loaded yet), and `domain` may be empty: a session
//! without a domain gets the one of its first task's web page.

use ::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;
use shared::domain::session::{auto_title, session_domain};
use shared::domain::Session;
use shared::error::FieldProblem;
use shared::http::guard::authenticate;
use shared::http::parse_json;
use shared::http::{self, Request, Response, RouteSpec};
use shared::ports::SessionCreated;
use shared::sessions::{session_id_taken, session_not_found};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "session-init",
    methods: &[Method::POST],
    path: "/api/session/init",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitBody {
    session_id: String,
    /// Absent while the client does not know its tab yet: the session's first task names its
    /// page.
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    domain: Option<String>,
    #[serde(default)]
    initial_query: Option<String>,
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    let b: InitBody = parse_json(&req)?;
    let mut problems = Vec::new();
    let session_id = uuid::Uuid::parse_str(b.session_id.trim()).map(|u| u.hyphenated().to_string());
    if session_id.is_err() {
        problems.push(FieldProblem::new("sessionId", "must be a UUID"));
    }
    let url = b.url.as_deref().unwrap_or_default().trim().to_owned();
    if url.len() > 4096 {
        problems.push(FieldProblem::new(
            "url",
            "must be a URL of at most 4096 characters",
        ));
    }
    let query = b
        .initial_query
        .map(|q| q.trim().to_owned())
        .filter(|q| !q.is_empty());
    if query.as_ref().is_some_and(|q| q.chars().count() > 10_000) {
        problems.push(FieldProblem::new(
            "initialQuery",
            "must be at most 10000 characters",
        ));
    }
    if b.domain.as_ref().is_some_and(|d| d.len() > 253) {
        problems.push(FieldProblem::new(
            "domain",
            "must be at most 253 characters",
        ));
    }
    let Ok(session_id) = session_id else {
        return Err(Error::Validation(problems));
    };
    if !problems.is_empty() {
        return Err(Error::Validation(problems));
    }
    if let Some(existing) = ctx.store.session(&p.tenant_id, &session_id).await? {
        if existing.user_id != p.user_id {
            return Err(session_not_found());
        }
        return Ok(created(&session_id, false));
    }
    let now = ctx.clock.now();
    let domain = session_domain(b.domain.as_deref(), &url);
    let title = auto_title(&domain, query.as_deref());
    let metadata = query.map(|q| json!({ "initialQuery": q }));
    let session = Session::new_active(
        session_id.clone(),
        p.tenant_id.clone(),
        p.user_id.clone(),
        url,
        domain,
        title,
        metadata,
        now,
    );
    match ctx.store.create_session(&session).await? {
        SessionCreated::Created => Ok(created(&session_id, true)),
        SessionCreated::Exists => Ok(created(&session_id, false)),
        SessionCreated::Taken => Err(session_id_taken()),
    }
}

fn created(session_id: &str, created: bool) -> Response {
    http::json(
        StatusCode::OK,
        &json!({ "success": true, "data": { "sessionId": session_id, "created": created } }),
    )
}
