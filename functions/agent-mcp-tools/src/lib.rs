//! `GET /api/v1/agent/mcp/tools`: the tools of the organisation's MCP servers (name,
//! description, input schema, tier), listed concurrently over Streamable HTTP, and each
//! server's state (`online`, or `offline` with the reason).

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-mcp-tools",
    methods: &[Method::GET],
    path: "/api/v1/agent/mcp/tools",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = http::agent::caller(ctx, &req).await?;
    let tools = shared::tools::mcp::list(&ctx.tools(), &p.tenant_id).await?;
    Ok(http::agent::ok(tools))
}
