use super::*;
use crate::adapters::table::{item_of, EXPIRES_AT};

#[test]
fn a_prefix_ends_at_its_last_character_plus_one() {
    assert_eq!(prefix_end("DOMAIN#").as_deref(), Some("DOMAIN$"));
    assert_eq!(prefix_end("a\u{10FFFF}").as_deref(), Some("b"));
    assert_eq!(prefix_end("x\u{D7FF}").as_deref(), Some("x\u{E000}"));
    assert_eq!(prefix_end("\u{10FFFF}"), None);
    assert_eq!(prefix_end(""), None);
}

#[tokio::test]
async fn a_prefix_query_returns_the_keys_that_start_with_it_and_no_other() {
    let dir = tempfile::tempdir().expect("tmp");
    let table = SqliteTable::open(dir.path()).expect("open");
    let keys = [
        "DOMAIN",
        "DOMAIN#",
        "DOMAIN#a",
        "DOMAIN#\u{10FFFF}",
        "DOMAIN$",
        "DOMAIM#",
        "E",
    ];
    for sk in keys {
        let item = item_of("P", sk, &serde_json::json!({})).expect("item");
        table.put(item, Cond::Always).await.expect("put");
    }
    let page = table
        .query(Query::partition("P").sk(SkCond::Prefix("DOMAIN#".into())))
        .await
        .expect("query");
    let got: Vec<&str> = page.items.iter().filter_map(|i| i[SK].as_str()).collect();
    assert_eq!(got, ["DOMAIN#", "DOMAIN#a", "DOMAIN#\u{10FFFF}"]);
}

#[tokio::test]
async fn first_layout_databases_are_migrated_in_place() {
    let dir = tempfile::tempdir().expect("tmp");
    {
        let conn = Connection::open(dir.path().join(DB_FILE)).expect("open");
        conn.execute_batch(
            "CREATE TABLE items (pk TEXT NOT NULL, sk TEXT NOT NULL, body TEXT NOT NULL, expires_at INTEGER, PRIMARY KEY (pk, sk)) WITHOUT ROWID;
             INSERT INTO items VALUES ('TENANT#demo', 'TENANT', '{\"id\":\"demo\",\"name\":\"Demo\"}', NULL);
             INSERT INTO items VALUES ('TENANT#demo', 'REVOKED#j', '{\"jti\":\"j\"}', 1900000000);",
        )
        .expect("v1 schema");
    }
    let table = SqliteTable::open(dir.path()).expect("migrates");
    let tenant = table
        .get("TENANT#demo", "TENANT")
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(tenant["name"], "Demo");
    assert_eq!(tenant[PK], "TENANT#demo");
    let revoked = table
        .get("TENANT#demo", "REVOKED#j")
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(revoked[EXPIRES_AT], 1_900_000_000);
    drop(table);
    // Opening again is a no-op.
    let table = SqliteTable::open(dir.path()).expect("reopen");
    assert!(table
        .get("TENANT#demo", "TENANT")
        .await
        .expect("get")
        .is_some());
}

#[tokio::test]
async fn a_replaced_value_does_not_stay_in_the_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let table = SqliteTable::open(dir.path()).expect("open");
    let secret = "Zq9-typed-secret-Zq9";
    let padding = "x".repeat(3_000);
    for k in 0..20 {
        let body = serde_json::json!({ "query": format!("{secret} {padding}") });
        let item = item_of("P", &format!("S{k}"), &body).expect("item");
        table.put(item, Cond::Always).await.expect("put");
    }
    for k in 0..20 {
        let body = serde_json::json!({ "query": "[secret]" });
        let item = item_of("P", &format!("S{k}"), &body).expect("item");
        table.put(item, Cond::Always).await.expect("put");
    }
    table
        .lock()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .expect("checkpoint");
    let raw = std::fs::read(dir.path().join(DB_FILE)).expect("file");
    let found = raw.windows(secret.len()).any(|w| w == secret.as_bytes());
    assert!(!found, "the replaced value is still in the file");
    let on: i64 = table
        .lock()
        .query_row("PRAGMA secure_delete", [], |r| r.get(0))
        .expect("pragma");
    assert_eq!(on, 1);
}
