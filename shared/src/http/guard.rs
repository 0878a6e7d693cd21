//! Authentication of protected routes. The bearer token is checked locally (signature with the
//! pinned algorithm, `iss`, `aud`, `exp`); then the account is checked against the store in one
//! round of concurrent reads — the token not revoked, the user still there, in the token's
//! tenant and enabled — overlapped with the route's own first read where it has one. Every
//! failure is `401 UNAUTHORIZED`.

use http::HeaderMap;

use crate::auth::{account_verdict, bearer_token, Principal};
use crate::context::AppContext;
use crate::domain::{Email, User};
use crate::error::Error;

/// Checks the request's bearer token (no I/O, unless a signature does not match a key read
/// from Secrets Manager: it is read again, at most once a minute). Callers must still check the
/// account ([`check_account`]) before acting for the principal.
pub async fn verify_bearer(ctx: &AppContext, headers: &HeaderMap) -> Result<Principal, Error> {
    let token = bearer_token(headers).ok_or(Error::Unauthorized("missing bearer token"))?;
    let claims = ctx.tokens.verify_current(token, ctx.clock.now()).await?;
    Ok(claims.into_principal())
}

/// The principal's account, if it may still act (see [`account_verdict`]): the revocation
/// list and the user record are read concurrently, one round trip.
pub async fn check_account(ctx: &AppContext, p: &mut Principal) -> Result<User, Error> {
    let email = Email::parse(&p.email).map_err(|_| Error::Unauthorized("token email malformed"))?;
    let (revoked, user) = tokio::join!(
        ctx.store.is_revoked(&p.tenant_id, &p.jti, ctx.clock.now()),
        ctx.store.user_by_email(&email),
    );
    let user = user?;
    p.role = account_verdict(p, revoked?, user.as_ref())?;
    user.ok_or(Error::Unauthorized("user no longer exists"))
}

/// Authenticates and runs the route's first read in the same round of store calls. A refused
/// account still gets 401 (the read's result is dropped).
pub async fn authenticate_with<T, F, Fut>(
    ctx: &AppContext,
    headers: &HeaderMap,
    read: F,
) -> Result<(Principal, T), Error>
where
    F: FnOnce(Principal) -> Fut,
    Fut: std::future::Future<Output = Result<T, Error>>,
{
    let mut principal = verify_bearer(ctx, headers).await?;
    let for_read = principal.clone();
    let (account, value) = tokio::join!(check_account(ctx, &mut principal), read(for_read));
    account?;
    Ok((principal, value?))
}

/// Authenticates a request: the token, then the account (one round trip).
pub async fn authenticate(ctx: &AppContext, headers: &HeaderMap) -> Result<Principal, Error> {
    let mut principal = verify_bearer(ctx, headers).await?;
    check_account(ctx, &mut principal).await?;
    Ok(principal)
}
