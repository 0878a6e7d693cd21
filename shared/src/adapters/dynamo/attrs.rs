//! JSON ↔ attribute values, one to one (top-level nulls are simply not stored).

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::{Map, Number, Value};

use crate::adapters::table::{Item, PK, SK};
use crate::ports::{StoreError, StoreResult};

/// Largest item written (DynamoDB refuses above 400 KB; keep a margin for attribute names).
pub const MAX_ITEM_BYTES: usize = 380 * 1024;

pub(super) type AttrMap = HashMap<String, AttributeValue>;

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

pub(super) fn parse_number(n: &str) -> Value {
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

pub(super) fn to_map(item: &Item) -> AttrMap {
    item.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), to_attr(v)))
        .collect()
}

pub(super) fn from_map(map: &AttrMap) -> Item {
    map.iter()
        .map(|(k, v)| (k.clone(), from_attr(v)))
        .collect::<Map<_, _>>()
}

pub(super) fn key(pk: &str, sk: &str) -> AttrMap {
    HashMap::from([
        (PK.to_owned(), AttributeValue::S(pk.to_owned())),
        (SK.to_owned(), AttributeValue::S(sk.to_owned())),
    ])
}

pub(super) fn check_size(item: &Item) -> StoreResult<()> {
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
    fn oversized_items_are_refused_before_sending() {
        let mut item = Item::new();
        item.insert("big".into(), Value::String("x".repeat(MAX_ITEM_BYTES)));
        assert!(matches!(check_size(&item), Err(StoreError::Internal(_))));
    }
}
