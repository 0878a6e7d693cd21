//! A tenant's recipes (see [`crate::domain::recipe`]): found by site pattern without reading
//! the others, listed and deleted by the operator, capped in number per tenant and per member.

use async_trait::async_trait;

use super::StoreResult;
use crate::domain::recipe::book::Recipe;

/// Whether a recipe was stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// A new recipe.
    Added,
    /// It replaced the recipe with its id.
    Replaced,
    /// The tenant has its most recipes: nothing was written.
    Full,
    /// The tenant has a live recipe with its id: nothing was written
    /// ([`RecipeStore::put_recipe_if_absent`] only).
    Exists,
}

/// How many recipes a tenant keeps, and how many of them one member's runs may add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecipeLimits {
    pub per_tenant: usize,
    pub per_member: usize,
}

#[async_trait]
pub trait RecipeStore: Send + Sync {
    /// The tenant's live recipes for the site `origin` + `path` pattern: at most `limit`.
    async fn site_recipes(
        &self,
        tenant_id: &str,
        origin: &str,
        path: &str,
        limit: usize,
    ) -> StoreResult<Vec<Recipe>>;
    /// Stores `recipe` under its tenant: replacing the one with its id, or as a new one while
    /// the tenant has fewer than `limits.per_tenant` and — a member's own — its owner fewer
    /// than `limits.per_member` (both held under concurrent writers).
    async fn put_recipe(&self, recipe: &Recipe, limits: RecipeLimits) -> StoreResult<Stored>;
    /// Stores `recipe` only while its tenant has no live recipe with its id, within the same
    /// caps as [`Self::put_recipe`]: of any number of concurrent writers of one id, one stores
    /// it and the others get `Exists` (an expired one not deleted yet is `Replaced`).
    async fn put_recipe_if_absent(
        &self,
        recipe: &Recipe,
        limits: RecipeLimits,
    ) -> StoreResult<Stored>;
    /// One recipe of the tenant.
    async fn recipe(&self, tenant_id: &str, id: &str) -> StoreResult<Option<Recipe>>;
    /// The tenant's live recipes, at most `limit` (by id).
    async fn recipes(&self, tenant_id: &str, limit: usize) -> StoreResult<Vec<Recipe>>;
    /// Deletes one of the tenant's recipes; `false` when there was none.
    async fn delete_recipe(&self, tenant_id: &str, id: &str) -> StoreResult<bool>;
}
