//! `POST /api/v1/agent/fs/write { sessionId, path, content, encoding?, expectedVersion?,
//! createOnly? }` (`fs.write`, batch tier): `202` with the pending approval; once approved the
//! file is written, refused with `409 VERSION_CONFLICT` if it changed from `expectedVersion`.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-fs-write",
    methods: &[Method::POST],
    path: "/api/v1/agent/fs/write",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    http::agent::body_call(ctx, req, |_| "fs.write").await
}
