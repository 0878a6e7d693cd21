//! A member's recipe made the organisation's, or taken back: by an administrator or by
//! agreeing runs (`docs/recipes.md`); each audited in the tenant's session `recipes`.

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

fn conflict(code: &'static str, message: String) -> Error {
    Error::Conflict { code, message }
}

/// Makes `recipe` (a member's) the organisation's, promoted `by`, unless the task has the
/// organisation's recipe already (one of concurrent promotions is made: `409
/// RECIPE_ALREADY_PROMOTED`) or the tenant is full (`409 RECIPES_FULL`).
pub async fn promote(
    store: &dyn Store,
    recipe: &Recipe,
    by: &str,
    now: DateTime<Utc>,
    settings: RecipeSettings,
) -> Result<Recipe, Error> {
    if recipe.promoted {
        let why = format!("Recipe {} is the organisation's already", recipe.id);
        return Err(conflict(ALREADY_PROMOTED, why));
    }
    let copy = recipe.promoted(now);
    match store.put_recipe_if_absent(&copy, settings.limits()).await? {
        Stored::Added | Stored::Replaced => {}
        Stored::Exists => {
            let why = format!("The organisation's recipe {} of this task is promoted already (demote it first to promote another)", copy.id);
            return Err(conflict(ALREADY_PROMOTED, why));
        }
        Stored::Full => {
            let why = "The organisation holds its most recipes (of the tenant, or of this site)";
            return Err(conflict("RECIPES_FULL", why.into()));
        }
    }
    let target = format!("{} from {} of {}", copy.id, recipe.id, recipe.owner);
    let entry = AuditEntry::ok(AUDIT_SESSION, by, "recipe.promote", &target, now);
    audit(store, &copy.tenant_id, &entry, settings).await?;
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
    let (tenant, origin, path) = (&recipe.tenant_id, &recipe.origin, &recipe.path);
    let site = store
        .site_recipes(tenant, origin, path, MAX_PER_SITE)
        .await?;
    if agreed(&site, recipe, settings.promote_after) {
        promote(store, recipe, "automatic", now, settings).await?;
    }
    Ok(())
}

/// Takes the organisation's recipe `id` back (members' own recipes stay, and no longer
/// promote it again by agreeing); `false` when the tenant has no such promoted recipe.
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
    let print = org.fingerprint();
    let site = (store.site_recipes(tenant_id, &org.origin, &org.path, MAX_PER_SITE)).await?;
    for mut r in site
        .into_iter()
        .filter(|r| !r.promoted && r.fingerprint() == print)
    {
        r.demoted = true;
        store.put_recipe(&r, settings.limits()).await?;
    }
    let entry = AuditEntry::ok(AUDIT_SESSION, by, "recipe.demote", id, now);
    audit(store, tenant_id, &entry, settings).await?;
    Ok(true)
}

async fn audit(
    store: &dyn Store,
    tenant: &str,
    entry: &AuditEntry,
    settings: RecipeSettings,
) -> Result<(), StoreError> {
    let kept = entry.timestamp + Duration::days(settings.ttl_days.max(1));
    store.append_audit(tenant, entry, kept).await
}
