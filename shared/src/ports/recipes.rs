//! A tenant's recipes (see [`crate::domain::recipe`]): found by site pattern without reading
//! the others, listed and deleted by the operator, capped in number per tenant.

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
}

#[async_trait]
pub trait RecipeStore: Send + Sync {
    /// The tenant's live recipes for the site pattern `domain` + `path`: at most `limit`.
    async fn site_recipes(
        &self,
        tenant_id: &str,
        domain: &str,
        path: &str,
        limit: usize,
    ) -> StoreResult<Vec<Recipe>>;
    /// Stores `recipe` under its tenant: replacing the one with its id, or as a new one while
    /// the tenant has fewer than `max_per_tenant` (held under concurrent writers).
    async fn put_recipe(&self, recipe: &Recipe, max_per_tenant: usize) -> StoreResult<Stored>;
    /// One recipe of the tenant.
    async fn recipe(&self, tenant_id: &str, id: &str) -> StoreResult<Option<Recipe>>;
    /// The tenant's live recipes, at most `limit` (by id).
    async fn recipes(&self, tenant_id: &str, limit: usize) -> StoreResult<Vec<Recipe>>;
    /// Deletes one of the tenant's recipes; `false` when there was none.
    async fn delete_recipe(&self, tenant_id: &str, id: &str) -> StoreResult<bool>;
}
