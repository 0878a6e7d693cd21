//! `GET /api/debug/recipes?limit=` (development): the caller's tenant's recipes with their
//! steps and the page each was taken on — a tenant admin's all of them, a member's only their
//! own (the task inspector's Recipes view). 403 unless `DEBUG_ROUTES` is on.

use ::http::{Method, StatusCode};
use shared::debug::recipes;
use shared::http::guard::authenticate;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "debug-recipes",
    methods: &[Method::GET],
    path: "/api/debug/recipes",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    http::require_debug_routes(ctx)?;
    let limit = http::number_param(&req, "limit", 50, 1, recipes::MAX_LISTED)?;
    let listed = recipes::list(ctx.store.as_ref(), &p, limit).await?;
    Ok(http::json(StatusCode::OK, &listed))
}
