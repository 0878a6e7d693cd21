//! `POST /api/v1/user/preferences`: merges the posted preferences (flat `{ theme }`, or
//! `{ preferences: {...} }`) into the stored ones. Known keys are validated; unknown keys kept;
//! the stored size is capped.

use ::http::{Method, StatusCode};
use shared::http::guard::authenticate;
use shared::http::parse_json;
use shared::http::{self, Request, Response, RouteSpec};
use shared::preferences;
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "preferences-save",
    methods: &[Method::POST],
    path: "/api/v1/user/preferences",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    let body: serde_json::Value = parse_json(&req)?;
    let incoming = preferences::incoming(&body)?;
    let stored = ctx.store.preferences(&p.tenant_id, &p.user_id).await?;
    let merged = preferences::merge(stored.as_ref(), incoming)?;
    let saved = ctx
        .store
        .save_preferences(&p.tenant_id, &p.user_id, &merged, ctx.clock.now())
        .await?;
    Ok(http::json(StatusCode::OK, &preferences::view(Some(&saved))))
}
