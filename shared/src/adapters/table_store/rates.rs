//! Rate-limit counters: atomic adds below a limit and adjustments.

use super::*;

#[async_trait]
impl RateLimitStore for TableStore {
    async fn add_below(
        &self,
        key: &str,
        window_start: i64,
        expires_at: DateTime<Utc>,
        amount: u64,
        limit: u64,
    ) -> StoreResult<Option<u64>> {
        if amount == 0 || amount > limit {
            return Ok(None);
        }
        let (pk, sk) = (keys::rate_pk(key), keys::rate_sk(window_start));
        let at_most = i64::try_from(limit - amount).unwrap_or(i64::MAX);
        let amount = i64::try_from(amount).unwrap_or(i64::MAX);
        for _ in 0..RACE_RETRIES {
            let now = self.now();
            let bump = Update {
                set: set(vec![(EXPIRES_AT, Value::from(expires_at.timestamp()))]),
                add: vec![("count".into(), amount)],
                ..Update::default()
            };
            // Created at `amount`, or added to while live and with room: one conditional write.
            let cond = Cond::Any(vec![
                Cond::Missing,
                Cond::All(vec![
                    Cond::Live { now },
                    Cond::MissingOrAtMost("count".into(), at_most),
                ]),
            ]);
            match self.table.update(&pk, &sk, bump, cond).await {
                Ok(item) => {
                    return Ok(Some(
                        item.get("count")
                            .and_then(Value::as_u64)
                            .unwrap_or(amount as u64),
                    ))
                }
                Err(StoreError::Conflict(_)) => {}
                Err(e) => return Err(e),
            }
            // Refused: no room, or an expired counter TTL has not removed yet.
            match self.table.get(&pk, &sk).await? {
                Some(item) if !is_expired(&item, now) => return Ok(None),
                _ => {}
            }
            let mut fresh = item_of(&pk, &sk, &json!({ "count": amount }))?;
            fresh.insert(EXPIRES_AT.into(), Value::from(expires_at.timestamp()));
            match self.table.put(fresh, Cond::Absent { now }).await {
                Ok(()) => return Ok(Some(amount as u64)),
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::Conflict(
            "the counter kept changing; try again".into(),
        ))
    }

    async fn adjust(&self, key: &str, window_start: i64, delta: i64) -> StoreResult<()> {
        if delta == 0 {
            return Ok(());
        }
        let change = Update {
            add: vec![("count".into(), delta)],
            ..Update::default()
        };
        let mut all = vec![Cond::Live { now: self.now() }];
        all.push(if delta < 0 {
            Cond::AtLeast("count".into(), delta.saturating_neg())
        } else {
            Cond::AtLeast("count".into(), 0)
        });
        match self
            .table
            .update(
                &keys::rate_pk(key),
                &keys::rate_sk(window_start),
                change,
                Cond::All(all),
            )
            .await
        {
            Ok(_) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn count(&self, key: &str, window_start: i64) -> StoreResult<u64> {
        let item: Option<Value> = self
            .get_live(&keys::rate_pk(key), &keys::rate_sk(window_start))
            .await?;
        Ok(item
            .and_then(|i| i.get("count").and_then(Value::as_u64))
            .unwrap_or(0))
    }

    async fn reset(&self, key: &str, window_start: i64) -> StoreResult<()> {
        self.table
            .delete(
                &keys::rate_pk(key),
                &keys::rate_sk(window_start),
                Cond::Always,
            )
            .await
            .map(drop)
    }
}
