//! `GET /api/debug/tasks?limit=` (development): the caller's most recent tasks, newest first,
//! with status, steps, tokens, estimated cost and duration — a tenant admin's are the whole
//! tenant's (the task inspector's list). 403 unless `DEBUG_ROUTES` is on.

use ::http::{Method, StatusCode};
use shared::http::guard::authenticate;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "debug-tasks",
    methods: &[Method::GET],
    path: "/api/debug/tasks",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    http::require_debug_routes(ctx)?;
    let limit = http::number_param(&req, "limit", 50, 1, shared::debug::MAX_TASKS_LISTED)?;
    let listed = shared::debug::tasks(ctx.store.as_ref(), &p, limit).await?;
    Ok(http::json(StatusCode::OK, &listed))
}
