//! Authentication: password hashing, access tokens, login throttling, and the one
//! `authenticate` every protected route calls.

pub mod password;
pub mod rate_limit;
pub mod token;

use chrono::{DateTime, Utc};
use http::HeaderMap;
use serde::Serialize;

use crate::context::AppContext;
use crate::domain::{Tenant, User};
use crate::error::Error;

pub use password::PasswordHasher;
pub use token::{Claims, IssuedToken, TokenService};

/// Who is calling: taken from a verified, unrevoked access token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub user_id: String,
    pub tenant_id: String,
    pub email: String,
    pub jti: String,
    pub expires_at: DateTime<Utc>,
}

/// The user part of login and session answers.
#[derive(Debug, Clone, Serialize)]
pub struct UserSummary {
    pub id: String,
    pub email: String,
    pub name: String,
}

/// `{ user, tenantId, tenantName }`: who the caller is, as login and session report it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountView {
    pub user: UserSummary,
    pub tenant_id: String,
    pub tenant_name: String,
}

impl AccountView {
    pub fn new(user: &User, tenant: &Tenant) -> Self {
        Self {
            user: UserSummary {
                id: user.id.clone(),
                email: user.email.as_str().to_owned(),
                name: user.name.clone(),
            },
            tenant_id: tenant.id.clone(),
            tenant_name: tenant.name.clone(),
        }
    }
}

/// The bearer token of a request, if the `Authorization` header carries one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers
        .get(http::header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Checks the request's bearer token without any I/O: signature with the pinned algorithm,
/// `iss`, `aud`, `exp`. Routes that must also check revocation and can overlap it with other
/// reads call this and [`ensure_not_revoked`] themselves; the rest call [`authenticate`].
pub fn verify_bearer(ctx: &AppContext, headers: &HeaderMap) -> Result<Principal, Error> {
    let token = bearer_token(headers).ok_or(Error::Unauthorized("missing bearer token"))?;
    Ok(ctx.tokens.verify(token, ctx.clock.now())?.into_principal())
}

/// `401` if the principal's token was revoked (one read).
pub async fn ensure_not_revoked(ctx: &AppContext, p: &Principal) -> Result<(), Error> {
    if ctx
        .store
        .is_revoked(&p.tenant_id, &p.jti, ctx.clock.now())
        .await?
    {
        return Err(Error::Unauthorized("token revoked"));
    }
    Ok(())
}

/// Authenticates and runs the route's first read in the same round of store calls: the token
/// is checked locally, then its revocation check and `read` run concurrently. A revoked token
/// still gets 401 (the read's result is dropped).
pub async fn authenticate_with<T, F, Fut>(
    ctx: &AppContext,
    headers: &HeaderMap,
    read: F,
) -> Result<(Principal, T), Error>
where
    F: FnOnce(Principal) -> Fut,
    Fut: std::future::Future<Output = Result<T, Error>>,
{
    let principal = verify_bearer(ctx, headers)?;
    let (revocation, value) =
        tokio::join!(ensure_not_revoked(ctx, &principal), read(principal.clone()));
    revocation?;
    Ok((principal, value?))
}

/// Verifies the request's bearer token (signature, pinned algorithm, `iss`, `aud`, `exp`) and
/// that it was not revoked. Every failure is `401 UNAUTHORIZED`.
pub async fn authenticate(ctx: &AppContext, headers: &HeaderMap) -> Result<Principal, Error> {
    let principal = verify_bearer(ctx, headers)?;
    ensure_not_revoked(ctx, &principal).await?;
    Ok(principal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(http::header::AUTHORIZATION, v.parse().expect("header"));
        h
    }

    #[test]
    fn bearer_scheme_is_case_insensitive_and_required() {
        assert_eq!(bearer_token(&headers("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&headers("bearer  abc ")), Some("abc"));
        assert_eq!(bearer_token(&headers("Basic abc")), None);
        assert_eq!(bearer_token(&headers("Bearer ")), None);
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }
}
