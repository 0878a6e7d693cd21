//! `GET /api/v1/user/preferences`: the caller's preferences (defaults when none are saved).

use ::http::{Method, StatusCode};
use shared::http::guard::authenticate_with;
use shared::http::{self, Request, Response, RouteSpec};
use shared::preferences;
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "preferences-get",
    methods: &[Method::GET],
    path: "/api/v1/user/preferences",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let (_, stored) = authenticate_with(ctx, req.headers(), |p| async move {
        Ok(ctx.store.preferences(&p.tenant_id, &p.user_id).await?)
    })
    .await?;
    Ok(http::json(
        StatusCode::OK,
        &preferences::view(stored.as_ref()),
    ))
}
