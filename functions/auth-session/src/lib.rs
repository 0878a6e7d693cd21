//! `GET /api/v1/auth/session`: who the bearer token belongs to. A token whose user was
//! disabled or removed, or whose tenant is gone, answers `401` so the client logs out. The
//! revocation check, the user and the tenant are read at once: one round trip.

use ::http::{Method, StatusCode};
use shared::auth::{ensure_not_revoked, verify_bearer, AccountView};
use shared::domain::Email;
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
    let principal = verify_bearer(ctx, req.headers())?;
    let email =
        Email::parse(&principal.email).map_err(|_| Error::Unauthorized("token email malformed"))?;
    let (not_revoked, user, tenant) = tokio::join!(
        ensure_not_revoked(ctx, &principal),
        ctx.store.user_by_email(&email),
        ctx.store.tenant(&principal.tenant_id),
    );
    not_revoked?;
    let user = user?
        .filter(|u| u.id == principal.user_id && u.tenant_id == principal.tenant_id)
        .ok_or(Error::Unauthorized("user no longer exists"))?;
    if user.disabled {
        return Err(Error::Unauthorized("user disabled"));
    }
    let tenant = tenant?.ok_or(Error::Unauthorized("tenant no longer exists"))?;
    Ok(http::json(
        StatusCode::OK,
        &AccountView::new(&user, &tenant),
    ))
}
