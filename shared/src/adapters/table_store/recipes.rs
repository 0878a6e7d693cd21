//! Recipes: one item each under the tenant's recipe partition, found by site pattern through
//! the first index, with a count item that caps how many a tenant has. The count moves in the
//! same transaction as the recipe it counts; recipes that expire leave it high, so a tenant that
//! seems full is counted again (its live recipes read once) before a new recipe is refused.

use super::*;
use crate::domain::recipe::book::{Recipe, MAX_PER_SITE};
use crate::ports::recipes::{RecipeStore, Stored};

/// The count item's attribute.
const COUNT: &str = "count";

fn recipe_item(r: &Recipe) -> StoreResult<Item> {
    let mut item = item_of(&keys::recipes_pk(&r.tenant_id), &keys::recipe_sk(&r.id), r)?;
    item.insert(
        Index::Gsi1.pk().into(),
        Value::from(keys::recipe_site_pk(&r.tenant_id, &r.domain, &r.path)),
    );
    item.insert(Index::Gsi1.sk().into(), Value::from(r.id.clone()));
    Ok(agent_tools::with_ttl(
        item,
        DateTime::from_timestamp(r.expires_at, 0).unwrap_or_default(),
    ))
}

fn count_update(by: i64) -> Update {
    Update {
        add: vec![(COUNT.into(), by)],
        ..Update::default()
    }
}

impl TableStore {
    /// A new recipe with the count, while the count is below `max`.
    async fn add_recipe(&self, item: &Item, pk: &str, max: usize) -> StoreResult<bool> {
        let writes = vec![
            Write::Put {
                item: item.clone(),
                cond: Cond::Missing,
            },
            Write::Update {
                pk: pk.to_owned(),
                sk: keys::RECIPE_COUNT_SK.into(),
                update: count_update(1),
                cond: Cond::MissingOrAtMost(COUNT.into(), max as i64 - 1),
            },
        ];
        match self.table.transact(writes).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Counts the tenant's live recipes again (deleting the expired ones it meets) and sets
    /// the count to it, unless another writer changed the count meanwhile (then the count as
    /// it stands is taken: concurrent recounts never write over each other's additions).
    async fn recount_recipes(&self, pk: &str) -> StoreResult<usize> {
        let now = self.now();
        let before = self
            .table
            .get(pk, keys::RECIPE_COUNT_SK)
            .await?
            .and_then(|i| i.get(COUNT).and_then(Value::as_i64));
        let mut q = Query::partition(pk).sk(SkCond::Prefix(keys::RECIPE_PREFIX.into()));
        let (mut live, mut gone) = (0usize, Vec::new());
        loop {
            let page = self.table.query(q.clone()).await?;
            for i in &page.items {
                if is_expired(i, now) {
                    gone.extend(key_of(i));
                } else {
                    live += 1;
                }
            }
            match page.last {
                Some(last) => q.start_after = Some(last),
                None => break,
            }
        }
        if !gone.is_empty() {
            self.table.batch_delete(gone).await?;
        }
        let mut count = Item::new();
        count.insert(PK.into(), Value::from(pk));
        count.insert(SK.into(), Value::from(keys::RECIPE_COUNT_SK));
        count.insert(COUNT.into(), Value::from(live));
        let unchanged = match before {
            Some(n) => Cond::Eq(COUNT.into(), Value::from(n)),
            None => Cond::Missing,
        };
        match self.table.put(count, unchanged).await {
            Ok(()) => Ok(live),
            // Someone added or deleted meanwhile: their count stands.
            Err(StoreError::Conflict(_)) => Ok(before.unwrap_or(0).max(live as i64) as usize),
            Err(e) => Err(e),
        }
    }
}

#[async_trait]
impl RecipeStore for TableStore {
    async fn site_recipes(
        &self,
        tenant_id: &str,
        domain: &str,
        path: &str,
        limit: usize,
    ) -> StoreResult<Vec<Recipe>> {
        // Read past items that expired (not deleted yet) or cannot be read, up to twice.
        let q = Query::partition(keys::recipe_site_pk(tenant_id, domain, path))
            .on(Index::Gsi1)
            .limit(limit.saturating_mul(2));
        let now = self.now();
        let page = self.table.query(q).await?;
        // The index is keyed by the tenant: a recipe of another tenant is never in it. One
        // item that cannot be read does not hide the others.
        Ok(page
            .items
            .into_iter()
            .filter(|i| !is_expired(i, now))
            .filter_map(|i| match body_of::<Recipe>(i) {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::warn!(error = %e, "a stored recipe could not be read");
                    None
                }
            })
            .filter(|r| r.tenant_id == tenant_id)
            .take(limit)
            .collect())
    }

    async fn put_recipe(&self, recipe: &Recipe, max_per_tenant: usize) -> StoreResult<Stored> {
        let pk = keys::recipes_pk(&recipe.tenant_id);
        let sk = keys::recipe_sk(&recipe.id);
        let item = recipe_item(recipe)?;
        for attempt in 0..RACE_RETRIES {
            // An item under the id (live, or expired and not yet deleted) is counted already.
            if self.table.get(&pk, &sk).await?.is_some() {
                match self
                    .table
                    .put(item.clone(), Cond::Live { now: i64::MIN })
                    .await
                {
                    Ok(()) => return Ok(Stored::Replaced),
                    // Deleted in between: added anew.
                    Err(StoreError::Conflict(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            // A site keeps at most MAX_PER_SITE: a new one beyond that is not kept.
            let site = self
                .site_recipes(
                    &recipe.tenant_id,
                    &recipe.domain,
                    &recipe.path,
                    MAX_PER_SITE,
                )
                .await?;
            if site.len() >= MAX_PER_SITE {
                return Ok(Stored::Full);
            }
            if self.add_recipe(&item, &pk, max_per_tenant).await? {
                return Ok(Stored::Added);
            }
            // Either someone added it in between (go round: it is replaced), or the tenant
            // seems full: counted again once, without what expired.
            if self.table.get(&pk, &sk).await?.is_none() {
                if self.recount_recipes(&pk).await? >= max_per_tenant {
                    return Ok(Stored::Full);
                }
                if self.add_recipe(&item, &pk, max_per_tenant).await? {
                    return Ok(Stored::Added);
                }
            }
            race_pause(attempt).await;
        }
        Err(StoreError::Conflict("the recipe kept changing".into()))
    }

    async fn recipe(&self, tenant_id: &str, id: &str) -> StoreResult<Option<Recipe>> {
        self.get_live(&keys::recipes_pk(tenant_id), &keys::recipe_sk(id))
            .await
    }

    async fn recipes(&self, tenant_id: &str, limit: usize) -> StoreResult<Vec<Recipe>> {
        let now = self.now();
        let mut q = Query::partition(keys::recipes_pk(tenant_id))
            .sk(SkCond::Prefix(keys::RECIPE_PREFIX.into()))
            .limit(limit);
        let mut out: Vec<Recipe> = Vec::new();
        loop {
            let page = self.table.query(q.clone()).await?;
            for item in page.items.into_iter().filter(|i| !is_expired(i, now)) {
                match body_of::<Recipe>(item) {
                    Ok(r) => out.push(r),
                    Err(e) => tracing::warn!(error = %e, "a stored recipe could not be read"),
                }
            }
            match page.last {
                Some(last) if out.len() < limit => q.start_after = Some(last),
                _ => break,
            }
        }
        out.truncate(limit);
        Ok(out)
    }

    async fn delete_recipe(&self, tenant_id: &str, id: &str) -> StoreResult<bool> {
        let pk = keys::recipes_pk(tenant_id);
        let writes = vec![
            Write::Delete {
                pk: pk.clone(),
                sk: keys::recipe_sk(id),
                cond: Cond::Live { now: i64::MIN },
            },
            Write::Update {
                pk,
                sk: keys::RECIPE_COUNT_SK.into(),
                update: count_update(-1),
                cond: Cond::Always,
            },
        ];
        match self.table.transact(writes).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }
}
