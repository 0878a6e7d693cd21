//! Command runs and their output chunks.

use super::agent_tools::with_ttl;
use super::*;
use crate::ports::ExecEnd;
use crate::tools::model::{Chunk, ExecRecord, ExecStatus};

impl TableStore {
    pub(super) async fn put_exec(
        &self,
        exec: &ExecRecord,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        let item = item_of(
            &keys::tenant_pk(&exec.tenant_id),
            &keys::exec_sk(&exec.id),
            exec,
        )?;
        self.table
            .put(with_ttl(item, expires_at), Cond::Missing)
            .await
    }

    pub(super) async fn get_exec(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> StoreResult<Option<ExecRecord>> {
        self.get_live(&keys::tenant_pk(tenant_id), &keys::exec_sk(id))
            .await
    }

    pub(super) async fn take_exec(
        &self,
        tenant_id: &str,
        id: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let update = Update {
            set: set(vec![("claimedAt", Value::from(now.timestamp().max(1)))]),
            ..Update::default()
        };
        let unclaimed = Cond::All(vec![
            Cond::Eq("status".into(), to_json(&ExecStatus::Running)?),
            Cond::MissingOrAtMost("claimedAt".into(), 0),
        ]);
        match self
            .table
            .update(
                &keys::tenant_pk(tenant_id),
                &keys::exec_sk(id),
                update,
                unclaimed,
            )
            .await
        {
            Ok(_) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub(super) async fn flag_cancel(&self, tenant_id: &str, id: &str) -> StoreResult<bool> {
        let update = Update {
            set: set(vec![("cancelRequested", Value::from(true))]),
            ..Update::default()
        };
        let running = Cond::Eq("status".into(), to_json(&ExecStatus::Running)?);
        match self
            .table
            .update(
                &keys::tenant_pk(tenant_id),
                &keys::exec_sk(id),
                update,
                running,
            )
            .await
        {
            Ok(_) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub(super) async fn end_exec(
        &self,
        tenant_id: &str,
        id: &str,
        end: &ExecEnd,
    ) -> StoreResult<()> {
        let mut update = Update {
            set: set(vec![
                ("status", to_json(&end.status)?),
                ("endedAt", to_json(&end.ended_at)?),
                ("durationMs", Value::from(end.duration_ms)),
                ("outputBytes", Value::from(end.output_bytes)),
            ]),
            ..Update::default()
        };
        if let Some(code) = end.exit_code {
            update.set.insert("exitCode".into(), Value::from(code));
        }
        if let Some(e) = &end.error {
            update.set.insert("error".into(), Value::from(e.clone()));
        }
        let running = Cond::Eq("status".into(), to_json(&ExecStatus::Running)?);
        self.table
            .update(
                &keys::tenant_pk(tenant_id),
                &keys::exec_sk(id),
                update,
                running,
            )
            .await
            .map(|_| ())
    }

    pub(super) async fn put_chunks(
        &self,
        tenant_id: &str,
        exec_id: &str,
        chunks: &[Chunk],
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        let pk = keys::exec_chunks_pk(tenant_id, exec_id);
        for c in chunks {
            let item = with_ttl(item_of(&pk, &keys::chunk_sk(c.seq), c)?, expires_at);
            self.table.put(item, Cond::Missing).await?;
        }
        Ok(())
    }

    pub(super) async fn read_chunks(
        &self,
        tenant_id: &str,
        exec_id: &str,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<(Vec<Chunk>, bool)> {
        let from = after.map_or(0, |a| a.saturating_add(1));
        let now = self.now();
        let page = self
            .table
            .query(
                Query::partition(keys::exec_chunks_pk(tenant_id, exec_id))
                    .sk(SkCond::Between(
                        keys::chunk_sk(from),
                        format!("{}~", keys::CHUNK_PREFIX),
                    ))
                    .limit(limit),
            )
            .await?;
        let more = page.last.is_some();
        let chunks = page
            .items
            .into_iter()
            .filter(|i| !is_expired(i, now))
            .map(body_of)
            .collect::<StoreResult<Vec<Chunk>>>()?;
        Ok((chunks, more))
    }
}
