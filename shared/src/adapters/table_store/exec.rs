//! Command runs and their output chunks.

use super::*;
use crate::domain::agent_tools::{Chunk, ExecRecord, ExecStatus};
use crate::ports::ExecEnd;

impl TableStore {
    pub(super) async fn put_exec(
        &self,
        exec: &ExecRecord,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        let pk = keys::tenant_pk(&exec.tenant_id);
        let sk = keys::exec_sk(&exec.id);
        self.put_kept((&pk, &sk), exec, expires_at, Cond::Missing)
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
        let (pk, sk) = (keys::tenant_pk(tenant_id), keys::exec_sk(id));
        self.update_if((&pk, &sk), update, unclaimed).await
    }

    pub(super) async fn flag_cancel(&self, tenant_id: &str, id: &str) -> StoreResult<bool> {
        let update = Update {
            set: set(vec![("cancelRequested", Value::from(true))]),
            ..Update::default()
        };
        let running = Cond::Eq("status".into(), to_json(&ExecStatus::Running)?);
        let (pk, sk) = (keys::tenant_pk(tenant_id), keys::exec_sk(id));
        self.update_if((&pk, &sk), update, running).await
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
            let sk = keys::chunk_sk(c.seq);
            self.put_kept((&pk, &sk), c, expires_at, Cond::Missing)
                .await?;
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
        self.live_page(
            Query::partition(keys::exec_chunks_pk(tenant_id, exec_id))
                .sk(SkCond::Between(
                    keys::chunk_sk(from),
                    format!("{}~", keys::CHUNK_PREFIX),
                ))
                .limit(limit),
        )
        .await
    }
}
