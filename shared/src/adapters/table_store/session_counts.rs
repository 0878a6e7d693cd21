//! A user's sessions are indexed by status (one index partition per status, newest first) and
//! counted by status in one item, so a listing reads its page and that item, never every
//! session. Every write that adds a session or changes its status updates the counts in the
//! same transaction, on the condition that the counts exist; a user's first such write builds
//! them by counting (nothing can change them meanwhile, since every change needs them).

use super::*;

/// Every status, in the order counts are listed.
pub(super) const STATUSES: [SessionStatus; 5] = [
    SessionStatus::Active,
    SessionStatus::Completed,
    SessionStatus::Failed,
    SessionStatus::Interrupted,
    SessionStatus::Archived,
];

/// The attribute (and index partition suffix) of a status.
pub(super) fn status_name(status: SessionStatus) -> &'static str {
    match status {
        SessionStatus::Active => "active",
        SessionStatus::Completed => "completed",
        SessionStatus::Failed => "failed",
        SessionStatus::Interrupted => "interrupted",
        SessionStatus::Archived => "archived",
    }
}

/// The index partition of a user's sessions in `status`.
pub(super) fn status_pk(tenant_id: &str, user_id: &str, status: SessionStatus) -> String {
    keys::user_sessions_pk(tenant_id, user_id, status_name(status))
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
    let mut add = vec![(status_name(to).to_owned(), 1)];
    if let Some(from) = from {
        add.push((status_name(from).to_owned(), -1));
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts([u64; 5]);

impl Counts {
    pub(super) fn of(&self, status: SessionStatus) -> u64 {
        let k = STATUSES.iter().position(|s| *s == status).unwrap_or(0);
        self.0[k]
    }

    fn from_item(item: &Item) -> Self {
        let mut counts = [0u64; 5];
        for (k, status) in STATUSES.iter().enumerate() {
            counts[k] = item
                .get(status_name(*status))
                .and_then(Value::as_i64)
                .map_or(0, |n| n.max(0) as u64);
        }
        Counts(counts)
    }
}

impl TableStore {
    /// The user's counts, built first when they do not exist yet.
    pub(super) async fn session_counts(
        &self,
        tenant_id: &str,
        user_id: &str,
    ) -> StoreResult<Counts> {
        let (pk, sk) = (keys::tenant_pk(tenant_id), keys::session_counts_sk(user_id));
        if let Some(item) = self.table.get(&pk, &sk).await? {
            return Ok(Counts::from_item(&item));
        }
        self.build_session_counts(tenant_id, user_id).await?;
        match self.table.get(&pk, &sk).await? {
            Some(item) => Ok(Counts::from_item(&item)),
            None => Err(StoreError::Internal(
                "session counts missing after building".into(),
            )),
        }
    }

    /// Whether a failed session write failed for want of the user's counts; if so they are
    /// built, and the write is worth retrying.
    pub(super) async fn built_missing_counts(
        &self,
        tenant_id: &str,
        user_id: &str,
    ) -> StoreResult<bool> {
        let (pk, sk) = (keys::tenant_pk(tenant_id), keys::session_counts_sk(user_id));
        if self.table.get(&pk, &sk).await?.is_some() {
            return Ok(false);
        }
        self.build_session_counts(tenant_id, user_id).await?;
        Ok(true)
    }

    /// Counts the user's sessions (once per user) and stores the counts unless another
    /// request just did.
    async fn build_session_counts(&self, tenant_id: &str, user_id: &str) -> StoreResult<()> {
        let counts = futures::future::try_join_all(STATUSES.iter().map(|status| {
            self.query_all(Query::partition(status_pk(tenant_id, user_id, *status)).on(Index::Gsi1))
        }))
        .await?;
        let mut item = Item::new();
        item.insert(PK.into(), Value::from(keys::tenant_pk(tenant_id)));
        item.insert(SK.into(), Value::from(keys::session_counts_sk(user_id)));
        for (status, items) in STATUSES.iter().zip(counts) {
            item.insert(status_name(*status).into(), Value::from(items.len() as u64));
        }
        match self.table.put(item, Cond::Missing).await {
            Ok(()) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
