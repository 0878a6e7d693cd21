//! `GET /api/v1/agent/workspaces`: the workspaces of the caller's organisation (id, name,
//! allowed commands, created at) — defined by administrators with `agent-admin workspace add`.

use ::http::Method;
use serde_json::json;
use shared::http::{self, Request, Response, RouteSpec};
use shared::tools::session::workspace_view;
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-workspaces",
    methods: &[Method::GET],
    path: "/api/v1/agent/workspaces",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = http::agent::caller(ctx, &req).await?;
    let list = ctx.store.workspaces(&p.tenant_id).await?;
    let views: Vec<_> = list.iter().map(workspace_view).collect();
    Ok(http::agent::ok(json!({ "workspaces": views })))
}
