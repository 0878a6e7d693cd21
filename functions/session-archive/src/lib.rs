//! `POST /api/session` with `{ sessionId }`: archives one of the caller's sessions and ends
//! the task it is running (its next interact answers `409 TASK_COMPLETED`).

use ::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;
use shared::http::guard::authenticate;
use shared::http::parse_json;
use shared::http::{self, Request, Response, RouteSpec};
use shared::sessions::{archive, owned_session};
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
    let session = owned_session(ctx.store.as_ref(), &p, &id).await?;
    archive(ctx.sessions(), &p, &session).await?;
    Ok(http::json(
        StatusCode::OK,
        &json!({ "success": true, "data": { "sessionId": id, "status": "archived", "message": "Session archived" } }),
    ))
}
