//! A field as sent ([`Field`], which never fails to read) and the readers over it and over a
//! tree node, collecting every problem instead of stopping at the first.

use std::borrow::Cow;

use crate::agent::page::{Nodes, TreeNode};
use crate::error::FieldProblem;
use crate::text::cut_at;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// A field as sent: absent, `null`, of the wrong type, or a value of its type. Reading one
/// never fails, so every problem of a body can be named at once.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) enum Field<T> {
    #[default]
    Absent,
    Null,
    Wrong,
    Given(T),
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Null => Field::Null,
            v => serde_json::from_value(v).map_or(Field::Wrong, Field::Given),
        })
    }
}

impl<T> Field<T> {
    /// Its value; of the wrong type, `problem` is added for `name`.
    pub(super) fn value(self, name: &str, problem: &str, p: &mut Problems) -> Option<T> {
        match self {
            Field::Given(v) => Some(v),
            Field::Wrong => {
                p.add(name, problem);
                None
            }
            Field::Absent | Field::Null => None,
        }
    }

    /// Absent or `null`: not given at all.
    pub(super) fn missing(&self) -> bool {
        matches!(self, Field::Absent | Field::Null)
    }
}

/// A client report (`lastActionError`, `domChanges`, ...): an object of any fields.
pub(super) type Report = Field<Map<String, Value>>;

pub(super) struct Problems(pub(super) Vec<FieldProblem>);

impl Problems {
    pub(super) fn add(&mut self, field: impl Into<String>, problem: impl Into<String>) {
        self.0.push(FieldProblem::new(field, problem));
    }
}

/// A string field's value (of another type: named).
pub(super) fn string(field: Field<String>, name: &str, p: &mut Problems) -> Option<String> {
    field.value(name, "must be a string", p)
}

/// A string field holding a UUID, as its hyphenated lower case.
pub(super) fn uuid(field: Field<String>, name: &str, p: &mut Problems) -> Option<String> {
    let s = string(field, name, p)?;
    match uuid::Uuid::parse_str(s.trim()) {
        Ok(u) => Some(u.hyphenated().to_string()),
        Err(_) => {
            p.add(name, "must be a UUID");
            None
        }
    }
}

/// A string field holding one of `allowed`.
pub(super) fn one_of(
    field: Field<String>,
    name: &str,
    allowed: &[&str],
    p: &mut Problems,
) -> Option<String> {
    let s = string(field, name, p)?;
    if allowed.contains(&s.as_str()) {
        Some(s)
    } else {
        p.add(name, format!("must be one of: {}", allowed.join(", ")));
        None
    }
}

/// A scalar JSON value as a node field takes it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Scalar<'a> {
    Str(Cow<'a, str>),
    /// A number, as its JSON text.
    Num(String),
    Bool(bool),
    /// null, an array or an object.
    Other,
}

/// A tree node's fields as sent, before they are checked.
#[derive(Debug, Default)]
pub(super) struct RawNode<'a> {
    pub(super) object: bool,
    pub(super) i: Option<Scalar<'a>>,
    pub(super) r: Option<Scalar<'a>>,
    pub(super) n: Option<Scalar<'a>>,
    pub(super) v: Option<Scalar<'a>>,
    pub(super) s: Option<Scalar<'a>>,
    pub(super) xy: Option<[f64; 2]>,
    pub(super) r#box: Option<[f64; 4]>,
}

/// `s` cut to `max` characters (with an ellipsis), copied only when cut.
fn cut(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    match cut_at(s, max) {
        Some(end) => Cow::Owned(format!("{}…", &s[..end])),
        None => Cow::Borrowed(s),
    }
}

/// A node field's text: strings cut to `max` characters, numbers and booleans as written.
fn text<'s>(value: &'s Option<Scalar<'_>>, max: usize) -> Option<Cow<'s, str>> {
    match value {
        Some(Scalar::Str(s)) => Some(cut(s, max)),
        Some(Scalar::Num(n)) => Some(Cow::Borrowed(n)),
        Some(Scalar::Bool(b)) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
        _ => None,
    }
}

/// An element id actions can name: 1 to 64 bytes, no whitespace, quotes, commas, brackets
/// or `..` (the action grammar's delimiters).
fn valid_id(i: &str) -> bool {
    let forbidden = |c: char| c.is_whitespace() || "\"'`(),[]".contains(c);
    if i.is_empty() || i.len() > 64 {
        return false;
    }
    if !i.is_ascii() {
        return !i.contains("..") && !i.chars().any(forbidden);
    }
    let b = i.as_bytes();
    let bad = b.iter().fold(false, |any, &c| {
        any | matches!(
            c,
            b'\t'..=b'\r' | b' ' | b'"' | b'\'' | b'`' | b'(' | b')' | b',' | b'[' | b']'
        )
    });
    let dots = b
        .iter()
        .zip(b.iter().skip(1))
        .fold(false, |any, (&x, &y)| any | ((x == b'.') & (y == b'.')));
    !bad && !dots
}

/// Node `k` of the tree, checked and added to `nodes`; its problems go to `p` (`false`: the
/// node is invalid and was not added).
pub(super) fn tree_node(raw: RawNode<'_>, k: usize, p: &mut Problems, nodes: &mut Nodes) -> bool {
    let field = |f: &str| format!("interactiveTree[{k}].{f}");
    if !raw.object {
        p.add(format!("interactiveTree[{k}]"), "must be an object");
        return false;
    }
    let i = match &raw.i {
        Some(Scalar::Str(s)) => s.trim(),
        Some(Scalar::Num(n)) => n.as_str(),
        _ => "",
    };
    if !valid_id(i) {
        p.add(
            field("i"),
            "must be a non-empty element id without spaces, quotes, commas, brackets or `..`",
        );
        return false;
    }
    let (r, n) = (text(&raw.r, 32), text(&raw.n, 100));
    let (v, s) = (text(&raw.v, 200), text(&raw.s, 200));
    let added = nodes.push(TreeNode {
        i,
        r: r.as_deref().unwrap_or(""),
        n: n.as_deref().unwrap_or(""),
        v: v.as_deref(),
        s: s.as_deref(),
        xy: raw.xy,
        r#box: raw.r#box,
    });
    if !added {
        p.add("interactiveTree", "is too large");
    }
    added
}

#[cfg(test)]
mod tests {
    use super::valid_id;

    #[test]
    fn ids_are_checked_byte_by_byte_as_character_by_character() {
        let old = |i: &str| {
            !(i.is_empty()
                || i.len() > 64
                || i.contains("..")
                || i.chars()
                    .any(|c| c.is_whitespace() || "\"'`(),[]".contains(c)))
        };
        let pieces = [
            "7", "a", ".", " ", "\t", "\u{b}", "\u{1}", "\u{7f}", "\"", "'", "`", "(", ")", ",",
            "[", "]", "-", "é", "\u{a0}", "\u{2028}", "x.y",
        ];
        let mut ids = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> = ids
                .iter()
                .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
                .collect();
            ids.extend(longer);
        }
        ids.push("1".repeat(64));
        ids.push("1".repeat(65));
        for id in &ids {
            assert_eq!(valid_id(id), old(id), "{id:?}");
        }
    }
}
