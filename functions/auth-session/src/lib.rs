//! `GET /api/v1/auth/session`: who the bearer token belongs to. A token whose user was
//! disabled or removed, or whose tenant is gone, answers `401` so the client logs out. The
//! revocation check, the user and the tenant are read at once: one round trip.

use ::http::{Method, StatusCode};
use shared::auth::check_account;
use shared::auth::AccountView;
use shared::http::guard::verify_bearer;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "auth-session",
    methods: &[Method::GET],
    path: "/api/v1/auth/session",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, session).await
}

async fn session(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let mut principal = verify_bearer(ctx, req.headers()).await?;
    let tenant_id = principal.tenant_id.clone();
    let (user, tenant) = tokio::join!(
        check_account(ctx.store.as_ref(), ctx.clock.now(), &mut principal),
        ctx.store.tenant(&tenant_id),
    );
    let user = user?;
    let tenant = tenant?.ok_or(Error::Unauthorized("tenant no longer exists"))?;
    Ok(http::json(
        StatusCode::OK,
        &AccountView::new(&user, &tenant),
    ))
}
