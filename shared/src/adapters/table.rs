//! The single-table abstraction every port is written against. An item is a JSON object with
//! `PK`, `SK`, optional index keys (`GSI1PK`/`GSI1SK`, `GSI2PK`/`GSI2SK`) and an optional
//! `expiresAt` (epoch seconds, the DynamoDB TTL attribute). Two backends implement it: SQLite
//! (embedded) and DynamoDB. Conditions are a small closed language that both can express —
//! evaluated in Rust by SQLite, translated to condition expressions for DynamoDB — so the
//! conformance suite proves they agree.

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::ports::StoreResult;

/// One stored item (a JSON object).
pub type Item = Map<String, Value>;

pub const PK: &str = "PK";
pub const SK: &str = "SK";
pub const EXPIRES_AT: &str = "expiresAt";

/// A secondary index of the table. Both project every attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    Gsi1,
    Gsi2,
}

impl Index {
    pub fn name(self) -> &'static str {
        match self {
            Index::Gsi1 => "GSI1",
            Index::Gsi2 => "GSI2",
        }
    }
    pub fn pk(self) -> &'static str {
        match self {
            Index::Gsi1 => "GSI1PK",
            Index::Gsi2 => "GSI2PK",
        }
    }
    pub fn sk(self) -> &'static str {
        match self {
            Index::Gsi1 => "GSI1SK",
            Index::Gsi2 => "GSI2SK",
        }
    }
}

/// A condition on the item currently stored under a key (absent = no item).
#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    /// Always true.
    Always,
    /// No item at all, live or expired.
    Missing,
    /// No live item: none at all, or one whose `expiresAt` is at or before `now`.
    Absent { now: i64 },
    /// A live item exists.
    Live { now: i64 },
    /// The attribute exists and equals the value.
    Eq(String, Value),
    /// The attribute is missing or is a number at or below the value.
    MissingOrAtMost(String, i64),
    /// The attribute exists and is a number at or above the value.
    AtLeast(String, i64),
    /// Every condition holds.
    All(Vec<Cond>),
    /// At least one condition holds.
    Any(Vec<Cond>),
}

impl Cond {
    /// Evaluates the condition against the stored item (used by backends without native
    /// conditions; DynamoDB translates instead).
    pub fn holds(&self, item: Option<&Item>) -> bool {
        let live = |now: i64| item.is_some_and(|i| !is_expired(i, now));
        match self {
            Cond::Always => true,
            Cond::Missing => item.is_none(),
            Cond::Absent { now } => !live(*now),
            Cond::Live { now } => live(*now),
            Cond::Eq(name, v) => item
                .and_then(|i| i.get(name))
                .is_some_and(|x| json_eq(x, v)),
            Cond::MissingOrAtMost(name, n) => match item.and_then(|i| i.get(name)) {
                None | Some(Value::Null) => true,
                Some(x) => x.as_f64().is_some_and(|x| x <= *n as f64),
            },
            Cond::AtLeast(name, n) => item
                .and_then(|i| i.get(name))
                .and_then(Value::as_f64)
                .is_some_and(|x| x >= *n as f64),
            Cond::All(cs) => cs.iter().all(|c| c.holds(item)),
            Cond::Any(cs) => cs.iter().any(|c| c.holds(item)),
        }
    }
}

/// JSON equality with numbers compared by value (DynamoDB numbers have no int/float split).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Whether an item's TTL has passed at `now` (DynamoDB may not have removed it yet).
pub fn is_expired(item: &Item, now: i64) -> bool {
    item.get(EXPIRES_AT)
        .and_then(Value::as_i64)
        .is_some_and(|t| t <= now)
}

/// The sort-key part of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkCond {
    All,
    Prefix(String),
    /// Strictly below.
    Below(String),
    /// Inclusive range.
    Between(String, String),
}

/// A query on the table or an index: one partition, optionally narrowed by sort key.
#[derive(Debug, Clone)]
pub struct Query {
    pub index: Option<Index>,
    pub pk: String,
    pub sk: SkCond,
    /// Ascending sort-key order when true.
    pub forward: bool,
    /// Most items to return in this page.
    pub limit: Option<usize>,
    /// Continue after this item (the `last` of a previous page).
    pub start_after: Option<Item>,
}

impl Query {
    pub fn partition(pk: impl Into<String>) -> Self {
        Query {
            index: None,
            pk: pk.into(),
            sk: SkCond::All,
            forward: true,
            limit: None,
            start_after: None,
        }
    }
    pub fn on(mut self, index: Index) -> Self {
        self.index = Some(index);
        self
    }
    pub fn sk(mut self, sk: SkCond) -> Self {
        self.sk = sk;
        self
    }
    pub fn backward(mut self) -> Self {
        self.forward = false;
        self
    }
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }
}

/// One page of a query.
#[derive(Debug, Clone, Default)]
pub struct Page {
    pub items: Vec<Item>,
    /// Where the next page starts; `None` when there is no more.
    pub last: Option<Item>,
}

/// Changes to one item.
#[derive(Debug, Clone, Default)]
pub struct Update {
    pub set: Item,
    pub remove: Vec<String>,
    /// Numeric attributes to add to (created at the amount when missing).
    pub add: Vec<(String, i64)>,
}

/// One write of a transaction.
#[derive(Debug, Clone)]
pub enum Write {
    Put {
        item: Item,
        cond: Cond,
    },
    Update {
        pk: String,
        sk: String,
        update: Update,
        cond: Cond,
    },
    Delete {
        pk: String,
        sk: String,
        cond: Cond,
    },
    Check {
        pk: String,
        sk: String,
        cond: Cond,
    },
}

/// Most writes in one transaction (DynamoDB's limit).
pub const MAX_TRANSACTION_WRITES: usize = 100;
/// Most deletes in one batch request (DynamoDB refuses more).
pub const MAX_BATCH_WRITES: usize = 25;

/// A single table with two indexes. Reads return raw items (expired ones included); callers
/// filter with [`is_expired`]. A failed condition is `StoreError::Conflict`.
#[async_trait]
pub trait TableBackend: Send + Sync {
    async fn get(&self, pk: &str, sk: &str) -> StoreResult<Option<Item>>;
    async fn put(&self, item: Item, cond: Cond) -> StoreResult<()>;
    /// Applies `update` when `cond` holds and returns the item as it is afterwards.
    async fn update(&self, pk: &str, sk: &str, update: Update, cond: Cond) -> StoreResult<Item>;
    /// Deletes when `cond` holds; `false` when there was nothing to delete.
    async fn delete(&self, pk: &str, sk: &str, cond: Cond) -> StoreResult<bool>;
    async fn query(&self, query: Query) -> StoreResult<Page>;
    /// Every item whose PK starts with `pk_prefix` and whose SK equals `sk` (administration).
    async fn scan(&self, pk_prefix: &str, sk: &str) -> StoreResult<Vec<Item>>;
    /// All writes or none (at most [`MAX_TRANSACTION_WRITES`]).
    async fn transact(&self, writes: Vec<Write>) -> StoreResult<()>;
    /// Deletes many keys, unconditionally, in batches of [`MAX_BATCH_WRITES`].
    async fn batch_delete(&self, keys: Vec<(String, String)>) -> StoreResult<()>;
}

/// Key attributes of an item.
pub fn key_of(item: &Item) -> Option<(String, String)> {
    Some((
        item.get(PK)?.as_str()?.to_owned(),
        item.get(SK)?.as_str()?.to_owned(),
    ))
}

/// Builds an item from its keys and a serialisable body (whose fields become attributes).
pub fn item_of<T: serde::Serialize>(pk: &str, sk: &str, body: &T) -> StoreResult<Item> {
    let Value::Object(mut map) = serde_json::to_value(body)
        .map_err(|e| crate::ports::StoreError::Internal(e.to_string()))?
    else {
        return Err(crate::ports::StoreError::Internal(
            "item body is not an object".into(),
        ));
    };
    map.insert(PK.into(), Value::String(pk.to_owned()));
    map.insert(SK.into(), Value::String(sk.to_owned()));
    Ok(map)
}

/// Reads an item's attributes back into `T` (key and index attributes are ignored by `T`).
pub fn body_of<T: serde::de::DeserializeOwned>(item: Item) -> StoreResult<T> {
    serde_json::from_value(Value::Object(item))
        .map_err(|e| crate::ports::StoreError::Internal(format!("corrupt item: {e}")))
}

/// Splits keys into DynamoDB-sized batches.
pub fn batches<T>(items: Vec<T>, size: usize) -> Vec<Vec<T>> {
    let mut out = Vec::new();
    let mut it = items.into_iter().peekable();
    while it.peek().is_some() {
        out.push(it.by_ref().take(size.max(1)).collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(v: Value) -> Item {
        v.as_object().cloned().expect("object")
    }

    #[test]
    fn absent_treats_expired_items_as_gone() {
        let live = item(json!({ "PK": "a", "SK": "b", "expiresAt": 100 }));
        assert!(!Cond::Absent { now: 99 }.holds(Some(&live)));
        assert!(Cond::Absent { now: 100 }.holds(Some(&live)));
        assert!(Cond::Absent { now: 0 }.holds(None));
        assert!(Cond::Live { now: 99 }.holds(Some(&live)));
        assert!(!Cond::Live { now: 100 }.holds(Some(&live)));
    }

    #[test]
    fn comparisons_treat_numbers_by_value() {
        let i = item(json!({ "v": 3, "lease": 50 }));
        assert!(Cond::Eq("v".into(), json!(3.0)).holds(Some(&i)));
        assert!(!Cond::Eq("v".into(), json!(4)).holds(Some(&i)));
        assert!(!Cond::Eq("missing".into(), json!(null)).holds(Some(&i)));
        assert!(Cond::MissingOrAtMost("lease".into(), 50).holds(Some(&i)));
        assert!(!Cond::MissingOrAtMost("lease".into(), 49).holds(Some(&i)));
        assert!(Cond::MissingOrAtMost("other".into(), 0).holds(Some(&i)));
        assert!(Cond::AtLeast("v".into(), 3).holds(Some(&i)));
        assert!(!Cond::AtLeast("v".into(), 4).holds(Some(&i)));
        assert!(!Cond::AtLeast("other".into(), 0).holds(Some(&i)));
        assert!(Cond::Any(vec![
            Cond::Eq("v".into(), json!(1)),
            Cond::Eq("v".into(), json!(3))
        ])
        .holds(Some(&i)));
        assert!(!Cond::All(vec![
            Cond::Eq("v".into(), json!(3)),
            Cond::Absent { now: 0 }
        ])
        .holds(Some(&i)));
    }

    #[test]
    fn batches_never_exceed_the_limit() {
        let b = batches((0..26).collect(), MAX_BATCH_WRITES);
        assert_eq!(b.iter().map(Vec::len).collect::<Vec<_>>(), vec![25, 1]);
        assert!(batches(Vec::<u8>::new(), 25).is_empty());
        assert_eq!(batches((0..50).collect(), 25).len(), 2);
    }
}
