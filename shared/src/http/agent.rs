//! HTTP glue shared by the agent-tool routes: authentication, the on/off switch, reading a
//! call's arguments from the query or the body, and the answers — `200 { success, data }`
//! when the call ran, `202 { success, data: <pending approval> }` when it waits for one.

use http::StatusCode;
use serde_json::{json, Map, Value};

use super::guard::authenticate;
use super::{json as json_response, query_param, Request, Response};
use crate::auth::Principal;
use crate::context::AppContext;
use crate::error::Error;
use crate::tools::approvals::{self, CallOutcome};
use crate::tools::calls::ToolCall;
use crate::tools::session::require_enabled;

/// The authenticated caller of an enabled agent route, counted against the agent tools' rate
/// limits (`429` beyond them).
pub async fn caller(ctx: &AppContext, req: &Request) -> Result<Principal, Error> {
    caller_with(ctx, req, |_| Ok(())).await.map(|(p, ())| p)
}

/// [`caller`] with the route's input read by `read`, in the order a client can rely on: the
/// token first (`401` whatever the input), then the input (`400` naming the field), then the
/// switch and the rate count — a malformed request is refused before it counts.
pub async fn caller_with<T>(
    ctx: &AppContext,
    req: &Request,
    read: impl FnOnce(&Request) -> Result<T, Error>,
) -> Result<(Principal, T), Error> {
    let p = authenticate(ctx, req.headers()).await?;
    let input = read(req)?;
    let tools = ctx.tools();
    require_enabled(&tools)?;
    crate::tools::limits::count_request(&tools, &p).await?;
    Ok((p, input))
}

/// A UUID field (normalised), named in the error when it is not one.
pub fn uuid_field(field: &str, raw: Option<&str>) -> Result<String, Error> {
    let raw = raw.ok_or_else(|| Error::field(field, "is required"))?;
    uuid::Uuid::parse_str(raw.trim())
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| Error::field(field, "must be a UUID"))
}

/// `200 { success: true, data }`.
pub fn ok(data: Value) -> Response {
    json_response(StatusCode::OK, &json!({ "success": true, "data": data }))
}

fn answer(outcome: CallOutcome) -> Response {
    match outcome {
        CallOutcome::Done(v) => ok(v),
        CallOutcome::Pending(a) => {
            json_response(StatusCode::ACCEPTED, &json!({ "success": true, "data": a }))
        }
    }
}

/// A `GET` tool route: `sessionId` and `path` from the query.
pub async fn query_call(ctx: &AppContext, req: Request, tool: &str) -> Result<Response, Error> {
    let (p, (session, call)) = caller_with(ctx, &req, |req| {
        let session = uuid_field("sessionId", query_param(req, "sessionId").as_deref())?;
        let path = query_param(req, "path").unwrap_or_default();
        Ok((session, ToolCall::from_args(tool, json!({ "path": path }))?))
    })
    .await?;
    Ok(answer(
        approvals::call(&ctx.tools(), &p, &session, call).await?,
    ))
}

/// A `POST` tool route: `sessionId` and the tool's arguments in the JSON body; `tool` picks
/// the tool from the arguments (search: grep with a pattern, glob without).
pub async fn body_call(
    ctx: &AppContext,
    req: Request,
    tool: impl FnOnce(&Map<String, Value>) -> &'static str,
) -> Result<Response, Error> {
    let (p, (session, call)) = caller_with(ctx, &req, |req| {
        let mut body: Map<String, Value> = super::parse_json(req)?;
        let session = uuid_field(
            "sessionId",
            body.remove("sessionId").as_ref().and_then(Value::as_str),
        )?;
        Ok((
            session,
            ToolCall::from_args(tool(&body), Value::Object(body))?,
        ))
    })
    .await?;
    Ok(answer(
        approvals::call(&ctx.tools(), &p, &session, call).await?,
    ))
}
