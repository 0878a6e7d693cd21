//! A tree page's nodes in two allocations: the text of every field back to back in one buffer,
//! and per node where its fields are in it. Reading a 2 000-node tree this way costs two growing
//! buffers instead of thousands of small strings, and every pass over the page (its model, its
//! rendering, the rules) reads one contiguous buffer. Names are kept with whitespace collapsed:
//! the form the page's hash, its rendering and the rules all read.

use crate::text::collapse_ws_cow;

/// Where a field's text is in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Span {
    start: u32,
    end: u32,
}

/// One node: its fields' places in the buffer and its positions.
#[derive(Debug, Clone, PartialEq)]
struct Slots {
    i: Span,
    r: Span,
    n: Span,
    v: Option<Span>,
    s: Option<Span>,
    xy: Option<[f64; 2]>,
    r#box: Option<[f64; 4]>,
}

/// One node of the extension's `interactiveTree`, as read from [`Nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TreeNode<'a> {
    /// The element id actions use.
    pub i: &'a str,
    /// Short role (`btn`, `inp`, `link`, ...).
    pub r: &'a str,
    /// Accessible name (≤ 100 chars from the client), whitespace collapsed.
    pub n: &'a str,
    pub v: Option<&'a str>,
    /// States, comma-separated (`disabled,checked`).
    pub s: Option<&'a str>,
    pub xy: Option<[f64; 2]>,
    pub r#box: Option<[f64; 4]>,
}

impl<'a> TreeNode<'a> {
    /// A node with an id, a role and a name, and nothing else.
    pub fn new(i: &'a str, r: &'a str, n: &'a str) -> Self {
        Self {
            i,
            r,
            n,
            ..Self::default()
        }
    }
}

/// The nodes of a tree page, in the order sent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Nodes {
    text: String,
    slots: Vec<Slots>,
}

impl Nodes {
    /// Room for `nodes` nodes and `text` bytes of text.
    pub fn with_capacity(nodes: usize, text: usize) -> Self {
        Self {
            text: String::with_capacity(text),
            slots: Vec::with_capacity(nodes),
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Every field of every node, back to back: a text that holds each node's name, for a
    /// quick look over the whole page before node by node.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn at(&self, s: Span) -> &str {
        self.text
            .get(s.start as usize..s.end as usize)
            .unwrap_or("")
    }

    fn view(&self, s: &Slots) -> TreeNode<'_> {
        TreeNode {
            i: self.at(s.i),
            r: self.at(s.r),
            n: self.at(s.n),
            v: s.v.map(|v| self.at(v)),
            s: s.s.map(|v| self.at(v)),
            xy: s.xy,
            r#box: s.r#box,
        }
    }

    /// Node `k`.
    pub fn get(&self, k: usize) -> Option<TreeNode<'_>> {
        self.slots.get(k).map(|s| self.view(s))
    }

    /// Node `k`'s role and id (without reading its other fields).
    pub fn role_and_id(&self, k: usize) -> Option<(&str, &str)> {
        self.slots.get(k).map(|s| (self.at(s.r), self.at(s.i)))
    }

    /// The nodes' positions (`xy`), in order.
    pub fn positions(&self) -> impl ExactSizeIterator<Item = Option<[f64; 2]>> + '_ {
        self.slots.iter().map(|s| s.xy)
    }

    /// The nodes in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TreeNode<'_>> + Clone + '_ {
        self.slots.iter().map(|s| self.view(s))
    }

    /// Appends `piece` to the buffer; `None` when the buffer would pass 4 GiB (a request is
    /// far smaller: the body limit is 64 MiB at most).
    fn put(&mut self, piece: &str) -> Option<Span> {
        let start = u32::try_from(self.text.len()).ok()?;
        let end = u32::try_from(self.text.len() + piece.len()).ok()?;
        self.text.push_str(piece);
        Some(Span { start, end })
    }

    /// Appends a node (its name with whitespace collapsed); `false`, and nothing kept, when
    /// the buffer is full.
    pub fn push(&mut self, node: TreeNode<'_>) -> bool {
        let mark = self.text.len();
        let slots = (|| {
            Some(Slots {
                i: self.put(node.i)?,
                r: self.put(node.r)?,
                n: self.put(&collapse_ws_cow(node.n))?,
                v: match node.v {
                    Some(v) => Some(self.put(v)?),
                    None => None,
                },
                s: match node.s {
                    Some(s) => Some(self.put(s)?),
                    None => None,
                },
                xy: node.xy,
                r#box: node.r#box,
            })
        })();
        match slots {
            Some(s) => {
                self.slots.push(s);
                true
            }
            None => {
                self.text.truncate(mark);
                false
            }
        }
    }
}

impl<'a> FromIterator<TreeNode<'a>> for Nodes {
    fn from_iter<T: IntoIterator<Item = TreeNode<'a>>>(iter: T) -> Self {
        let mut nodes = Nodes::default();
        for n in iter {
            nodes.push(n);
        }
        nodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_read_back_as_pushed_with_names_collapsed() {
        let sent = [
            TreeNode {
                v: Some("shoes"),
                xy: Some([97.0, 90.0]),
                ..TreeNode::new("1", "inp", "  Search \t box ")
            },
            TreeNode {
                s: Some("disabled"),
                r#box: Some([1.0, 2.0, 3.0, 4.0]),
                ..TreeNode::new("10", "btn", "Go")
            },
            TreeNode {
                s: Some(""),
                v: Some(""),
                ..TreeNode::new("ü", "", "")
            },
        ];
        let nodes: Nodes = sent.iter().copied().collect();
        assert_eq!(nodes.len(), 3);
        let back: Vec<TreeNode> = nodes.iter().collect();
        assert_eq!(back[0].n, "Search box");
        assert_eq!(
            back[0],
            TreeNode {
                n: "Search box",
                ..sent[0]
            }
        );
        assert_eq!(back[1], sent[1]);
        assert_eq!(back[2], sent[2]);
        assert_eq!(nodes.get(3), None);
        assert!(nodes.text().contains("Search box") && nodes.text().contains("Go"));
    }
}
