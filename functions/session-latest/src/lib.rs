//! `GET /api/session/latest`: the caller's most recently updated session that is not
//! archived, or `null`.

use ::http::{Method, StatusCode};
use serde_json::json;
use shared::http::guard::authenticate_with;
use shared::http::{self, Request, Response, RouteSpec};
use shared::views::SessionView;
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "session-latest",
    methods: &[Method::GET],
    path: "/api/session/latest",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let (_, session) = authenticate_with(ctx, req.headers(), |p| async move {
        Ok(ctx.store.latest_session(&p.tenant_id, &p.user_id).await?)
    })
    .await?;
    Ok(http::json(
        StatusCode::OK,
        &json!({ "session": session.as_ref().map(SessionView::from) }),
    ))
}
