//! A user's sessions are indexed by status (one index partition per status, newest first) and
//! counted by status in one item, so a listing reads its page and that item, never every
//! session. Every write that adds a session or changes its status updates the counts in the
//! same transaction, on the condition that the counts exist; a user's first such write builds
//! them by counting (nothing can change them meanwhile, since every change needs them).

use super::*;

/// The index partition of a user's sessions in `status`.
pub(super) fn status_pk(tenant_id: &str, user_id: &str, status: SessionStatus) -> String {
    keys::user_sessions_pk(tenant_id, user_id, status.as_str())
}

/// The write that counts a session moving `from` one status (`None`: a new session) `to`
/// another; it fails while the user's counts do not exist.
pub(super) fn count_write(
    tenant_id: &str,
    user_id: &str,
    from: Option<SessionStatus>,
    to: SessionStatus,
    now: i64,
) -> Write {
    let mut add = vec![(to.as_str().to_owned(), 1)];
    if let Some(from) = from {
        add.push((from.as_str().to_owned(), -1));
    }
    Write::Update {
        pk: keys::tenant_pk(tenant_id),
        sk: keys::session_counts_sk(user_id),
        update: Update {
            add,
            ..Update::default()
        },
        cond: Cond::Live { now },
    }
}

/// A user's sessions by status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Counts(std::collections::BTreeMap<&'static str, u64>);

impl Counts {
    pub(super) fn of(&self, status: SessionStatus) -> u64 {
        self.0.get(status.as_str()).copied().unwrap_or(0)
    }

    fn from_item(item: &Item) -> Self {
        Counts(
            SessionStatus::ALL
                .iter()
                .map(|s| {
                    let n = item.get(s.as_str()).and_then(Value::as_i64).unwrap_or(0);
                    (s.as_str(), n.max(0) as u64)
                })
                .collect(),
        )
    }
}

impl TableStore {
    /// The user's counts as stored, if they are.
    pub(super) async fn stored_counts(
        &self,
        tenant_id: &str,
        user_id: &str,
    ) -> StoreResult<Option<Counts>> {
        let (pk, sk) = (keys::tenant_pk(tenant_id), keys::session_counts_sk(user_id));
        Ok(self
            .table
            .get(&pk, &sk)
            .await?
            .map(|i| Counts::from_item(&i)))
    }

    /// Whether a failed session write failed for want of the user's counts; if so they are
    /// built, and the write is worth retrying.
    pub(super) async fn built_missing_counts(
        &self,
        tenant_id: &str,
        user_id: &str,
    ) -> StoreResult<bool> {
        if self.stored_counts(tenant_id, user_id).await?.is_some() {
            return Ok(false);
        }
        self.build_session_counts(tenant_id, user_id).await?;
        Ok(true)
    }

    /// Counts the user's sessions (once per user) and stores the counts unless another
    /// request just did (with the same counts: nothing changes them while they are missing).
    /// Sessions still in the index partition of before statuses are moved to theirs first.
    pub(super) async fn build_session_counts(
        &self,
        tenant_id: &str,
        user_id: &str,
    ) -> StoreResult<Counts> {
        self.move_legacy_sessions(tenant_id, user_id).await?;
        let partitions = futures::future::try_join_all(SessionStatus::ALL.iter().map(|status| {
            self.query_all(Query::partition(status_pk(tenant_id, user_id, *status)).on(Index::Gsi1))
        }))
        .await?;
        let mut item = Item::new();
        item.insert(PK.into(), Value::from(keys::tenant_pk(tenant_id)));
        item.insert(SK.into(), Value::from(keys::session_counts_sk(user_id)));
        for (status, items) in SessionStatus::ALL.iter().zip(partitions) {
            item.insert(status.as_str().into(), Value::from(items.len() as u64));
        }
        let built = Counts::from_item(&item);
        match self.table.put(item, Cond::Missing).await {
            Ok(()) | Err(StoreError::Conflict(_)) => Ok(built),
            Err(e) => Err(e),
        }
    }

    /// Re-indexes sessions stored before sessions were indexed by status.
    async fn move_legacy_sessions(&self, tenant_id: &str, user_id: &str) -> StoreResult<()> {
        let legacy =
            Query::partition(keys::legacy_user_sessions_pk(tenant_id, user_id)).on(Index::Gsi1);
        for item in self.query_all(legacy).await? {
            let s: Session = body_of(item)?;
            let update = Update {
                set: set(vec![(
                    Index::Gsi1.pk(),
                    Value::from(status_pk(tenant_id, user_id, s.status)),
                )]),
                ..Update::default()
            };
            let cond = Cond::Eq("status".into(), to_json(&s.status)?);
            let (pk, sk) = (keys::tenant_pk(tenant_id), keys::session_sk(&s.session_id));
            // Not moved when a parallel build moved it (or its status changed since): either
            // way it is in a status partition now.
            self.update_if((&pk, &sk), update, cond).await?;
        }
        Ok(())
    }
}
