//! Authentication of protected routes. The bearer token is checked locally (signature with the
//! pinned algorithm, `iss`, `aud`, `exp`); then the account is checked against the store in one
//! round of concurrent reads — the token not revoked, the user still there, in the token's
//! tenant and enabled — overlapped with the route's own first read where it has one. Every
//! failure is `401 UNAUTHORIZED`.

use http::HeaderMap;

use crate::auth::{bearer_token, check_account, Principal};
use crate::context::AppContext;
use crate::error::Error;

/// Checks the request's bearer token (no I/O, unless a signature does not match a key read
/// from Secrets Manager: it is read again, at most once a minute). Callers must still check the
/// account ([`crate::auth::check_account`]) before acting for the principal.
pub async fn verify_bearer(ctx: &AppContext, headers: &HeaderMap) -> Result<Principal, Error> {
    let token = bearer_token(headers).ok_or(Error::Unauthorized("missing bearer token"))?;
    let claims = ctx.tokens.verify_current(token, ctx.clock.now()).await?;
    Ok(claims.into_principal())
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
    let (account, value) = tokio::join!(
        check_account(ctx.store.as_ref(), ctx.clock.now(), &mut principal),
        read(for_read)
    );
    account?;
    Ok((principal, value?))
}

/// Authenticates a request: the token, then the account (one round trip).
pub async fn authenticate(ctx: &AppContext, headers: &HeaderMap) -> Result<Principal, Error> {
    let mut principal = verify_bearer(ctx, headers).await?;
    check_account(ctx.store.as_ref(), ctx.clock.now(), &mut principal).await?;
    Ok(principal)
}
