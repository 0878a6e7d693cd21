//! Authentication: password hashing, access tokens, login throttling, and the checks of a
//! request's principal against the store (`check_account`; `http::guard` reads the token and
//! calls it).

pub mod attempts;
pub mod password;
pub mod rate_limit;
pub mod token;

use chrono::{DateTime, Utc};
use http::HeaderMap;
use serde::Serialize;

use crate::domain::{Email, Role, Tenant, User};
use crate::error::Error;
use crate::ports::Store;

pub use password::PasswordHasher;
pub use token::{Claims, IssuedToken, TokenService};

/// Who is calling: taken from a verified, unrevoked access token.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Principal {
    pub user_id: String,
    pub tenant_id: String,
    pub email: String,
    pub jti: String,
    pub expires_at: DateTime<Utc>,
    /// From the user record once the account is checked (`Member` until then).
    pub role: Role,
}

impl Principal {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }
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

/// Whether a verified token's account may still act: the token is not revoked, its user
/// still exists in its tenant, the user is not disabled, and the token was issued after the
/// user was last disabled. A user disabled after the token was issued is refused at once, not
/// when the token expires — and re-enabling the user does not bring the token back.
pub fn account_verdict(p: &Principal, revoked: bool, user: Option<&User>) -> Result<Role, Error> {
    if revoked {
        return Err(Error::Unauthorized("token revoked"));
    }
    let user = user
        .filter(|u| u.id == p.user_id && u.tenant_id == p.tenant_id)
        .ok_or(Error::Unauthorized("user no longer exists"))?;
    if user.disabled {
        return Err(Error::Unauthorized("user disabled"));
    }
    if let Some(cut) = user.tokens_valid_after {
        // A token whose issue time is unknown (issued before ids carried it) is older than
        // any cut-off, which is only ever set after such ids stopped being issued.
        if token::issued_at(&p.jti).is_none_or(|at| at <= cut) {
            return Err(Error::Unauthorized(
                "token issued before the user was disabled",
            ));
        }
    }
    Ok(user.role)
}

/// The principal's account, if it may still act (see [`account_verdict`]): the revocation
/// list and the user record are read concurrently, one round trip.
pub async fn check_account(
    store: &dyn Store,
    now: DateTime<Utc>,
    p: &mut Principal,
) -> Result<User, Error> {
    let email = Email::parse(&p.email).map_err(|_| Error::Unauthorized("token email malformed"))?;
    let (revoked, user) = tokio::join!(
        store.is_revoked(&p.tenant_id, &p.jti, now),
        store.user_by_email(&email),
    );
    let user = user?;
    p.role = account_verdict(p, revoked?, user.as_ref())?;
    user.ok_or(Error::Unauthorized("user no longer exists"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(http::header::AUTHORIZATION, v.parse().expect("header"));
        h
    }

    fn principal() -> Principal {
        Principal {
            user_id: "u1".into(),
            tenant_id: "t1".into(),
            email: "a@b.c".into(),
            jti: "j".into(),
            expires_at: chrono::Utc::now(),
            role: Role::Member,
        }
    }

    fn user(id: &str, tenant: &str, disabled: bool, role: Role) -> User {
        User {
            id: id.into(),
            tenant_id: tenant.into(),
            email: crate::domain::Email::parse("a@b.c").expect("email"),
            name: "A".into(),
            password_hash: String::new(),
            disabled,
            role,
            created_at: chrono::Utc::now(),
            tokens_valid_after: None,
        }
    }

    #[test]
    fn only_an_unrevoked_token_of_an_existing_enabled_user_passes() {
        let p = principal();
        let ok = user("u1", "t1", false, Role::Admin);
        assert_eq!(
            account_verdict(&p, false, Some(&ok)).ok(),
            Some(Role::Admin)
        );
        for (revoked, u) in [
            (true, Some(ok.clone())),
            (false, None),
            (false, Some(user("u1", "t1", true, Role::Member))),
            (false, Some(user("u2", "t1", false, Role::Member))),
            (false, Some(user("u1", "t2", false, Role::Member))),
        ] {
            assert!(matches!(
                account_verdict(&p, revoked, u.as_ref()),
                Err(Error::Unauthorized(_))
            ));
        }
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
