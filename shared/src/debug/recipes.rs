//! The inspector's recipes (see `docs/recipes.md`): a tenant's listed with their steps and the
//! page each was taken on — an admin's the whole tenant's, a member's only their own — and
//! promoted to the organisation's or taken back by an admin, audited under the admin's user id.
//! Another tenant's recipe is never found.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use crate::agent::promotion;
use crate::auth::Principal;
use crate::config::RecipeSettings;
use crate::domain::recipe::book::{OwnValue, Recipe, RecipeStep};
use crate::error::Error;
use crate::ports::Store;

/// Most recipes a listing answers.
pub const MAX_LISTED: usize = 200;
/// Most of the tenant's recipes a member's listing reads to find their own among the others'
/// (the answer then says `truncated`).
pub const MAX_READ: usize = 2_000;
/// Longest recipe id a route takes (ids are 24 hex digits).
const MAX_ID_CHARS: usize = 64;

/// The code of an admin-only action asked by a member.
pub const ADMIN_REQUIRED: &str = "ADMIN_REQUIRED";
/// The code of a recipe the tenant does not have (or not as asked).
pub const NOT_FOUND: &str = "RECIPE_NOT_FOUND";

/// `{ index, action, intent, page, title, context, confirm, ownValue, ownTarget, owned,
/// valueParam, targetParam, target }`: one step as the inspector shows it. `ownValue` is why
/// the model gives the value on every run (`secret`, `found`, `answer`), `ownTarget` whether it
/// picks the target, `owned` whether the model gives any part of it on every run.
pub fn step_row(index: usize, s: &RecipeStep) -> Value {
    let own_value = s.own_value.map(|v| match v {
        OwnValue::Secret => "secret",
        OwnValue::Found => "found",
        OwnValue::Answer => "answer",
    });
    json!({
        "index": index,
        "action": s.action,
        "intent": s.intent,
        "page": s.page,
        "title": s.title,
        "context": s.context,
        "confirm": s.confirm,
        "ownValue": own_value,
        "ownTarget": s.own_target,
        "owned": s.owned(),
        "valueParam": s.value_param,
        "targetParam": s.target_param,
        "target": s.target.as_ref().map(|t| json!({
            "role": t.role,
            "name": t.name,
            "nth": t.nth,
            "of": t.of,
        })),
    })
}

/// `{ id, owner, promoted, origin, path, template, params, runs, createdAt, updatedAt,
/// expiresAt, steps }`: a recipe as the inspector lists it.
pub fn recipe_row(r: &Recipe) -> Value {
    json!({
        "id": r.id,
        "owner": r.owner,
        "promoted": r.promoted,
        "origin": r.origin,
        "path": r.path,
        "template": r.template,
        "params": r.params,
        "runs": r.runs,
        "createdAt": crate::time::iso(r.created_at),
        "updatedAt": crate::time::iso(r.updated_at),
        "expiresAt": DateTime::from_timestamp(r.expires_at, 0).map(crate::time::iso),
        "steps": r.steps.iter().enumerate().map(|(k, s)| step_row(k, s)).collect::<Vec<_>>(),
    })
}

/// At most `limit` of the tenant's recipes `p` may see, by id: an admin's all of them, a
/// member's only their own (not the organisation's). `{ recipes, truncated, admin }`:
/// `truncated` when more may be beyond the answer, `admin` whether `p` may promote and demote.
pub async fn list(store: &dyn Store, p: &Principal, limit: usize) -> Result<Value, Error> {
    let limit = limit.clamp(1, MAX_LISTED);
    let (mut recipes, truncated) = if p.is_admin() {
        let mut all = store.recipes(&p.tenant_id, limit + 1).await?;
        let more = all.len() > limit;
        all.truncate(limit);
        (all, more)
    } else {
        let read = store.recipes(&p.tenant_id, MAX_READ).await?;
        let stopped = read.len() >= MAX_READ;
        let mut own: Vec<Recipe> = read.into_iter().filter(|r| mine(p, r)).collect();
        let more = own.len() > limit;
        own.truncate(limit);
        (own, more || stopped)
    };
    // The store answers the tenant's only; checked again all the same.
    recipes.retain(|r| r.tenant_id == p.tenant_id);
    Ok(json!({
        "recipes": recipes.iter().map(recipe_row).collect::<Vec<_>>(),
        "truncated": truncated,
        "admin": p.is_admin(),
    }))
}

/// A member's own recipe (the organisation's are not theirs, whoever recorded them).
fn mine(p: &Principal, r: &Recipe) -> bool {
    !r.promoted && r.owner == p.user_id
}

/// Only a tenant admin promotes or demotes.
fn require_admin(p: &Principal) -> Result<(), Error> {
    if p.is_admin() {
        Ok(())
    } else {
        Err(Error::Denied {
            code: ADMIN_REQUIRED,
            message: "Only a tenant admin can promote or demote a recipe".into(),
        })
    }
}

/// A recipe id from a route (400 naming `recipeId` unless it could be one).
pub fn recipe_id(raw: &str) -> Result<&str, Error> {
    let fits = !raw.is_empty()
        && raw.len() <= MAX_ID_CHARS
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if fits {
        Ok(raw)
    } else {
        Err(Error::field("recipeId", "must be a recipe id"))
    }
}

/// The caller's tenant's recipe `id`, for an admin: 403 to a member, 404 when there is none.
async fn admins_recipe(store: &dyn Store, p: &Principal, id: &str) -> Result<Recipe, Error> {
    require_admin(p)?;
    let found = store.recipe(&p.tenant_id, id).await?;
    found
        .filter(|r| r.tenant_id == p.tenant_id)
        .ok_or_else(|| not_found(format!("No recipe {id}")))
}

fn not_found(message: String) -> Error {
    Error::NotFound {
        code: NOT_FOUND,
        message,
    }
}

/// Makes the tenant's member recipe `id` the organisation's (admins only; audited with `p`'s
/// user id): `{ recipe, from }` with the organisation's copy. 404 when the tenant has no such
/// recipe, 409 when it or its task is the organisation's already.
pub async fn promote(
    store: &dyn Store,
    p: &Principal,
    id: &str,
    now: DateTime<Utc>,
    settings: RecipeSettings,
) -> Result<Value, Error> {
    let recipe = admins_recipe(store, p, id).await?;
    let copy = promotion::promote(store, &recipe, &p.user_id, now, settings).await?;
    Ok(json!({ "recipe": recipe_row(&copy), "from": recipe.id }))
}

/// Takes the organisation's recipe `id` back (admins only; audited with `p`'s user id; the
/// members' own stay): `{ id, demoted: true }`. 404 when the tenant has no such recipe or it is
/// a member's.
pub async fn demote(
    store: &dyn Store,
    p: &Principal,
    id: &str,
    now: DateTime<Utc>,
    settings: RecipeSettings,
) -> Result<Value, Error> {
    if !admins_recipe(store, p, id).await?.promoted {
        return Err(not_found(format!(
            "Recipe {id} is a member's, not the organisation's: there is nothing to demote"
        )));
    }
    if !promotion::demote(store, &p.tenant_id, id, &p.user_id, now, settings).await? {
        // Demoted by another request meanwhile.
        return Err(not_found(format!("No promoted recipe {id}")));
    }
    Ok(json!({ "id": id, "demoted": true }))
}
