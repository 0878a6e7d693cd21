//! The interact body read by serde_json's visitors: the tree's nodes are checked one by one
//! as they come (no JSON value per node), the fields the server reads become JSON, and every
//! other field is skipped unread (its form checked, any depth).
//!
//! A reader of its own (one pass over the text, about 640 lines) was faster and is gone: on
//! the 2 000-node tree (215 KB) it read and checked a body in 0.36 ms at p50 / 0.40 ms at p99,
//! these visitors in 0.72 / 0.78 ms (`BENCH_ONLY=page-cpu BENCH_RUNS=500 scripts/bench`,
//! profiling build, 2 cores); on the 200 000-character dom 0.13 / 0.16 against 0.14 / 0.17 ms;
//! on the largest tree accepted (500 000 smallest nodes, 4.9 MB) 25 against 57 ms. A step
//! waits seconds on the model; well under a millisecond is not worth a reader to maintain.

use std::fmt;

use serde::de::{Deserialize, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::fields::{tree_node, Problems, RawNode, Scalar};
use super::KNOWN_FIELDS;
use crate::agent::page::Nodes;
use crate::error::FieldProblem;
use serde_json::value::RawValue;

/// Node problems reported at most (a broken tree would otherwise flood the answer).
pub(super) const MAX_NODE_PROBLEMS: usize = 5;

/// The `interactiveTree` field as read.
#[derive(Debug)]
pub(super) enum TreeField {
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

/// The body: the tree as checked nodes, every other field as JSON.
struct Body {
    fields: Map<String, Value>,
    tree: TreeField,
}

/// The fields and the tree of a raw body; `None` when it is not a JSON object.
pub(super) fn body(bytes: &[u8]) -> Option<(Map<String, Value>, TreeField)> {
    let body: Body = serde_json::from_str(std::str::from_utf8(bytes).ok()?).ok()?;
    Some((body.fields, body.tree))
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

impl<'de> Deserialize<'de> for TreeField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TreeField;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of nodes")
            }
            scalar_visits!(|s| if s == Scalar::Other {
                TreeField::Absent
            } else {
                TreeField::NotArray
            });
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TreeField, A::Error> {
                let mut c = Collect::default();
                while let Some(raw) = seq.next_element::<RawNode<'static>>()? {
                    c.push(raw);
                }
                Ok(c.done())
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TreeField, A::Error> {
                skip_map(map).map(|_| TreeField::NotArray)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Body;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Body, A::Error> {
                let mut body = Body {
                    fields: Map::new(),
                    tree: TreeField::Absent,
                };
                while let Some(key) = map.next_key::<String>()? {
                    if key == "interactiveTree" {
                        let raw: &RawValue = map.next_value()?;
                        body.tree = serde_json::from_str(raw.get()).map_err(A::Error::custom)?;
                        if let TreeField::Nodes { sent, .. } = &mut body.tree {
                            *sent = raw.get().to_owned();
                        }
                    } else if KNOWN_FIELDS.contains(&key.as_str()) {
                        let value = map.next_value()?;
                        body.fields.insert(key, value);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(body)
            }
        }
        d.deserialize_map(V)
    }
}
