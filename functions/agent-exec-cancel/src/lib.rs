//! `DELETE /api/v1/agent/exec/{execId}`: stops a running command (its whole process group is
//! killed within a fraction of a second); `409 EXEC_FINISHED` when it has already ended.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-exec-cancel",
    methods: &[Method::DELETE],
    path: "/api/v1/agent/exec/{execId}",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let (p, id) =
        http::agent::caller_with(ctx, &req, |req| http::uuid_param(req, "execId")).await?;
    let answer = shared::tools::execs::cancel(&ctx.tools(), &p, &id).await?;
    Ok(http::agent::ok(answer))
}
