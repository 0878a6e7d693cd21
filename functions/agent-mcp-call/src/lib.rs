//! `POST /api/v1/agent/mcp/call { sessionId, server, tool, arguments }` (`mcp.call`): a tool of
//! one of the organisation's MCP servers. `individual` tier unless the administrator lowered
//! the tool's: `202` with the pending approval, the answer once approved (`200` at once for
//! an `auto` tool).

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-mcp-call",
    methods: &[Method::POST],
    path: "/api/v1/agent/mcp/call",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    http::agent::body_call(ctx, req, |_| "mcp.call").await
}
