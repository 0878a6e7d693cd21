//! `GET /api/v1/agent/sessions/{sessionId}?limit=&cursor=&action=&outcome=&approvalsCursor=`:
//! an agent session with a page of its audit trail (its tool calls apart) and of its
//! approvals, newest first, each with the cursor of the next page; the trail filtered by
//! action and outcome (comma-separated lists). Every answer stays under 1 MB. The caller's own
//! session; tenant admins may read any of their organisation's.

use ::http::Method;
use shared::http::{self, Request, Response, RouteSpec};
use shared::tools::session::{ViewQuery, DEFAULT_PAGE, MAX_PAGE};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-session",
    methods: &[Method::GET],
    path: "/api/v1/agent/sessions/{sessionId}",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let (p, (id, query)) = http::agent::caller_with(ctx, &req, |req| {
        let id = http::uuid_param(req, "sessionId")?;
        let limit = http::number_param(req, "limit", DEFAULT_PAGE, 1, MAX_PAGE)?;
        Ok((
            id,
            ViewQuery::parse(limit, |name| http::query_param(req, name))?,
        ))
    })
    .await?;
    let view = shared::tools::session::view(&ctx.tools(), &p, &id, &query).await?;
    Ok(http::agent::ok(view))
}
