//! Round 3: the tenant's count and token reservation, with the page built concurrently; then
//! the step's context.

use std::future::Future;

use serde_json::json;

use super::claims::{give_back_tenant, tenant_key, windows};
use super::Admitted;
use crate::agent::step::StepPorts;
use crate::agent::step::{budget, BuiltPage, StepContext, StepInput};
use crate::domain::session::{auto_title, session_domain};
use crate::domain::site::host_of;
use crate::domain::{Session, Task};
use crate::error::Error;

/// Enters the step: counts the tenant, reserves tokens and waits for the page; a refusal
/// hands back everything claimed.
pub async fn enter(
    ctx: &StepPorts<'_>,
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
    let store = ctx.store;
    let now = claims.now;
    let (_, per_tenant) = windows(ctx);
    let host = host_of(&req.url).unwrap_or_default();
    // Knowledge is for web pages only (not `about:`, `data:`, `file:` or browser pages).
    let has_org_knowledge = !host.is_empty()
        && crate::agent::request::is_web_url(&req.url)
        && reads.domains.iter().any(|d| d.matches(&host));
    let counter = tenant_key(&p.tenant_id);
    let find_recipe = async {
        match &task {
            None => {
                let (tenant, member) = (&p.tenant_id, &p.user_id);
                crate::agent::step::recipe::find(ctx, tenant, member, &req.url, &req.query).await
            }
            Some(_) => None,
        }
    };
    let (tenant_counted, reserved, built, recipe) = tokio::join!(
        per_tenant.take(store, &counter, now),
        budget::reserve(ctx, &p.tenant_id, now),
        page,
        find_recipe,
    );
    let counted = matches!(tenant_counted, Ok(true));
    let held = *reserved.as_ref().unwrap_or(&0);
    let refusal = match (tenant_counted, reserved, built) {
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => Err(e),
        (Ok(false), _, _) => Err(per_tenant.limited(now)),
        (Ok(true), Ok(_), Ok(built)) => Ok(built),
    };
    let built = match refusal {
        Ok(built) => built,
        Err(e) => {
            give_back_tenant(ctx, &claims, counted, held).await;
            return Err(claims.refuse(store, e, false).await);
        }
    };

    let new_session = match (&session, &task) {
        (None, None) => {
            let domain = session_domain(None, &req.url);
            Some(Session::new_active(
                session_id.clone(),
                p.tenant_id.clone(),
                p.user_id.clone(),
                req.url.clone(),
                domain.clone(),
                auto_title(&domain, Some(&req.query)),
                Some(json!({ "initialQuery": req.query })),
                now,
            ))
        }
        _ => None,
    };
    // The request answers the task's question, or brings what unblocks it (a resent task text
    // is no answer).
    let user_input = task
        .as_ref()
        .filter(|t| t.waits_for_user() && req.query.trim() != t.goal.query.trim())
        .map(|_| req.query.clone());
    let is_new = task.is_none();
    let task = match task {
        Some(t) => t,
        None => Task {
            recipe,
            ..Task::new(
                uuid::Uuid::new_v4().to_string(),
                p.tenant_id.clone(),
                p.user_id.clone(),
                Some(session_id.clone()),
                req.query.clone(),
                req.url.clone(),
                now,
                now.timestamp() + ctx.retention.task_seconds,
            )
        },
    };
    let first_index = task.stored.step_count;
    let step = StepContext {
        tenant_id: p.tenant_id.clone(),
        user_id: p.user_id.clone(),
        request: super::super::RequestPart {
            lease_owner: input.request_id.clone(),
            is_new,
            first_index,
            started_at: now,
            user_input,
        },
        task,
        session: super::super::SessionPart {
            id: session_id,
            new: new_session,
            read: session,
            memory: None,
        },
        page: super::super::PageDigest {
            hash: built.page.hash.clone(),
            view_hash: built.page.view.clone(),
            summary: built.page.summary(req.page_title.as_deref()),
            form: built.rendered.form.to_owned(),
            new_ids: Vec::new(),
            marks: String::new(),
        },
        verdicts: super::super::Verdicts::default(),
        brief: super::super::Brief {
            org_knowledge: has_org_knowledge && ctx.knowledge.is_some(),
            ..Default::default()
        },
        records: super::super::Records {
            history: reads.history,
            tool_steps: Vec::new(),
            step_index: first_index,
        },
        answer: super::super::Answer::default(),
        spend: super::super::Spend {
            budget_reserved: held,
            ..Default::default()
        },
    };
    Ok((Box::new(step), built))
}
