//! Field readers that collect every problem instead of stopping at the first.

use serde_json::{Map, Value};

use crate::agent::page::TreeNode;
use crate::error::FieldProblem;
use crate::text::cut_at;

pub(super) struct Problems(pub(super) Vec<FieldProblem>);

impl Problems {
    pub(super) fn add(&mut self, field: impl Into<String>, problem: impl Into<String>) {
        self.0.push(FieldProblem::new(field, problem));
    }
}

pub(super) fn string_field(
    obj: &Map<String, Value>,
    name: &str,
    p: &mut Problems,
) -> Option<String> {
    match obj.get(name) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            p.add(name, "must be a string");
            None
        }
    }
}

pub(super) fn object_field(
    obj: &Map<String, Value>,
    name: &str,
    p: &mut Problems,
) -> Option<Value> {
    match obj.get(name) {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(v.clone()),
        Some(_) => {
            p.add(name, "must be an object");
            None
        }
    }
}

pub(super) fn uuid_field(obj: &Map<String, Value>, name: &str, p: &mut Problems) -> Option<String> {
    let s = string_field(obj, name, p)?;
    match uuid::Uuid::parse_str(s.trim()) {
        Ok(u) => Some(u.hyphenated().to_string()),
        Err(_) => {
            p.add(name, "must be a UUID");
            None
        }
    }
}

pub(super) fn enum_field(
    obj: &Map<String, Value>,
    name: &str,
    allowed: &[&str],
    p: &mut Problems,
) -> Option<String> {
    let s = string_field(obj, name, p)?;
    if allowed.contains(&s.as_str()) {
        Some(s)
    } else {
        p.add(name, format!("must be one of: {}", allowed.join(", ")));
        None
    }
}

/// A scalar JSON value as a node field takes it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Scalar {
    Str(String),
    /// A number, as its JSON text.
    Num(String),
    Bool(bool),
    /// null, an array or an object.
    Other,
}

/// A tree node's fields as sent, before they are checked.
#[derive(Debug, Default)]
pub(super) struct RawNode {
    pub(super) object: bool,
    pub(super) i: Option<Scalar>,
    pub(super) r: Option<Scalar>,
    pub(super) n: Option<Scalar>,
    pub(super) v: Option<Scalar>,
    pub(super) s: Option<Scalar>,
    pub(super) xy: Option<[f64; 2]>,
    pub(super) r#box: Option<[f64; 4]>,
}

/// `s` cut to `max` characters (with an ellipsis), without copying.
fn cut(mut s: String, max: usize) -> String {
    if s.len() > max {
        if let Some(end) = cut_at(&s, max) {
            s.truncate(end);
            s.push('…');
        }
    }
    s
}

/// Node `k` of the tree, checked: its problems go to `p`.
pub(super) fn tree_node(raw: RawNode, k: usize, p: &mut Problems) -> Option<TreeNode> {
    let field = |f: &str| format!("interactiveTree[{k}].{f}");
    if !raw.object {
        p.add(format!("interactiveTree[{k}]"), "must be an object");
        return None;
    }
    let i = match raw.i {
        Some(Scalar::Str(s)) if s.trim().len() == s.len() => s,
        Some(Scalar::Str(s)) => s.trim().to_owned(),
        Some(Scalar::Num(n)) => n,
        _ => String::new(),
    };
    if i.is_empty()
        || i.len() > 64
        || i.contains("..")
        || i.chars()
            .any(|c| c.is_whitespace() || "\"'`(),[]".contains(c))
    {
        p.add(
            field("i"),
            "must be a non-empty element id without spaces, quotes, commas, brackets or `..`",
        );
        return None;
    }
    let text = |value: Option<Scalar>, max: usize| match value {
        Some(Scalar::Str(s)) => Some(cut(s, max)),
        Some(Scalar::Num(n)) => Some(n),
        Some(Scalar::Bool(b)) => Some(b.to_string()),
        _ => None,
    };
    Some(TreeNode {
        i,
        r: text(raw.r, 32).unwrap_or_default(),
        n: text(raw.n, 100).unwrap_or_default(),
        v: text(raw.v, 200),
        s: text(raw.s, 200),
        xy: raw.xy,
        r#box: raw.r#box,
    })
}
