//! The DynamoDB table backend. Items map JSON ↔ attribute values one to one (top-level
//! nulls are simply not stored, as DynamoDB style wants); conditions become condition
//! expressions; SDK errors become store errors: a failed condition or a cancelled
//! transaction is `Conflict`, throttling and transport trouble is `Unavailable` (retryable),
//! anything else `Internal` — never SDK text for clients.

mod attrs;
mod errors;
mod expr;
mod schema;

use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, DeleteRequest, Put, ReturnValue, TransactWriteItem,
    Update as DynUpdate, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use serde_json::Value;

use super::table::{
    batches, Cond, Item, Page, Query, SkCond, TableBackend, Update, Write, MAX_BATCH_WRITES,
    MAX_TRANSACTION_WRITES, PK, SK,
};
use crate::ports::{StoreError, StoreResult};

use attrs::{check_size, from_map, key, to_map, AttrMap};
pub use attrs::{from_attr, to_attr, MAX_ITEM_BYTES};
use errors::{build_err, map_err, map_transact_err};
use expr::Expr;
pub use schema::{create_table, ensure_table};

/// Unprocessed batch items mean throttling: sent eight times in all, 50 ms apart doubling to
/// 1.6 s, before giving up.
const UNPROCESSED: crate::retry::Policy = crate::retry::Policy {
    attempts: 8,
    first: Duration::from_millis(50),
    cap: Duration::from_millis(1600),
    jitter: false,
};

/// The single table on DynamoDB.
#[derive(Debug, Clone)]
pub struct DynamoTable {
    client: Client,
    table: String,
}

impl DynamoTable {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn table_name(&self) -> &str {
        &self.table
    }
}

// ------------------------------------------------------------------ backend

impl DynamoTable {
    fn transact_item(&self, w: Write) -> StoreResult<TransactWriteItem> {
        let mut x = Expr::default();
        let item = match w {
            Write::Put { item, cond } => {
                check_size(&item)?;
                let c = x.cond(&cond);
                TransactWriteItem::builder()
                    .put(
                        Put::builder()
                            .table_name(&self.table)
                            .set_item(Some(to_map(&item)))
                            .set_condition_expression(c)
                            .set_expression_attribute_names(x.names())
                            .set_expression_attribute_values(x.values())
                            .build()
                            .map_err(build_err)?,
                    )
                    .build()
            }
            Write::Update {
                pk,
                sk,
                update,
                cond,
            } => {
                let Some(u) = x.update(&update) else {
                    // Nothing to change: only the condition matters.
                    return self.transact_item(Write::Check { pk, sk, cond });
                };
                let c = x.cond(&cond);
                TransactWriteItem::builder()
                    .update(
                        DynUpdate::builder()
                            .table_name(&self.table)
                            .set_key(Some(key(&pk, &sk)))
                            .update_expression(u)
                            .set_condition_expression(c)
                            .set_expression_attribute_names(x.names())
                            .set_expression_attribute_values(x.values())
                            .build()
                            .map_err(build_err)?,
                    )
                    .build()
            }
            Write::Delete { pk, sk, cond } => {
                let c = x.cond(&cond);
                TransactWriteItem::builder()
                    .delete(
                        Delete::builder()
                            .table_name(&self.table)
                            .set_key(Some(key(&pk, &sk)))
                            .set_condition_expression(c)
                            .set_expression_attribute_names(x.names())
                            .set_expression_attribute_values(x.values())
                            .build()
                            .map_err(build_err)?,
                    )
                    .build()
            }
            Write::Check { pk, sk, cond } => {
                let c = x.cond(&cond).unwrap_or_else(|| {
                    format!(
                        "attribute_exists({0}) OR attribute_not_exists({0})",
                        x.name(PK)
                    )
                });
                TransactWriteItem::builder()
                    .condition_check(
                        ConditionCheck::builder()
                            .table_name(&self.table)
                            .set_key(Some(key(&pk, &sk)))
                            .condition_expression(c)
                            .set_expression_attribute_names(x.names())
                            .set_expression_attribute_values(x.values())
                            .build()
                            .map_err(build_err)?,
                    )
                    .build()
            }
        };
        Ok(item)
    }
}

#[async_trait]
impl TableBackend for DynamoTable {
    async fn get(&self, pk: &str, sk: &str) -> StoreResult<Option<Item>> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| map_err("GetItem", e))?;
        Ok(out.item.as_ref().map(from_map))
    }

    async fn put(&self, item: Item, cond: Cond) -> StoreResult<()> {
        check_size(&item)?;
        let mut x = Expr::default();
        let c = x.cond(&cond);
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(to_map(&item)))
            .set_condition_expression(c)
            .set_expression_attribute_names(x.names())
            .set_expression_attribute_values(x.values())
            .send()
            .await
            .map_err(|e| map_err("PutItem", e))?;
        Ok(())
    }

    async fn update(&self, pk: &str, sk: &str, update: Update, cond: Cond) -> StoreResult<Item> {
        let mut x = Expr::default();
        let Some(u) = x.update(&update) else {
            return self
                .get(pk, sk)
                .await?
                .ok_or_else(|| StoreError::NotFound(format!("{pk}/{sk}")));
        };
        let c = x.cond(&cond);
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression(u)
            .set_condition_expression(c)
            .set_expression_attribute_names(x.names())
            .set_expression_attribute_values(x.values())
            .return_values(ReturnValue::AllNew)
            .send()
            .await
            .map_err(|e| map_err("UpdateItem", e))?;
        Ok(out.attributes.as_ref().map(from_map).unwrap_or_default())
    }

    async fn delete(&self, pk: &str, sk: &str, cond: Cond) -> StoreResult<bool> {
        let mut x = Expr::default();
        let c = x.cond(&cond);
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .set_condition_expression(c)
            .set_expression_attribute_names(x.names())
            .set_expression_attribute_values(x.values())
            .return_values(ReturnValue::AllOld)
            .send()
            .await
            .map_err(|e| map_err("DeleteItem", e))?;
        Ok(out.attributes.is_some_and(|a| !a.is_empty()))
    }

    async fn query(&self, q: Query) -> StoreResult<Page> {
        let mut x = Expr::default();
        let (pk_attr, sk_attr) = match q.index {
            None => (PK, SK),
            Some(i) => (i.pk(), i.sk()),
        };
        let pk_name = x.name(pk_attr);
        let pk_val = x.value(AttributeValue::S(q.pk.clone()));
        let mut key_cond = format!("{pk_name} = {pk_val}");
        // Declare the sort-key name only when used: DynamoDB rejects unused names.
        let sk_name = if q.sk == SkCond::All {
            String::new()
        } else {
            x.name(sk_attr)
        };
        match &q.sk {
            SkCond::All => {}
            SkCond::Prefix(p) => {
                let v = x.value(AttributeValue::S(p.clone()));
                key_cond.push_str(&format!(" AND begins_with({sk_name}, {v})"));
            }
            SkCond::Below(b) => {
                let v = x.value(AttributeValue::S(b.clone()));
                key_cond.push_str(&format!(" AND {sk_name} < {v}"));
            }
            SkCond::Between(a, b) => {
                let (va, vb) = (
                    x.value(AttributeValue::S(a.clone())),
                    x.value(AttributeValue::S(b.clone())),
                );
                key_cond.push_str(&format!(" AND {sk_name} BETWEEN {va} AND {vb}"));
            }
        }
        let start = q.start_after.as_ref().map(|s| {
            let mut attrs = vec![PK, SK];
            if let Some(i) = q.index {
                attrs.extend([i.pk(), i.sk()]);
            }
            attrs
                .into_iter()
                .filter_map(|a| s.get(a).map(|v| (a.to_owned(), to_attr(v))))
                .collect::<AttrMap>()
        });
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .set_index_name(q.index.map(|i| i.name().to_owned()))
            .key_condition_expression(key_cond)
            .set_expression_attribute_names(x.names())
            .set_expression_attribute_values(x.values())
            .scan_index_forward(q.forward)
            // Reads of the table see every write before them (indexes cannot).
            .consistent_read(q.index.is_none())
            .set_limit(q.limit.map(|l| i32::try_from(l).unwrap_or(i32::MAX)))
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| map_err("Query", e))?;
        Ok(Page {
            items: out.items.unwrap_or_default().iter().map(from_map).collect(),
            last: out.last_evaluated_key.as_ref().map(from_map),
        })
    }

    async fn scan(&self, pk_prefix: &str, sk: &str) -> StoreResult<Vec<Item>> {
        let mut x = Expr::default();
        let (pk_name, sk_name) = (x.name(PK), x.name(SK));
        let (p, s) = (
            x.value(AttributeValue::S(pk_prefix.into())),
            x.value(AttributeValue::S(sk.into())),
        );
        let filter = format!("begins_with({pk_name}, {p}) AND {sk_name} = {s}");
        let mut out = Vec::new();
        let mut start: Option<AttrMap> = None;
        loop {
            let page = self
                .client
                .scan()
                .table_name(&self.table)
                .filter_expression(&filter)
                .set_expression_attribute_names(x.names())
                .set_expression_attribute_values(x.values())
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| map_err("Scan", e))?;
            out.extend(page.items.unwrap_or_default().iter().map(from_map));
            match page.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => break,
            }
        }
        out.sort_by(|a, b| {
            let k = |i: &Item| {
                (
                    i.get(PK).and_then(Value::as_str).map(str::to_owned),
                    i.get(SK).and_then(Value::as_str).map(str::to_owned),
                )
            };
            k(a).cmp(&k(b))
        });
        Ok(out)
    }

    async fn transact(&self, writes: Vec<Write>) -> StoreResult<()> {
        if writes.len() > MAX_TRANSACTION_WRITES {
            return Err(StoreError::Internal(format!(
                "{} writes exceed one transaction",
                writes.len()
            )));
        }
        let items = writes
            .into_iter()
            .map(|w| self.transact_item(w))
            .collect::<StoreResult<Vec<_>>>()?;
        self.client
            .transact_write_items()
            .set_transact_items(Some(items))
            .send()
            .await
            .map_err(map_transact_err)?;
        Ok(())
    }

    async fn batch_delete(&self, keys: Vec<(String, String)>) -> StoreResult<()> {
        for chunk in batches(keys, MAX_BATCH_WRITES) {
            let mut pending = chunk
                .iter()
                .map(|(pk, sk)| {
                    DeleteRequest::builder()
                        .set_key(Some(key(pk, sk)))
                        .build()
                        .map(|d| WriteRequest::builder().delete_request(d).build())
                        .map_err(build_err)
                })
                .collect::<StoreResult<Vec<_>>>()?;
            let mut attempt = 0;
            while !pending.is_empty() {
                if attempt >= UNPROCESSED.attempts {
                    return Err(StoreError::Unavailable(format!(
                        "{} deletes left unprocessed",
                        pending.len()
                    )));
                }
                if attempt > 0 {
                    UNPROCESSED.wait(attempt).await;
                }
                attempt += 1;
                let out = self
                    .client
                    .batch_write_item()
                    .request_items(&self.table, std::mem::take(&mut pending))
                    .send()
                    .await
                    .map_err(|e| map_err("BatchWriteItem", e))?;
                pending = out
                    .unprocessed_items
                    .and_then(|mut m| m.remove(&self.table))
                    .unwrap_or_default();
            }
        }
        Ok(())
    }
}
