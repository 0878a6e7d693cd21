//! Phase 1 (Load): authenticate, claim and read everything the step needs, in three rounds of
//! concurrent store calls:
//!
//! 1. [`read`]: the account (token not revoked, user enabled) with the reads that claim
//!    nothing — history, session, the session id's owner, allowed domains.
//! 2. [`claim`]: the user's rate count, the idempotency key and the task lease (only the
//!    task's owner can lease it) — the task named by `taskId`, or the session's task waiting
//!    for the user's answer; then the admission of the request (pure rules).
//! 3. [`enter`]: the tenant's rate count and token reservation — only for requests within the
//!    user's limit — with the page build.
//!
//! Whatever a refused request had claimed is handed back before it is answered.

mod claims;
mod enter;

use chrono::Duration;

pub use claims::release;
pub use enter::enter;

use self::claims::{hand_back, windows, Claims};
use super::StepInput;
use crate::agent::step::StepPorts;
use crate::auth::check_account;
use crate::auth::Principal;
use crate::domain::{admission, Admission, DomainPattern, Session, Step, Task, TaskError};
use crate::error::Error;
use crate::ports::{KeyClaim, Reservation, SessionOwner, StoreError};

/// What round 1 read.
pub struct Reads {
    /// The principal with its role, its account checked.
    principal: Principal,
    history: Vec<Step>,
    session: Option<Session>,
    owner: Option<SessionOwner>,
    domains: Vec<DomainPattern>,
}

/// What `claim` produced.
pub enum Loaded {
    /// A retried request whose response is stored.
    Replay(serde_json::Value),
    Ready(Box<Admitted>),
}

/// A request admitted to its task, with what it claimed.
pub struct Admitted {
    reads: Reads,
    claims: Claims,
    task: Option<Task>,
    session_id: String,
    session: Option<Session>,
}

fn not_found_task() -> Error {
    TaskError::NotFound.into()
}

fn busy(why: &'static str) -> Error {
    TaskError::Busy(why).into()
}

/// Round 1: the account and the reads that claim nothing.
pub async fn read(ctx: &StepPorts<'_>, input: &StepInput) -> Result<Reads, Error> {
    let mut principal = input.principal.clone();
    let req = &input.request;
    let store = ctx.store;
    let tenant = input.principal.tenant_id.as_str();
    let (account, history, session, owner, domains) = tokio::join!(
        check_account(ctx.store, ctx.clock.now(), &mut principal),
        async {
            match &req.task_id {
                Some(id) => store.steps(tenant, id).await,
                None => Ok(Vec::new()),
            }
        },
        async {
            match &req.session_id {
                Some(id) => store.session(tenant, id).await,
                None => Ok(None),
            }
        },
        async {
            match &req.session_id {
                Some(id) => store.session_owner(id).await,
                None => Ok(None),
            }
        },
        store.allowed_domains(tenant),
    );
    account?;
    Ok(Reads {
        principal,
        history: history?,
        session: session?,
        owner: owner?,
        domains: domains?,
    })
}

/// Round 2: the user's count, the key and the lease; then the admission rules.
pub async fn claim(
    ctx: &StepPorts<'_>,
    input: &StepInput,
    mut reads: Reads,
) -> Result<Loaded, Error> {
    let p = reads.principal.clone();
    let req = &input.request;
    let now = ctx.clock.now();
    let agent = &ctx.agent;
    let store = ctx.store;
    let (per_user, _) = windows(ctx);
    let user_key = format!("interact-user#{}#{}", p.tenant_id, p.user_id);
    // A claim lives as long as the request can: a request that dies frees both soon.
    let claim_until = now + Duration::milliseconds(agent.step_deadline_ms as i64 + 5_000);
    let holder = input.request_id.as_str();
    // Without `taskId`, the user's own session may name a task waiting for this answer.
    let waiting = match &req.task_id {
        Some(_) => None,
        None => reads
            .session
            .as_ref()
            .filter(|s| s.user_id == p.user_id)
            .and_then(|s| s.waiting_task_id.clone()),
    };
    let task_id = req.task_id.clone().or_else(|| waiting.clone());

    let (user_counted, reservation, task, waiting_history) = tokio::join!(
        per_user.take(store, &user_key, now),
        async {
            match &input.idempotency_key {
                Some(k) => {
                    let claim = KeyClaim {
                        request_hash: &input.request_hash,
                        holder,
                        until: claim_until,
                    };
                    store
                        .reserve(&p.tenant_id, &p.user_id, k, &claim)
                        .await
                        .map(Some)
                }
                None => Ok(None),
            }
        },
        async {
            match &task_id {
                Some(id) => store
                    .acquire_lease(&p.tenant_id, id, &p.user_id, holder, claim_until, now)
                    .await
                    .map(Some),
                None => Ok(None),
            }
        },
        async {
            match &waiting {
                Some(id) => store.steps(&p.tenant_id, id).await.map(Some),
                None => Ok(None),
            }
        },
    );

    let mut claims = Claims {
        tenant_id: p.tenant_id.clone(),
        user_id: p.user_id.clone(),
        now,
        per_user,
        user_key,
        user_counted: matches!(user_counted, Ok(true)),
        lease: match (&task, &task_id) {
            (Ok(Some(_)), Some(id)) => Some((id.clone(), holder.to_owned())),
            _ => None,
        },
        key: match (&reservation, &input.idempotency_key) {
            (Ok(Some(Reservation::New)), Some(k)) => Some((k.clone(), holder.to_owned())),
            _ => None,
        },
    };

    match reservation {
        Ok(Some(Reservation::Done(response))) => {
            // A replay: nothing new runs; the lease goes back, the count stays.
            let lease = claims.lease.as_ref().map(|(t, h)| (t.as_str(), h.as_str()));
            hand_back(store, &p.tenant_id, &p.user_id, lease, None).await;
            return Ok(Loaded::Replay(response));
        }
        Ok(Some(Reservation::Pending)) => {
            let err = busy("A request with this Idempotency-Key is still in progress");
            return Err(claims.refuse(store, err, false).await);
        }
        Ok(Some(Reservation::Mismatch)) => {
            return Err(claims
                .refuse(store, Error::IdempotencyKeyReused, false)
                .await)
        }
        Ok(_) => {}
        Err(e) => return Err(claims.refuse(store, e.into(), false).await),
    }
    match user_counted {
        Ok(true) => {}
        Ok(false) => return Err(claims.refuse(store, per_user.limited(now), false).await),
        Err(e) => return Err(claims.refuse(store, e, false).await),
    }
    let task = match (task, waiting.is_some()) {
        (Ok(t), _) => t,
        // The waiting task went away: this request starts a new one. A busy one is busy (a
        // second copy of the same answer must not start a task of its own).
        (Err(StoreError::NotFound(_)), true) => None,
        (Err(StoreError::NotFound(_)), false) => {
            return Err(claims.refuse(store, not_found_task(), false).await)
        }
        (Err(StoreError::Conflict(_)), _) => {
            let err = busy("Another request for this task is in progress");
            return Err(claims.refuse(store, err, false).await);
        }
        (Err(e), _) => return Err(claims.refuse(store, e.into(), false).await),
    };
    let task = match (task, waiting_history) {
        (Some(t), Ok(Some(history))) if t.waits_for_user() => {
            reads.history = history;
            Some(t)
        }
        (Some(_), Ok(Some(_)) | Err(_)) if waiting.is_some() => {
            // No longer waiting (or unreadable): the answer starts a new task.
            claims.drop_lease(store).await;
            None
        }
        (t, _) => t,
    };

    // A step recorded between the history read and the lease: read the history again.
    if let Some(t) = task
        .as_ref()
        .filter(|t| t.stored.step_count as usize != reads.history.len())
    {
        match store.steps(&p.tenant_id, &t.id).await {
            Ok(h) => reads.history = h,
            Err(e) => return Err(claims.refuse(store, e.into(), false).await),
        }
    }

    // The task's own session: as read with the request when the client named it (it does), else
    // read now.
    let task_session = match task.as_ref().and_then(|t| t.session_id.as_deref()) {
        Some(id) if reads.session.as_ref().is_some_and(|s| s.session_id == id) => {
            reads.session.clone()
        }
        Some(id) => match store.session(&p.tenant_id, id).await {
            Ok(s) => s,
            Err(e) => return Err(claims.refuse(store, e.into(), false).await),
        },
        None => None,
    };
    let archived = task_session
        .as_ref()
        .is_some_and(|s| s.status == crate::domain::SessionStatus::Archived);
    match admission(task.as_ref(), &p.user_id, agent.max_steps, archived) {
        Admission::Start | Admission::Continue => {}
        Admission::Archived { finished } => {
            if let (Some(t), false) = (&task, finished) {
                if let Err(e) = store.save_task(&t.failed_at(now)).await {
                    return Err(claims.refuse(store, e.into(), false).await);
                }
            }
            // Saving the failed task cleared its lease.
            let err = TaskError::Archived.into();
            return Err(claims.refuse(store, err, !finished).await);
        }
        Admission::NotFound => return Err(claims.refuse(store, not_found_task(), false).await),
        Admission::Finished(status) => {
            let err = TaskError::Finished(status).into();
            return Err(claims.refuse(store, err, false).await);
        }
        Admission::StepLimit => {
            if let Some(t) = &task {
                if let Err(e) = store.save_task(&t.failed_at(now)).await {
                    return Err(claims.refuse(store, e.into(), false).await);
                }
            }
            // Saving the failed task cleared its lease.
            let err = TaskError::StepLimit {
                max: agent.max_steps,
            };
            return Err(claims.refuse(store, err.into(), true).await);
        }
    }

    // The session: the task's own, else the one the client named (created if unknown), else new.
    let session_id = task
        .as_ref()
        .and_then(|t| t.session_id.clone())
        .or_else(|| req.session_id.clone())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let session = reads.session.clone().filter(|s| s.session_id == session_id);
    if session.as_ref().is_some_and(|s| s.user_id != p.user_id) {
        let err = TaskError::SessionNotFound.into();
        return Err(claims.refuse(store, err, false).await);
    }
    let claimed_elsewhere = reads.owner.as_ref().is_some_and(|o| {
        req.session_id.as_deref() == Some(session_id.as_str())
            && (o.tenant_id != p.tenant_id || o.user_id != p.user_id)
    });
    if session.is_none() && task.is_none() && claimed_elsewhere {
        let err = crate::sessions::session_id_taken();
        return Err(claims.refuse(store, err, false).await);
    }
    Ok(Loaded::Ready(Box::new(Admitted {
        reads,
        claims,
        task,
        session_id,
        session,
    })))
}
