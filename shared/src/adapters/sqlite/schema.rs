//! The embedded store's schema: the current layout, and the move of earlier layouts into it.

use std::path::Path;

use rusqlite::Transaction;
use serde_json::Value;

use super::{corrupt, db_err, store};
use crate::adapters::table::{Item, EXPIRES_AT, PK, SK};
use crate::ports::StoreResult;

/// Schema version stored in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS items (
    pk TEXT NOT NULL,
    sk TEXT NOT NULL,
    body TEXT NOT NULL,
    gsi1pk TEXT,
    gsi1sk TEXT,
    gsi2pk TEXT,
    gsi2sk TEXT,
    PRIMARY KEY (pk, sk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_gsi1 ON items (gsi1pk, gsi1sk, pk, sk) WHERE gsi1pk IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_gsi2 ON items (gsi2pk, gsi2sk, pk, sk) WHERE gsi2pk IS NOT NULL;
";

/// Brings the database to the current layout (in the caller's transaction).
pub(super) fn migrate(tx: &Transaction<'_>) -> StoreResult<()> {
    let version: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(db_err)?;
    if version < SCHEMA_VERSION {
        migrate_v1(tx)?;
        tx.execute_batch(SCHEMA).map_err(db_err)?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(db_err)?;
    }
    Ok(())
}

/// Moves rows of the first layout (body without keys, separate `expires_at`) into the current
/// one, so data directories created by earlier versions keep their users and tenants.
fn migrate_v1(tx: &Transaction<'_>) -> StoreResult<()> {
    let has_old: bool = tx
        .query_row(
            "SELECT COUNT(*) FROM pragma_table_info('items') WHERE name = 'expires_at'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(db_err)?
        > 0;
    if !has_old {
        return Ok(());
    }
    tx.execute_batch("ALTER TABLE items RENAME TO items_v1;")
        .map_err(db_err)?;
    tx.execute_batch(SCHEMA).map_err(db_err)?;
    let rows: Vec<(String, String, String, Option<i64>)> = {
        let mut stmt = tx
            .prepare("SELECT pk, sk, body, expires_at FROM items_v1")
            .map_err(db_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)?
    };
    for (pk, sk, body, expires) in rows {
        let mut item: Item = serde_json::from_str(&body).map_err(corrupt)?;
        item.insert(PK.into(), Value::String(pk));
        item.insert(SK.into(), Value::String(sk));
        if let Some(e) = expires {
            item.insert(EXPIRES_AT.into(), Value::from(e));
        }
        store(tx, &item)?;
    }
    tx.execute_batch("DROP TABLE items_v1;").map_err(db_err)
}

#[cfg(unix)]
pub(super) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
pub(super) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}
