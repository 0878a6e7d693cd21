//! Session checks shared by the session routes: a session is visible only to the user who owns
//! it; any other answers 404 exactly like a missing one.

use crate::auth::Principal;
use crate::context::AppContext;
use crate::domain::session::parse_status;
use crate::domain::{Session, SessionStatus, TaskError};
use crate::error::Error;
use crate::http::{query_param, Request};
use crate::ports::{SessionChanges, StoreError};

pub fn session_not_found() -> Error {
    TaskError::SessionNotFound.into()
}

/// A client-chosen session id that another account already uses (ids name global realtime
/// channels, so they cannot be shared).
pub fn session_id_taken() -> Error {
    TaskError::SessionTaken.into()
}

/// The caller's session, or 404.
pub async fn owned_session(
    ctx: &AppContext,
    p: &Principal,
    session_id: &str,
) -> Result<Session, Error> {
    ctx.store
        .session(&p.tenant_id, session_id)
        .await?
        .filter(|s| s.user_id == p.user_id)
        .ok_or_else(session_not_found)
}

/// A session that vanished between read and write is a 404 too.
pub fn not_found_as_session(e: StoreError) -> Error {
    match e {
        StoreError::NotFound(_) => session_not_found(),
        other => other.into(),
    }
}

/// The optional `status` query parameter of session listings.
pub fn status_query(req: &Request) -> Result<Option<SessionStatus>, Error> {
    query_param(req, "status")
        .map(|s| {
            parse_status(&s).ok_or_else(|| {
                Error::field(
                    "status",
                    "must be one of: active, completed, failed, interrupted, archived",
                )
            })
        })
        .transpose()
}

/// Applies `changes` to a session the caller owns (as `owned_session` returned it) and notes
/// it in the debug log.
pub async fn change_session(
    ctx: &AppContext,
    p: &Principal,
    session: &Session,
    changes: &SessionChanges,
    what: &str,
) -> Result<Session, Error> {
    let session_id = session.session_id.as_str();
    let now = ctx.clock.now();
    let updated = ctx
        .store
        .update_session(&p.tenant_id, session_id, changes, now)
        .await
        .map_err(not_found_as_session)?;
    let log = crate::debug::entry(
        ctx,
        crate::debug::LogScope {
            tenant_id: &p.tenant_id,
            user_id: &p.user_id,
            task_id: None,
        },
        "session",
        &format!("{what}: {session_id}"),
        None,
        now,
    );
    if let Err(e) = ctx.store.append_log(&log).await {
        tracing::warn!(error = %e, "could not store the debug log");
    }
    Ok(updated)
}
