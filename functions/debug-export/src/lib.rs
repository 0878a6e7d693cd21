//! `GET /api/debug/session/{taskId}/export` (development): everything about one task — the
//! task, its steps, its messages, verification and correction records, its snapshots with
//! short-lived presigned URLs, and its logs. 403 unless `DEBUG_ROUTES` is on.

use ::http::{Method, StatusCode};
use shared::http::guard::authenticate;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "debug-export",
    methods: &[Method::GET],
    path: "/api/debug/session/{taskId}/export",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    http::require_debug_routes(ctx)?;
    let task_id = http::uuid_param(&req, "taskId")?;
    let export =
        shared::debug::export(ctx.store.as_ref(), ctx.snapshots.as_ref(), &p, &task_id).await?;
    Ok(http::json(StatusCode::OK, &export))
}
