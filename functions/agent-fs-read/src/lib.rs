//! `GET /api/v1/agent/fs/read?sessionId=&path=`: a file's content and version (`fs.read`, auto
//! tier); UTF-8 text as is, anything else base64.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-fs-read",
    methods: &[Method::GET],
    path: "/api/v1/agent/fs/read",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    http::agent::query_call(ctx, req, "fs.read").await
}
