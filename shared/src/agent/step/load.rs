//! Phase 2: authenticate, claim and read everything the step needs, in three rounds of
//! concurrent store calls:
//!
//! 1. [`read`]: the account (token not revoked, user enabled) with the reads that claim
//!    nothing — history, session, the session id's owner, allowed domains.
//! 2. [`claim`]: the user's rate count, the idempotency key and the task lease (only the
//!    task's owner can lease it); then the admission of the request (pure rules).
//! 3. [`enter`]: the tenant's rate count — only for requests within the user's limit — with
//!    the organisation knowledge and the page build (CPU work starts only for an
//!    authenticated request within its user's limit).
//!
//! Whatever a refused request had claimed is handed back before it is answered.

use std::future::Future;

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use super::{BuiltPage, StepContext, StepInput, Usage};
use crate::auth::rate_limit::FixedWindow;
use crate::auth::Principal;
use crate::context::AppContext;
use crate::domain::site::host_of;
use crate::domain::{
    admission, Admission, DomainPattern, Session, Step, Task, TaskError, TaskStatus,
};
use crate::error::Error;
use crate::http::guard::check_account;
use crate::ports::{KeyClaim, Reservation, SessionOwner, Store, StoreError};

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

/// What a request has claimed so far, so it can be handed back in one place.
struct Claims {
    tenant_id: String,
    user_id: String,
    now: DateTime<Utc>,
    per_user: FixedWindow,
    user_key: String,
    user_counted: bool,
    /// `(task, holder)` of a lease taken.
    lease: Option<(String, String)>,
    /// `(key, holder)` of an idempotency key claimed.
    key: Option<(String, String)>,
}

impl Claims {
    /// Hands back what was claimed and returns `err`. `lease_gone`: the lease was already
    /// cleared (saving a failed task does that).
    async fn refuse(&self, store: &dyn Store, err: Error, lease_gone: bool) -> Error {
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
}

fn not_found_task() -> Error {
    TaskError::NotFound.into()
}

fn busy(why: &'static str) -> Error {
    TaskError::Busy(why).into()
}

fn windows(ctx: &AppContext) -> (FixedWindow, FixedWindow) {
    let agent = &ctx.config.agent;
    let window = |limit| FixedWindow {
        limit,
        window_seconds: agent.rate_window_seconds,
    };
    (window(agent.rate_per_user), window(agent.rate_per_tenant))
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

/// Releases a task lease `(task, holder)` and abandons an idempotency key `(key, holder)`, when
/// given. Failures are logged: the lease expires and the key lapses after a step deadline.
async fn hand_back(
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
pub async fn release(ctx: &AppContext, step: &StepContext, input: &StepInput) {
    let lease = step
        .task
        .is_some()
        .then_some((step.task_id.as_str(), step.lease_owner.as_str()));
    let key = input
        .idempotency_key
        .as_deref()
        .map(|k| (k, input.request_id.as_str()));
    hand_back(
        ctx.store.as_ref(),
        &step.tenant_id,
        &step.user_id,
        lease,
        key,
    )
    .await;
}

/// Round 2: the user's count, the key and the lease; then the admission rules.
pub async fn claim(ctx: &AppContext, input: &StepInput, reads: Reads) -> Result<Loaded, Error> {
    let p = &reads.principal;
    let req = &input.request;
    let now = ctx.clock.now();
    let agent = &ctx.config.agent;
    let store = ctx.store.as_ref();
    let (per_user, _) = windows(ctx);
    let user_key = format!("interact-user#{}#{}", p.tenant_id, p.user_id);
    // A claim lives as long as the request can: a request that dies frees both soon.
    let claim_until = now + Duration::milliseconds(agent.step_deadline_ms as i64 + 5_000);
    let holder = input.request_id.as_str();

    let (user_counted, reservation, task) = tokio::join!(
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
            match &req.task_id {
                Some(id) => store
                    .acquire_lease(&p.tenant_id, id, &p.user_id, holder, claim_until, now)
                    .await
                    .map(Some),
                None => Ok(None),
            }
        },
    );

    let claims = Claims {
        tenant_id: p.tenant_id.clone(),
        user_id: p.user_id.clone(),
        now,
        per_user,
        user_key,
        user_counted: matches!(user_counted, Ok(true)),
        lease: match (&task, &req.task_id) {
            (Ok(Some(_)), Some(id)) => Some((id.clone(), holder.to_owned())),
            _ => None,
        },
        key: match (&reservation, &input.idempotency_key) {
            (Ok(Some(Reservation::New)), Some(k)) => Some((k.clone(), holder.to_owned())),
            _ => None,
        },
    };
    let refuse = |err: Error| claims.refuse(store, err, false);

    match reservation {
        Ok(Some(Reservation::Done(response))) => {
            // A replay: nothing new runs; the lease goes back, the count stays.
            let lease = claims.lease.as_ref().map(|(t, h)| (t.as_str(), h.as_str()));
            hand_back(store, &p.tenant_id, &p.user_id, lease, None).await;
            return Ok(Loaded::Replay(response));
        }
        Ok(Some(Reservation::Pending)) => {
            return Err(refuse(busy(
                "A request with this Idempotency-Key is still in progress",
            ))
            .await)
        }
        Ok(Some(Reservation::Mismatch)) => return Err(refuse(Error::IdempotencyKeyReused).await),
        Ok(_) => {}
        Err(e) => return Err(refuse(e.into()).await),
    }
    match user_counted {
        Ok(true) => {}
        Ok(false) => return Err(refuse(per_user.limited(now)).await),
        Err(e) => return Err(refuse(e).await),
    }
    let task = match task {
        Ok(t) => t,
        Err(StoreError::NotFound(_)) => return Err(refuse(not_found_task()).await),
        Err(StoreError::Conflict(_)) => {
            return Err(refuse(busy("Another request for this task is in progress")).await)
        }
        Err(e) => return Err(refuse(e.into()).await),
    };

    match admission(task.as_ref(), &p.user_id, agent.max_steps) {
        Admission::Start | Admission::Continue => {}
        Admission::NotFound => return Err(refuse(not_found_task()).await),
        Admission::Finished(status) => {
            return Err(refuse(TaskError::Finished(status).into()).await);
        }
        Admission::StepLimit => {
            if let Some(t) = &task {
                if let Err(e) = store.save_task(&t.failed_at(now)).await {
                    return Err(refuse(e.into()).await);
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
        return Err(refuse(TaskError::SessionNotFound.into()).await);
    }
    let claimed_elsewhere = reads.owner.as_ref().is_some_and(|o| {
        req.session_id.as_deref() == Some(session_id.as_str())
            && (o.tenant_id != p.tenant_id || o.user_id != p.user_id)
    });
    if session.is_none() && task.is_none() && claimed_elsewhere {
        return Err(refuse(crate::sessions::session_id_taken()).await);
    }
    Ok(Loaded::Ready(Box::new(Admitted {
        reads,
        claims,
        task,
        session_id,
        session,
    })))
}

/// Round 3: the tenant's count, with knowledge and the page built concurrently; then the
/// step's context.
pub async fn enter(
    ctx: &AppContext,
    input: &StepInput,
    admitted: Admitted,
    page: impl Future<Output = Result<BuiltPage, Error>>,
) -> Result<(Box<StepContext>, BuiltPage), Error> {
    let Admitted {
        reads,
        claims,
        task,
        session_id,
        session,
    } = admitted;
    let p = &reads.principal;
    let req = &input.request;
    let store = ctx.store.as_ref();
    let now = claims.now;
    let (_, per_tenant) = windows(ctx);
    let tenant_key = format!("interact-tenant#{}", p.tenant_id);
    let host = host_of(&req.url).unwrap_or_default();
    let has_org_knowledge = !host.is_empty() && reads.domains.iter().any(|d| d.matches(&host));
    let query = task
        .as_ref()
        .map_or(req.query.as_str(), |t| t.query.as_str());
    let (tenant_counted, knowledge, built) = tokio::join!(
        per_tenant.take(store, &tenant_key, now),
        async {
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
        },
        page,
    );
    let tenant_counted = match tenant_counted {
        Ok(counted) => counted,
        Err(e) => return Err(claims.refuse(store, e, false).await),
    };
    let built = match built {
        Ok(b) => b,
        Err(e) => {
            if tenant_counted {
                per_tenant.give_back(store, &tenant_key, now).await;
            }
            return Err(claims.refuse(store, e, false).await);
        }
    };
    if !tenant_counted {
        return Err(claims.refuse(store, per_tenant.limited(now), false).await);
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
    let step = StepContext {
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
        page_hash: built.page.hash.clone(),
        page_summary: built.page.summary(req.page_title.as_deref()),
        page_form: built.rendered.form.to_owned(),
        decision: None,
        usage: Usage::default(),
        llm_ms: 0,
        llm_calls: 0,
    };
    Ok((Box::new(step), built))
}
