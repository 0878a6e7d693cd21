//! `POST /api/v1/agent/workspace/select { workspaceId, sessionId? }`: starts an agent session
//! in a workspace of the caller's organisation, or moves the caller's session `sessionId`
//! there. Every tool call then names the session.

use ::http::Method;
use serde_json::{json, Map, Value};
use shared::http::agent::uuid_field;
use shared::http::{self, Request, Response, RouteSpec};
use shared::tools::session::{select, workspace_view};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-workspace-select",
    methods: &[Method::POST],
    path: "/api/v1/agent/workspace/select",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

/// The workspace to select and the agent session to select it in (a new one when absent).
fn input(req: &Request) -> Result<(String, Option<String>), Error> {
    let body: Map<String, Value> = http::parse_json(req)?;
    let workspace = match body.get("workspaceId") {
        Some(Value::String(id)) if shared::domain::identity::validate_id(id).is_ok() => id.clone(),
        Some(_) => return Err(Error::field("workspaceId", "must be a workspace id")),
        None => return Err(Error::field("workspaceId", "is required")),
    };
    let session = match body.get("sessionId") {
        None | Some(Value::Null) => None,
        Some(v) => Some(uuid_field("sessionId", v.as_str())?),
    };
    Ok((workspace, session))
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let (p, (workspace, session)) = http::agent::caller_with(ctx, &req, input).await?;
    let (s, ws) = select(&ctx.tools(), &p, session.as_deref(), &workspace).await?;
    Ok(http::agent::ok(json!({
        "sessionId": s.id,
        "workspace": workspace_view(&ws),
        "createdAt": shared::time::iso(s.created_at),
        "runsOn": "server",
    })))
}
