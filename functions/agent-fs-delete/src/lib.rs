//! `POST /api/v1/agent/fs/delete { sessionId, path, recursive? }` (`fs.delete`, individual
//! tier): deletes a file, or a directory (its content only with `recursive`).

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-fs-delete",
    methods: &[Method::POST],
    path: "/api/v1/agent/fs/delete",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    http::agent::body_call(ctx, req, |_| "fs.delete").await
}
