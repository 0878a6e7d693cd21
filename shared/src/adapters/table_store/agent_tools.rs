//! Workspaces, agent sessions, approvals and audit items.

use super::*;
use crate::domain::agent_tools::{
    AgentSession, Approval, ApprovalStatus, AuditEntry, Chunk, ExecRecord, McpServerRecord,
    WorkspaceRecord,
};
use crate::ports::agent_tools::{approval_position, audit_position};
use crate::ports::{AgentToolStore, ApprovalChange, ExecEnd};

impl TableStore {
    /// One page of a query, live items only, as `T`.
    pub(super) async fn live_page<T: DeserializeOwned>(
        &self,
        q: Query,
    ) -> StoreResult<(Vec<T>, bool)> {
        let now = self.now();
        let page = self.table.query(q).await?;
        let more = page.last.is_some();
        let items = page
            .items
            .into_iter()
            .filter(|i| !is_expired(i, now))
            .map(body_of)
            .collect::<StoreResult<Vec<T>>>()?;
        Ok((items, more))
    }

    /// Puts `body` under its keys with a TTL, when `cond` holds.
    pub(super) async fn put_kept<T: Serialize>(
        &self,
        (pk, sk): (&str, &str),
        body: &T,
        expires_at: DateTime<Utc>,
        cond: Cond,
    ) -> StoreResult<()> {
        let item = with_ttl(item_of(pk, sk, body)?, expires_at);
        self.table.put(item, cond).await
    }

    /// An update under `cond`: `false` (nothing changed) when the condition failed.
    pub(super) async fn update_if(
        &self,
        (pk, sk): (&str, &str),
        update: Update,
        cond: Cond,
    ) -> StoreResult<bool> {
        match self.table.update(pk, sk, update, cond).await {
            Ok(_) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

pub(super) fn with_ttl(mut item: Item, expires_at: DateTime<Utc>) -> Item {
    item.insert(EXPIRES_AT.into(), Value::from(expires_at.timestamp()));
    item
}

fn audit_key(tenant_id: &str, entry: &AuditEntry) -> (String, String) {
    (
        keys::agent_session_children_pk(tenant_id, &entry.session_id),
        format!("{}{}", keys::AUDIT_PREFIX, audit_position(entry)),
    )
}

#[async_trait]
impl AgentToolStore for TableStore {
    async fn create_workspace(&self, ws: &WorkspaceRecord) -> StoreResult<()> {
        let item = item_of(
            &keys::tenant_pk(&ws.tenant_id),
            &keys::workspace_sk(&ws.id),
            ws,
        )?;
        self.table.put(item, Cond::Missing).await
    }

    async fn workspace(&self, tenant_id: &str, id: &str) -> StoreResult<Option<WorkspaceRecord>> {
        self.get_live(&keys::tenant_pk(tenant_id), &keys::workspace_sk(id))
            .await
    }

    async fn workspaces(&self, tenant_id: &str) -> StoreResult<Vec<WorkspaceRecord>> {
        let items = self
            .query_all(
                Query::partition(keys::tenant_pk(tenant_id))
                    .sk(SkCond::Prefix(keys::WORKSPACE_PREFIX.into())),
            )
            .await?;
        items.into_iter().map(body_of).collect()
    }

    async fn delete_workspace(&self, tenant_id: &str, id: &str) -> StoreResult<bool> {
        self.table
            .delete(
                &keys::tenant_pk(tenant_id),
                &keys::workspace_sk(id),
                Cond::Always,
            )
            .await
    }

    async fn create_mcp_server(&self, server: &McpServerRecord) -> StoreResult<()> {
        let item = item_of(
            &keys::tenant_pk(&server.tenant_id),
            &keys::mcp_sk(&server.name),
            server,
        )?;
        self.table.put(item, Cond::Missing).await
    }

    async fn mcp_servers(&self, tenant_id: &str) -> StoreResult<Vec<McpServerRecord>> {
        let items = self
            .query_all(
                Query::partition(keys::tenant_pk(tenant_id))
                    .sk(SkCond::Prefix(keys::MCP_PREFIX.into())),
            )
            .await?;
        items.into_iter().map(body_of).collect()
    }

    async fn delete_mcp_server(&self, tenant_id: &str, name: &str) -> StoreResult<bool> {
        self.table
            .delete(
                &keys::tenant_pk(tenant_id),
                &keys::mcp_sk(name),
                Cond::Always,
            )
            .await
    }

    async fn put_agent_session(
        &self,
        session: &AgentSession,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        let pk = keys::tenant_pk(&session.tenant_id);
        let sk = keys::agent_session_sk(&session.id);
        self.put_kept((&pk, &sk), session, expires_at, Cond::Always)
            .await
    }

    async fn agent_session(&self, tenant_id: &str, id: &str) -> StoreResult<Option<AgentSession>> {
        self.get_live(&keys::tenant_pk(tenant_id), &keys::agent_session_sk(id))
            .await
    }

    async fn create_approval(&self, a: &Approval, expires_at: DateTime<Utc>) -> StoreResult<()> {
        let mut item = item_of(&keys::tenant_pk(&a.tenant_id), &keys::approval_sk(&a.id), a)?;
        item.insert(
            Index::Gsi1.pk().into(),
            Value::from(keys::session_approvals_pk(&a.tenant_id, &a.session_id)),
        );
        item.insert(Index::Gsi1.sk().into(), Value::from(approval_position(a)));
        self.table
            .put(with_ttl(item, expires_at), Cond::Missing)
            .await
    }

    async fn approval(&self, tenant_id: &str, id: &str) -> StoreResult<Option<Approval>> {
        self.get_live(&keys::tenant_pk(tenant_id), &keys::approval_sk(id))
            .await
    }

    async fn session_approvals(
        &self,
        tenant_id: &str,
        session_id: &str,
        before: Option<&str>,
        limit: usize,
    ) -> StoreResult<(Vec<Approval>, bool)> {
        let mut q = Query::partition(keys::session_approvals_pk(tenant_id, session_id))
            .on(Index::Gsi1)
            .backward()
            .limit(limit);
        if let Some(b) = before {
            q = q.sk(SkCond::Below(b.to_owned()));
        }
        self.live_page(q).await
    }

    async fn change_approval(
        &self,
        tenant_id: &str,
        id: &str,
        change: ApprovalChange<'_>,
        audit: &AuditEntry,
        audit_expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        let mut conds = vec![Cond::Eq("status".into(), to_json(&change.from)?)];
        if change.from == ApprovalStatus::Pending {
            // Still decidable: `decideBy` strictly after now.
            conds.push(Cond::AtLeast("decideBy".into(), change.at.timestamp() + 1));
        }
        let mut update = Update {
            set: set(vec![("status", to_json(&change.to)?)]),
            ..Update::default()
        };
        if let Some(by) = change.decided_by {
            update.set.insert("decidedBy".into(), Value::from(by));
            update
                .set
                .insert("decidedAt".into(), Value::from(crate::time::iso(change.at)));
        }
        if let Some(outcome) = change.outcome {
            update.set.insert("outcome".into(), Value::from(outcome));
        }
        let (pk, sk) = audit_key(tenant_id, audit);
        let audit_item = with_ttl(item_of(&pk, &sk, audit)?, audit_expires_at);
        self.table
            .transact(vec![
                Write::Update {
                    pk: keys::tenant_pk(tenant_id),
                    sk: keys::approval_sk(id),
                    update,
                    cond: Cond::All(conds),
                },
                Write::Put {
                    item: audit_item,
                    cond: Cond::Always,
                },
            ])
            .await
    }

    async fn append_audit(
        &self,
        tenant_id: &str,
        entry: &AuditEntry,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        let (pk, sk) = audit_key(tenant_id, entry);
        let item = item_of(&pk, &sk, entry)?;
        self.table
            .put(with_ttl(item, expires_at), Cond::Always)
            .await
    }

    async fn audit_trail(
        &self,
        tenant_id: &str,
        session_id: &str,
        before: Option<&str>,
        limit: usize,
    ) -> StoreResult<(Vec<AuditEntry>, bool)> {
        // The partition holds audit items only: below a position is the older part of it.
        let sk = match before {
            Some(b) => SkCond::Below(format!("{}{b}", keys::AUDIT_PREFIX)),
            None => SkCond::Prefix(keys::AUDIT_PREFIX.into()),
        };
        self.live_page(
            Query::partition(keys::agent_session_children_pk(tenant_id, session_id))
                .sk(sk)
                .backward()
                .limit(limit),
        )
        .await
    }

    async fn create_exec(&self, exec: &ExecRecord, expires_at: DateTime<Utc>) -> StoreResult<()> {
        self.put_exec(exec, expires_at).await
    }

    async fn exec(&self, tenant_id: &str, id: &str) -> StoreResult<Option<ExecRecord>> {
        self.get_exec(tenant_id, id).await
    }

    async fn claim_exec(&self, tenant_id: &str, id: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        self.take_exec(tenant_id, id, now).await
    }

    async fn request_cancel(&self, tenant_id: &str, id: &str) -> StoreResult<bool> {
        self.flag_cancel(tenant_id, id).await
    }

    async fn finish_exec(&self, tenant_id: &str, id: &str, end: &ExecEnd) -> StoreResult<()> {
        self.end_exec(tenant_id, id, end).await
    }

    async fn append_chunks(
        &self,
        tenant_id: &str,
        exec_id: &str,
        chunks: &[Chunk],
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.put_chunks(tenant_id, exec_id, chunks, expires_at)
            .await
    }

    async fn chunks(
        &self,
        tenant_id: &str,
        exec_id: &str,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<(Vec<Chunk>, bool)> {
        self.read_chunks(tenant_id, exec_id, after, limit).await
    }
}
