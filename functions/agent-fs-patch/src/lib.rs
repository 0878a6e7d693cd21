//! `POST /api/v1/agent/fs/patch { sessionId, path, patch, expectedVersion? }`
//! (`fs.apply_patch`, batch tier): a unified diff applied whole or not at all; one that does not
//! apply answers `422 PATCH_FAILED` naming the hunk and changes nothing.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-fs-patch",
    methods: &[Method::POST],
    path: "/api/v1/agent/fs/patch",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    http::agent::body_call(ctx, req, |_| "fs.apply_patch").await
}
