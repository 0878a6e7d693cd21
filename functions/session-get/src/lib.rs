//! `GET /api/session/{sessionId}`: one of the caller's sessions; another user's or tenant's
//! answers 404 exactly like a missing one.

use ::http::{Method, StatusCode};
use serde_json::json;
use shared::http::guard::authenticate_with;
use shared::http::{self, Request, Response, RouteSpec};
use shared::sessions::owned_session;
use shared::views::SessionView;
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "session-get",
    methods: &[Method::GET],
    path: "/api/session/{sessionId}",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    // The token first; the id is read beside the account's check.
    let req = &req;
    let (_, session) = authenticate_with(ctx, req.headers(), |p| async move {
        let id = http::uuid_param(req, "sessionId")?;
        owned_session(ctx.store.as_ref(), &p, &id).await
    })
    .await?;
    Ok(http::json(
        StatusCode::OK,
        &json!({ "session": SessionView::from(&session) }),
    ))
}
