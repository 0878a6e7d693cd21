//! A member's recipe made the organisation's, or the organisation's taken back: by an
//! administrator (`agent-admin recipe promote|demote`, the inspector's route) or, when the
//! tenant lets runs promote, by runs of several members that agree step for step. Each is
//! audited (session `recipes` of the tenant's audit trail).

use chrono::{DateTime, Duration, Utc};

use crate::config::RecipeSettings;
use crate::domain::agent_tools::AuditEntry;
use crate::domain::recipe::book::{agreed, Recipe, MAX_PER_SITE};
use crate::error::Error;
use crate::ports::recipes::Stored;
use crate::ports::{Store, StoreError};

/// The audit trail's session for recipe promotions.
pub const AUDIT_SESSION: &str = "recipes";

/// The code of a promotion refused because the task has the organisation's recipe already.
pub const ALREADY_PROMOTED: &str = "RECIPE_ALREADY_PROMOTED";

/// Makes `recipe` (a member's) the organisation's while the organisation has no recipe of the
/// same task (to replace that one, demote it first); `by` names who promoted it. Of any number
/// of concurrent promotions of one task, one is made and audited, the others are refused
/// (`409 RECIPE_ALREADY_PROMOTED`); a tenant holding its most recipes refuses it too
/// (`409 RECIPES_FULL`).
pub async fn promote(
    store: &dyn Store,
    recipe: &Recipe,
    by: &str,
    now: DateTime<Utc>,
    settings: RecipeSettings,
) -> Result<Recipe, Error> {
    if recipe.promoted {
        return Err(Error::Conflict {
            code: ALREADY_PROMOTED,
            message: format!("Recipe {} is the organisation's already", recipe.id),
        });
    }
    let copy = recipe.promoted(now);
    match store.put_recipe_if_absent(&copy, settings.limits()).await? {
        Stored::Added | Stored::Replaced => {}
        Stored::Exists => {
            return Err(Error::Conflict {
                code: ALREADY_PROMOTED,
                message: format!(
                    "The organisation's recipe {} of this task is promoted already (demote it \
                     first to promote another)",
                    copy.id
                ),
            })
        }
        Stored::Full => {
            return Err(Error::Conflict {
                code: "RECIPES_FULL",
                message: "The organisation holds its most recipes (of the tenant, or of this \
                          site)"
                    .into(),
            })
        }
    }
    let target = format!("{} from {} of {}", copy.id, recipe.id, recipe.owner);
    audit(
        store,
        &copy.tenant_id,
        "recipe.promote",
        &target,
        by,
        now,
        settings,
    )
    .await?;
    Ok(copy)
}

/// After `recipe` was recorded: promoted when the tenant lets runs promote
/// (`RECIPE_PROMOTE_AFTER_RUNS`) and runs of several members agree with it ([`agreed`]).
pub async fn promote_if_agreed(
    store: &dyn Store,
    recipe: &Recipe,
    now: DateTime<Utc>,
    settings: RecipeSettings,
) -> Result<(), Error> {
    if settings.promote_after == 0 {
        return Ok(());
    }
    let site = (store.site_recipes(
        &recipe.tenant_id,
        &recipe.origin,
        &recipe.path,
        MAX_PER_SITE,
    ))
    .await?;
    if agreed(&site, recipe, settings.promote_after) {
        promote(store, recipe, "automatic", now, settings).await?;
    }
    Ok(())
}

/// Takes the organisation's recipe `id` back (members' own recipes stay); `false` when the
/// tenant has no such promoted recipe.
pub async fn demote(
    store: &dyn Store,
    tenant_id: &str,
    id: &str,
    by: &str,
    now: DateTime<Utc>,
    settings: RecipeSettings,
) -> Result<bool, StoreError> {
    let Some(org) = store.recipe(tenant_id, id).await?.filter(|r| r.promoted) else {
        return Ok(false);
    };
    if !store.delete_recipe(tenant_id, id).await? {
        return Ok(false);
    }
    // The members' recipes with its steps no longer promote it again by agreeing.
    let print = org.fingerprint();
    let site = store
        .site_recipes(tenant_id, &org.origin, &org.path, MAX_PER_SITE)
        .await?;
    for mut r in site
        .into_iter()
        .filter(|r| !r.promoted && r.fingerprint() == print)
    {
        r.demoted = true;
        store.put_recipe(&r, settings.limits()).await?;
    }
    audit(store, tenant_id, "recipe.demote", id, by, now, settings).await?;
    Ok(true)
}

async fn audit(
    store: &dyn Store,
    tenant_id: &str,
    action: &str,
    target: &str,
    by: &str,
    now: DateTime<Utc>,
    settings: RecipeSettings,
) -> Result<(), StoreError> {
    let entry = AuditEntry {
        id: uuid::Uuid::new_v4().to_string(),
        session_id: AUDIT_SESSION.into(),
        user_id: by.into(),
        action: action.into(),
        target: target.into(),
        approved: Some(true),
        timestamp: now,
        outcome: "ok".into(),
        duration_ms: 0,
        approval_id: None,
    };
    let kept = now + Duration::days(settings.ttl_days.max(1));
    store.append_audit(tenant_id, &entry, kept).await
}
