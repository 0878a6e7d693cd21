//! Idempotency keys, user preferences and debug logs.

use super::*;

// ---------------------------------------------------------------- idempotency

fn idem_sk(user_id: &str, key: &str) -> String {
    format!("IDEM#{user_id}#{key}")
}

#[async_trait]
impl IdempotencyStore for TableStore {
    async fn reserve(
        &self,
        tenant_id: &str,
        user_id: &str,
        key: &str,
        claim: &KeyClaim<'_>,
    ) -> StoreResult<Reservation> {
        let (pk, sk) = (keys::tenant_pk(tenant_id), idem_sk(user_id, key));
        let request_hash = claim.request_hash;
        let mut item = item_of(
            &pk,
            &sk,
            &json!({ "state": "pending", "requestHash": request_hash, "holder": claim.holder }),
        )?;
        let pending_until = claim.until;
        item.insert(EXPIRES_AT.into(), Value::from(pending_until.timestamp()));
        for _ in 0..RACE_RETRIES {
            // A claim whose request died lapses with its expiry and is taken over here.
            match self
                .table
                .put(item.clone(), Cond::Absent { now: self.now() })
                .await
            {
                Ok(()) => return Ok(Reservation::New),
                Err(StoreError::Conflict(_)) => {}
                Err(e) => return Err(e),
            }
            let Some(current): Option<Value> = self.get_live(&pk, &sk).await? else {
                // Lapsed between the two calls: claim again.
                continue;
            };
            if current.get("requestHash").and_then(Value::as_str) != Some(request_hash) {
                return Ok(Reservation::Mismatch);
            }
            return Ok(
                if current.get("state").and_then(Value::as_str) == Some("done") {
                    Reservation::Done(current.get("response").cloned().unwrap_or(Value::Null))
                } else {
                    Reservation::Pending
                },
            );
        }
        Err(StoreError::Unavailable(format!(
            "idempotency key {key} kept changing"
        )))
    }

    async fn complete(
        &self,
        tenant_id: &str,
        user_id: &str,
        key: &str,
        holder: &str,
        response: &Value,
        keep_until: DateTime<Utc>,
    ) -> StoreResult<()> {
        let update = Update {
            set: set(vec![
                ("state", Value::from("done")),
                ("response", response.clone()),
                (EXPIRES_AT, Value::from(keep_until.timestamp())),
            ]),
            ..Update::default()
        };
        self.table
            .update(
                &keys::tenant_pk(tenant_id),
                &idem_sk(user_id, key),
                update,
                // Only the request that holds the claim (a lapsed claim may have been taken
                // over by a retry).
                Cond::All(vec![
                    Cond::Live { now: self.now() },
                    Cond::Eq("holder".into(), Value::from(holder)),
                ]),
            )
            .await
            .map(drop)
    }

    async fn abandon(
        &self,
        tenant_id: &str,
        user_id: &str,
        key: &str,
        holder: &str,
    ) -> StoreResult<()> {
        let cond = Cond::All(vec![
            Cond::Eq("holder".into(), Value::from(holder)),
            Cond::Eq("state".into(), Value::from("pending")),
        ]);
        match self
            .table
            .delete(&keys::tenant_pk(tenant_id), &idem_sk(user_id, key), cond)
            .await
        {
            Ok(_) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

// ---------------------------------------------------------------- preferences

fn prefs_sk(user_id: &str) -> String {
    format!("PREFS#{user_id}")
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PrefsItem {
    preferences: serde_json::Map<String, Value>,
    synced_at: DateTime<Utc>,
}

#[async_trait]
impl PreferencesStore for TableStore {
    async fn preferences(
        &self,
        tenant_id: &str,
        user_id: &str,
    ) -> StoreResult<Option<StoredPreferences>> {
        let item: Option<PrefsItem> = self
            .get_live(&keys::tenant_pk(tenant_id), &prefs_sk(user_id))
            .await?;
        Ok(item.map(|p| StoredPreferences {
            preferences: p.preferences,
            synced_at: p.synced_at,
        }))
    }

    async fn save_preferences(
        &self,
        tenant_id: &str,
        user_id: &str,
        preferences: &serde_json::Map<String, Value>,
        now: DateTime<Utc>,
    ) -> StoreResult<StoredPreferences> {
        let body = PrefsItem {
            preferences: preferences.clone(),
            synced_at: now,
        };
        let item = item_of(&keys::tenant_pk(tenant_id), &prefs_sk(user_id), &body)?;
        self.table.put(item, Cond::Always).await?;
        Ok(StoredPreferences {
            preferences: body.preferences,
            synced_at: now,
        })
    }
}

// ---------------------------------------------------------------- debug logs

fn logs_pk(tenant_id: &str, user_id: &str) -> String {
    format!("TENANT#{tenant_id}#USER#{user_id}#LOGS")
}

#[async_trait]
impl DebugLogStore for TableStore {
    async fn append_log(&self, log: &DebugLog) -> StoreResult<()> {
        let sk = format!("{}#{}", crate::time::iso(log.timestamp), log.id);
        let mut item = item_of(&logs_pk(&log.tenant_id, &log.user_id), &sk, log)?;
        item.insert(EXPIRES_AT.into(), Value::from(log.expires_at));
        self.table.put(item, Cond::Always).await
    }

    async fn logs(
        &self,
        tenant_id: &str,
        user_id: &str,
        task_id: Option<&str>,
        log_type: Option<&str>,
        since: Option<DateTime<Utc>>,
        limit: usize,
    ) -> StoreResult<Vec<DebugLog>> {
        let mut q = Query::partition(logs_pk(tenant_id, user_id)).backward();
        if let Some(s) = since {
            // Strictly after `since`: ISO strings sort like the instants they name.
            q = q.sk(SkCond::Between(
                format!("{}~", crate::time::iso(s)),
                "~".into(),
            ));
        }
        let now = self.now();
        let mut out = Vec::new();
        loop {
            let page = self.table.query(q.clone()).await?;
            for item in page.items.into_iter().filter(|i| !is_expired(i, now)) {
                let log: DebugLog = body_of(item)?;
                if task_id.is_none_or(|t| log.task_id.as_deref() == Some(t))
                    && log_type.is_none_or(|t| log.log_type == t)
                {
                    out.push(log);
                    if out.len() >= limit {
                        return Ok(out);
                    }
                }
            }
            match page.last {
                Some(last) => q.start_after = Some(last),
                None => return Ok(out),
            }
        }
    }
}
