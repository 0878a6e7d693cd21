//! The interact body read in one pass over its text: the tree's nodes go straight into the
//! page's buffers ([`Nodes`]) as they are read — no JSON value per node, no string per field —
//! and every other field becomes JSON. Each value is read as serde_json's visitors read it in
//! the same place (text as text, numbers as numbers, the rest skipped), so the same bodies are
//! accepted with the same content: the tests hold the two readers side by side.

use serde_json::{Map, Value};

use super::fields::{tree_node, Problems, RawNode, Scalar};
use super::json::{Keys, Reader};
use super::KNOWN_FIELDS;
use crate::agent::page::Nodes;
use crate::error::FieldProblem;

/// Node problems reported at most (a broken tree would otherwise flood the answer).
pub(super) const MAX_NODE_PROBLEMS: usize = 5;

/// Nesting a field other than the tree may have: the JSON reader refuses a value nested 128
/// deep, the body's own object included.
const MAX_FIELD_DEPTH: usize = 126;

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

/// The body: the tree as checked nodes, every other field as JSON.
pub(super) struct Body {
    pub(super) fields: Map<String, Value>,
    pub(super) tree: TreeField,
}

/// Reads a body; `None` when it is not a JSON object.
pub(super) fn body(text: &str) -> Option<Body> {
    let mut r = Reader { text, at: 0 };
    let mut body = Body {
        fields: Map::new(),
        tree: TreeField::Absent,
    };
    if r.token()? != b'{' {
        return None;
    }
    r.members(|r, key| {
        if key == "interactiveTree" {
            body.tree = r.tree()?;
        } else if !KNOWN_FIELDS.contains(&&*key) {
            // As the JSON reader ignores a value: its form checked, nothing kept, any depth.
            r.skip(Keys::Skip)?;
        } else if r.byte()? == b'"' {
            // Text (the `dom` is hundreds of kilobytes): read once, as the JSON reader reads it.
            let value = Value::String(r.string()?.into_owned());
            body.fields.insert(key.into_owned(), value);
        } else {
            let start = r.at;
            if r.skip(Keys::Skip)? > MAX_FIELD_DEPTH {
                return None;
            }
            let value = serde_json::from_str(&r.text[start..r.at]).ok()?;
            body.fields.insert(key.into_owned(), value);
        }
        Some(())
    })?;
    r.ws();
    (r.at == r.text.len()).then_some(body)
}

impl<'a> Reader<'a> {
    /// A value read as a node field reads it: text, a number (as the JSON reader writes it), a
    /// boolean, or — for `null`, arrays and objects — nothing.
    fn scalar(&mut self) -> Option<Scalar<'a>> {
        Some(match self.byte()? {
            b'"' => Scalar::Str(self.string()?),
            b't' => self.literal("true").map(|_| Scalar::Bool(true))?,
            b'f' => self.literal("false").map(|_| Scalar::Bool(false))?,
            b'n' => self.literal("null").map(|_| Scalar::Other)?,
            b'-' | b'0'..=b'9' => {
                let text = self.number()?;
                let n: serde_json::Number = serde_json::from_str(text).ok()?;
                Scalar::Num(n.to_string())
            }
            b'[' => self.skip(Keys::Skip).map(|_| Scalar::Other)?,
            b'{' => self.skip(Keys::Read).map(|_| Scalar::Other)?,
            _ => return None,
        })
    }

    /// `N` numbers (`None` for anything else, read as a field reads it).
    fn numbers<const N: usize>(&mut self) -> Option<Option<[f64; N]>> {
        if self.byte()? != b'[' {
            return self.scalar().map(|_| None);
        }
        let mut out = [0.0; N];
        let mut count = 0;
        let mut all_numbers = true;
        self.elements(|r| {
            let value = match r.byte()? {
                b'-' | b'0'..=b'9' => Some(r.number_value()?),
                _ => r.scalar().map(|_| None)?,
            };
            match (value, out.get_mut(count)) {
                (Some(v), Some(slot)) => *slot = v,
                _ => all_numbers = false,
            }
            count += 1;
            Some(())
        })?;
        Some((all_numbers && count == N).then_some(out))
    }

    /// A node (an element of the tree's array).
    fn node(&mut self) -> Option<RawNode<'a>> {
        match self.byte()? {
            b'{' => {}
            b'[' => return self.skip(Keys::Skip).map(|_| RawNode::default()),
            _ => return self.scalar().map(|_| RawNode::default()),
        }
        let mut n = RawNode {
            object: true,
            ..RawNode::default()
        };
        self.members(|r, key| {
            match &*key {
                "i" => n.i = Some(r.scalar()?),
                "r" => n.r = Some(r.scalar()?),
                "n" => n.n = Some(r.scalar()?),
                "v" => n.v = Some(r.scalar()?),
                "s" => n.s = Some(r.scalar()?),
                "xy" => n.xy = r.numbers::<2>()?,
                "box" => n.r#box = r.numbers::<4>()?,
                _ => {
                    r.skip(Keys::Skip)?;
                }
            }
            Some(())
        })?;
        Some(n)
    }

    /// The `interactiveTree` field's value.
    fn tree(&mut self) -> Option<TreeField> {
        match self.byte()? {
            b'[' => {}
            b'{' => return self.skip(Keys::Read).map(|_| TreeField::NotArray),
            _ => {
                return self.scalar().map(|s| match s {
                    Scalar::Other => TreeField::Absent,
                    _ => TreeField::NotArray,
                })
            }
        }
        let start = self.at;
        // Grown as read (no estimate from the body's size: a body may hold many trees).
        let mut nodes = Nodes::default();
        let (mut bad, mut problems) = (0usize, Vec::new());
        self.elements(|r| {
            let raw = r.node()?;
            let k = nodes.len() + bad;
            let mut local = Problems(Vec::new());
            if !tree_node(raw, k, &mut local, &mut nodes) {
                bad += 1;
                if bad <= MAX_NODE_PROBLEMS {
                    problems.extend(local.0);
                }
            }
            Some(())
        })?;
        Some(TreeField::Nodes {
            nodes,
            bad,
            problems,
            sent: self.text[start..self.at].to_owned(),
        })
    }
}
