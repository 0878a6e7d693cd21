//! Session listings and changes.

use super::*;

// ---------------------------------------------------------------- session queries

impl TableStore {
    /// Every live session of one index partition, newest first.
    async fn sessions_on(&self, index: Index, pk: String) -> StoreResult<Vec<Session>> {
        let items = self
            .query_all(Query::partition(pk).on(index).backward())
            .await?;
        items.into_iter().map(body_of).collect()
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
        let all = self
            .sessions_on(Index::Gsi1, keys::user_sessions_pk(tenant_id, user_id))
            .await?;
        let matching: Vec<Session> = all
            .into_iter()
            .filter(|s| match filter.status {
                Some(status) => s.status == status,
                None => filter.include_archived || s.status != SessionStatus::Archived,
            })
            .collect();
        let total = matching.len();
        Ok((
            matching.into_iter().skip(offset).take(limit).collect(),
            total,
        ))
    }

    async fn latest_session(&self, tenant_id: &str, user_id: &str) -> StoreResult<Option<Session>> {
        let all = self
            .sessions_on(Index::Gsi1, keys::user_sessions_pk(tenant_id, user_id))
            .await?;
        Ok(all
            .into_iter()
            .find(|s| s.status != SessionStatus::Archived))
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
        if let Some(st) = changes.status {
            update.set.insert("status".into(), to_json(&st)?);
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
        match self
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
        }
    }
}
