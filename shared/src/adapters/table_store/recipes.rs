//! Recipes: one item each under the tenant's recipe partition, found by site pattern through
//! the first index, with count items that cap how many a tenant has and how many one member's
//! runs added. The counts move in the same transaction as the recipe they count; recipes that
//! expire leave them high, so a tenant or member that seems full is counted again (the
//! tenant's live recipes read once) before a new recipe is refused.

use super::*;
use crate::domain::recipe::book::{Recipe, MAX_PER_SITE};
use crate::ports::recipes::{RecipeLimits, RecipeStore, Stored};

/// The count items' attribute.
const COUNT: &str = "count";

fn recipe_item(r: &Recipe) -> StoreResult<Item> {
    let mut item = item_of(&keys::recipes_pk(&r.tenant_id), &keys::recipe_sk(&r.id), r)?;
    item.insert(
        Index::Gsi1.pk().into(),
        Value::from(keys::recipe_site_pk(&r.tenant_id, &r.origin, &r.path)),
    );
    item.insert(Index::Gsi1.sk().into(), Value::from(r.id.clone()));
    Ok(agent_tools::with_ttl(
        item,
        DateTime::from_timestamp(r.expires_at, 0).unwrap_or_default(),
    ))
}

/// The counts a recipe is in: the tenant's, and its member's for a member's own.
fn counts(r: &Recipe, limits: RecipeLimits) -> Vec<(String, usize)> {
    let mut out = vec![(keys::RECIPE_COUNT_SK.to_owned(), limits.per_tenant)];
    if !r.promoted {
        out.push((keys::recipe_member_count_sk(&r.owner), limits.per_member));
    }
    out
}

fn count_write(pk: &str, sk: &str, by: i64, below: Option<usize>) -> Write {
    Write::Update {
        pk: pk.to_owned(),
        sk: sk.to_owned(),
        update: Update {
            add: vec![(COUNT.into(), by)],
            ..Update::default()
        },
        cond: match below {
            Some(max) => Cond::MissingOrAtMost(COUNT.into(), max as i64 - 1),
            None => Cond::Always,
        },
    }
}

impl TableStore {
    /// `recipe` stored: replacing a live one with its id when `replace`, else only while its
    /// id is free (`Exists`: of concurrent writers one adds it); a new one within the caps.
    async fn store_recipe(
        &self,
        recipe: &Recipe,
        limits: RecipeLimits,
        replace: bool,
    ) -> StoreResult<Stored> {
        let pk = keys::recipes_pk(&recipe.tenant_id);
        let sk = keys::recipe_sk(&recipe.id);
        let item = recipe_item(recipe)?;
        for attempt in 0..RACE_RETRIES {
            // An item under the id (live, or expired and not yet deleted) is counted already.
            if let Some(old) = self.table.get(&pk, &sk).await? {
                let now = self.now();
                if !replace && !is_expired(&old, now) {
                    return Ok(Stored::Exists);
                }
                let cond = match replace {
                    true => Cond::Live { now: i64::MIN },
                    // Expired, not deleted yet: replaced while it still is.
                    false => Cond::All(vec![Cond::Live { now: i64::MIN }, Cond::Absent { now }]),
                };
                match self.table.put(item.clone(), cond).await {
                    Ok(()) => return Ok(Stored::Replaced),
                    // Deleted or renewed in between: go round.
                    Err(StoreError::Conflict(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            // A site keeps at most MAX_PER_SITE: a new one beyond that is not kept.
            let (tenant, origin, path) = (&recipe.tenant_id, &recipe.origin, &recipe.path);
            if self
                .site_recipes(tenant, origin, path, MAX_PER_SITE)
                .await?
                .len()
                >= MAX_PER_SITE
            {
                return Ok(Stored::Full);
            }
            // The add holds only while no item has the id.
            if self.add_recipe(recipe, &item, limits).await? {
                return Ok(Stored::Added);
            }
            // Either someone added it in between (go round), or a cap seems reached: counted
            // again once, without what expired.
            if self.table.get(&pk, &sk).await?.is_none() {
                if self.recount_full(recipe, limits).await? {
                    return Ok(Stored::Full);
                }
                if self.add_recipe(recipe, &item, limits).await? {
                    return Ok(Stored::Added);
                }
            }
            race_pause(attempt).await;
        }
        Err(StoreError::Conflict("the recipe kept changing".into()))
    }

    /// A new recipe with its counts, while each is below its cap.
    async fn add_recipe(&self, r: &Recipe, item: &Item, limits: RecipeLimits) -> StoreResult<bool> {
        let pk = keys::recipes_pk(&r.tenant_id);
        let mut writes = vec![Write::Put {
            item: item.clone(),
            cond: Cond::Missing,
        }];
        for (sk, max) in counts(r, limits) {
            writes.push(count_write(&pk, &sk, 1, Some(max)));
        }
        match self.table.transact(writes).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Counts the tenant's live recipes again (deleting the expired ones it meets) and sets
    /// `r`'s counts to them, unless another writer changed a count meanwhile (then that count
    /// stands: concurrent recounts never write over each other's additions). Whether `r`
    /// would still be over a cap.
    async fn recount_full(&self, r: &Recipe, limits: RecipeLimits) -> StoreResult<bool> {
        let pk = keys::recipes_pk(&r.tenant_id);
        let now = self.now();
        let mut q = Query::partition(&pk).sk(SkCond::Prefix(keys::RECIPE_PREFIX.into()));
        let (mut tenant, mut member, mut gone) = (0usize, 0usize, Vec::new());
        loop {
            let page = self.table.query(q.clone()).await?;
            for i in &page.items {
                if is_expired(i, now) {
                    gone.extend(key_of(i));
                    continue;
                }
                tenant += 1;
                let mine = body_of::<Recipe>(i.clone())
                    .is_ok_and(|o| !o.promoted && !r.promoted && o.owner == r.owner);
                member += usize::from(mine);
            }
            match page.last {
                Some(last) => q.start_after = Some(last),
                None => break,
            }
        }
        if !gone.is_empty() {
            self.table.batch_delete(gone).await?;
        }
        let mut full = false;
        for ((sk, max), live) in counts(r, limits).into_iter().zip([tenant, member]) {
            let before = self
                .table
                .get(&pk, &sk)
                .await?
                .and_then(|i| i.get(COUNT).and_then(Value::as_i64));
            let mut count = Item::new();
            count.insert(PK.into(), Value::from(pk.clone()));
            count.insert(SK.into(), Value::from(sk));
            count.insert(COUNT.into(), Value::from(live));
            let unchanged = match before {
                Some(n) => Cond::Eq(COUNT.into(), Value::from(n)),
                None => Cond::Missing,
            };
            let counted = match self.table.put(count, unchanged).await {
                Ok(()) => live,
                Err(StoreError::Conflict(_)) => before.unwrap_or(0).max(live as i64) as usize,
                Err(e) => return Err(e),
            };
            full |= counted >= max;
        }
        Ok(full)
    }
}

#[async_trait]
impl RecipeStore for TableStore {
    async fn site_recipes(
        &self,
        tenant_id: &str,
        origin: &str,
        path: &str,
        limit: usize,
    ) -> StoreResult<Vec<Recipe>> {
        // Read past items that expired (not deleted yet) or cannot be read, up to twice.
        let q = Query::partition(keys::recipe_site_pk(tenant_id, origin, path))
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

    async fn put_recipe(&self, recipe: &Recipe, limits: RecipeLimits) -> StoreResult<Stored> {
        self.store_recipe(recipe, limits, true).await
    }

    async fn put_recipe_if_absent(
        &self,
        recipe: &Recipe,
        limits: RecipeLimits,
    ) -> StoreResult<Stored> {
        self.store_recipe(recipe, limits, false).await
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
        let sk = keys::recipe_sk(id);
        // Its counts: the tenant's, and its member's for a member's own.
        let Some(item) = self.table.get(&pk, &sk).await? else {
            return Ok(false);
        };
        let member = body_of::<Recipe>(item)
            .ok()
            .filter(|r| !r.promoted)
            .map(|r| keys::recipe_member_count_sk(&r.owner));
        let mut writes = vec![Write::Delete {
            pk: pk.clone(),
            sk,
            cond: Cond::Live { now: i64::MIN },
        }];
        for count in std::iter::once(keys::RECIPE_COUNT_SK.to_owned()).chain(member) {
            writes.push(count_write(&pk, &count, -1, None));
        }
        match self.table.transact(writes).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }
}
