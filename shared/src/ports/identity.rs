//! Who may sign in, and how often: users, tenants, revoked tokens, rate-limit counters.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;
use crate::domain::{DomainPattern, Email, Tenant, User};

/// Users, keyed by their (globally unique) login email.
#[async_trait]
pub trait UserStore: Send + Sync {
    /// Creates a user; `Conflict` if the email is taken.
    async fn create_user(&self, user: &User) -> StoreResult<()>;
    /// The user with this email, if any.
    async fn user_by_email(&self, email: &Email) -> StoreResult<Option<User>>;
    /// Disables or re-enables a user; `NotFound` if there is none. Disabling also sets the
    /// user's `tokens_valid_after` to now: tokens issued until then stay refused after the
    /// user is enabled again.
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
    /// Revokes `jti` until `until`; `false` if it was already revoked (one conditional write).
    async fn revoke(&self, tenant_id: &str, jti: &str, until: DateTime<Utc>) -> StoreResult<bool>;
    /// Whether `jti` is revoked at `now` (entries past `until` no longer count).
    async fn is_revoked(&self, tenant_id: &str, jti: &str, now: DateTime<Utc>)
        -> StoreResult<bool>;
}

/// Fixed-window counters for rate limits. A window is identified by its start; the entry may
/// be dropped after `expires_at`.
#[async_trait]
pub trait RateLimitStore: Send + Sync {
    /// Adds `amount` only while the count stays at or below `limit`, atomically: `Some(new
    /// count)`, or `None` (nothing added) when it would not. Parallel callers can never push
    /// the count past `limit`.
    async fn add_below(
        &self,
        key: &str,
        window_start: i64,
        expires_at: DateTime<Utc>,
        amount: u64,
        limit: u64,
    ) -> StoreResult<Option<u64>>;
    /// Adds `delta` to a live counter (a negative one never takes it below zero: it is then
    /// left as it is); an absent or expired counter is left alone.
    async fn adjust(&self, key: &str, window_start: i64, delta: i64) -> StoreResult<()>;
    /// Adds one while the count is below `limit` (see [`RateLimitStore::add_below`]).
    async fn increment_below(
        &self,
        key: &str,
        window_start: i64,
        expires_at: DateTime<Utc>,
        limit: u64,
    ) -> StoreResult<Option<u64>> {
        self.add_below(key, window_start, expires_at, 1, limit)
            .await
    }
    /// Takes one back (never below zero); gives back a count whose request was refused later.
    async fn decrement(&self, key: &str, window_start: i64) -> StoreResult<()> {
        self.adjust(key, window_start, -1).await
    }
    /// The current count (0 when absent).
    async fn count(&self, key: &str, window_start: i64) -> StoreResult<u64>;
    /// Drops the counter.
    async fn reset(&self, key: &str, window_start: i64) -> StoreResult<()>;
}
