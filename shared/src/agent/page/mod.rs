//! The page model: one type for both page representations the extension sends. From an
//! `interactiveTree`, the nodes in two buffers ([`Nodes`]) and their ids (`i`); from a `dom`
//! string (simplified or templatized HTML), a light element tree parsed leniently ([`dom`]),
//! element ids taken from `data-element-id`/`data-id`/`id` attributes and from template-call
//! arguments mapped through the template legend ([`templates`]). Either way: the valid element
//! ids and where each element is, a stable hash, and — made when asked for — a skeleton
//! (interactive elements and headings).
//!
//! Building a page is CPU work bounded by the input: no recursion deeper than
//! [`dom::MAX_DEPTH`], no expansion beyond [`templates::MAX_EXPANDED_BYTES`].

pub mod dom;
pub mod facts;
pub mod html;
mod ids;
mod nodes;
pub mod templates;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use dom::{DomNode, DomTree, ID_ATTRIBUTES, KEPT_ATTRIBUTES};
pub use facts::PageView;
use ids::Ids;
pub use nodes::{Nodes, TreeNode};
pub use templates::Templates;

use crate::domain::facts::lowered;
use crate::text::{hex_digest, truncate_chars};

/// The skeleton entry of an interactive element or heading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkeletonEntry {
    /// Element id; `None` for headings without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Role (tree) or tag (dom); headings are `h1`..`h6`.
    pub kind: String,
    pub label: String,
}

/// Which representation the page came in.
#[derive(Debug, Clone, PartialEq)]
pub enum PageContent {
    Tree(Nodes),
    Dom {
        tree: DomTree,
        templatized: Option<String>,
    },
}

/// Why a `dom` string cannot be made into a page (a client error: 400 naming `dom`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("a call of template {template} passes more than {max} arguments")]
    TooManyArguments { template: String, max: usize },
    #[error("expands to more than {max} bytes")]
    TooLarge { max: usize },
}

/// The page of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub content: PageContent,
    /// Every element id an action may use, and where each element is.
    ids: Ids,
    /// Stable hash of the page's meaningful content (whitespace-insensitive).
    pub hash: String,
    /// The content hash with where each element is on screen: a scroll that moved the view
    /// changes it (a page without positions: the content hash).
    pub view: String,
    /// Viewport size, when known (tree rendering puts visible nodes first).
    pub viewport: Option<(f64, f64)>,
    /// A tree's text in lower case, for the rules' look over the whole page.
    lower: Option<String>,
}

impl Page {
    /// The page of an `interactiveTree`: one pass over the nodes feeds the content hash and
    /// the view hash; the ids are indexed by sorting the node positions.
    pub fn from_tree(nodes: Nodes, viewport: Option<(f64, f64)>) -> Self {
        // The same bytes as `i|r|name|v|s` and a NUL per node, without building the line.
        let mut content = Sha256::new();
        let mut positions = Sha256::new();
        let mut placed = false;
        for n in nodes.iter() {
            for part in [
                n.i,
                "|",
                n.r,
                "|",
                n.n,
                "|",
                n.v.unwrap_or(""),
                "|",
                n.s.unwrap_or(""),
                "\0",
            ] {
                content.update(part.as_bytes());
            }
            positions.update(n.i.as_bytes());
            match n.xy {
                Some([x, y]) => {
                    placed = true;
                    positions.update(x.to_le_bytes());
                    positions.update(y.to_le_bytes());
                }
                None => positions.update(b"-"),
            }
        }
        let hash = hex::encode(&content.finalize()[..16]);
        let view = if placed {
            positions.update(hash.as_bytes());
            hex::encode(&positions.finalize()[..16])
        } else {
            hash.clone()
        };
        Page {
            ids: Ids::of_tree(&nodes),
            lower: Some(lowered(nodes.text())),
            content: PageContent::Tree(nodes),
            hash,
            view,
            viewport,
        }
    }

    /// The page of a `dom` string: simplified HTML, or a templatized string (legend lines
    /// `Tn: ...`, a blank line, then a body with `{Tn(args)}` calls).
    pub fn from_dom(dom: &str) -> Result<Self, PageError> {
        let templates = Templates::parse(dom);
        let (html, call_ids, templatized) = match &templates {
            Some(t) => {
                let e = t.expand()?;
                (e.html, e.ids, Some(dom.to_owned()))
            }
            None => (dom.to_owned(), Vec::new(), None),
        };
        let tree = DomTree::parse(&html);
        drop(html);
        let hash = hex_digest(tree.text_lines(), 16);
        Ok(Page {
            ids: Ids::of_dom(&tree, call_ids),
            content: PageContent::Dom { tree, templatized },
            view: hash.clone(),
            hash,
            viewport: None,
            lower: None,
        })
    }

    /// Whether an action may use element id `id`.
    pub fn has_id(&self, id: &str) -> bool {
        self.ids.contains(id, &self.content)
    }

    /// Where element `id` is: its position in the tree, or its node in the DOM.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.ids.position(id, &self.content)
    }

    /// Elements with an id (each id once).
    pub fn element_count(&self) -> usize {
        self.ids.elements()
    }

    /// Every element's text in lower case ([`lowered`]), when the page has it in one piece.
    pub fn lower_text(&self) -> Option<&str> {
        self.lower.as_deref()
    }

    /// Every element id an action may use.
    pub fn id_set(&self) -> HashSet<String> {
        self.ids.all(&self.content)
    }

    /// Interactive elements (those with ids) and headings, in page order.
    pub fn skeleton(&self) -> Vec<SkeletonEntry> {
        match &self.content {
            PageContent::Tree(nodes) => nodes
                .iter()
                .map(|n| SkeletonEntry {
                    id: Some(n.i.to_owned()),
                    kind: n.r.to_owned(),
                    label: truncate_chars(n.n, 60),
                })
                .collect(),
            PageContent::Dom { tree, .. } => skeleton(tree),
        }
    }

    /// The first `max` headings' labels.
    fn headings(&self, max: usize) -> Vec<String> {
        match &self.content {
            PageContent::Tree(nodes) => nodes
                .iter()
                .filter(|n| dom::is_heading(n.r))
                .take(max)
                .map(|n| truncate_chars(n.n, 60))
                .collect(),
            PageContent::Dom { tree, .. } => tree
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, n)| matches!(n, DomNode::Element { tag, .. } if dom::is_heading(tag)))
                .take(max)
                .map(|(i, _)| tree.label_of(i, 60))
                .collect(),
        }
    }

    /// A one-line description (≤ 200 chars) for step items and messages.
    pub fn summary(&self, title: Option<&str>) -> String {
        let (kind, count) = match &self.content {
            PageContent::Tree(n) => ("tree", n.len()),
            PageContent::Dom {
                templatized: Some(_),
                ..
            } => ("templatized dom", self.ids.count()),
            PageContent::Dom { .. } => ("dom", self.ids.count()),
        };
        let headings = self.headings(2);
        let mut s = format!("{kind}: {count} interactive elements");
        if let Some(t) = title.filter(|t| !t.trim().is_empty()) {
            s.push_str(&format!("; title \"{}\"", crate::text::single_line(t, 120)));
        }
        if !headings.is_empty() {
            s.push_str(&format!("; headings: {}", headings.join(" | ")));
        }
        truncate_chars(&s, 200)
    }
}

/// Interactive elements (those with ids) and headings, in document order.
fn skeleton(tree: &DomTree) -> Vec<SkeletonEntry> {
    tree.nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| match n {
            DomNode::Element { tag, id, .. } if id.is_some() || dom::is_heading(tag) => {
                Some(SkeletonEntry {
                    id: id.clone(),
                    kind: tag.clone(),
                    label: tree.label_of(i, 60),
                })
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_id_data_id_and_data_element_id() {
        let p = Page::from_dom(
            r#"<div><a id="1">One</a><button data-id="b2">Two</button><input data-element-id="7" id="search"></div>"#,
        )
        .expect("page");
        let mut ids: Vec<_> = p.id_set().into_iter().collect();
        ids.sort();
        assert_eq!(ids, vec!["1", "7", "b2"]);
        assert_eq!(p.skeleton().len(), 3);
        assert_eq!(p.skeleton()[0].label, "One");
    }

    #[test]
    fn self_closed_raw_text_elements_do_not_swallow_the_rest() {
        let dom = r#"<div><iframe name="ad" title="x>y"/><a id="1">One</a><textarea id="2"/><a id="3">Three</a><br/><div/><a id="4">Four</a></div>"#;
        let p = Page::from_dom(dom).expect("page");
        let mut ids: Vec<_> = p.id_set().into_iter().collect();
        ids.sort();
        assert_eq!(ids, vec!["1", "2", "3", "4"]);
    }

    #[test]
    fn template_call_ids_count_as_page_ids() {
        let dom = "T1: <div><a id=$1>$2</a></div>\nT2: <li id=$1>$2</li>\n\n<html><body>{T1(12,\"Hello\")}<a id=\"5\">Home</a>{T2(99,\"Item\")}</body></html>";
        let p = Page::from_dom(dom).expect("page");
        assert!(p.has_id("12") && p.has_id("5") && p.has_id("99"));
    }

    #[test]
    fn the_hash_ignores_whitespace_but_not_content() {
        let page = |d: &str| Page::from_dom(d).expect("page");
        let a = page("<div> <a id=\"1\">Buy   now</a></div>");
        let b = page("<div>\n\t<a id=\"1\">Buy now</a>\n</div>");
        let c = page("<div><a id=\"1\">Buy later</a></div>");
        assert_eq!(a.hash, b.hash);
        assert_ne!(a.hash, c.hash);
    }

    #[test]
    fn tree_hashes_keep_their_definition_and_the_view_follows_positions() {
        let nodes = |y: f64| -> Nodes {
            [
                TreeNode {
                    v: Some("shoes"),
                    xy: Some([97.0, y]),
                    ..TreeNode::new("1", "inp", "  Search \t box ")
                },
                TreeNode {
                    s: Some("disabled"),
                    ..TreeNode::new("10", "btn", "Go")
                },
            ]
            .into_iter()
            .collect()
        };
        let a = Page::from_tree(nodes(90.0), None);
        // The hash stored by earlier steps: the node lines `i|r|name|v|s`, each NUL-ended.
        let lines = ["1|inp|Search box|shoes|", "10|btn|Go||disabled"];
        assert_eq!(a.hash, hex_digest(lines.iter(), 16));
        let scrolled = Page::from_tree(nodes(-300.0), None);
        assert_eq!(scrolled.hash, a.hash);
        assert_ne!(scrolled.view, a.view);
        assert_eq!(Page::from_tree(nodes(90.0), None).view, a.view);
    }

    #[test]
    fn tree_pages_use_node_ids() {
        let nodes = [
            TreeNode {
                xy: Some([97.0, 90.0]),
                ..TreeNode::new("1", "inp", "Search box")
            },
            TreeNode::new("10", "btn", "Press me"),
            TreeNode::new("11", "h2", "Results"),
        ];
        let p = Page::from_tree(nodes.into_iter().collect(), Some((780.0, 437.0)));
        assert!(p.has_id("10"));
        assert_eq!(
            p.summary(Some("Probe\nPage")),
            "tree: 3 interactive elements; title \"Probe Page\"; headings: Results"
        );
    }
}
