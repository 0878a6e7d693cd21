//! What bounds the agent tools' use of the server: a rate limit on `/api/v1/agent/*` per user
//! and per tenant (fixed windows, like interact's: `429` with `Retry-After` and `resetAt`; a
//! refused request is not counted, and the tenant's count is taken only within the user's
//! limit), turns for workspace searches (at most `AGENT_SEARCH_CONCURRENCY` run at once in a
//! process, each holding a bounded number of files; the others wait their turn), and a cap on
//! each user's pending approvals, in number and in bytes of their arguments.
//!
//! Pending approvals are counted in windows as long as an approval's lifetime
//! (`AGENT_APPROVAL_TTL_SECONDS`): one parked in window `W` has been decided or has expired by
//! the end of `W + 1`. A call is parked only while the current window has room for it beside
//! what the previous window still counts — read first, and only ever going down — so however
//! many calls race, no more than the cap are pending; a decision gives its room back, an
//! expired approval's room lapses with its windows.

use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;

use super::ToolPorts;
use crate::auth::rate_limit::FixedWindow;
use crate::auth::Principal;
use crate::domain::agent_tools::Approval;
use crate::error::Error;

/// Longest a search waits for its turn before the server answers that it is busy.
const SEARCH_TURN_WAIT: Duration = Duration::from_secs(10);

fn windows(ctx: &ToolPorts<'_>) -> (FixedWindow, FixedWindow) {
    let t = &ctx.tools;
    let window = |limit| FixedWindow {
        limit,
        window_seconds: t.rate_window_seconds,
    };
    (window(t.rate_per_user), window(t.rate_per_tenant))
}

/// Counts one agent-tool request of `p` against the user's and the tenant's windows; `429`
/// (nothing counted) when either is used up.
pub async fn count_request(ctx: &ToolPorts<'_>, p: &Principal) -> Result<(), Error> {
    let (per_user, per_tenant) = windows(ctx);
    let store = ctx.store;
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

/// The pending-approval windows (count and bytes) and the user's counter keys.
fn pending(ctx: &ToolPorts<'_>, tenant_id: &str, user_id: &str) -> [(FixedWindow, String); 2] {
    let t = &ctx.tools;
    let window = |limit| FixedWindow {
        limit,
        window_seconds: t.approval_ttl_seconds,
    };
    [
        (
            window(t.max_pending_approvals),
            format!("agent-pending#{tenant_id}#{user_id}"),
        ),
        (
            window(t.max_pending_bytes),
            format!("agent-pending-bytes#{tenant_id}#{user_id}"),
        ),
    ]
}

/// Makes room for one more pending approval of `bytes` for `p`; `429
/// TOO_MANY_PENDING_APPROVALS` (nothing counted) when the user has no room left.
pub async fn reserve_pending(ctx: &ToolPorts<'_>, p: &Principal, bytes: u64) -> Result<(), Error> {
    let store = ctx.store;
    let now = ctx.clock.now();
    let [count, size] = pending(ctx, &p.tenant_id, &p.user_id);
    let (start, _) = count.0.window(now);
    let previous = start - count.0.window_seconds.max(1);
    let (in_count, in_size) = tokio::join!(
        store.count(&count.1, previous),
        store.count(&size.1, previous)
    );
    // What the previous window still counts takes its room in this one.
    let room = |(w, key): &(FixedWindow, String), used: u64| {
        (
            FixedWindow {
                limit: w.limit.saturating_sub(used),
                ..*w
            },
            key.clone(),
        )
    };
    let (count_room, size_room) = (room(&count, in_count?), room(&size, in_size?));
    if !count_room.0.take(store, &count_room.1, now).await? {
        return Err(full(&count.0, now, format!("{} approvals", count.0.limit)));
    }
    match size_room
        .0
        .take_amount(store, &size_room.1, bytes.max(1), now)
        .await
    {
        Ok(true) => Ok(()),
        refused => {
            count_room.0.give_back(store, &count_room.1, now).await;
            refused?;
            Err(full(
                &size.0,
                now,
                format!("{} bytes of arguments", size.0.limit),
            ))
        }
    }
}

fn full(w: &FixedWindow, now: chrono::DateTime<chrono::Utc>, what: String) -> Error {
    let (retry_after_seconds, reset_at) = w.renewal(now);
    Error::LimitReached {
        code: "TOO_MANY_PENDING_APPROVALS",
        message: format!(
            "You have as many calls waiting for a decision as you may ({what}): approve or \
             reject some first"
        ),
        retry_after_seconds,
        reset_at,
    }
}

/// Gives back the room a decided approval held (nothing for one parked before approvals were
/// counted). Failures are logged: the room lapses with its windows anyway.
pub async fn release_pending(ctx: &ToolPorts<'_>, a: &Approval) {
    if a.args_bytes == 0 {
        return;
    }
    let store = ctx.store;
    let [count, size] = pending(ctx, &a.tenant_id, &a.user_id);
    let bytes = i64::try_from(a.args_bytes.max(1)).unwrap_or(i64::MAX);
    tokio::join!(
        count.0.adjust(store, &count.1, -1, a.created_at),
        size.0.adjust(store, &size.1, -bytes, a.created_at),
    );
}

/// A turn to run a workspace search; `503` (retry shortly) when none came free in time.
pub async fn search_turn(ctx: &ToolPorts<'_>) -> Result<OwnedSemaphorePermit, Error> {
    match tokio::time::timeout(SEARCH_TURN_WAIT, ctx.search_turns.clone().acquire_owned()).await {
        Ok(Ok(permit)) => Ok(permit),
        // Timed out (or closed, which it never is).
        _ => Err(Error::Overloaded("workspace searches")),
    }
}
