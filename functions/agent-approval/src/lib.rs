//! `POST /api/v1/agent/approvals/{approvalId} { decision: "approve"|"reject", approvalIds? }`:
//! decides a pending tool call — approved calls run exactly once, in order, and their results
//! come back; rejected or expired ones never run. `approvalIds` lists more `batch`-tier
//! approvals of the same session decided with it (individual-tier ones go one at a time).

use ::http::Method;
use serde_json::{json, Map, Value};
use shared::http::agent::uuid_field;
use shared::http::{self, Request, Response, RouteSpec};
use shared::tools::approvals::{decide, MAX_GROUP};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "agent-approval",
    methods: &[Method::POST],
    path: "/api/v1/agent/approvals/{approvalId}",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

/// The approvals to decide (the route's, then the body's `approvalIds`) and the decision.
fn input(req: &Request) -> Result<(Vec<String>, bool), Error> {
    let first = http::uuid_param(req, "approvalId")?;
    let body: Map<String, Value> = http::parse_json(req)?;
    let approve = match body.get("decision").and_then(Value::as_str) {
        Some("approve") => true,
        Some("reject") => false,
        Some(_) => return Err(Error::field("decision", "must be approve or reject")),
        None => return Err(Error::field("decision", "is required")),
    };
    let mut ids = vec![first];
    match body.get("approvalIds") {
        None | Some(Value::Null) => {}
        Some(Value::Array(more)) if more.len() < MAX_GROUP => {
            for v in more {
                let id = uuid_field("approvalIds", v.as_str())?;
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        Some(Value::Array(_)) => {
            return Err(Error::field(
                "approvalIds",
                format!("holds at most {} ids", MAX_GROUP - 1),
            ))
        }
        Some(_) => {
            return Err(Error::field(
                "approvalIds",
                "must be a list of approval ids",
            ))
        }
    }
    Ok((ids, approve))
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let (p, (ids, approve)) = http::agent::caller_with(ctx, &req, input).await?;
    let decisions = decide(&ctx.tools(), &p, &ids, approve).await?;
    Ok(http::agent::ok(json!({ "decisions": decisions })))
}
