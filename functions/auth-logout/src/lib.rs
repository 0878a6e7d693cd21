//! `POST /api/v1/auth/logout`: revokes the bearer token at once (its `jti` stays on the
//! revocation list until the token would have expired) and answers `204`. One conditional
//! write: a token that is already revoked answers `401` like any other revoked token.

use ::http::Method;
use shared::http::guard::verify_bearer;
use shared::http::{self, Request, Response, RouteSpec};
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "auth-logout",
    methods: &[Method::POST],
    path: "/api/v1/auth/logout",
};

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, logout).await
}

async fn logout(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let principal = verify_bearer(ctx, req.headers()).await?;
    let revoked_now = ctx
        .store
        .revoke(&principal.tenant_id, &principal.jti, principal.expires_at)
        .await?;
    if !revoked_now {
        return Err(Error::Unauthorized("token revoked"));
    }
    tracing::info!(tenant = %principal.tenant_id, user = %principal.user_id, "logged out");
    Ok(http::no_content())
}
