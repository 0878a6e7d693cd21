//! `GET /api/debug/logs?taskId=&logType=&limit=&since=&userId=` (development): the caller's
//! debug log entries, newest first (a tenant admin may name another user with `userId`). 403
//! unless `DEBUG_ROUTES` is on.

use ::http::{Method, StatusCode};
use serde_json::json;
use shared::debug::log_view;
use shared::http::guard::authenticate;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "debug-logs",
    methods: &[Method::GET],
    path: "/api/debug/logs",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    http::require_debug_routes(ctx)?;
    // A user reads their own logs; an admin may name another user of the tenant.
    let user_id = match http::query_param(&req, "userId") {
        Some(u) if u != p.user_id => {
            if !p.is_admin() {
                return Err(Error::Forbidden(
                    "Only a tenant admin can read another user's logs".into(),
                ));
            }
            if u.len() > 64 {
                return Err(Error::field("userId", "must be a user id"));
            }
            u
        }
        _ => p.user_id.clone(),
    };
    let task_id = http::query_param(&req, "taskId");
    let log_type = http::query_param(&req, "logType");
    let limit = http::number_param(&req, "limit", 100, 1, 500)?;
    let since = http::time_param(&req, "since")?;
    let logs = ctx
        .store
        .logs(
            &p.tenant_id,
            &user_id,
            task_id.as_deref(),
            log_type.as_deref(),
            since,
            limit,
        )
        .await?;
    let logs: Vec<serde_json::Value> = logs.iter().map(log_view).collect();
    Ok(http::json(StatusCode::OK, &json!({ "logs": logs })))
}
