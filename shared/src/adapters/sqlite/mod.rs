//! The embedded table backend: the single-table layout in one SQLite file (or in memory).
//! Items are stored whole as JSON with their key and index attributes copied into columns.
//! Every write runs in an immediate transaction, so conditions are checked and applied
//! atomically — across threads and across processes sharing the file (WAL mode, busy timeout).
//! Commits do not wait for the disk (`synchronous = NORMAL`); SQLite copies the log into the
//! database itself (its automatic checkpoints, every 1 000 pages, and when the last connection
//! closes). This store serves local-api and the tools only; no function links it.

mod schema;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use rusqlite::types::Value as SqlValue;
use rusqlite::{
    params, params_from_iter, Connection, OptionalExtension, Transaction, TransactionBehavior,
};
use serde_json::Value;

use super::table::{
    key_of, Cond, Index, Item, Page, Query, SkCond, TableBackend, Update, Write, PK, SK,
};
use crate::ports::{StoreError, StoreResult};

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "agent.db";

/// The single table on SQLite.
pub struct SqliteTable {
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteTable")
    }
}

pub(super) fn db_err(e: rusqlite::Error) -> StoreError {
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

pub(super) fn corrupt(e: serde_json::Error) -> StoreError {
    StoreError::Internal(format!("corrupt item: {e}"))
}

fn conflict() -> StoreError {
    StoreError::Conflict("condition failed".into())
}

impl SqliteTable {
    /// Opens (creating if needed) the database file in `data_dir`, readable by its owner only.
    pub fn open(data_dir: &Path) -> StoreResult<Self> {
        schema::create_private_dir(data_dir).map_err(|e| {
            StoreError::Internal(format!("cannot create {}: {e}", data_dir.display()))
        })?;
        let conn = Connection::open(data_dir.join(DB_FILE)).map_err(db_err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(db_err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(db_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(db_err)?;
        Self::init(conn)
    }

    /// A private in-memory database, gone when dropped.
    pub fn in_memory() -> StoreResult<Self> {
        Self::init(Connection::open_in_memory().map_err(db_err)?)
    }

    fn init(mut conn: Connection) -> StoreResult<Self> {
        // Queries differ by index, key condition, order and limit: room for all of them, so
        // the cache keeps them instead of compiling the same ones again (rusqlite keeps 16).
        conn.set_prepared_statement_cache_capacity(128);
        // A value scrubbed or deleted (a typed secret replaced by `[secret]`) is overwritten
        // with zeros, not left in a free page of the file.
        conn.pragma_update(None, "secure_delete", "ON")
            .map_err(db_err)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db_err)?;
        schema::migrate(&tx)?;
        tx.commit().map_err(db_err)?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (transactions roll
        // back on drop), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> StoreResult<T>) -> StoreResult<T> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db_err)?;
        let out = f(&tx)?;
        tx.commit().map_err(db_err)?;
        Ok(out)
    }
}

fn load(conn: &Connection, pk: &str, sk: &str) -> StoreResult<Option<Item>> {
    let body: Option<String> = conn
        .prepare_cached("SELECT body FROM items WHERE pk = ?1 AND sk = ?2")
        .and_then(|mut stmt| stmt.query_row(params![pk, sk], |r| r.get(0)).optional())
        .map_err(db_err)?;
    body.map(|b| serde_json::from_str(&b).map_err(corrupt))
        .transpose()
}

/// The least string above every string that starts with `prefix` (none when every character
/// is the last one).
fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

fn text(item: &Item, name: &str) -> Option<String> {
    item.get(name).and_then(Value::as_str).map(str::to_owned)
}

pub(super) fn store(tx: &Transaction<'_>, item: &Item) -> StoreResult<()> {
    let (pk, sk) = key_of(item).ok_or_else(|| StoreError::Internal("item without PK/SK".into()))?;
    let body = serde_json::to_string(item).map_err(corrupt)?;
    tx.prepare_cached(
        "INSERT OR REPLACE INTO items (pk, sk, body, gsi1pk, gsi1sk, gsi2pk, gsi2sk) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .and_then(|mut stmt| stmt.execute(params![
            pk,
            sk,
            body,
            text(item, Index::Gsi1.pk()),
            text(item, Index::Gsi1.sk()),
            text(item, Index::Gsi2.pk()),
            text(item, Index::Gsi2.sk()),
        ]))
    .map_err(db_err)?;
    Ok(())
}

fn remove(tx: &Transaction<'_>, pk: &str, sk: &str) -> StoreResult<()> {
    tx.prepare_cached("DELETE FROM items WHERE pk = ?1 AND sk = ?2")
        .and_then(|mut stmt| stmt.execute(params![pk, sk]))
        .map_err(db_err)?;
    Ok(())
}

fn apply(current: Option<Item>, pk: &str, sk: &str, update: Update) -> Item {
    let mut item = current.unwrap_or_default();
    item.insert(PK.into(), Value::String(pk.to_owned()));
    item.insert(SK.into(), Value::String(sk.to_owned()));
    for (k, v) in update.set {
        item.insert(k, v);
    }
    for k in update.remove {
        item.remove(&k);
    }
    for (k, n) in update.add {
        let now = item.get(&k).and_then(Value::as_i64).unwrap_or(0);
        item.insert(k, Value::from(now + n));
    }
    item
}

fn do_write(tx: &Transaction<'_>, w: Write) -> StoreResult<bool> {
    let (pk, sk) = match &w {
        Write::Put { item, .. } => {
            key_of(item).ok_or_else(|| StoreError::Internal("item without PK/SK".into()))?
        }
        Write::Update { pk, sk, .. }
        | Write::Delete { pk, sk, .. }
        | Write::Check { pk, sk, .. } => (pk.clone(), sk.clone()),
    };
    let current = load(tx, &pk, &sk)?;
    let cond = match &w {
        Write::Put { cond, .. }
        | Write::Update { cond, .. }
        | Write::Delete { cond, .. }
        | Write::Check { cond, .. } => cond,
    };
    if !cond.holds(current.as_ref()) {
        return Err(conflict());
    }
    match w {
        Write::Put { item, .. } => store(tx, &item)?,
        Write::Update { update, .. } => store(tx, &apply(current.clone(), &pk, &sk, update))?,
        Write::Delete { .. } => remove(tx, &pk, &sk)?,
        Write::Check { .. } => {}
    }
    Ok(current.is_some())
}

#[async_trait]
impl TableBackend for SqliteTable {
    async fn get(&self, pk: &str, sk: &str) -> StoreResult<Option<Item>> {
        load(&self.lock(), pk, sk)
    }

    async fn put(&self, item: Item, cond: Cond) -> StoreResult<()> {
        self.write(|tx| do_write(tx, Write::Put { item, cond }).map(drop))
    }

    async fn update(&self, pk: &str, sk: &str, update: Update, cond: Cond) -> StoreResult<Item> {
        self.write(|tx| {
            let current = load(tx, pk, sk)?;
            if !cond.holds(current.as_ref()) {
                return Err(conflict());
            }
            let item = apply(current, pk, sk, update);
            store(tx, &item)?;
            Ok(item)
        })
    }

    async fn delete(&self, pk: &str, sk: &str, cond: Cond) -> StoreResult<bool> {
        self.write(|tx| {
            do_write(
                tx,
                Write::Delete {
                    pk: pk.to_owned(),
                    sk: sk.to_owned(),
                    cond,
                },
            )
        })
    }

    async fn query(&self, q: Query) -> StoreResult<Page> {
        let (pk_col, sk_col) = match q.index {
            None => ("pk", "sk"),
            Some(Index::Gsi1) => ("gsi1pk", "gsi1sk"),
            Some(Index::Gsi2) => ("gsi2pk", "gsi2sk"),
        };
        let mut sql = format!("SELECT body FROM items WHERE {pk_col} = ?");
        let mut args: Vec<SqlValue> = vec![SqlValue::Text(q.pk.clone())];
        match &q.sk {
            SkCond::All => {}
            // A range the key index can seek (text compares as UTF-8 bytes, in code point
            // order): the keys from the prefix up to the first that does not start with it.
            SkCond::Prefix(p) => {
                sql.push_str(&format!(" AND {sk_col} >= ?"));
                args.push(SqlValue::Text(p.clone()));
                if let Some(end) = prefix_end(p) {
                    sql.push_str(&format!(" AND {sk_col} < ?"));
                    args.push(SqlValue::Text(end));
                }
            }
            SkCond::Below(b) => {
                sql.push_str(&format!(" AND {sk_col} < ?"));
                args.push(SqlValue::Text(b.clone()));
            }
            SkCond::Between(a, b) => {
                sql.push_str(&format!(" AND {sk_col} BETWEEN ? AND ?"));
                args.push(SqlValue::Text(a.clone()));
                args.push(SqlValue::Text(b.clone()));
            }
        }
        let (cmp, dir) = if q.forward {
            (">", "ASC")
        } else {
            ("<", "DESC")
        };
        if let Some(start) = &q.start_after {
            let (spk, ssk) =
                key_of(start).ok_or_else(|| StoreError::Internal("bad page cursor".into()))?;
            sql.push_str(&format!(" AND ({sk_col}, pk, sk) {cmp} (?, ?, ?)"));
            args.push(SqlValue::Text(
                text(start, q.index.map_or(SK, Index::sk)).unwrap_or_default(),
            ));
            args.push(SqlValue::Text(spk));
            args.push(SqlValue::Text(ssk));
        }
        sql.push_str(&format!(" ORDER BY {sk_col} {dir}, pk {dir}, sk {dir}"));
        let limit = q.limit.unwrap_or(usize::MAX);
        if q.limit.is_some() {
            sql.push_str(&format!(" LIMIT {}", limit.saturating_add(1)));
        }
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(&sql).map_err(db_err)?;
        let rows = stmt
            .query_map(params_from_iter(args), |r| r.get::<_, String>(0))
            .map_err(db_err)?;
        let mut items: Vec<Item> = Vec::new();
        for row in rows {
            items.push(serde_json::from_str(&row.map_err(db_err)?).map_err(corrupt)?);
        }
        let last = if items.len() > limit {
            items.truncate(limit);
            items.last().cloned()
        } else {
            None
        };
        Ok(Page { items, last })
    }

    async fn scan(&self, pk_prefix: &str, sk: &str) -> StoreResult<Vec<Item>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached("SELECT body FROM items WHERE substr(pk, 1, length(?1)) = ?1 AND sk = ?2 ORDER BY pk, sk")
            .map_err(db_err)?;
        let rows = stmt
            .query_map(params![pk_prefix, sk], |r| r.get::<_, String>(0))
            .map_err(db_err)?;
        rows.map(|b| serde_json::from_str(&b.map_err(db_err)?).map_err(corrupt))
            .collect()
    }

    async fn transact(&self, writes: Vec<Write>) -> StoreResult<()> {
        self.write(|tx| {
            for w in writes {
                do_write(tx, w)?;
            }
            Ok(())
        })
    }

    async fn batch_delete(&self, keys: Vec<(String, String)>) -> StoreResult<()> {
        self.write(|tx| {
            for (pk, sk) in keys {
                remove(tx, &pk, &sk)?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests;
