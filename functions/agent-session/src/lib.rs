//! `GET /api/v1/agent/sessions/{sessionId}`: an agent session with its tool calls, approvals
//! and audit trail, newest first (the caller's own; tenant admins may read any of their
//! organisation's).

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-session",
    methods: &[Method::GET],
    path: "/api/v1/agent/sessions/{sessionId}",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let id = http::uuid_param(&req, "sessionId")?;
    let p = http::agent::caller(ctx, &req).await?;
    let view = shared::tools::session::view(ctx, &p, &id).await?;
    Ok(http::agent::ok(view))
}
