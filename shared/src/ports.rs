//! Ports: the small async traits the domain talks to. Adapters implement them — the embedded
//! store now, DynamoDB/S3 next. Keys are shaped for a single DynamoDB table: every record that
//! belongs to a tenant lives under a `TENANT#<id>` partition, and every write that must not
//! clobber (creating a user, a tenant) is conditional.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::domain::{DomainPattern, Email, Tenant, User};

/// Storage failures, mapped from each adapter's own errors.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// A conditional write failed: the record already exists or changed meanwhile.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The record an update needs does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// Throttled or temporarily unavailable; the operation may be retried.
    #[error("unavailable (retryable): {0}")]
    Unavailable(String),
    /// Anything else; never shown to clients.
    #[error("store failure: {0}")]
    Internal(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Users, keyed by their (globally unique) login email.
#[async_trait]
pub trait UserStore: Send + Sync {
    /// Creates a user; `Conflict` if the email is taken.
    async fn create_user(&self, user: &User) -> StoreResult<()>;
    /// The user with this email, if any.
    async fn user_by_email(&self, email: &Email) -> StoreResult<Option<User>>;
    /// Disables or re-enables a user; `NotFound` if there is none.
    async fn set_user_disabled(&self, email: &Email, disabled: bool) -> StoreResult<User>;
    /// Users of one tenant, or of all tenants (administration only).
    async fn list_users(&self, tenant_id: Option<&str>) -> StoreResult<Vec<User>>;
}

/// Tenants and their allowed-domain patterns.
#[async_trait]
pub trait TenantStore: Send + Sync {
    /// Creates a tenant; `Conflict` if the id is taken.
    async fn create_tenant(&self, tenant: &Tenant) -> StoreResult<()>;
    async fn tenant(&self, tenant_id: &str) -> StoreResult<Option<Tenant>>;
    async fn list_tenants(&self) -> StoreResult<Vec<Tenant>>;
    /// Adds a pattern; `false` if it was already there; `NotFound` for an unknown tenant.
    async fn add_allowed_domain(
        &self,
        tenant_id: &str,
        pattern: &DomainPattern,
    ) -> StoreResult<bool>;
    /// Removes a pattern; `false` if it was not there.
    async fn remove_allowed_domain(
        &self,
        tenant_id: &str,
        pattern: &DomainPattern,
    ) -> StoreResult<bool>;
    /// The tenant's patterns, sorted.
    async fn allowed_domains(&self, tenant_id: &str) -> StoreResult<Vec<DomainPattern>>;
}

/// Revoked access-token ids, kept until the token would have expired anyway.
#[async_trait]
pub trait RevokedTokenStore: Send + Sync {
    async fn revoke(&self, tenant_id: &str, jti: &str, until: DateTime<Utc>) -> StoreResult<()>;
    /// Whether `jti` is revoked at `now` (entries past `until` no longer count).
    async fn is_revoked(&self, tenant_id: &str, jti: &str, now: DateTime<Utc>)
        -> StoreResult<bool>;
}

/// Fixed-window counters for rate limits. A window is identified by its start; the entry may
/// be dropped after `expires_at`.
#[async_trait]
pub trait RateLimitStore: Send + Sync {
    /// Atomically adds one and returns the new count.
    async fn increment(
        &self,
        key: &str,
        window_start: i64,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<u64>;
    /// The current count (0 when absent).
    async fn count(&self, key: &str, window_start: i64) -> StoreResult<u64>;
    /// Drops the counter.
    async fn reset(&self, key: &str, window_start: i64) -> StoreResult<()>;
}

/// Everything a store adapter provides, as one object.
pub trait Store: UserStore + TenantStore + RevokedTokenStore + RateLimitStore {}
impl<T: UserStore + TenantStore + RevokedTokenStore + RateLimitStore> Store for T {}
