//! `POST /api/v1/agent/exec { sessionId, program, args?, timeoutSeconds? }` (`exec.run`,
//! individual tier): an allowlisted program in the session's workspace — `403
//! COMMAND_NOT_ALLOWED` otherwise, checked before anything is parked. Answers `202` with the
//! pending approval; approving it starts the command and answers its `execId`.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-exec-start",
    methods: &[Method::POST],
    path: "/api/v1/agent/exec",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    http::agent::body_call(ctx, req, |_| "exec.run").await
}
