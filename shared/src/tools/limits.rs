//! What bounds the agent tools' use of the server: a rate limit on `/api/v1/agent/*` per user
//! and per tenant (fixed windows, like interact's: `429` with `Retry-After` and `resetAt`; a
//! refused request is not counted, and the tenant's count is taken only within the user's
//! limit), and turns for workspace searches (at most `AGENT_SEARCH_CONCURRENCY` run at once in
//! a process, each holding a bounded number of files; the others wait their turn).

use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;

use crate::auth::rate_limit::FixedWindow;
use crate::auth::Principal;
use crate::context::AppContext;
use crate::error::Error;

/// Longest a search waits for its turn before the server answers that it is busy.
const SEARCH_TURN_WAIT: Duration = Duration::from_secs(10);

fn windows(ctx: &AppContext) -> (FixedWindow, FixedWindow) {
    let t = &ctx.config.tools;
    let window = |limit| FixedWindow {
        limit,
        window_seconds: t.rate_window_seconds,
    };
    (window(t.rate_per_user), window(t.rate_per_tenant))
}

/// Counts one agent-tool request of `p` against the user's and the tenant's windows; `429`
/// (nothing counted) when either is used up.
pub async fn count_request(ctx: &AppContext, p: &Principal) -> Result<(), Error> {
    let (per_user, per_tenant) = windows(ctx);
    let store = ctx.store.as_ref();
    let now = ctx.clock.now();
    let user_key = format!("agent-user#{}#{}", p.tenant_id, p.user_id);
    if !per_user.take(store, &user_key, now).await? {
        return Err(per_user.limited(now));
    }
    let tenant_key = format!("agent-tenant#{}", p.tenant_id);
    match per_tenant.take(store, &tenant_key, now).await {
        Ok(true) => Ok(()),
        refused => {
            per_user.give_back(store, &user_key, now).await;
            refused?;
            Err(per_tenant.limited(now))
        }
    }
}

/// A turn to run a workspace search; `503` (retry shortly) when none came free in time.
pub async fn search_turn(ctx: &AppContext) -> Result<OwnedSemaphorePermit, Error> {
    match tokio::time::timeout(SEARCH_TURN_WAIT, ctx.search_turns.clone().acquire_owned()).await {
        Ok(Ok(permit)) => Ok(permit),
        // Timed out (or closed, which it never is).
        _ => Err(Error::Overloaded("workspace searches")),
    }
}
