//! What a request claims while it loads (rate counts, the idempotency key, the task lease, the
//! token reservation) and how it is handed back when the request is refused or fails.

use chrono::{DateTime, Utc};

use super::super::{budget, StepContext, StepInput};
use crate::agent::step::StepPorts;
use crate::auth::rate_limit::FixedWindow;
use crate::error::Error;
use crate::ports::Store;

/// What a request has claimed so far, so it can be handed back in one place.
pub(super) struct Claims {
    pub tenant_id: String,
    pub user_id: String,
    pub now: DateTime<Utc>,
    pub per_user: FixedWindow,
    pub user_key: String,
    pub user_counted: bool,
    /// `(task, holder)` of a lease taken.
    pub lease: Option<(String, String)>,
    /// `(key, holder)` of an idempotency key claimed.
    pub key: Option<(String, String)>,
}

impl Claims {
    /// Hands back what was claimed and returns `err`. `lease_gone`: the lease was already
    /// cleared (saving a failed task does that).
    pub async fn refuse(&self, store: &dyn Store, err: Error, lease_gone: bool) -> Error {
        if self.user_counted {
            self.per_user
                .give_back(store, &self.user_key, self.now)
                .await;
        }
        let lease = self
            .lease
            .as_ref()
            .filter(|_| !lease_gone)
            .map(|(t, h)| (t.as_str(), h.as_str()));
        let key = self.key.as_ref().map(|(k, h)| (k.as_str(), h.as_str()));
        hand_back(store, &self.tenant_id, &self.user_id, lease, key).await;
        err
    }

    /// Hands back a lease taken on a task the request turned out not to continue.
    pub async fn drop_lease(&mut self, store: &dyn Store) {
        if let Some((task, holder)) = self.lease.take() {
            hand_back(
                store,
                &self.tenant_id,
                &self.user_id,
                Some((&task, &holder)),
                None,
            )
            .await;
        }
    }
}

/// The per-user and per-tenant interact windows.
pub(super) fn windows(ctx: &StepPorts<'_>) -> (FixedWindow, FixedWindow) {
    let agent = &ctx.agent;
    let window = |limit| FixedWindow {
        limit,
        window_seconds: agent.rate_window_seconds,
    };
    (window(agent.rate_per_user), window(agent.rate_per_tenant))
}

/// Releases a task lease `(task, holder)` and abandons an idempotency key `(key, holder)`, when
/// given. Failures are logged: the lease expires and the key lapses after a step deadline.
pub(super) async fn hand_back(
    store: &dyn Store,
    tenant_id: &str,
    user_id: &str,
    lease: Option<(&str, &str)>,
    key: Option<(&str, &str)>,
) {
    if let Some((task_id, holder)) = lease {
        if let Err(e) = store.release_lease(tenant_id, task_id, holder).await {
            tracing::warn!(error = %e, "could not release the task lease");
        }
    }
    if let Some((key, holder)) = key {
        if let Err(e) = store.abandon(tenant_id, user_id, key, holder).await {
            tracing::warn!(error = %e, "could not release the idempotency key");
        }
    }
}

/// Gives back what `claim` took (task lease, idempotency key) after a later failure.
pub async fn release(ctx: &StepPorts<'_>, step: &StepContext, input: &StepInput) {
    let lease = (!step.request.is_new)
        .then_some((step.task.id.as_str(), step.request.lease_owner.as_str()));
    let key = input
        .idempotency_key
        .as_deref()
        .map(|k| (k, input.request_id.as_str()));
    hand_back(ctx.store, &step.tenant_id, &step.user_id, lease, key).await;
}

/// Gives back the tenant's count and token reservation of a request refused in `enter`.
pub(super) async fn give_back_tenant(
    ctx: &StepPorts<'_>,
    claims: &Claims,
    tenant_counted: bool,
    reserved: u64,
) {
    let (_, per_tenant) = windows(ctx);
    if tenant_counted {
        per_tenant
            .give_back(ctx.store, &tenant_key(&claims.tenant_id), claims.now)
            .await;
    }
    budget::give_back(ctx, &claims.tenant_id, reserved, claims.now).await;
}

pub(super) fn tenant_key(tenant_id: &str) -> String {
    format!("interact-tenant#{tenant_id}")
}
