//! `GET /api/debug/session/{taskId}/snapshot/{stepIndex}` (development): the page a step's
//! request sent, as stored (typed secrets masked), decompressed for a browser: `{ stepIndex,
//! content, truncated }`. A member reads their own tasks', a tenant admin any of the tenant's;
//! another's answers 404 like a missing one. 403 unless `DEBUG_ROUTES` is on.

use ::http::{Method, StatusCode};
use shared::http::guard::authenticate;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "debug-snapshot",
    methods: &[Method::GET],
    path: "/api/debug/session/{taskId}/snapshot/{stepIndex}",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    http::require_debug_routes(ctx)?;
    let task_id = http::uuid_param(&req, "taskId")?;
    let index = http::path_param(&req, "stepIndex")?
        .parse::<u32>()
        .map_err(|_| Error::field("stepIndex", "must be a step number"))?;
    let page = shared::debug::snapshot(
        ctx.store.as_ref(),
        ctx.snapshots.as_ref(),
        &p,
        &task_id,
        index,
    )
    .await?;
    Ok(http::json(StatusCode::OK, &page))
}
