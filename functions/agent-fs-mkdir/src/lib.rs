//! `POST /api/v1/agent/fs/mkdir { sessionId, path }` (`fs.mkdir`, batch tier): creates a
//! directory and its parents.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-fs-mkdir",
    methods: &[Method::POST],
    path: "/api/v1/agent/fs/mkdir",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    http::agent::body_call(ctx, req, |_| "fs.mkdir").await
}
