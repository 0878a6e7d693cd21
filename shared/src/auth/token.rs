//! Access tokens: HS256 JWTs with the algorithm pinned, `iss`/`aud` required, a unique `jti`
//! for revocation, and expiry checked against the `Clock` port (not the system clock). The
//! `jti` is a UUIDv7 whose timestamp is the issue time in milliseconds: it is the one claim a
//! principal carries to the account check, which refuses tokens issued before the user was
//! last disabled.

use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};

use super::Principal;
use crate::config::JwtConfig;
use crate::domain::User;
use crate::error::Error;

/// The one algorithm accepted. Tokens naming any other (`none`, `RS256`, `HS512`) are refused.
pub const ALGORITHM: Algorithm = Algorithm::HS256;

/// Tolerance for clock skew between signer and verifier on `iat`.
const IAT_SKEW_SECONDS: i64 = 60;

/// The claims of an access token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The user id.
    pub sub: String,
    /// The tenant id.
    pub tid: String,
    pub email: String,
    pub iss: String,
    pub aud: String,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
}

impl Claims {
    pub fn expires_at(&self) -> DateTime<Utc> {
        DateTime::from_timestamp(self.exp, 0).unwrap_or(DateTime::<Utc>::MIN_UTC)
    }

    pub fn into_principal(self) -> Principal {
        let expires_at = self.expires_at();
        Principal {
            user_id: self.sub,
            tenant_id: self.tid,
            email: self.email,
            jti: self.jti,
            expires_at,
            role: crate::domain::Role::Member,
        }
    }
}

/// A unique token id that carries its issue time (a UUIDv7 stamped with `now` from the
/// `Clock` port, to the millisecond).
fn token_id(now: DateTime<Utc>) -> String {
    let secs = u64::try_from(now.timestamp()).unwrap_or(0);
    let ts = uuid::Timestamp::from_unix(uuid::NoContext, secs, now.timestamp_subsec_nanos());
    uuid::Uuid::new_v7(ts).to_string()
}

/// When the token with id `jti` was issued, to the millisecond; `None` for ids that carry no
/// time (tokens issued before ids were UUIDv7).
pub fn issued_at(jti: &str) -> Option<DateTime<Utc>> {
    let id = uuid::Uuid::parse_str(jti).ok()?;
    if id.get_version() != Some(uuid::Version::SortRand) {
        return None;
    }
    let (secs, nanos) = id.get_timestamp()?.to_unix();
    DateTime::from_timestamp(i64::try_from(secs).ok()?, nanos)
}

/// A freshly signed token.
#[derive(Debug, Clone)]
pub struct IssuedToken {
    pub token: String,
    pub expires_at: DateTime<Utc>,
    pub jti: String,
}

/// Signs and verifies access tokens with the configured key.
pub struct TokenService {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    issuer: String,
    audience: String,
    ttl: Duration,
}

impl std::fmt::Debug for TokenService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenService")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl TokenService {
    pub fn new(cfg: &JwtConfig) -> Self {
        let key = cfg.secret.expose_secret().as_bytes();
        let mut validation = Validation::new(ALGORITHM);
        validation.set_issuer(&[&cfg.issuer]);
        validation.set_audience(&[&cfg.audience]);
        validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
        // Expiry is checked against the Clock port in `verify`, so tests control time.
        validation.validate_exp = false;
        validation.leeway = 0;
        Self {
            encoding: EncodingKey::from_secret(key),
            decoding: DecodingKey::from_secret(key),
            validation,
            issuer: cfg.issuer.clone(),
            audience: cfg.audience.clone(),
            ttl: Duration::seconds(cfg.ttl_seconds),
        }
    }

    /// Signs a token for `user`, valid from `now` for the configured lifetime.
    pub fn issue(&self, user: &User, now: DateTime<Utc>) -> Result<IssuedToken, Error> {
        let expires_at = now + self.ttl;
        let claims = Claims {
            sub: user.id.clone(),
            tid: user.tenant_id.clone(),
            email: user.email.as_str().to_owned(),
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            iat: now.timestamp(),
            exp: expires_at.timestamp(),
            jti: token_id(now),
        };
        let token = encode(&Header::new(ALGORITHM), &claims, &self.encoding)
            .map_err(|e| Error::internal(format!("token signing failed: {e}")))?;
        Ok(IssuedToken {
            token,
            expires_at: claims.expires_at(),
            jti: claims.jti,
        })
    }

    /// Verifies signature, algorithm, issuer, audience, `iat` and expiry at `now`.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<Claims, Error> {
        let data = decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|_| Error::Unauthorized("invalid token"))?;
        let claims = data.claims;
        if claims.exp <= now.timestamp() {
            return Err(Error::Unauthorized("token expired"));
        }
        if claims.iat > now.timestamp() + IAT_SKEW_SECONDS {
            return Err(Error::Unauthorized("token issued in the future"));
        }
        if claims.jti.is_empty() || claims.tid.is_empty() {
            return Err(Error::Unauthorized("token lacks jti or tenant"));
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Email;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use secrecy::SecretString;

    fn cfg(secret: &str) -> JwtConfig {
        JwtConfig {
            secret: SecretString::from(secret.to_owned()),
            issuer: "iss-a".into(),
            audience: "aud-a".into(),
            ttl_seconds: 3600,
        }
    }

    fn user() -> User {
        User {
            id: "u1".into(),
            tenant_id: "t1".into(),
            email: Email::parse("a@b.co").expect("email"),
            name: "A".into(),
            password_hash: String::new(),
            disabled: false,
            role: crate::domain::Role::Member,
            created_at: Utc::now(),
            tokens_valid_after: None,
        }
    }

    const KEY: &str = "k-0123456789abcdef0123456789abcdef";

    #[test]
    fn token_ids_carry_their_issue_time_to_the_millisecond() {
        let now = DateTime::from_timestamp_millis(1_800_000_123_456).expect("time");
        let t = TokenService::new(&cfg(KEY))
            .issue(&user(), now)
            .expect("token");
        assert_eq!(issued_at(&t.jti), Some(now));
        assert_eq!(issued_at(&uuid::Uuid::new_v4().to_string()), None);
        assert_eq!(issued_at("not-a-uuid"), None);
    }

    #[test]
    fn issued_token_verifies_until_it_expires() {
        let svc = TokenService::new(&cfg(KEY));
        let now = Utc::now();
        let t = svc.issue(&user(), now).expect("issue");
        let c = svc.verify(&t.token, now).expect("verify");
        assert_eq!((c.sub.as_str(), c.tid.as_str()), ("u1", "t1"));
        assert_eq!(c.jti, t.jti);
        assert!(svc.verify(&t.token, now + Duration::seconds(3599)).is_ok());
        assert!(svc.verify(&t.token, now + Duration::seconds(3600)).is_err());
    }

    #[test]
    fn other_key_issuer_or_audience_is_refused() {
        let now = Utc::now();
        let t = TokenService::new(&cfg(KEY))
            .issue(&user(), now)
            .expect("issue");
        let other_key = TokenService::new(&cfg("z-0123456789abcdef0123456789abcdef"));
        assert!(other_key.verify(&t.token, now).is_err());
        let mut c = cfg(KEY);
        c.issuer = "iss-b".into();
        assert!(TokenService::new(&c).verify(&t.token, now).is_err());
        let mut c = cfg(KEY);
        c.audience = "aud-b".into();
        assert!(TokenService::new(&c).verify(&t.token, now).is_err());
    }

    #[test]
    fn alg_none_and_other_algorithms_are_refused() {
        let svc = TokenService::new(&cfg(KEY));
        let now = Utc::now();
        let t = svc.issue(&user(), now).expect("issue");
        let payload = t.token.split('.').nth(1).expect("payload");
        let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        assert!(svc
            .verify(&format!("{none_header}.{payload}."), now)
            .is_err());
        let claims = svc.verify(&t.token, now).expect("claims");
        let hs512 = encode(
            &Header::new(Algorithm::HS512),
            &claims,
            &EncodingKey::from_secret(KEY.as_bytes()),
        )
        .expect("sign");
        assert!(svc.verify(&hs512, now).is_err());
        assert!(svc.verify("garbage", now).is_err());
    }

    #[test]
    fn token_issued_in_the_future_is_refused() {
        let svc = TokenService::new(&cfg(KEY));
        let now = Utc::now();
        let t = svc.issue(&user(), now + Duration::hours(1)).expect("issue");
        assert!(svc.verify(&t.token, now).is_err());
    }
}
