//! Field readers that collect every problem instead of stopping at the first.

use serde_json::{Map, Value};

use crate::agent::page::TreeNode;
use crate::error::FieldProblem;
use crate::text::truncate_chars;

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

pub(super) fn numbers<const N: usize>(v: &Value) -> Option<[f64; N]> {
    let a = v.as_array()?;
    if a.len() != N {
        return None;
    }
    let mut out = [0.0; N];
    for (o, x) in out.iter_mut().zip(a) {
        *o = x.as_f64()?;
    }
    Some(out)
}

pub(super) fn tree_node(v: &Value, k: usize, p: &mut Problems) -> Option<TreeNode> {
    let field = |f: &str| format!("interactiveTree[{k}].{f}");
    let Some(o) = v.as_object() else {
        p.add(format!("interactiveTree[{k}]"), "must be an object");
        return None;
    };
    let i = match o.get("i") {
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
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
    let text = |name: &str, max: usize| match o.get(name) {
        Some(Value::String(s)) => Some(truncate_chars(s, max)),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(b)) => Some(b.to_string()),
        _ => None,
    };
    Some(TreeNode {
        i,
        r: text("r", 32).unwrap_or_default(),
        n: text("n", 100).unwrap_or_default(),
        v: text("v", 200),
        s: text("s", 200),
        xy: o.get("xy").and_then(numbers::<2>),
        r#box: o.get("box").and_then(numbers::<4>),
    })
}
