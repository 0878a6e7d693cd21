//! The interact body read in one pass: the tree's nodes are checked as they are read, so no
//! JSON tree of thousands of node objects is built first and copied again; the other fields
//! are read as JSON. Same rules and problems as the checks over a parsed body.

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::fields::{tree_node, Problems, RawNode, Scalar};
use crate::agent::page::TreeNode;
use crate::error::FieldProblem;

/// Node problems reported at most (a broken tree would otherwise flood the answer).
pub(super) const MAX_NODE_PROBLEMS: usize = 5;

/// The `interactiveTree` field as read.
pub(super) enum TreeField {
    Absent,
    NotArray,
    Nodes {
        nodes: Vec<TreeNode>,
        /// Invalid nodes, and the problems of the first [`MAX_NODE_PROBLEMS`].
        bad: usize,
        problems: Vec<FieldProblem>,
    },
}

impl TreeField {
    /// The field of a parsed body, read by the same visitors as a raw body (they take any
    /// JSON, so a parsed value cannot fail them).
    pub(super) fn of(v: Option<&Value>) -> Self {
        v.map_or(TreeField::Absent, |v| {
            TreeField::deserialize(v).unwrap_or(TreeField::NotArray)
        })
    }
}

/// Checks nodes one by one as they come.
#[derive(Default)]
struct Collect {
    nodes: Vec<TreeNode>,
    bad: usize,
    problems: Vec<FieldProblem>,
}

impl Collect {
    fn push(&mut self, raw: RawNode) {
        let k = self.nodes.len() + self.bad;
        let mut local = Problems(Vec::new());
        match tree_node(raw, k, &mut local) {
            Some(node) => self.nodes.push(node),
            None => {
                self.bad += 1;
                if self.bad <= MAX_NODE_PROBLEMS {
                    self.problems.extend(local.0);
                }
            }
        }
    }

    fn done(self) -> TreeField {
        TreeField::Nodes {
            nodes: self.nodes,
            bad: self.bad,
            problems: self.problems,
        }
    }
}

/// The body: the tree as checked nodes, every other field as JSON.
pub(super) struct Body {
    pub(super) fields: Map<String, Value>,
    pub(super) tree: TreeField,
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
            Ok($make(Scalar::Str(v.to_owned())))
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok($make(Scalar::Str(v)))
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

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            scalar_visits!(|s| s);
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar, A::Error> {
                skip_seq(seq).map(|_| Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar, A::Error> {
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

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawNode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a tree node")
            }
            // Not an object: a node with no fields, reported as such.
            scalar_visits!(|_| RawNode::default());
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<RawNode, A::Error> {
                skip_seq(seq).map(|_| RawNode::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawNode, A::Error> {
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
                while let Some(raw) = seq.next_element::<RawNode>()? {
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
                        body.tree = map.next_value()?;
                    } else {
                        let value = map.next_value()?;
                        body.fields.insert(key, value);
                    }
                }
                Ok(body)
            }
        }
        d.deserialize_map(V)
    }
}
