//! Session listings and changes.

use super::*;

// ---------------------------------------------------------------- session queries

use super::session_counts;

impl TableStore {
    /// Every live session of one index partition, newest first.
    async fn sessions_on(&self, index: Index, pk: String) -> StoreResult<Vec<Session>> {
        let items = self
            .query_all(Query::partition(pk).on(index).backward())
            .await?;
        items.into_iter().map(body_of).collect()
    }

    /// The newest `want` sessions across the given statuses: one bounded query per status, in
    /// parallel, merged newest first.
    async fn newest_sessions(
        &self,
        tenant_id: &str,
        user_id: &str,
        statuses: &[SessionStatus],
        want: usize,
    ) -> StoreResult<Vec<Session>> {
        let pages = futures::future::try_join_all(statuses.iter().map(|status| {
            let q = Query::partition(session_counts::status_pk(tenant_id, user_id, *status))
                .on(Index::Gsi1)
                .backward();
            self.query_bodies(q, want, |_: &Session| true)
        }))
        .await?;
        let mut all: Vec<Session> = pages.into_iter().flatten().collect();
        all.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| b.session_id.cmp(&a.session_id))
        });
        all.truncate(want);
        Ok(all)
    }
}

/// The statuses a listing covers.
fn listed_statuses(filter: SessionFilter) -> Vec<SessionStatus> {
    match filter.status {
        Some(status) => vec![status],
        None => SessionStatus::ALL
            .into_iter()
            .filter(|s| filter.include_archived || *s != SessionStatus::Archived)
            .collect(),
    }
}

#[async_trait]
impl SessionQueries for TableStore {
    async fn list_sessions(
        &self,
        tenant_id: &str,
        user_id: &str,
        filter: SessionFilter,
        limit: usize,
        offset: usize,
    ) -> StoreResult<(Vec<Session>, usize)> {
        let statuses = listed_statuses(filter);
        let want = offset.saturating_add(limit);
        let (counts, newest) = tokio::join!(
            self.stored_counts(tenant_id, user_id),
            self.newest_sessions(tenant_id, user_id, &statuses, want)
        );
        let (counts, newest) = match counts? {
            Some(counts) => (counts, newest),
            // The user's first listing: building the counts moves sessions indexed before
            // statuses into their partitions, so the page is read again afterwards.
            None => (
                self.build_session_counts(tenant_id, user_id).await?,
                self.newest_sessions(tenant_id, user_id, &statuses, want)
                    .await,
            ),
        };
        let total = statuses.iter().map(|s| counts.of(*s)).sum::<u64>() as usize;
        Ok((newest?.into_iter().skip(offset).collect(), total))
    }

    async fn latest_session(&self, tenant_id: &str, user_id: &str) -> StoreResult<Option<Session>> {
        let statuses = listed_statuses(SessionFilter::default());
        Ok(self
            .newest_sessions(tenant_id, user_id, &statuses, 1)
            .await?
            .pop())
    }

    async fn session_by_domain(
        &self,
        tenant_id: &str,
        user_id: &str,
        domain: &str,
        status: Option<SessionStatus>,
    ) -> StoreResult<Option<Session>> {
        let all = self
            .sessions_on(
                Index::Gsi2,
                keys::user_domain_sessions_pk(tenant_id, user_id, domain),
            )
            .await?;
        Ok(all
            .into_iter()
            .find(|s| status.is_none_or(|st| s.status == st)))
    }

    async fn update_session(
        &self,
        tenant_id: &str,
        session_id: &str,
        changes: &SessionChanges,
        now: DateTime<Utc>,
    ) -> StoreResult<Session> {
        let updated = crate::time::iso(now);
        let mut update = Update {
            set: set(vec![
                ("updatedAt", Value::from(updated.clone())),
                (Index::Gsi1.sk(), Value::from(updated.clone())),
                (Index::Gsi2.sk(), Value::from(updated)),
            ]),
            ..Update::default()
        };
        if let Some(t) = &changes.title {
            update.set.insert("title".into(), Value::from(t.clone()));
        }
        if let Some(r) = changes.is_renamed {
            update.set.insert("isRenamed".into(), Value::from(r));
        }
        match &changes.waiting_task_id {
            Some(Some(t)) => {
                update
                    .set
                    .insert("waitingTaskId".into(), Value::from(t.clone()));
            }
            Some(None) => update.remove.push("waitingTaskId".into()),
            None => {}
        }
        if let Some(m) = &changes.memory {
            update.set.insert("memory".into(), to_json(m)?);
        }
        if let Some(m) = &changes.metadata {
            update.set.insert("metadata".into(), to_json(m)?);
        }
        if let Some(place) = &changes.place {
            update
                .set
                .insert("url".into(), Value::from(place.url.clone()));
            update
                .set
                .insert("domain".into(), Value::from(place.domain.clone()));
            update.set.insert(
                Index::Gsi2.pk().into(),
                Value::from(keys::user_domain_sessions_pk(
                    tenant_id,
                    &place.user_id,
                    &place.domain,
                )),
            );
        }
        let Some(status) = changes.status else {
            return match self
                .table
                .update(
                    &keys::tenant_pk(tenant_id),
                    &keys::session_sk(session_id),
                    update,
                    Cond::Live { now: self.now() },
                )
                .await
            {
                Ok(item) => body_of(item),
                Err(StoreError::Conflict(_)) => {
                    Err(StoreError::NotFound(format!("session {session_id}")))
                }
                Err(e) => Err(e),
            };
        };
        update.set.insert("status".into(), to_json(&status)?);
        self.move_session(tenant_id, session_id, update, status)
            .await
    }
}

impl TableStore {
    /// Applies `update`, which moves the session to `status`, together with the user's
    /// counts and the session's index partition, on the condition that its status is still
    /// the one just read.
    async fn move_session(
        &self,
        tenant_id: &str,
        session_id: &str,
        update: Update,
        status: SessionStatus,
    ) -> StoreResult<Session> {
        let (pk, sk) = (keys::tenant_pk(tenant_id), keys::session_sk(session_id));
        for attempt in 0..RACE_RETRIES {
            let now = self.now();
            let Some(current) = self.get_live::<Session>(&pk, &sk).await? else {
                return Err(StoreError::NotFound(format!("session {session_id}")));
            };
            let user = current.user_id.as_str();
            let mut update = update.clone();
            update.set.insert(
                Index::Gsi1.pk().into(),
                Value::from(session_counts::status_pk(tenant_id, user, status)),
            );
            let mut writes = vec![Write::Update {
                pk: pk.clone(),
                sk: sk.clone(),
                update,
                cond: Cond::All(vec![
                    Cond::Live { now },
                    Cond::Eq("status".into(), to_json(&current.status)?),
                ]),
            }];
            if current.status != status {
                writes.push(session_counts::count_write(
                    tenant_id,
                    user,
                    Some(current.status),
                    status,
                    now,
                ));
            }
            match self.table.transact(writes).await {
                Ok(()) => {
                    return self
                        .get_live(&pk, &sk)
                        .await?
                        .ok_or_else(|| StoreError::NotFound(format!("session {session_id}")));
                }
                Err(StoreError::Conflict(_)) => {
                    if !self.built_missing_counts(tenant_id, user).await? {
                        race_pause(attempt).await;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::Unavailable(format!(
            "session {session_id} kept changing while its status changed"
        )))
    }
}
