//! `POST /api/session` with `{ sessionId }`: archives one of the caller's sessions.

use ::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;
use shared::auth::authenticate;
use shared::domain::SessionStatus;
use shared::http::parse_json;
use shared::http::{self, Request, Response, RouteSpec};
use shared::ports::SessionChanges;
use shared::sessions::{not_found_as_session, owned_session};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "session-archive",
    methods: &[Method::POST],
    path: "/api/session",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArchiveBody {
    session_id: String,
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    let b: ArchiveBody = parse_json(&req)?;
    let id = uuid::Uuid::parse_str(b.session_id.trim())
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| Error::field("sessionId", "must be a UUID"))?;
    owned_session(ctx, &p, &id).await?;
    let changes = SessionChanges {
        status: Some(SessionStatus::Archived),
        ..SessionChanges::default()
    };
    let now = ctx.clock.now();
    let _updated = ctx
        .store
        .update_session(&p.tenant_id, &id, &changes, now)
        .await
        .map_err(not_found_as_session)?;
    let log = shared::debug::entry(
        ctx,
        &p.tenant_id,
        None,
        "session",
        &format!("{}: {id}", "session archived"),
        None,
        now,
    );
    if let Err(e) = ctx.store.append_log(&log).await {
        tracing::warn!(error = %e, "could not store the debug log");
    }
    Ok(http::json(
        StatusCode::OK,
        &json!({ "success": true, "data": { "sessionId": id, "status": "archived", "message": "Session archived" } }),
    ))
}
