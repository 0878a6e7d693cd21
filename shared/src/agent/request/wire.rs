//! The interact body's wire form, derived: every field the server reads, each wrapped in a
//! [`Field`] that never fails (a value of the wrong type is `Wrong`, for the validation pass in
//! `mod.rs` to name); any other field is skipped unread by serde (its form checked, any depth).
//!
//! The tree is the one field read by hand-written visitors: its nodes are checked one by one as
//! they come, with no JSON value per node. Kept because the bench shows the need: against the
//! same tree read by derived types (each node a struct of JSON values, then put into the same
//! `Nodes`), `BENCH_ONLY=page-cpu BENCH_PAGES=tree,large,smallest scripts/bench` (release, 2
//! cores; the whole body read and checked, against the tree alone by derived types):
//!
//! | body | time p50: visitors / derived | peak heap: visitors / derived |
//! |---|---|---|
//! | 2 000-node tree, 215 KB | 0.78 / 1.43 ms | 0.6 / 1.4 MiB |
//! | 48 000-node tree, 5.2 MB | 24 / 68 ms | 15 / 38 MiB |
//! | 500 000 smallest nodes, 4.8 MB | 110 / 187 ms | 61 / 169 MiB |
//!
//! The interact function has 1 024 MB; a 5 MB body read by derived types holds two and a half
//! times the memory the visitors do, and takes two to three times as long.
use std::fmt;

use serde::de::{Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;

use super::fields::{tree_node, Field, Problems, RawNode, Report, Scalar};
use crate::agent::page::Nodes;
use crate::error::FieldProblem;

/// The interact body as sent. Unknown fields are skipped; none of these fails to read.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct Wire {
    pub url: Field<String>,
    pub query: Field<String>,
    pub interactive_tree: TreeField,
    pub dom: Field<String>,
    pub dom_mode: Field<String>,
    pub task_id: Field<String>,
    pub session_id: Field<String>,
    pub last_action_status: Field<String>,
    pub last_action_error: Report,
    pub last_action_result: Report,
    pub dom_changes: Report,
    pub client_observations: Report,
    pub page_title: Field<String>,
    pub viewport: Report,
    pub screenshot: Field<String>,
    pub client_capabilities: Field<Vec<Value>>,
}

/// Node problems reported at most (a broken tree would otherwise flood the answer).
pub(super) const MAX_NODE_PROBLEMS: usize = 5;

/// The `interactiveTree` field as read.
#[derive(Debug, Default)]
pub(super) enum TreeField {
    #[default]
    Absent,
    NotArray,
    Nodes {
        nodes: Nodes,
        /// Invalid nodes, and the problems of the first [`MAX_NODE_PROBLEMS`].
        bad: usize,
        problems: Vec<FieldProblem>,
        /// The tree's JSON as sent (the step's page snapshot).
        sent: String,
    },
}

/// Checks nodes one by one as they come.
#[derive(Default)]
struct Collect {
    nodes: Nodes,
    bad: usize,
    problems: Vec<FieldProblem>,
}

impl Collect {
    fn push(&mut self, raw: RawNode) {
        let k = self.nodes.len() + self.bad;
        let mut local = Problems(Vec::new());
        if !tree_node(raw, k, &mut local, &mut self.nodes) {
            self.bad += 1;
            if self.bad <= MAX_NODE_PROBLEMS {
                self.problems.extend(local.0);
            }
        }
    }

    fn done(self) -> TreeField {
        TreeField::Nodes {
            nodes: self.nodes,
            bad: self.bad,
            problems: self.problems,
            sent: String::new(),
        }
    }
}

/// The body as sent; `None` when it is not a JSON object.
pub(super) fn wire(bytes: &[u8]) -> Option<Wire> {
    let text = std::str::from_utf8(bytes).ok()?;
    // A derived struct also reads an array by position: only an object is a body.
    if !text.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str(text)
        .ok()
        .or_else(|| last_of_repeated(text))
}

/// A body that names a field twice (the derived reader refuses it) read as a parsed body is:
/// the last counts. Its fields are kept as text, not parsed, before it is read again.
fn last_of_repeated(text: &str) -> Option<Wire> {
    let fields: std::collections::BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(text).ok()?;
    let once = serde_json::to_string(&fields).ok()?;
    serde_json::from_str(&once).ok()
}

/// Reads what a visitor is given and does not want (a nested array or object).
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Implements the scalar visits of a visitor whose value is `$make(Scalar)`.
macro_rules! scalar_visits {
    ($make:expr) => {
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok($make(Scalar::Str(v.to_owned().into())))
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok($make(Scalar::Str(v.into())))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok($make(Scalar::Num(v.to_string())))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok($make(Scalar::Num(v.to_string())))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok($make(
                serde_json::Number::from_f64(v)
                    .map_or(Scalar::Other, |n| Scalar::Num(n.to_string())),
            ))
        }
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok($make(Scalar::Bool(v)))
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($make(Scalar::Other))
        }
    };
}

impl<'de> Deserialize<'de> for Scalar<'static> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar<'static>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            scalar_visits!(|s| s);
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'static>, A::Error> {
                skip_seq(seq).map(|_| Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar<'static>, A::Error> {
                skip_map(map).map(|_| Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// A JSON number as `f64` (anything else: `None`).
struct Num(Option<f64>);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(Some(v)))
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Num, A::Error> {
                skip_seq(seq).map(|_| Num(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Num, A::Error> {
                skip_map(map).map(|_| Num(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// `N` numbers, read without building a JSON array (anything else: `None`, as the checks over
/// a parsed body read it).
struct Numbers<const N: usize>(Option<[f64; N]>);

impl<'de, const N: usize> Deserialize<'de> for Numbers<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const N: usize>;
        impl<'de, const N: usize> Visitor<'de> for V<N> {
            type Value = Numbers<N>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "{N} numbers")
            }
            scalar_visits!(|_| Numbers(None));
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Numbers<N>, A::Error> {
                let mut out = [0.0; N];
                let mut count = 0;
                let mut all_numbers = true;
                while let Some(Num(x)) = seq.next_element::<Num>()? {
                    match (x, out.get_mut(count)) {
                        (Some(v), Some(slot)) => *slot = v,
                        _ => all_numbers = false,
                    }
                    count += 1;
                }
                Ok(Numbers((all_numbers && count == N).then_some(out)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Numbers<N>, A::Error> {
                skip_map(map).map(|_| Numbers(None))
            }
        }
        d.deserialize_any(V::<N>)
    }
}

/// The keys of a node the server reads.
#[derive(serde::Deserialize)]
#[serde(field_identifier)]
enum Key {
    #[serde(rename = "i")]
    I,
    #[serde(rename = "r")]
    R,
    #[serde(rename = "n")]
    N,
    #[serde(rename = "v")]
    V,
    #[serde(rename = "s")]
    S,
    #[serde(rename = "xy")]
    Xy,
    #[serde(rename = "box")]
    Box,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for RawNode<'static> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawNode<'static>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a tree node")
            }
            // Not an object: a node with no fields, reported as such.
            scalar_visits!(|_| RawNode::default());
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<RawNode<'static>, A::Error> {
                skip_seq(seq).map(|_| RawNode::default())
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RawNode<'static>, A::Error> {
                let mut n = RawNode {
                    object: true,
                    ..RawNode::default()
                };
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::I => n.i = Some(map.next_value()?),
                        Key::R => n.r = Some(map.next_value()?),
                        Key::N => n.n = Some(map.next_value()?),
                        Key::V => n.v = Some(map.next_value()?),
                        Key::S => n.s = Some(map.next_value()?),
                        Key::Xy => n.xy = map.next_value::<Numbers<2>>()?.0,
                        Key::Box => n.r#box = map.next_value::<Numbers<4>>()?.0,
                        Key::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(n)
            }
        }
        d.deserialize_any(V)
    }
}

/// The tree's nodes checked as they come (the visitor's value).
struct Checked(TreeField);

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Checked;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of nodes")
            }
            scalar_visits!(|s| Checked(if s == Scalar::Other {
                TreeField::Absent
            } else {
                TreeField::NotArray
            }));
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
                let mut c = Collect::default();
                while let Some(raw) = seq.next_element::<RawNode<'static>>()? {
                    c.push(raw);
                }
                Ok(Checked(c.done()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Checked, A::Error> {
                skip_map(map).map(|_| Checked(TreeField::NotArray))
            }
        }
        d.deserialize_any(V)
    }
}

/// The tree checked node by node, its text kept as sent (the step's page snapshot).
impl<'de> Deserialize<'de> for TreeField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&RawValue>::deserialize(d)?;
        let Checked(mut tree) = serde_json::from_str(raw.get()).map_err(D::Error::custom)?;
        if let TreeField::Nodes { sent, .. } = &mut tree {
            *sent = raw.get().to_owned();
        }
        Ok(tree)
    }
}
