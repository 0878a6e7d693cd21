//! Access tokens: HS256 JWTs with the algorithm pinned, `iss`/`aud` required, a unique `jti`
//! for revocation, and expiry checked against the `Clock` port (not the system clock). The
//! `jti` is a UUIDv7 whose timestamp is the issue time in milliseconds: it is the one claim a
//! principal carries to the account check, which refuses tokens issued before the user was
//! last disabled.

use std::sync::RwLock;

use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::Principal;
use crate::config::{JwtConfig, KeyRefresh, MIN_JWT_SECRET_BYTES};
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

/// Signs and verifies access tokens with the configured key. A key read from Secrets Manager
/// is read again when a token's signature does not match it (see [`KeyRefresh`]), so a rotated
/// key takes effect without a deploy: tokens signed with the old key then fail and their users
/// sign in again.
pub struct TokenService {
    /// `None` in a function that signs and checks no tokens (the command runner, the phase
    /// function): every token is refused there.
    keys: RwLock<Option<Keys>>,
    refresh: Option<KeyRefresh>,
    validation: Validation,
    issuer: String,
    audience: String,
    ttl: Duration,
}

struct Keys {
    secret: SecretString,
    encoding: EncodingKey,
    decoding: DecodingKey,
}

impl Keys {
    fn new(secret: &SecretString) -> Self {
        let key = secret.expose_secret().as_bytes();
        Self {
            secret: secret.clone(),
            encoding: EncodingKey::from_secret(key),
            decoding: DecodingKey::from_secret(key),
        }
    }
}

/// Why a token was refused: its signature (worth reading a rotated key), or anything else.
enum Refusal {
    Signature,
    Other(Error),
}

impl From<Refusal> for Error {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Signature => Error::Unauthorized("invalid token"),
            Refusal::Other(e) => e,
        }
    }
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
        let mut validation = Validation::new(ALGORITHM);
        validation.set_issuer(&[&cfg.issuer]);
        validation.set_audience(&[&cfg.audience]);
        validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
        // Expiry is checked against the Clock port in `verify`, so tests control time.
        validation.validate_exp = false;
        validation.leeway = 0;
        Self {
            keys: RwLock::new(cfg.secret.as_ref().map(Keys::new)),
            refresh: None,
            validation,
            issuer: cfg.issuer.clone(),
            audience: cfg.audience.clone(),
            ttl: Duration::seconds(cfg.ttl_seconds),
        }
    }

    /// Reads the key again through `refresh` when a signature does not match (and when it is
    /// older than its maximum age).
    pub fn set_refresh(&mut self, refresh: KeyRefresh) {
        self.refresh = Some(refresh);
    }

    fn keys(&self) -> std::sync::RwLockReadGuard<'_, Option<Keys>> {
        self.keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
        let keys = self.keys();
        let keys = keys
            .as_ref()
            .ok_or_else(|| Error::internal("this function has no token signing key"))?;
        let token = encode(&Header::new(ALGORITHM), &claims, &keys.encoding)
            .map_err(|e| Error::internal(format!("token signing failed: {e}")))?;
        Ok(IssuedToken {
            token,
            expires_at: claims.expires_at(),
            jti: claims.jti,
        })
    }

    /// Verifies signature, algorithm, issuer, audience, `iat` and expiry at `now` with the key
    /// as it is; no I/O.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<Claims, Error> {
        Ok(self.check(token, now)?)
    }

    /// As [`verify`](Self::verify), with the key read again when it is older than its maximum
    /// age, or when the signature does not match it (at most once a minute per container; see
    /// [`KeyRefresh`]), then checked once more.
    pub async fn verify_current(&self, token: &str, now: DateTime<Utc>) -> Result<Claims, Error> {
        self.refresh_if_stale().await;
        match self.check(token, now) {
            Err(Refusal::Signature) => {}
            done => return Ok(done?),
        }
        let Some(refresh) = &self.refresh else {
            return Err(Refusal::Signature.into());
        };
        if let Some(secret) = refresh.read_after_refusal().await {
            self.replace_key(&secret);
        }
        // Also when another request's read replaced the key meanwhile.
        Ok(self.check(token, now)?)
    }

    /// As [`issue`](Self::issue), with the key read again first when it is older than its
    /// maximum age: a function that only signs takes a rotation too.
    pub async fn issue_current(
        &self,
        user: &User,
        now: DateTime<Utc>,
    ) -> Result<IssuedToken, Error> {
        self.refresh_if_stale().await;
        self.issue(user, now)
    }

    async fn refresh_if_stale(&self) {
        if let Some(refresh) = &self.refresh {
            if let Some(secret) = refresh.read_if_stale().await {
                self.replace_key(&secret);
            }
        }
    }

    /// Starts signing and verifying with `secret`, if it is a usable key and a new one.
    fn replace_key(&self, secret: &SecretString) {
        if secret.expose_secret().len() < MIN_JWT_SECRET_BYTES {
            tracing::error!("the token key read again is shorter than 32 bytes; the old one stays");
            return;
        }
        let mut keys = self
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let same = keys
            .as_ref()
            .is_some_and(|k| k.secret.expose_secret() == secret.expose_secret());
        if !same {
            *keys = Some(Keys::new(secret));
            tracing::info!("the token key changed; tokens are signed and checked with the new one");
        }
    }

    fn check(&self, token: &str, now: DateTime<Utc>) -> Result<Claims, Refusal> {
        let decoded = {
            let keys = self.keys();
            let keys = keys.as_ref().ok_or(Refusal::Other(Error::Unauthorized(
                "this route checks no tokens",
            )))?;
            decode::<Claims>(token, &keys.decoding, &self.validation)
        };
        let data = decoded.map_err(|e| match e.kind() {
            ErrorKind::InvalidSignature => Refusal::Signature,
            _ => Refusal::Other(Error::Unauthorized("invalid token")),
        })?;
        let claims = data.claims;
        let refuse = |why| Err(Refusal::Other(Error::Unauthorized(why)));
        if claims.exp <= now.timestamp() {
            return refuse("token expired");
        }
        if claims.iat > now.timestamp() + IAT_SKEW_SECONDS {
            return refuse("token issued in the future");
        }
        if claims.jti.is_empty() || claims.tid.is_empty() {
            return refuse("token lacks jti or tenant");
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
            secret: Some(SecretString::from(secret.to_owned())),
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

    const NEW_KEY: &str = "n-0123456789abcdef0123456789abcdef";

    use std::sync::Arc;

    use crate::config::Rereads;

    const MAX_AGE: std::time::Duration = std::time::Duration::from_secs(300);

    fn refreshing(vault: &Arc<crate::ports::secrets::memory::MemorySecrets>) -> TokenService {
        refreshing_with(vault, Rereads::every(MAX_AGE))
    }

    fn refreshing_with(
        vault: &Arc<crate::ports::secrets::memory::MemorySecrets>,
        rereads: Rereads,
    ) -> TokenService {
        let mut svc = TokenService::new(&cfg(KEY));
        svc.set_refresh(KeyRefresh::new(vault.clone(), "arn:jwt".into(), rereads));
        svc
    }

    /// Past the first minute after the cold start's read.
    async fn a_minute_later() {
        tokio::time::advance(Rereads::AFTER_REFUSAL + std::time::Duration::from_secs(1)).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_rotated_key_is_read_once_on_a_signature_failure_and_then_verifies() {
        let vault = Arc::new(crate::ports::secrets::memory::MemorySecrets::with(&[(
            "arn:jwt", NEW_KEY,
        )]));
        let svc = refreshing(&vault);
        a_minute_later().await;
        let now = Utc::now();
        let old = svc.issue(&user(), now).expect("old token");
        assert!(svc.verify_current(&old.token, now).await.is_ok());
        assert_eq!(vault.reads(), 0, "a token that verifies reads nothing");

        let new = TokenService::new(&cfg(NEW_KEY))
            .issue(&user(), now)
            .expect("token signed with the rotated key");
        assert!(svc.verify(&new.token, now).is_err(), "not without reading");
        assert!(svc.verify_current(&new.token, now).await.is_ok());
        assert_eq!(vault.reads(), 1);
        // From now on the new key signs and verifies; the old key's tokens are refused.
        let issued = svc.issue(&user(), now).expect("issue");
        assert!(TokenService::new(&cfg(NEW_KEY))
            .verify(&issued.token, now)
            .is_ok());
        assert!(svc.verify_current(&old.token, now).await.is_err());
        assert_eq!(
            vault.reads(),
            1,
            "within the interval the key is not read again"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_function_that_only_signs_takes_a_rotation_once_its_key_is_stale() {
        let vault = Arc::new(crate::ports::secrets::memory::MemorySecrets::with(&[(
            "arn:jwt", NEW_KEY,
        )]));
        let svc = refreshing(&vault);
        let now = Utc::now();
        let before = svc.issue_current(&user(), now).await.expect("issue");
        assert!(TokenService::new(&cfg(KEY))
            .verify(&before.token, now)
            .is_ok());
        tokio::time::advance(MAX_AGE).await;
        let after = svc.issue_current(&user(), now).await.expect("issue");
        assert!(TokenService::new(&cfg(NEW_KEY))
            .verify(&after.token, now)
            .is_ok());
        assert_eq!(vault.reads(), 1);
        let again = svc.issue_current(&user(), now).await.expect("issue");
        assert!(TokenService::new(&cfg(NEW_KEY))
            .verify(&again.token, now)
            .is_ok());
        assert_eq!(vault.reads(), 1, "read once per maximum age");
    }

    #[tokio::test(start_paused = true)]
    async fn forged_tokens_in_parallel_read_the_key_once() {
        let vault = Arc::new(crate::ports::secrets::memory::MemorySecrets::with(&[(
            "arn:jwt", KEY,
        )]));
        let svc = Arc::new(refreshing(&vault));
        a_minute_later().await;
        let now = Utc::now();
        let forged = TokenService::new(&cfg("f-0123456789abcdef0123456789abcdef"))
            .issue(&user(), now)
            .expect("forged");
        let tries = (0..32).map(|_| {
            let (svc, token) = (svc.clone(), forged.token.clone());
            tokio::spawn(async move { svc.verify_current(&token, now).await.is_err() })
        });
        for refused in futures::future::join_all(tries).await {
            assert!(refused.expect("task"));
        }
        assert_eq!(vault.reads(), 1);
        // The real key still verifies, with no further read.
        let good = svc.issue(&user(), now).expect("issue");
        assert!(svc.verify_current(&good.token, now).await.is_ok());
        assert_eq!(vault.reads(), 1);
    }

    #[tokio::test]
    async fn expired_or_malformed_tokens_and_short_keys_never_change_the_key() {
        let vault = Arc::new(crate::ports::secrets::memory::MemorySecrets::with(&[(
            "arn:jwt", "short",
        )]));
        let rereads = Rereads {
            after_refusal: std::time::Duration::ZERO,
            max_age: MAX_AGE,
        };
        let svc = refreshing_with(&vault, rereads);
        let now = Utc::now();
        let t = svc.issue(&user(), now).expect("issue");
        let later = now + Duration::hours(2);
        assert!(svc.verify_current(&t.token, later).await.is_err());
        assert!(svc.verify_current("garbage", now).await.is_err());
        assert_eq!(vault.reads(), 0, "only a signature failure reads the key");
        let forged = TokenService::new(&cfg(NEW_KEY))
            .issue(&user(), now)
            .expect("t");
        assert!(svc.verify_current(&forged.token, now).await.is_err());
        assert_eq!(vault.reads(), 1);
        assert!(
            svc.verify(&t.token, now).is_ok(),
            "a key under 32 bytes is not taken"
        );
    }

    #[tokio::test]
    async fn without_a_key_every_token_is_refused_and_none_is_signed() {
        let mut c = cfg(KEY);
        let t = TokenService::new(&c).issue(&user(), Utc::now()).expect("t");
        c.secret = None;
        let svc = TokenService::new(&c);
        assert!(svc.verify_current(&t.token, Utc::now()).await.is_err());
        assert!(svc.issue(&user(), Utc::now()).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn thirty_good_tokens_at_a_stale_key_all_verify_and_read_it_once() {
        let vault = Arc::new(crate::ports::secrets::memory::MemorySecrets::with(&[(
            "arn:jwt", KEY,
        )]));
        let svc = Arc::new(refreshing(&vault));
        tokio::time::advance(MAX_AGE).await;
        let good = svc.issue(&user(), Utc::now()).expect("issue");
        let tries = (0..30).map(|_| {
            let (svc, token) = (svc.clone(), good.token.clone());
            tokio::spawn(async move { svc.verify_current(&token, Utc::now()).await.is_ok() })
        });
        for verified in futures::future::join_all(tries).await {
            assert!(
                verified.expect("task"),
                "a good token goes through untouched"
            );
        }
        assert_eq!(
            vault.reads(),
            1,
            "the stale key is read once, never waited for"
        );
    }
}
