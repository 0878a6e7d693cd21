//! The DynamoDB table backend. Items map JSON ↔ attribute values one to one (top-level
//! nulls are simply not stored, as DynamoDB style wants); conditions become condition
//! expressions; SDK errors become store errors: a failed condition or a cancelled
//! transaction is `Conflict`, throttling and transport trouble is `Unavailable` (retryable),
//! anything else `Internal` — never SDK text for clients.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, DeleteRequest, Put, ReturnValue, TransactWriteItem,
    Update as DynUpdate, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use serde_json::{Map, Number, Value};

use super::table::{
    batches, Cond, Index, Item, Page, Query, SkCond, TableBackend, Update, Write, EXPIRES_AT,
    MAX_BATCH_WRITES, MAX_TRANSACTION_WRITES, PK, SK,
};
use crate::ports::{StoreError, StoreResult};

/// Largest item written (DynamoDB refuses above 400 KB; keep a margin for attribute names).
pub const MAX_ITEM_BYTES: usize = 380 * 1024;

/// How often unprocessed batch items are re-sent before giving up.
const BATCH_ATTEMPTS: u32 = 8;

type AttrMap = HashMap<String, AttributeValue>;

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

// ------------------------------------------------------------------ value conversion

/// JSON → attribute value.
pub fn to_attr(v: &Value) -> AttributeValue {
    match v {
        Value::Null => AttributeValue::Null(true),
        Value::Bool(b) => AttributeValue::Bool(*b),
        Value::Number(n) => AttributeValue::N(n.to_string()),
        Value::String(s) => AttributeValue::S(s.clone()),
        Value::Array(a) => AttributeValue::L(a.iter().map(to_attr).collect()),
        Value::Object(o) => {
            AttributeValue::M(o.iter().map(|(k, v)| (k.clone(), to_attr(v))).collect())
        }
    }
}

/// Attribute value → JSON.
pub fn from_attr(a: &AttributeValue) -> Value {
    match a {
        AttributeValue::S(s) => Value::String(s.clone()),
        AttributeValue::N(n) => parse_number(n),
        AttributeValue::Bool(b) => Value::Bool(*b),
        AttributeValue::L(l) => Value::Array(l.iter().map(from_attr).collect()),
        AttributeValue::M(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), from_attr(v))).collect())
        }
        AttributeValue::Ss(s) => Value::Array(s.iter().cloned().map(Value::String).collect()),
        AttributeValue::Ns(n) => Value::Array(n.iter().map(|x| parse_number(x)).collect()),
        _ => Value::Null,
    }
}

fn parse_number(n: &str) -> Value {
    if let Ok(i) = n.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(u) = n.parse::<u64>() {
        return Value::from(u);
    }
    n.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

fn to_map(item: &Item) -> AttrMap {
    item.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), to_attr(v)))
        .collect()
}

fn from_map(map: &AttrMap) -> Item {
    map.iter()
        .map(|(k, v)| (k.clone(), from_attr(v)))
        .collect::<Map<_, _>>()
}

fn key(pk: &str, sk: &str) -> AttrMap {
    HashMap::from([
        (PK.to_owned(), AttributeValue::S(pk.to_owned())),
        (SK.to_owned(), AttributeValue::S(sk.to_owned())),
    ])
}

fn check_size(item: &Item) -> StoreResult<()> {
    let size = serde_json::to_vec(item)
        .map(|b| b.len())
        .unwrap_or(usize::MAX);
    if size > MAX_ITEM_BYTES {
        return Err(StoreError::Internal(format!(
            "item of {size} bytes exceeds {MAX_ITEM_BYTES}; large payloads belong in the snapshot store"
        )));
    }
    Ok(())
}

// ------------------------------------------------------------------ expressions

/// Builds expression attribute names and values.
#[derive(Default)]
struct Expr {
    names: HashMap<String, String>,
    values: AttrMap,
}

impl Expr {
    fn name(&mut self, attr: &str) -> String {
        if let Some((k, _)) = self.names.iter().find(|(_, v)| v.as_str() == attr) {
            return k.clone();
        }
        let k = format!("#n{}", self.names.len());
        self.names.insert(k.clone(), attr.to_owned());
        k
    }

    fn value(&mut self, v: AttributeValue) -> String {
        let k = format!(":v{}", self.values.len());
        self.values.insert(k.clone(), v);
        k
    }

    /// The condition as an expression; `None` means "always true".
    fn cond(&mut self, c: &Cond) -> Option<String> {
        match c {
            Cond::Always => None,
            Cond::Missing => {
                let pk = self.name(PK);
                Some(format!("attribute_not_exists({pk})"))
            }
            Cond::Absent { now } => {
                let (pk, exp) = (self.name(PK), self.name(EXPIRES_AT));
                let now = self.value(AttributeValue::N(now.to_string()));
                Some(format!("(attribute_not_exists({pk}) OR {exp} <= {now})"))
            }
            Cond::Live { now } => {
                let (pk, exp) = (self.name(PK), self.name(EXPIRES_AT));
                let now = self.value(AttributeValue::N(now.to_string()));
                Some(format!(
                    "(attribute_exists({pk}) AND (attribute_not_exists({exp}) OR {exp} > {now}))"
                ))
            }
            Cond::Eq(attr, v) => {
                let (n, v) = (self.name(attr), self.value(to_attr(v)));
                Some(format!("{n} = {v}"))
            }
            Cond::MissingOrAtMost(attr, at_most) => {
                let n = self.name(attr);
                let v = self.value(AttributeValue::N(at_most.to_string()));
                Some(format!("(attribute_not_exists({n}) OR {n} <= {v})"))
            }
            Cond::AtLeast(attr, at_least) => {
                let n = self.name(attr);
                let v = self.value(AttributeValue::N(at_least.to_string()));
                Some(format!("{n} >= {v}"))
            }
            Cond::All(cs) => {
                let parts: Vec<String> = cs.iter().filter_map(|c| self.cond(c)).collect();
                (!parts.is_empty()).then(|| format!("({})", parts.join(" AND ")))
            }
            Cond::Any(cs) => {
                let parts: Vec<Option<String>> = cs.iter().map(|c| self.cond(c)).collect();
                if parts.iter().any(Option::is_none) {
                    return None;
                }
                let parts: Vec<String> = parts.into_iter().flatten().collect();
                Some(if parts.is_empty() {
                    "(1 = 0)".into()
                } else {
                    format!("({})", parts.join(" OR "))
                })
            }
        }
    }

    fn update(&mut self, u: &Update) -> Option<String> {
        let mut sets = Vec::new();
        let mut removes: Vec<String> = u.remove.iter().map(|r| self.name(r)).collect();
        for (k, v) in &u.set {
            let n = self.name(k);
            if v.is_null() {
                removes.push(n);
            } else {
                let val = self.value(to_attr(v));
                sets.push(format!("{n} = {val}"));
            }
        }
        let adds: Vec<String> = u
            .add
            .iter()
            .map(|(k, by)| {
                let n = self.name(k);
                let v = self.value(AttributeValue::N(by.to_string()));
                format!("{n} {v}")
            })
            .collect();
        let mut parts = Vec::new();
        if !sets.is_empty() {
            parts.push(format!("SET {}", sets.join(", ")));
        }
        if !removes.is_empty() {
            parts.push(format!("REMOVE {}", removes.join(", ")));
        }
        if !adds.is_empty() {
            parts.push(format!("ADD {}", adds.join(", ")));
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    fn values(&self) -> Option<AttrMap> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }
}

// ------------------------------------------------------------------ errors

const RETRYABLE: &[&str] = &[
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionInProgressException",
];

/// Maps an SDK error: failed conditions are conflicts, throttling and transport failures are
/// retryable, the rest internal.
fn map_err<E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    op: &str,
    e: SdkError<E, R>,
) -> StoreError {
    match &e {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) => {
            return StoreError::Unavailable(format!("{op}: DynamoDB unreachable"));
        }
        SdkError::ResponseError(_) => {
            return StoreError::Unavailable(format!("{op}: malformed response"))
        }
        _ => {}
    }
    match e.code() {
        Some("ConditionalCheckFailedException") => {
            StoreError::Conflict(format!("{op}: condition failed"))
        }
        Some(code) if RETRYABLE.contains(&code) => StoreError::Unavailable(format!("{op}: {code}")),
        Some("ResourceNotFoundException") => StoreError::Internal(format!("{op}: table not found")),
        Some(code) => StoreError::Internal(format!("{op}: {code}: {}", e.message().unwrap_or(""))),
        None => StoreError::Internal(format!("{op}: {e:?}")),
    }
}

fn map_transact_err<R: std::fmt::Debug>(e: SdkError<TransactWriteItemsError, R>) -> StoreError {
    if let Some(TransactWriteItemsError::TransactionCanceledException(t)) = e.as_service_error() {
        let codes: Vec<&str> = t
            .cancellation_reasons()
            .iter()
            .filter_map(|r| r.code())
            .collect();
        if codes
            .iter()
            .any(|c| *c == "ThrottlingError" || *c == "ProvisionedThroughputExceeded")
        {
            return StoreError::Unavailable("transaction throttled".into());
        }
        // ConditionalCheckFailed, or TransactionConflict with a concurrent writer.
        return StoreError::Conflict(format!("transaction cancelled: {codes:?}"));
    }
    map_err("TransactWriteItems", e)
}

fn build_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Internal(format!("request build: {e}"))
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
                if attempt >= BATCH_ATTEMPTS {
                    return Err(StoreError::Unavailable(format!(
                        "{} deletes left unprocessed",
                        pending.len()
                    )));
                }
                if attempt > 0 {
                    // Unprocessed items mean throttling: back off exponentially.
                    tokio::time::sleep(Duration::from_millis(25 << attempt.min(6))).await;
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

/// Creates the table with its key schema, both indexes and TTL on `expiresAt` (tests, local
/// set-up); `template.yaml` declares the same for AWS.
pub async fn create_table(client: &Client, table: &str) -> StoreResult<()> {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType,
        Projection, ProjectionType, ScalarAttributeType,
    };
    let attr = |n: &str| {
        AttributeDefinition::builder()
            .attribute_name(n)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .map_err(build_err)
    };
    let key_el = |n: &str, t: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(n)
            .key_type(t)
            .build()
            .map_err(build_err)
    };
    let mut req = client
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key_el(PK, KeyType::Hash)?)
        .key_schema(key_el(SK, KeyType::Range)?);
    for a in [
        PK,
        SK,
        Index::Gsi1.pk(),
        Index::Gsi1.sk(),
        Index::Gsi2.pk(),
        Index::Gsi2.sk(),
    ] {
        req = req.attribute_definitions(attr(a)?);
    }
    for i in [Index::Gsi1, Index::Gsi2] {
        req = req.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(i.name())
                .key_schema(key_el(i.pk(), KeyType::Hash)?)
                .key_schema(key_el(i.sk(), KeyType::Range)?)
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .map_err(build_err)?,
        );
    }
    req.send().await.map_err(|e| map_err("CreateTable", e))?;
    wait_active(client, table).await?;
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(
            aws_sdk_dynamodb::types::TimeToLiveSpecification::builder()
                .attribute_name(EXPIRES_AT)
                .enabled(true)
                .build()
                .map_err(build_err)?,
        )
        .send()
        .await
        .map_err(|e| map_err("UpdateTimeToLive", e))?;
    Ok(())
}

/// Creates the table unless it exists; `true` if it was created.
pub async fn ensure_table(client: &Client, table: &str) -> StoreResult<bool> {
    match client.describe_table().table_name(table).send().await {
        Ok(_) => Ok(false),
        Err(e) if e.code() == Some("ResourceNotFoundException") => {
            create_table(client, table).await.map(|()| true)
        }
        Err(e) => Err(map_err("DescribeTable", e)),
    }
}

async fn wait_active(client: &Client, table: &str) -> StoreResult<()> {
    for _ in 0..100 {
        let d = client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| map_err("DescribeTable", e))?;
        let status = d.table.and_then(|t| t.table_status);
        if status == Some(aws_sdk_dynamodb::types::TableStatus::Active) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(StoreError::Unavailable(format!(
        "table {table} never became ACTIVE"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_round_trips_through_attribute_values() {
        let v = json!({ "s": "x", "n": 42, "neg": -7, "f": 0.5, "big": 18446744073709551615u64, "b": true, "l": [1, "a", null], "m": { "k": { "z": [] } } });
        let item = v.as_object().cloned().expect("object");
        assert_eq!(Value::Object(from_map(&to_map(&item))), v);
    }

    #[test]
    fn top_level_nulls_are_not_stored() {
        let item = json!({ "PK": "a", "SK": "b", "leaseUntil": null })
            .as_object()
            .cloned()
            .expect("object");
        assert!(!to_map(&item).contains_key("leaseUntil"));
    }

    #[test]
    fn conditions_become_expressions_with_placeholders() {
        let mut x = Expr::default();
        let c = x
            .cond(&Cond::All(vec![
                Cond::Live { now: 5 },
                Cond::MissingOrAtMost("leaseUntil".into(), 5),
                Cond::Always,
            ]))
            .expect("expression");
        assert_eq!(
            c,
            "((attribute_exists(#n0) AND (attribute_not_exists(#n1) OR #n1 > :v0)) AND (attribute_not_exists(#n2) OR #n2 <= :v1))"
        );
        assert_eq!(x.names["#n2"], "leaseUntil");
        assert!(Expr::default()
            .cond(&Cond::Any(vec![Cond::Always, Cond::Live { now: 1 }]))
            .is_none());
    }

    #[test]
    fn updates_combine_set_remove_and_add_and_turn_null_into_remove() {
        let mut x = Expr::default();
        let u = Update {
            set: json!({ "a": 1, "gone": null })
                .as_object()
                .cloned()
                .expect("object"),
            remove: vec!["r".into()],
            add: vec![("count".into(), 1)],
        };
        let e = x.update(&u).expect("expression");
        assert!(
            e.starts_with("SET ") && e.contains(" REMOVE ") && e.contains(" ADD "),
            "{e}"
        );
        assert_eq!(e.matches("REMOVE").count(), 1);
        assert!(x.names.values().any(|v| v == "gone"));
    }

    #[test]
    fn oversized_items_are_refused_before_sending() {
        let mut item = Item::new();
        item.insert("big".into(), Value::String("x".repeat(MAX_ITEM_BYTES)));
        assert!(matches!(check_size(&item), Err(StoreError::Internal(_))));
    }
}
