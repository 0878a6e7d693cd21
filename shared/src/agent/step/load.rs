//! Phase 2: authenticate, claim and read everything the step needs, in three rounds of
//! concurrent store calls:
//!
//! 1. [`read`]: the account (token not revoked, user enabled) with the reads that claim
//!    nothing — history, session, the session id's owner, allowed domains.
//! 2. [`claim`]: the user's rate count, the idempotency key and the task lease; then the
//!    admission of the request against its task (pure rules).
//! 3. the tenant's rate count — only for requests within the user's limit — with the
//!    organisation knowledge.
//!
//! Whatever a refused request had claimed is handed back before it is answered.

use chrono::Duration;
use serde_json::json;

use super::{StepContext, StepInput, Usage};
use crate::auth::rate_limit::FixedWindow;
use crate::auth::Principal;
use crate::context::AppContext;
use crate::domain::site::host_of;
use crate::domain::{admission, Admission, DomainPattern, Session, Step, TaskStatus};
use crate::error::Error;
use crate::http::guard::check_account;
use crate::ports::{Reservation, SessionOwner, Store, StoreError};

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
    Ready(Box<StepContext>),
}

fn not_found_task() -> Error {
    Error::NotFound {
        code: "TASK_NOT_FOUND",
        message: "No such task".into(),
    }
}

fn busy(message: &str) -> Error {
    Error::Conflict {
        code: "TASK_BUSY",
        message: message.into(),
    }
}

fn windows(ctx: &AppContext) -> (FixedWindow, FixedWindow) {
    let agent = &ctx.config.agent;
    let window = |limit| FixedWindow {
        limit,
        window_seconds: agent.rate_window_seconds,
    };
    (window(agent.rate_per_user), window(agent.rate_per_tenant))
}

fn user_rate_key(p: &Principal) -> String {
    format!("interact-user#{}#{}", p.tenant_id, p.user_id)
}

/// Round 1: the account and the reads that claim nothing.
pub async fn read(ctx: &AppContext, input: &StepInput) -> Result<Reads, Error> {
    let mut principal = input.principal.clone();
    let req = &input.request;
    let store = ctx.store.as_ref();
    let tenant = input.principal.tenant_id.as_str();
    let (account, history, session, owner, domains) = tokio::join!(
        check_account(ctx, &mut principal),
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

/// Releases a task lease `(task, owner)` and abandons an idempotency key, when given. Failures
/// are logged: the lease expires and the key lapses after a step deadline anyway.
async fn hand_back(
    store: &dyn Store,
    tenant_id: &str,
    user_id: &str,
    lease: Option<(&str, &str)>,
    key: Option<&str>,
) {
    if let Some((task_id, owner)) = lease {
        if let Err(e) = store.release_lease(tenant_id, task_id, owner).await {
            tracing::warn!(error = %e, "could not release the task lease");
        }
    }
    if let Some(key) = key {
        if let Err(e) = store.abandon(tenant_id, user_id, key).await {
            tracing::warn!(error = %e, "could not release the idempotency key");
        }
    }
}

/// Gives back what `claim` took (task lease, idempotency key) after a later failure.
pub async fn release(ctx: &AppContext, step: &StepContext, input: &StepInput) {
    let lease = step
        .task
        .is_some()
        .then_some((step.task_id.as_str(), step.lease_owner.as_str()));
    hand_back(
        ctx.store.as_ref(),
        &step.tenant_id,
        &step.user_id,
        lease,
        input.idempotency_key.as_deref(),
    )
    .await;
}

/// Rounds 2 and 3: claims, admission, the tenant's count and knowledge.
pub async fn claim(ctx: &AppContext, input: &StepInput, reads: Reads) -> Result<Loaded, Error> {
    let p = &reads.principal;
    let req = &input.request;
    let now = ctx.clock.now();
    let agent = &ctx.config.agent;
    let store = ctx.store.as_ref();
    let (per_user, per_tenant) = windows(ctx);
    let user_key = user_rate_key(p);
    let tenant_key = format!("interact-tenant#{}", p.tenant_id);
    // A claim lives as long as the request can: a request that dies frees both soon.
    let claim_until = now + Duration::milliseconds(agent.step_deadline_ms as i64 + 5_000);

    let (user_counted, reservation, task) = tokio::join!(
        per_user.take(store, &user_key, now),
        async {
            match &input.idempotency_key {
                Some(k) => store
                    .reserve(
                        &p.tenant_id,
                        &p.user_id,
                        k,
                        &input.request_hash,
                        claim_until,
                    )
                    .await
                    .map(Some),
                None => Ok(None),
            }
        },
        async {
            match &req.task_id {
                Some(id) => store
                    .acquire_lease(&p.tenant_id, id, &input.request_id, claim_until, now)
                    .await
                    .map(Some),
                None => Ok(None),
            }
        },
    );

    // Whatever fails below must hand back what was claimed here.
    let lease = match (&task, &req.task_id) {
        (Ok(Some(_)), Some(id)) => Some((id.as_str(), input.request_id.as_str())),
        _ => None,
    };
    let key = match reservation {
        Ok(Some(Reservation::New)) => input.idempotency_key.as_deref(),
        _ => None,
    };
    let counted = matches!(user_counted, Ok(true));
    let user_key = &user_key;
    let refuse = |err: Error, give_lease: bool, give_key: bool| async move {
        if counted {
            per_user.give_back(store, user_key, now).await;
        }
        let lease = lease.filter(|_| give_lease);
        let key = key.filter(|_| give_key);
        hand_back(store, &p.tenant_id, &p.user_id, lease, key).await;
        Err(err)
    };

    match reservation {
        Ok(Some(Reservation::Done(response))) => {
            hand_back(store, &p.tenant_id, &p.user_id, lease, None).await;
            return Ok(Loaded::Replay(response));
        }
        Ok(Some(Reservation::Pending)) => {
            return refuse(
                busy("A request with this Idempotency-Key is still in progress"),
                true,
                true,
            )
            .await;
        }
        Ok(Some(Reservation::Mismatch)) => {
            return refuse(Error::IdempotencyKeyReused, true, true).await;
        }
        Ok(_) => {}
        Err(e) => return refuse(e.into(), true, true).await,
    }
    match user_counted {
        Ok(true) => {}
        Ok(false) => return refuse(per_user.limited(now), true, true).await,
        Err(e) => return refuse(e, true, true).await,
    }
    let task = match task {
        Ok(t) => t,
        Err(StoreError::NotFound(_)) => return refuse(not_found_task(), true, true).await,
        Err(StoreError::Conflict(_)) => {
            return refuse(
                busy("Another request for this task is in progress"),
                true,
                true,
            )
            .await
        }
        Err(e) => return refuse(e.into(), true, true).await,
    };

    match admission(task.as_ref(), &p.user_id, agent.max_steps) {
        Admission::Start | Admission::Continue => {}
        Admission::NotFound => return refuse(not_found_task(), true, true).await,
        Admission::Finished(status) => {
            let message = format!(
                "The task is {} and takes no more steps",
                if status == TaskStatus::Completed {
                    "completed"
                } else {
                    "failed"
                }
            );
            return refuse(
                Error::Conflict {
                    code: "TASK_COMPLETED",
                    message,
                },
                true,
                true,
            )
            .await;
        }
        Admission::StepLimit => {
            if let Some(t) = &task {
                if let Err(e) = store.save_task(&t.failed_at(now)).await {
                    return refuse(e.into(), true, true).await;
                }
            }
            // Saving the failed task cleared its lease; only the key is left to give back.
            return refuse(
                Error::MaxStepsExceeded {
                    max: agent.max_steps,
                },
                false,
                true,
            )
            .await;
        }
    }

    // The session: the task's own, else the one the client named (created if unknown), else new.
    let session_id = task
        .as_ref()
        .and_then(|t| t.session_id.clone())
        .or_else(|| req.session_id.clone())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let session = reads.session.filter(|s| s.session_id == session_id);
    if session.as_ref().is_some_and(|s| s.user_id != p.user_id) {
        let err = Error::NotFound {
            code: "SESSION_NOT_FOUND",
            message: "No such session".into(),
        };
        return refuse(err, true, true).await;
    }
    let claimed_elsewhere = reads.owner.as_ref().is_some_and(|o| {
        req.session_id.as_deref() == Some(session_id.as_str())
            && (o.tenant_id != p.tenant_id || o.user_id != p.user_id)
    });
    if session.is_none() && task.is_none() && claimed_elsewhere {
        return refuse(crate::sessions::session_id_taken(), true, true).await;
    }

    // Round 3: the tenant is counted only now, for a request the user's limit let through.
    let host = host_of(&req.url).unwrap_or_default();
    let has_org_knowledge = !host.is_empty() && reads.domains.iter().any(|d| d.matches(&host));
    let query = task
        .as_ref()
        .map_or(req.query.as_str(), |t| t.query.as_str());
    let (tenant_counted, knowledge) =
        tokio::join!(per_tenant.take(store, &tenant_key, now), async {
            match (has_org_knowledge, &ctx.knowledge) {
                (true, Some(k)) => match k.resolve(&req.url, Some(query), &p.tenant_id).await {
                    Ok(r) => r.context,
                    // Knowledge improves a step but is not needed for one.
                    Err(e) => {
                        tracing::warn!(error = %e, "knowledge lookup failed; deciding without it");
                        Vec::new()
                    }
                },
                _ => Vec::new(),
            }
        });
    match tenant_counted {
        Ok(true) => {}
        Ok(false) => return refuse(per_tenant.limited(now), true, true).await,
        Err(e) => return refuse(e, true, true).await,
    }

    let new_session = match (&session, &task) {
        (None, None) => {
            let domain = crate::domain::session::session_domain(None, &req.url);
            Some(Session::new_active(
                session_id.clone(),
                p.tenant_id.clone(),
                p.user_id.clone(),
                req.url.clone(),
                domain.clone(),
                crate::domain::session::auto_title(&domain, Some(&req.query)),
                Some(json!({ "initialQuery": req.query })),
                now,
            ))
        }
        _ => None,
    };
    let user_input = task
        .as_ref()
        .filter(|t| t.status == TaskStatus::NeedsUserInput)
        .map(|_| req.query.clone());
    let task_id = task
        .as_ref()
        .map(|t| t.id.clone())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    Ok(Loaded::Ready(Box::new(StepContext {
        tenant_id: p.tenant_id.clone(),
        user_id: p.user_id.clone(),
        lease_owner: input.request_id.clone(),
        step_index: task.as_ref().map_or(0, |t| t.step_count),
        task,
        task_id,
        session_id,
        new_session,
        session,
        user_input,
        history: reads.history,
        has_org_knowledge,
        knowledge,
        page_hash: String::new(),
        page_summary: String::new(),
        page_form: String::new(),
        decision: None,
        usage: Usage::default(),
        llm_ms: 0,
        llm_calls: 0,
    })))
}
