//! `POST /api/debug/recipes/{recipeId}/demote` (development, tenant admins only): takes the
//! organisation's recipe back (the members' own stay), audited under the admin's user id. 403 to
//! a member (`ADMIN_REQUIRED`) and unless `DEBUG_ROUTES` is on; 404 when the tenant has no such
//! recipe or it is a member's.

use ::http::{Method, StatusCode};
use shared::debug::recipes;
use shared::http::guard::authenticate;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "debug-recipe-demote",
    methods: &[Method::POST],
    path: "/api/debug/recipes/{recipeId}/demote",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    http::require_debug_routes(ctx)?;
    let raw = http::path_param(&req, "recipeId")?;
    let id = recipes::recipe_id(&raw)?;
    let settings = ctx.config.agent.recipes;
    let done = recipes::demote(ctx.store.as_ref(), &p, id, ctx.clock.now(), settings).await?;
    Ok(http::json(StatusCode::OK, &done))
}
