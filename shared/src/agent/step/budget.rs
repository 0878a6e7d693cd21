//! The tenant's daily token budget (`TENANT_DAILY_TOKEN_BUDGET`): a step reserves what its
//! model calls may use before it starts and settles the reservation at the real usage after.
//! Reservations are atomic on the store, so parallel steps can never together start beyond
//! the budget. A step reserves one call up front and one more before each further call (after
//! a server tool, a corrective answer); verdicts of the verification model are charged when
//! the step settles.

use chrono::{DateTime, Utc};

use super::StepContext;
use crate::agent::step::StepPorts;
use crate::auth::rate_limit::FixedWindow;
use crate::error::Error;

/// A UTC day.
const DAY_SECONDS: i64 = 86_400;
/// Prompt tokens a step may use besides the page (system prompt, task, history, knowledge).
const PROMPT_OVERHEAD_TOKENS: u64 = 4_000;

fn key(tenant_id: &str) -> String {
    format!("tokens#{tenant_id}")
}

fn window(budget: u64) -> FixedWindow {
    FixedWindow {
        limit: budget,
        window_seconds: DAY_SECONDS,
    }
}

/// Tokens a step reserves: one model call's prompt and answer at their largest.
pub fn reservation(ctx: &StepPorts<'_>) -> u64 {
    let agent = &ctx.agent;
    let answer = agent.llm.as_ref().map_or(0, |l| u64::from(l.max_tokens));
    agent.page_tokens as u64 + PROMPT_OVERHEAD_TOKENS + answer
}

/// Reserves a step's tokens from `tenant_id`'s budget: `Ok(reserved)` (0 when there is no
/// budget), or `TOKEN_BUDGET_EXCEEDED` with when the budget renews.
pub async fn reserve(
    ctx: &StepPorts<'_>,
    tenant_id: &str,
    now: DateTime<Utc>,
) -> Result<u64, Error> {
    let Some(budget) = ctx.agent.tenant_daily_tokens else {
        return Ok(0);
    };
    let w = window(budget);
    let amount = reservation(ctx).min(budget.max(1));
    if w.take_amount(ctx.store, &key(tenant_id), amount, now)
        .await?
    {
        return Ok(amount);
    }
    let (retry_after_seconds, reset_at) = w.renewal(now);
    Err(Error::TokenBudgetExceeded {
        retry_after_seconds,
        reset_at,
    })
}

/// Reserves one more model call's tokens for a step that calls the model again (after a
/// server tool, for a corrective answer); `false` when the budget cannot cover it. Without a
/// budget, always `true`.
pub async fn extend(ctx: &StepPorts<'_>, step: &mut StepContext) -> bool {
    let Some(budget) = ctx.agent.tenant_daily_tokens else {
        return true;
    };
    let amount = reservation(ctx).min(budget.max(1));
    let key = key(&step.tenant_id);
    match window(budget)
        .take_amount(ctx.store, &key, amount, step.request.started_at)
        .await
    {
        Ok(true) => {
            step.spend.budget_reserved += amount;
            true
        }
        Ok(false) => false,
        Err(e) => {
            tracing::warn!(error = %e, "could not reserve tokens for another model call");
            false
        }
    }
}

/// Gives back a reservation whose request was refused before any model call.
pub async fn give_back(ctx: &StepPorts<'_>, tenant_id: &str, reserved: u64, now: DateTime<Utc>) {
    if let (Some(budget), true) = (ctx.agent.tenant_daily_tokens, reserved > 0) {
        let delta = -i64::try_from(reserved).unwrap_or(i64::MAX);
        window(budget)
            .adjust(ctx.store, &key(tenant_id), delta, now)
            .await;
    }
}

/// Settles the step's reservation at the tokens its model calls used.
pub async fn settle(ctx: &StepPorts<'_>, step: &StepContext) {
    let Some(budget) = ctx.agent.tenant_daily_tokens else {
        return;
    };
    let used = i64::try_from(step.spend.usage.total()).unwrap_or(i64::MAX);
    let reserved = i64::try_from(step.spend.budget_reserved).unwrap_or(i64::MAX);
    window(budget)
        .adjust(
            ctx.store,
            &key(&step.tenant_id),
            used - reserved,
            step.request.started_at,
        )
        .await;
}
