//! `GET /api/debug/logs?taskId=&logType=&limit=&since=` (development): the tenant's debug log
//! entries, newest first. 403 unless `DEBUG_ROUTES` is on.

use ::http::{Method, StatusCode};
use serde_json::json;
use shared::auth::authenticate;
use shared::debug::log_view;
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
    http::require_debug_routes(ctx)?;
    let p = authenticate(ctx, req.headers()).await?;
    let task_id = http::query_param(&req, "taskId");
    let log_type = http::query_param(&req, "logType");
    let limit = http::number_param(&req, "limit", 100, 1, 500)?;
    let since = http::time_param(&req, "since")?;
    let logs = ctx
        .store
        .logs(
            &p.tenant_id,
            task_id.as_deref(),
            log_type.as_deref(),
            since,
            limit,
        )
        .await?;
    let logs: Vec<serde_json::Value> = logs.iter().map(log_view).collect();
    Ok(http::json(StatusCode::OK, &json!({ "logs": logs })))
}
