//! The embedded store: every port on one SQLite file (or in memory), laid out like the
//! DynamoDB table — one `items` table of (PK, SK) → JSON body, with an optional expiry that
//! reads honour the way DynamoDB's TTL filter must. Several processes may open the same file
//! (local-api and the admin CLI): WAL mode and a busy timeout serialise their writers.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use super::keys;
use crate::clock::Clock;
use crate::domain::{DomainPattern, Email, Tenant, User};
use crate::ports::{
    RateLimitStore, RevokedTokenStore, StoreError, StoreResult, TenantStore, UserStore,
};

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "agent.db";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS items (
    pk TEXT NOT NULL,
    sk TEXT NOT NULL,
    body TEXT NOT NULL,
    expires_at INTEGER,
    PRIMARY KEY (pk, sk)
) WITHOUT ROWID;
";

/// All ports on SQLite.
pub struct EmbeddedStore {
    conn: Mutex<Connection>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for EmbeddedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedStore").finish_non_exhaustive()
    }
}

fn db_err(e: rusqlite::Error) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(code, _)
            if matches!(
                code.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
        {
            StoreError::Unavailable(e.to_string())
        }
        other => StoreError::Internal(other.to_string()),
    }
}

fn json_err(e: serde_json::Error) -> StoreError {
    StoreError::Internal(format!("corrupt item: {e}"))
}

impl EmbeddedStore {
    /// Opens (creating if needed) the database file in `data_dir`.
    pub fn open(data_dir: &Path, clock: Arc<dyn Clock>) -> StoreResult<Self> {
        create_private_dir(data_dir).map_err(|e| {
            StoreError::Internal(format!("cannot create {}: {e}", data_dir.display()))
        })?;
        let conn = Connection::open(data_dir.join(DB_FILE)).map_err(db_err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(db_err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(db_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(db_err)?;
        Self::init(conn, clock)
    }

    /// A private in-memory database, gone when dropped.
    pub fn in_memory(clock: Arc<dyn Clock>) -> StoreResult<Self> {
        Self::init(Connection::open_in_memory().map_err(db_err)?, clock)
    }

    fn init(conn: Connection, clock: Arc<dyn Clock>) -> StoreResult<Self> {
        conn.execute_batch(SCHEMA).map_err(db_err)?;
        Ok(Self {
            conn: Mutex::new(conn),
            clock,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (transactions roll
        // back on drop), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` in an immediate (write-locking) transaction, committing on `Ok`.
    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>, i64) -> StoreResult<T>) -> StoreResult<T> {
        let now = self.clock.now().timestamp();
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db_err)?;
        let out = f(&tx, now)?;
        tx.commit().map_err(db_err)?;
        Ok(out)
    }

    fn read<T>(&self, f: impl FnOnce(&Connection, i64) -> StoreResult<T>) -> StoreResult<T> {
        let now = self.clock.now().timestamp();
        f(&self.lock(), now)
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Reads one live (unexpired) item.
fn get<T: DeserializeOwned>(
    conn: &Connection,
    pk: &str,
    sk: &str,
    now: i64,
) -> StoreResult<Option<T>> {
    let body: Option<String> = conn
        .query_row(
            "SELECT body FROM items WHERE pk = ?1 AND sk = ?2 AND (expires_at IS NULL OR expires_at > ?3)",
            params![pk, sk, now],
            |r| r.get(0),
        )
        .optional()
        .map_err(db_err)?;
    body.map(|b| serde_json::from_str(&b).map_err(json_err))
        .transpose()
}

/// Writes one item; with `if_absent`, fails with `Conflict` when a live item is there.
fn put<T: Serialize>(
    tx: &Transaction<'_>,
    (pk, sk): (&str, &str),
    value: &T,
    expires_at: Option<i64>,
    if_absent: bool,
    now: i64,
) -> StoreResult<()> {
    if if_absent && get::<serde_json::Value>(tx, pk, sk, now)?.is_some() {
        return Err(StoreError::Conflict(format!("{pk}/{sk} exists")));
    }
    let body = serde_json::to_string(value).map_err(json_err)?;
    tx.execute(
        "INSERT OR REPLACE INTO items (pk, sk, body, expires_at) VALUES (?1, ?2, ?3, ?4)",
        params![pk, sk, body, expires_at],
    )
    .map_err(db_err)?;
    Ok(())
}

fn delete(tx: &Transaction<'_>, pk: &str, sk: &str) -> StoreResult<bool> {
    let n = tx
        .execute(
            "DELETE FROM items WHERE pk = ?1 AND sk = ?2",
            params![pk, sk],
        )
        .map_err(db_err)?;
    Ok(n > 0)
}

/// Live items of a partition whose SK starts with `sk_prefix`, in SK order.
fn query<T: DeserializeOwned>(
    conn: &Connection,
    pk: &str,
    sk_prefix: &str,
    now: i64,
) -> StoreResult<Vec<T>> {
    scan(
        conn,
        "pk = ?1 AND substr(sk, 1, length(?2)) = ?2",
        [pk, sk_prefix],
        now,
    )
}

/// Live items matching a WHERE clause over `pk`/`sk` with two text parameters.
fn scan<T: DeserializeOwned>(
    conn: &Connection,
    filter: &str,
    args: [&str; 2],
    now: i64,
) -> StoreResult<Vec<T>> {
    let sql = format!(
        "SELECT body FROM items WHERE {filter} AND (expires_at IS NULL OR expires_at > ?3) ORDER BY pk, sk"
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(db_err)?;
    let rows = stmt
        .query_map(params![args[0], args[1], now], |r| r.get::<_, String>(0))
        .map_err(db_err)?;
    rows.map(|b| serde_json::from_str(&b.map_err(db_err)?).map_err(json_err))
        .collect()
}

#[derive(Serialize, Deserialize)]
struct DomainItem {
    pattern: DomainPattern,
}

#[derive(Serialize, Deserialize)]
struct RevokedItem {
    jti: String,
    until: DateTime<Utc>,
}

#[derive(Serialize, Deserialize)]
struct CounterItem {
    count: u64,
}

#[async_trait]
impl UserStore for EmbeddedStore {
    async fn create_user(&self, user: &User) -> StoreResult<()> {
        self.write(|tx, now| {
            put(
                tx,
                (&keys::user_pk(user.email.as_str()), keys::USER_SK),
                user,
                None,
                true,
                now,
            )
        })
    }

    async fn user_by_email(&self, email: &Email) -> StoreResult<Option<User>> {
        self.read(|c, now| get(c, &keys::user_pk(email.as_str()), keys::USER_SK, now))
    }

    async fn set_user_disabled(&self, email: &Email, disabled: bool) -> StoreResult<User> {
        self.write(|tx, now| {
            let pk = keys::user_pk(email.as_str());
            let mut user: User = get(tx, &pk, keys::USER_SK, now)?
                .ok_or_else(|| StoreError::NotFound(format!("user {email}")))?;
            user.disabled = disabled;
            put(tx, (&pk, keys::USER_SK), &user, None, false, now)?;
            Ok(user)
        })
    }

    async fn list_users(&self, tenant_id: Option<&str>) -> StoreResult<Vec<User>> {
        let users: Vec<User> = self.read(|c, now| {
            scan(
                c,
                "substr(pk, 1, length(?1)) = ?1 AND sk = ?2",
                [keys::USER_PK_PREFIX, keys::USER_SK],
                now,
            )
        })?;
        Ok(users
            .into_iter()
            .filter(|u| tenant_id.is_none_or(|t| u.tenant_id == t))
            .collect())
    }
}

#[async_trait]
impl TenantStore for EmbeddedStore {
    async fn create_tenant(&self, tenant: &Tenant) -> StoreResult<()> {
        self.write(|tx, now| {
            put(
                tx,
                (&keys::tenant_pk(&tenant.id), keys::TENANT_SK),
                tenant,
                None,
                true,
                now,
            )
        })
    }

    async fn tenant(&self, tenant_id: &str) -> StoreResult<Option<Tenant>> {
        self.read(|c, now| get(c, &keys::tenant_pk(tenant_id), keys::TENANT_SK, now))
    }

    async fn list_tenants(&self) -> StoreResult<Vec<Tenant>> {
        self.read(|c, now| {
            scan(
                c,
                "substr(pk, 1, length(?1)) = ?1 AND sk = ?2",
                [keys::TENANT_PK_PREFIX, keys::TENANT_SK],
                now,
            )
        })
    }

    async fn add_allowed_domain(
        &self,
        tenant_id: &str,
        pattern: &DomainPattern,
    ) -> StoreResult<bool> {
        self.write(|tx, now| {
            let pk = keys::tenant_pk(tenant_id);
            if get::<Tenant>(tx, &pk, keys::TENANT_SK, now)?.is_none() {
                return Err(StoreError::NotFound(format!("tenant {tenant_id}")));
            }
            let item = DomainItem {
                pattern: pattern.clone(),
            };
            match put(
                tx,
                (&pk, &keys::domain_sk(pattern.as_str())),
                &item,
                None,
                true,
                now,
            ) {
                Ok(()) => Ok(true),
                Err(StoreError::Conflict(_)) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    async fn remove_allowed_domain(
        &self,
        tenant_id: &str,
        pattern: &DomainPattern,
    ) -> StoreResult<bool> {
        self.write(|tx, _| {
            delete(
                tx,
                &keys::tenant_pk(tenant_id),
                &keys::domain_sk(pattern.as_str()),
            )
        })
    }

    async fn allowed_domains(&self, tenant_id: &str) -> StoreResult<Vec<DomainPattern>> {
        let items: Vec<DomainItem> =
            self.read(|c, now| query(c, &keys::tenant_pk(tenant_id), keys::DOMAIN_PREFIX, now))?;
        Ok(items.into_iter().map(|i| i.pattern).collect())
    }
}

#[async_trait]
impl RevokedTokenStore for EmbeddedStore {
    async fn revoke(&self, tenant_id: &str, jti: &str, until: DateTime<Utc>) -> StoreResult<()> {
        let item = RevokedItem {
            jti: jti.to_owned(),
            until,
        };
        self.write(|tx, now| {
            put(
                tx,
                (&keys::tenant_pk(tenant_id), &keys::revoked_sk(jti)),
                &item,
                Some(until.timestamp() + 1),
                false,
                now,
            )
        })
    }

    async fn is_revoked(
        &self,
        tenant_id: &str,
        jti: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let item: Option<RevokedItem> =
            self.read(|c, ts| get(c, &keys::tenant_pk(tenant_id), &keys::revoked_sk(jti), ts))?;
        Ok(item.is_some_and(|i| i.until > now))
    }
}

#[async_trait]
impl RateLimitStore for EmbeddedStore {
    async fn increment(
        &self,
        key: &str,
        window_start: i64,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<u64> {
        self.write(|tx, now| {
            let (pk, sk) = (keys::rate_pk(key), keys::rate_sk(window_start));
            let count = get::<CounterItem>(tx, &pk, &sk, now)?.map_or(0, |c| c.count) + 1;
            put(
                tx,
                (&pk, &sk),
                &CounterItem { count },
                Some(expires_at.timestamp()),
                false,
                now,
            )?;
            Ok(count)
        })
    }

    async fn count(&self, key: &str, window_start: i64) -> StoreResult<u64> {
        let item: Option<CounterItem> =
            self.read(|c, now| get(c, &keys::rate_pk(key), &keys::rate_sk(window_start), now))?;
        Ok(item.map_or(0, |c| c.count))
    }

    async fn reset(&self, key: &str, window_start: i64) -> StoreResult<()> {
        self.write(|tx, _| delete(tx, &keys::rate_pk(key), &keys::rate_sk(window_start)).map(drop))
    }
}
