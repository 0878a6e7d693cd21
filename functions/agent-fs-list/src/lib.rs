//! `GET /api/v1/agent/fs/list?sessionId=&path=`: the entries of a directory of the session's
//! workspace (`fs.list`, auto tier), sorted by name, at most 1 000.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-fs-list",
    methods: &[Method::GET],
    path: "/api/v1/agent/fs/list",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    http::agent::query_call(ctx, req, "fs.list").await
}
