//! Client reports (`lastActionError`, `domChanges`, ...) reduced to known, bounded fields.

use serde_json::{Map, Value};

use super::fields::{Problems, Report};
use crate::text::truncate_chars;

/// The type of a known field inside a client report; anything else there is dropped.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    /// A string (numbers and booleans are taken as text), at most this many characters.
    Text(usize),
    Bool,
    Number,
    /// Any JSON value whose compact form is at most this many characters; longer ones become
    /// that many characters of it as a string.
    Any(usize),
    /// A list of at most `.0` values, each as `Any(.1)`.
    List(usize, usize),
}

pub(super) fn bounded(v: &Value, kind: Kind) -> Option<Value> {
    match (kind, v) {
        (Kind::Text(max), Value::String(s)) => Some(Value::String(truncate_chars(s, max))),
        (Kind::Text(max), Value::Number(_) | Value::Bool(_)) => {
            Some(Value::String(truncate_chars(&v.to_string(), max)))
        }
        (Kind::Bool, Value::Bool(_)) | (Kind::Number, Value::Number(_)) => Some(v.clone()),
        (Kind::Any(_), Value::Null) => None,
        (Kind::Any(max), Value::String(s)) => Some(Value::String(truncate_chars(s, max))),
        (Kind::Any(max), other) => {
            let compact = other.to_string();
            Some(if compact.chars().count() <= max {
                other.clone()
            } else {
                Value::String(truncate_chars(&compact, max))
            })
        }
        (Kind::List(items, each), Value::Array(a)) => Some(Value::Array(
            a.iter()
                .take(items)
                .filter_map(|x| bounded(x, Kind::Any(each)))
                .collect(),
        )),
        _ => None,
    }
}

/// A client report (`lastActionError`, `domChanges`, ...) reduced to its known fields, each
/// bounded: what reaches storage and the prompt is small whatever the client sent.
pub(super) fn report(
    field: Report,
    name: &str,
    fields: &[(&str, Kind)],
    p: &mut Problems,
) -> Option<Value> {
    let v = field.value(name, "must be an object", p)?;
    let out: Map<String, Value> = fields
        .iter()
        .filter_map(|(k, kind)| Some(((*k).to_owned(), bounded(v.get(*k)?, *kind)?)))
        .collect();
    Some(Value::Object(out))
}

pub(super) const ERROR_FIELDS: &[(&str, Kind)] = &[
    ("message", Kind::Text(1_000)),
    ("code", Kind::Text(64)),
    ("action", Kind::Text(500)),
    ("elementId", Kind::Text(64)),
];
pub(super) const RESULT_FIELDS: &[(&str, Kind)] =
    &[("success", Kind::Bool), ("actualState", Kind::Any(1_000))];
pub(super) const DOM_CHANGES_FIELDS: &[(&str, Kind)] = &[
    ("addedCount", Kind::Number),
    ("removedCount", Kind::Number),
    ("dropdownDetected", Kind::Bool),
    ("dropdownOptions", Kind::List(50, 200)),
    ("stabilizationTime", Kind::Number),
    ("previousUrl", Kind::Text(2_048)),
    ("urlChanged", Kind::Bool),
    ("didNetworkOccur", Kind::Bool),
];
pub(super) const OBSERVATION_FIELDS: &[(&str, Kind)] = &[
    ("didUrlChange", Kind::Bool),
    ("didDomMutate", Kind::Bool),
    ("didNetworkOccur", Kind::Bool),
];
