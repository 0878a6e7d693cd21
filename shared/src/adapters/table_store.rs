//! Every storage port implemented once over a [`TableBackend`] — so the embedded store and
//! DynamoDB share one implementation and differ only in how a backend executes reads,
//! conditional writes, queries and transactions. Items whose TTL has passed are treated as
//! absent on every read (DynamoDB deletes them only eventually).

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::{json, Value};

use super::keys;
use super::sqlite::SqliteTable;
use super::table::{
    body_of, is_expired, item_of, key_of, Cond, Index, Item, Query, SkCond, TableBackend, Update,
    Write, EXPIRES_AT,
};
use crate::clock::Clock;
use crate::domain::{
    DomainPattern, Email, Message, Session, SessionStatus, Step, Task, TaskRef, TaskStatus, Tenant,
    User,
};
use crate::ports::{
    DebugLog, DebugLogStore, IdempotencyStore, KeyClaim, KnownSession, PreferencesStore,
    RateLimitStore, Reservation, RevokedTokenStore, SessionChanges, SessionCreated, SessionFilter,
    SessionOwner, SessionQueries, SessionStore, StoreError, StoreResult, StoredPreferences,
    TaskStore, TenantStore, UserStore,
};

/// How often a conditional write that lost a race is retried before giving up.
const RACE_RETRIES: usize = 8;

/// After losing a race: a random pause, doubling with each attempt from 5 ms up to 200 ms, so
/// racers (and transactions cancelled for conflicting with each other) do not collide again in
/// lockstep.
async fn race_pause(attempt: usize) {
    let cap_ms = (5u64 << attempt.min(6)).min(200);
    let ms = cap_ms / 2 + rand::random::<u64>() % (cap_ms / 2 + 1);
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
}

/// The ports over one table.
#[derive(Clone)]
pub struct TableStore {
    table: Arc<dyn TableBackend>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for TableStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TableStore")
    }
}

impl TableStore {
    pub fn new(table: Arc<dyn TableBackend>, clock: Arc<dyn Clock>) -> Self {
        Self { table, clock }
    }

    /// The embedded store in `data_dir`.
    pub fn embedded(data_dir: &Path, clock: Arc<dyn Clock>) -> StoreResult<Self> {
        Ok(Self::new(Arc::new(SqliteTable::open(data_dir)?), clock))
    }

    /// A private in-memory store.
    pub fn memory(clock: Arc<dyn Clock>) -> StoreResult<Self> {
        Ok(Self::new(Arc::new(SqliteTable::in_memory()?), clock))
    }

    /// The backend underneath (for tests that check raw items).
    pub fn table(&self) -> &Arc<dyn TableBackend> {
        &self.table
    }

    fn now(&self) -> i64 {
        self.clock.now().timestamp()
    }

    async fn get_live<T: DeserializeOwned>(&self, pk: &str, sk: &str) -> StoreResult<Option<T>> {
        let now = self.now();
        match self.table.get(pk, sk).await? {
            Some(item) if !is_expired(&item, now) => Ok(Some(body_of(item)?)),
            _ => Ok(None),
        }
    }

    /// Every live item of a query, following pages.
    async fn query_all(&self, mut q: Query) -> StoreResult<Vec<Item>> {
        let now = self.now();
        let mut out = Vec::new();
        loop {
            let page = self.table.query(q.clone()).await?;
            out.extend(page.items.into_iter().filter(|i| !is_expired(i, now)));
            match page.last {
                Some(last) => q.start_after = Some(last),
                None => return Ok(out),
            }
        }
    }
}

fn set(pairs: Vec<(&str, Value)>) -> Item {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

// ---------------------------------------------------------------- users, tenants, tokens

#[async_trait]
impl UserStore for TableStore {
    async fn create_user(&self, user: &User) -> StoreResult<()> {
        let item = item_of(&keys::user_pk(user.email.as_str()), keys::USER_SK, user)?;
        self.table.put(item, Cond::Absent { now: self.now() }).await
    }

    async fn user_by_email(&self, email: &Email) -> StoreResult<Option<User>> {
        self.get_live(&keys::user_pk(email.as_str()), keys::USER_SK)
            .await
    }

    async fn set_user_disabled(&self, email: &Email, disabled: bool) -> StoreResult<User> {
        let update = Update {
            set: set(vec![("disabled", Value::Bool(disabled))]),
            ..Update::default()
        };
        match self
            .table
            .update(
                &keys::user_pk(email.as_str()),
                keys::USER_SK,
                update,
                Cond::Live { now: self.now() },
            )
            .await
        {
            Ok(item) => body_of(item),
            Err(StoreError::Conflict(_)) => Err(StoreError::NotFound(format!("user {email}"))),
            Err(e) => Err(e),
        }
    }

    async fn list_users(&self, tenant_id: Option<&str>) -> StoreResult<Vec<User>> {
        let now = self.now();
        let items = self.table.scan(keys::USER_PK_PREFIX, keys::USER_SK).await?;
        let users: Vec<User> = items
            .into_iter()
            .filter(|i| !is_expired(i, now))
            .map(body_of)
            .collect::<StoreResult<_>>()?;
        Ok(users
            .into_iter()
            .filter(|u| tenant_id.is_none_or(|t| u.tenant_id == t))
            .collect())
    }
}

#[derive(Serialize, Deserialize)]
struct DomainItem {
    pattern: DomainPattern,
}

#[async_trait]
impl TenantStore for TableStore {
    async fn create_tenant(&self, tenant: &Tenant) -> StoreResult<()> {
        let item = item_of(&keys::tenant_pk(&tenant.id), keys::TENANT_SK, tenant)?;
        self.table.put(item, Cond::Absent { now: self.now() }).await
    }

    async fn tenant(&self, tenant_id: &str) -> StoreResult<Option<Tenant>> {
        self.get_live(&keys::tenant_pk(tenant_id), keys::TENANT_SK)
            .await
    }

    async fn list_tenants(&self) -> StoreResult<Vec<Tenant>> {
        let now = self.now();
        let items = self
            .table
            .scan(keys::TENANT_PK_PREFIX, keys::TENANT_SK)
            .await?;
        items
            .into_iter()
            .filter(|i| !is_expired(i, now))
            .map(body_of)
            .collect()
    }

    async fn add_allowed_domain(
        &self,
        tenant_id: &str,
        pattern: &DomainPattern,
    ) -> StoreResult<bool> {
        if self.tenant(tenant_id).await?.is_none() {
            return Err(StoreError::NotFound(format!("tenant {tenant_id}")));
        }
        let item = item_of(
            &keys::tenant_pk(tenant_id),
            &keys::domain_sk(pattern.as_str()),
            &DomainItem {
                pattern: pattern.clone(),
            },
        )?;
        match self.table.put(item, Cond::Absent { now: self.now() }).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn remove_allowed_domain(
        &self,
        tenant_id: &str,
        pattern: &DomainPattern,
    ) -> StoreResult<bool> {
        self.table
            .delete(
                &keys::tenant_pk(tenant_id),
                &keys::domain_sk(pattern.as_str()),
                Cond::Always,
            )
            .await
    }

    async fn allowed_domains(&self, tenant_id: &str) -> StoreResult<Vec<DomainPattern>> {
        let q = Query::partition(keys::tenant_pk(tenant_id))
            .sk(SkCond::Prefix(keys::DOMAIN_PREFIX.into()));
        self.query_all(q)
            .await?
            .into_iter()
            .map(|i| body_of::<DomainItem>(i).map(|d| d.pattern))
            .collect()
    }
}

#[async_trait]
impl RevokedTokenStore for TableStore {
    async fn revoke(&self, tenant_id: &str, jti: &str, until: DateTime<Utc>) -> StoreResult<bool> {
        let mut item = item_of(
            &keys::tenant_pk(tenant_id),
            &keys::revoked_sk(jti),
            &json!({ "jti": jti }),
        )?;
        item.insert(EXPIRES_AT.into(), Value::from(until.timestamp()));
        match self.table.put(item, Cond::Absent { now: self.now() }).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn is_revoked(
        &self,
        tenant_id: &str,
        jti: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let item = self
            .table
            .get(&keys::tenant_pk(tenant_id), &keys::revoked_sk(jti))
            .await?;
        Ok(item.is_some_and(|i| !is_expired(&i, now.timestamp())))
    }
}

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

// ---------------------------------------------------------------- tasks and steps

/// The stored form of a task: its fields plus index keys that place it in the sweeps.
fn task_item(task: &Task) -> StoreResult<Item> {
    let mut item = item_of(
        &keys::tenant_pk(&task.tenant_id),
        &keys::task_sk(&task.id),
        task,
    )?;
    item.insert(EXPIRES_AT.into(), Value::from(task.expires_at));
    let updated_ms = task.updated_at.timestamp_millis();
    item.insert("updatedAtMs".into(), Value::from(updated_ms));
    item.insert(Index::Gsi1.pk().into(), Value::from(keys::SWEEP_EXPIRES));
    item.insert(
        Index::Gsi1.sk().into(),
        Value::from(keys::expires_sweep_sk(
            task.expires_at,
            &task.tenant_id,
            &task.id,
        )),
    );
    if task.status.is_active() {
        item.insert(Index::Gsi2.pk().into(), Value::from(keys::SWEEP_ACTIVE));
        item.insert(
            Index::Gsi2.sk().into(),
            Value::from(keys::active_sweep_sk(updated_ms, &task.tenant_id, &task.id)),
        );
    }
    Ok(item)
}

fn step_item(step: &Step) -> StoreResult<Item> {
    let mut item = item_of(
        &keys::task_children_pk(&step.tenant_id, &step.task_id),
        &keys::step_sk(step.index),
        step,
    )?;
    item.insert(EXPIRES_AT.into(), Value::from(step.expires_at));
    Ok(item)
}

fn task_ref(item: &Item) -> StoreResult<TaskRef> {
    body_of(item.clone()).map(|t: Task| TaskRef {
        tenant_id: t.tenant_id,
        task_id: t.id,
        session_id: t.session_id,
    })
}

/// Serialises a small value (a status, a timestamp) for an update.
fn to_json<T: Serialize>(value: &T) -> StoreResult<Value> {
    serde_json::to_value(value).map_err(|e| StoreError::Internal(e.to_string()))
}

const ACTIVE_STATUSES: [TaskStatus; 6] = [
    TaskStatus::Planning,
    TaskStatus::Executing,
    TaskStatus::Verifying,
    TaskStatus::Correcting,
    TaskStatus::NeedsUserInput,
    TaskStatus::AwaitingUser,
];

#[async_trait]
impl TaskStore for TableStore {
    async fn create_task(&self, task: &Task) -> StoreResult<()> {
        self.table
            .put(task_item(task)?, Cond::Absent { now: self.now() })
            .await
    }

    async fn task(&self, tenant_id: &str, task_id: &str) -> StoreResult<Option<Task>> {
        self.get_live(&keys::tenant_pk(tenant_id), &keys::task_sk(task_id))
            .await
    }

    async fn save_task(&self, task: &Task) -> StoreResult<Task> {
        let mut next = task.clone();
        next.version += 1;
        let cond = Cond::All(vec![
            Cond::Live { now: self.now() },
            Cond::Eq("version".into(), Value::from(task.version)),
        ]);
        match self.table.put(task_item(&next)?, cond).await {
            Ok(()) => Ok(next),
            Err(StoreError::Conflict(_))
                if self.task(&task.tenant_id, &task.id).await?.is_none() =>
            {
                Err(StoreError::NotFound(format!("task {}", task.id)))
            }
            Err(e) => Err(e),
        }
    }

    async fn acquire_lease(
        &self,
        tenant_id: &str,
        task_id: &str,
        user_id: &str,
        owner: &str,
        until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<Task> {
        let update = Update {
            set: set(vec![
                ("leaseOwner", Value::from(owner)),
                ("leaseUntil", Value::from(until.timestamp())),
            ]),
            ..Update::default()
        };
        let cond = Cond::All(vec![
            Cond::Live {
                now: now.timestamp(),
            },
            Cond::Eq("userId".into(), Value::from(user_id)),
            Cond::MissingOrAtMost("leaseUntil".into(), now.timestamp()),
        ]);
        let (pk, sk) = (keys::tenant_pk(tenant_id), keys::task_sk(task_id));
        match self.table.update(&pk, &sk, update, cond).await {
            Ok(item) => body_of(item),
            Err(StoreError::Conflict(_)) => match self.task(tenant_id, task_id).await? {
                // Another user's task is as absent as a missing one, and never leased for them.
                Some(t) if t.user_id == user_id => {
                    Err(StoreError::Conflict(format!("task {task_id} is busy")))
                }
                _ => Err(StoreError::NotFound(format!("task {task_id}"))),
            },
            Err(e) => Err(e),
        }
    }

    async fn release_lease(&self, tenant_id: &str, task_id: &str, owner: &str) -> StoreResult<()> {
        let update = Update {
            remove: vec!["leaseOwner".into(), "leaseUntil".into()],
            ..Update::default()
        };
        let cond = Cond::All(vec![
            Cond::Live { now: self.now() },
            Cond::Eq("leaseOwner".into(), Value::from(owner)),
        ]);
        match self
            .table
            .update(
                &keys::tenant_pk(tenant_id),
                &keys::task_sk(task_id),
                update,
                cond,
            )
            .await
        {
            Ok(_) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn append_step(&self, step: &Step) -> StoreResult<()> {
        let now = self.now();
        let item = step_item(step)?;
        let bump = Update {
            set: set(vec![("stepCount", Value::from(step.index + 1))]),
            ..Update::default()
        };
        self.table
            .transact(vec![
                Write::Put {
                    item,
                    cond: Cond::Absent { now },
                },
                Write::Update {
                    pk: keys::tenant_pk(&step.tenant_id),
                    sk: keys::task_sk(&step.task_id),
                    update: bump,
                    cond: Cond::All(vec![
                        Cond::Live { now },
                        Cond::Eq("stepCount".into(), Value::from(step.index)),
                    ]),
                },
            ])
            .await
    }

    async fn start_task(&self, task: &Task, first_step: &Step) -> StoreResult<()> {
        let now = self.now();
        self.table
            .transact(vec![
                Write::Put {
                    item: task_item(task)?,
                    cond: Cond::Absent { now },
                },
                Write::Put {
                    item: step_item(first_step)?,
                    cond: Cond::Absent { now },
                },
            ])
            .await
    }

    async fn record_step(&self, step: &Step, task: &Task, lease_owner: &str) -> StoreResult<()> {
        let ts = self.now();
        let next = Task {
            step_count: step.index + 1,
            version: task.version + 1,
            lease_owner: None,
            lease_until: None,
            ..task.clone()
        };
        self.table
            .transact(vec![
                Write::Put {
                    item: step_item(step)?,
                    cond: Cond::Absent { now: ts },
                },
                Write::Put {
                    item: task_item(&next)?,
                    cond: Cond::All(vec![
                        Cond::Live { now: ts },
                        Cond::Eq("stepCount".into(), Value::from(step.index)),
                        Cond::Eq("leaseOwner".into(), Value::from(lease_owner)),
                    ]),
                },
            ])
            .await
    }

    async fn steps(&self, tenant_id: &str, task_id: &str) -> StoreResult<Vec<Step>> {
        let q = Query::partition(keys::task_children_pk(tenant_id, task_id))
            .sk(SkCond::Prefix(keys::STEP_PREFIX.into()));
        self.query_all(q).await?.into_iter().map(body_of).collect()
    }

    async fn expired_tasks(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<TaskRef>> {
        let q = Query::partition(keys::SWEEP_EXPIRES)
            .on(Index::Gsi1)
            .sk(SkCond::Below(format!("{:012}", now.timestamp() + 1)))
            .limit(limit);
        // Expired by definition: no TTL filtering here.
        let page = self.table.query(q).await?;
        page.items.iter().map(task_ref).collect()
    }

    async fn idle_tasks(
        &self,
        idle_before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<TaskRef>> {
        let now = self.now();
        let q = Query::partition(keys::SWEEP_ACTIVE)
            .on(Index::Gsi2)
            .sk(SkCond::Below(format!(
                "{:015}",
                idle_before.timestamp_millis()
            )))
            .limit(limit);
        let page = self.table.query(q).await?;
        page.items
            .iter()
            .filter(|i| !is_expired(i, now))
            .map(task_ref)
            .collect()
    }

    async fn mark_interrupted(
        &self,
        task: &TaskRef,
        idle_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let (pk, sk) = (
            keys::tenant_pk(&task.tenant_id),
            keys::task_sk(&task.task_id),
        );
        let update = Update {
            set: set(vec![
                ("status", to_json(&TaskStatus::Interrupted)?),
                ("updatedAt", to_json(&now)?),
                ("updatedAtMs", Value::from(now.timestamp_millis())),
            ]),
            remove: vec![Index::Gsi2.pk().into(), Index::Gsi2.sk().into()],
            add: vec![("version".into(), 1)],
        };
        let still_active = ACTIVE_STATUSES
            .iter()
            .map(|s| serde_json::to_value(s).map(|v| Cond::Eq("status".into(), v)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        let cond = Cond::All(vec![
            Cond::Live {
                now: now.timestamp(),
            },
            Cond::Any(still_active),
            Cond::MissingOrAtMost("updatedAtMs".into(), idle_before.timestamp_millis() - 1),
            Cond::MissingOrAtMost("leaseUntil".into(), now.timestamp()),
        ]);
        match self.table.update(&pk, &sk, update, cond).await {
            Ok(_) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn delete_task(&self, task: &TaskRef) -> StoreResult<usize> {
        // Raw queries: expired children are exactly what must go.
        let mut keys_to_delete = Vec::new();
        let mut q = Query::partition(keys::task_children_pk(&task.tenant_id, &task.task_id));
        loop {
            let page = self.table.query(q.clone()).await?;
            keys_to_delete.extend(page.items.iter().filter_map(key_of));
            match page.last {
                Some(last) => q.start_after = Some(last),
                None => break,
            }
        }
        let mut removed_messages = 0i64;
        if let Some(session_id) = &task.session_id {
            let mut q = Query::partition(keys::session_children_pk(&task.tenant_id, session_id))
                .sk(SkCond::Prefix(keys::MESSAGE_PREFIX.into()));
            loop {
                let page = self.table.query(q.clone()).await?;
                for item in &page.items {
                    if item.get("taskId").and_then(Value::as_str) == Some(task.task_id.as_str()) {
                        keys_to_delete.extend(key_of(item));
                        removed_messages += 1;
                    }
                }
                match page.last {
                    Some(last) => q.start_after = Some(last),
                    None => break,
                }
            }
        }
        let task_key = (
            keys::tenant_pk(&task.tenant_id),
            keys::task_sk(&task.task_id),
        );
        let task_existed = self.table.get(&task_key.0, &task_key.1).await?.is_some();
        let count = keys_to_delete.len() + usize::from(task_existed);
        // The task item goes last, so a crash part-way leaves it for the next sweep to retry.
        self.table.batch_delete(keys_to_delete).await?;
        if let (Some(session_id), true) = (&task.session_id, removed_messages > 0) {
            let update = Update {
                add: vec![("messageCount".into(), -removed_messages)],
                ..Update::default()
            };
            let pk = keys::tenant_pk(&task.tenant_id);
            match self
                .table
                .update(
                    &pk,
                    &keys::session_sk(session_id),
                    update,
                    Cond::Live { now: self.now() },
                )
                .await
            {
                Ok(_) | Err(StoreError::Conflict(_)) => {}
                Err(e) => return Err(e),
            }
        }
        self.table
            .delete(&task_key.0, &task_key.1, Cond::Always)
            .await?;
        Ok(count)
    }
}

// ---------------------------------------------------------------- sessions and messages

fn session_item(s: &Session) -> StoreResult<Item> {
    let mut item = item_of(
        &keys::tenant_pk(&s.tenant_id),
        &keys::session_sk(&s.session_id),
        s,
    )?;
    let updated = crate::time::iso(s.updated_at);
    item.insert(
        Index::Gsi1.pk().into(),
        Value::from(keys::user_sessions_pk(&s.tenant_id, &s.user_id)),
    );
    item.insert(Index::Gsi1.sk().into(), Value::from(updated.clone()));
    item.insert(
        Index::Gsi2.pk().into(),
        Value::from(keys::user_domain_sessions_pk(
            &s.tenant_id,
            &s.user_id,
            &s.domain,
        )),
    );
    item.insert(Index::Gsi2.sk().into(), Value::from(updated));
    Ok(item)
}

/// The write that claims a session id for its tenant and user: it succeeds when the id is
/// unclaimed or already theirs.
fn claim_session_id(s: &Session) -> StoreResult<Write> {
    let owner = SessionOwner {
        tenant_id: s.tenant_id.clone(),
        user_id: s.user_id.clone(),
    };
    Ok(Write::Put {
        item: item_of(
            &keys::session_owner_pk(&s.session_id),
            keys::SESSION_OWNER_SK,
            &owner,
        )?,
        cond: Cond::Any(vec![
            Cond::Missing,
            Cond::All(vec![
                Cond::Eq("tenantId".into(), Value::from(owner.tenant_id.clone())),
                Cond::Eq("userId".into(), Value::from(owner.user_id.clone())),
            ]),
        ]),
    })
}

impl TableStore {
    /// Whether `session_id` is claimed by someone other than `tenant_id`/`user_id`.
    async fn claimed_elsewhere(
        &self,
        session_id: &str,
        tenant_id: &str,
        user_id: &str,
    ) -> StoreResult<bool> {
        Ok(self
            .session_owner(session_id)
            .await?
            .is_some_and(|o| o.tenant_id != tenant_id || o.user_id != user_id))
    }
}

#[async_trait]
impl SessionStore for TableStore {
    async fn create_session(&self, session: &Session) -> StoreResult<SessionCreated> {
        let mut session = session.clone();
        session.id_claimed = true;
        let session = &session;
        let writes = vec![
            Write::Put {
                item: session_item(session)?,
                cond: Cond::Absent { now: self.now() },
            },
            claim_session_id(session)?,
        ];
        match self.table.transact(writes).await {
            Ok(()) => Ok(SessionCreated::Created),
            Err(StoreError::Conflict(_)) => {
                if self
                    .claimed_elsewhere(&session.session_id, &session.tenant_id, &session.user_id)
                    .await?
                {
                    Ok(SessionCreated::Taken)
                } else {
                    Ok(SessionCreated::Exists)
                }
            }
            Err(e) => Err(e),
        }
    }

    async fn session(&self, tenant_id: &str, session_id: &str) -> StoreResult<Option<Session>> {
        self.get_live(&keys::tenant_pk(tenant_id), &keys::session_sk(session_id))
            .await
    }

    async fn session_owner(&self, session_id: &str) -> StoreResult<Option<SessionOwner>> {
        self.get_live(&keys::session_owner_pk(session_id), keys::SESSION_OWNER_SK)
            .await
    }

    async fn claim_session(&self, session: &Session) -> StoreResult<bool> {
        let Write::Put { item, cond } = claim_session_id(session)? else {
            return Err(StoreError::Internal("a claim is a put".into()));
        };
        match self.table.put(item, cond).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn append_messages_after(
        &self,
        tenant_id: &str,
        session_id: &str,
        messages: &[Message],
        create_if_missing: Option<&Session>,
        known: KnownSession<'_>,
    ) -> StoreResult<Vec<Message>> {
        let mut known = known;
        if messages.len() + 2 > super::table::MAX_TRANSACTION_WRITES {
            // The messages, the session and the id's claim.
            return Err(StoreError::Internal(
                "too many messages for one append".into(),
            ));
        }
        let pk = keys::tenant_pk(tenant_id);
        let sk = keys::session_sk(session_id);
        for attempt in 0..RACE_RETRIES {
            let now = self.now();
            let existing = match std::mem::replace(&mut known, KnownSession::Unknown) {
                KnownSession::Present(s)
                    if s.tenant_id == tenant_id && s.session_id == session_id =>
                {
                    Some(s.clone())
                }
                KnownSession::Missing => None,
                _ => self.session(tenant_id, session_id).await?,
            };
            let (base, session_write) = match (&existing, create_if_missing) {
                (Some(s), _) => (s.clone(), None),
                (None, Some(new)) => (new.clone(), Some(new)),
                (None, None) => return Err(StoreError::NotFound(format!("session {session_id}"))),
            };
            let mut stored = Vec::with_capacity(messages.len());
            let mut writes = Vec::with_capacity(messages.len() + 1);
            let mut latest = base.updated_at;
            for (k, m) in messages.iter().enumerate() {
                let mut m = m.clone();
                m.tenant_id = tenant_id.to_owned();
                m.session_id = session_id.to_owned();
                m.sequence_number = base.last_sequence + 1 + k as u64;
                let mut item = item_of(
                    &keys::session_children_pk(tenant_id, session_id),
                    &keys::message_sk(m.sequence_number),
                    &m,
                )?;
                if let Some(exp) = m.expires_at {
                    item.insert(EXPIRES_AT.into(), Value::from(exp));
                }
                latest = latest.max(m.timestamp);
                writes.push(Write::Put {
                    item,
                    cond: Cond::Absent { now },
                });
                stored.push(m);
            }
            let last_sequence = base.last_sequence + messages.len() as u64;
            match session_write {
                Some(new) => {
                    let mut s = new.clone();
                    s.id_claimed = true;
                    s.last_sequence = last_sequence;
                    s.message_count += messages.len() as u64;
                    s.updated_at = latest;
                    writes.push(Write::Put {
                        item: session_item(&s)?,
                        cond: Cond::Absent { now },
                    });
                    writes.push(claim_session_id(&s)?);
                }
                None => {
                    // A session stored before ids were claimed claims its id with its next
                    // messages (one whose id is claimed elsewhere takes no more messages, so
                    // none of its events are sent).
                    if !base.id_claimed {
                        writes.push(claim_session_id(&base)?);
                    }
                    let updated = crate::time::iso(latest);
                    writes.push(Write::Update {
                        pk: pk.clone(),
                        sk: sk.clone(),
                        update: Update {
                            set: set(vec![
                                ("lastSequence", Value::from(last_sequence)),
                                ("updatedAt", Value::from(updated.clone())),
                                (Index::Gsi1.sk(), Value::from(updated.clone())),
                                (Index::Gsi2.sk(), Value::from(updated)),
                                ("idClaimed", Value::from(true)),
                            ]),
                            add: vec![("messageCount".into(), messages.len() as i64)],
                            ..Update::default()
                        },
                        cond: Cond::All(vec![
                            Cond::Live { now },
                            Cond::Eq("lastSequence".into(), Value::from(base.last_sequence)),
                        ]),
                    });
                }
            }
            let claimed_here = session_write.is_some() || !base.id_claimed;
            match self.table.transact(writes).await {
                Ok(()) => return Ok(stored),
                Err(StoreError::Conflict(_)) => {
                    if claimed_here
                        && self
                            .claimed_elsewhere(session_id, tenant_id, &base.user_id)
                            .await?
                    {
                        return Err(StoreError::Conflict(format!(
                            "session id {session_id} belongs to another account"
                        )));
                    }
                    race_pause(attempt).await;
                }
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::Unavailable(format!(
            "session {session_id} kept changing while appending"
        )))
    }

    async fn messages(
        &self,
        tenant_id: &str,
        session_id: &str,
        since: Option<DateTime<Utc>>,
        limit: usize,
    ) -> StoreResult<Vec<Message>> {
        let q = Query::partition(keys::session_children_pk(tenant_id, session_id))
            .sk(SkCond::Prefix(keys::MESSAGE_PREFIX.into()));
        let mut out = Vec::new();
        for item in self.query_all(q).await? {
            let m: Message = body_of(item)?;
            if since.is_none_or(|s| m.timestamp > s) {
                out.push(m);
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }
}

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
