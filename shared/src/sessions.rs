//! Session checks shared by the session routes: a session is visible only to the user who owns
//! it; any other answers 404 exactly like a missing one.

use crate::auth::Principal;
use crate::clock::Clock;
use crate::config::Retention;
use crate::domain::session::parse_status;
use crate::domain::{Session, SessionStatus, TaskError};
use crate::error::Error;
use crate::ports::{SessionChanges, Store, StoreError};

/// What changing a session uses: the store, the clock and the retention its debug log entry
/// expires with (`AppContext::sessions`).
#[derive(Clone, Copy)]
pub struct SessionPorts<'a> {
    pub store: &'a dyn Store,
    pub clock: &'a dyn Clock,
    pub retention: &'a Retention,
}

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
    store: &dyn Store,
    p: &Principal,
    session_id: &str,
) -> Result<Session, Error> {
    store
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
pub fn status_filter(raw: Option<String>) -> Result<Option<SessionStatus>, Error> {
    raw.map(|s| {
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
    ports: SessionPorts<'_>,
    p: &Principal,
    session: &Session,
    changes: &SessionChanges,
    what: &str,
) -> Result<Session, Error> {
    let session_id = session.session_id.as_str();
    let SessionPorts {
        store,
        clock,
        retention,
    } = ports;
    let now = clock.now();
    let updated = store
        .update_session(&p.tenant_id, session_id, changes, now)
        .await
        .map_err(not_found_as_session)?;
    let log = crate::debug::entry(
        retention,
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
    if let Err(e) = store.append_log(&log).await {
        tracing::warn!(error = %e, "could not store the debug log");
    }
    Ok(updated)
}

/// Archives a session the caller owns and ends the task it is running: the session's task
/// waiting for the user, and the task of its newest message, unless finished. An ended task is
/// `failed` and its next interact answers `409 TASK_COMPLETED`; a step on its way meanwhile is
/// not written and its request gets the same answer (`step::persist`); a task this missed is
/// refused at its next request (`domain::admission`, the session being archived).
pub async fn archive(
    ports: SessionPorts<'_>,
    p: &Principal,
    session: &Session,
) -> Result<Session, Error> {
    let changes = SessionChanges {
        status: Some(SessionStatus::Archived),
        waiting_task_id: session.waiting_task_id.as_ref().map(|_| None),
        ..SessionChanges::default()
    };
    let archived = change_session(ports, p, session, &changes, "session archived").await?;
    let store = ports.store;
    let newest = store
        .messages(
            &p.tenant_id,
            &session.session_id,
            crate::ports::MessagesFrom::Newest,
            1,
        )
        .await
        .map(|page| page.messages)
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "could not read the archived session's newest message");
            Vec::new()
        });
    let mut running: Vec<String> = session.waiting_task_id.iter().cloned().collect();
    running.extend(newest.iter().filter_map(|m| m.task_id.clone()));
    running.dedup();
    for task_id in running {
        // The session is archived either way: a task this could not end is refused at its next
        // request (`domain::admission`).
        if let Err(e) = end_task(store, p, &task_id, ports.clock.now()).await {
            tracing::warn!(error = %e, "could not end the archived session's task");
        }
    }
    Ok(archived)
}

/// Ends the caller's task `task_id` unless it is finished: saved `failed`. A step saved in
/// between is read again once; one saved after that ends at its next request instead.
async fn end_task(
    store: &dyn Store,
    p: &Principal,
    task_id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), Error> {
    for _ in 0..2 {
        let Some(task) = store
            .task(&p.tenant_id, task_id)
            .await?
            .filter(|t| t.user_id == p.user_id && !t.status.is_finished())
        else {
            return Ok(());
        };
        match store.save_task(&task.failed_at(now)).await {
            Ok(_) | Err(StoreError::NotFound(_)) => return Ok(()),
            Err(StoreError::Conflict(_)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
