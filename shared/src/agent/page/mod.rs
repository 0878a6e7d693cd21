//! The page model: one type for both page representations the extension sends. From an
//! `interactiveTree`, the nodes and their ids (`i`); from a `dom` string (simplified or
//! templatized HTML), a light element tree parsed leniently ([`dom`]), element ids taken from
//! `data-element-id`/`data-id`/`id` attributes and from template-call arguments mapped through
//! the template legend ([`templates`]). Either way: the set of valid element ids, a stable
//! hash, and a skeleton (interactive elements and headings) for summaries and verification.
//!
//! Building a page is CPU work bounded by the input: no recursion deeper than
//! [`dom::MAX_DEPTH`], no expansion beyond [`templates::MAX_EXPANDED_BYTES`].

pub mod dom;
pub mod facts;
pub mod html;
pub mod templates;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use dom::{DomNode, DomTree, ID_ATTRIBUTES, KEPT_ATTRIBUTES};
pub use facts::PageView;
pub use templates::Templates;

use crate::text::{collapse_ws_cow, truncate_chars};

/// One node of the extension's `interactiveTree`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeNode {
    /// The element id actions use.
    pub i: String,
    /// Short role (`btn`, `inp`, `link`, ...).
    #[serde(default)]
    pub r: String,
    /// Accessible name (≤ 100 chars from the client).
    #[serde(default)]
    pub n: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v: Option<String>,
    /// States, comma-separated (`disabled,checked`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xy: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#box: Option<[f64; 4]>,
}

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
    Tree(Arc<[TreeNode]>),
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
    /// Every element id an action may use.
    pub ids: HashSet<String>,
    /// Where each element is: its position in the tree, or its node in the DOM.
    pub index: HashMap<String, usize>,
    /// Stable hash of the page's meaningful content (whitespace-insensitive).
    pub hash: String,
    /// The content hash with where each element is on screen: a scroll that moved the view
    /// changes it (a page without positions: the content hash).
    pub view: String,
    pub skeleton: Vec<SkeletonEntry>,
    /// Viewport size, when known (tree rendering puts visible nodes first).
    pub viewport: Option<(f64, f64)>,
}

fn hex_hash(parts: impl Iterator<Item = String>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    hex::encode(&h.finalize()[..16])
}

impl Page {
    /// The page of an `interactiveTree`: one pass over the nodes feeds the ids, the index, the
    /// content hash, the view hash and the skeleton.
    pub fn from_tree(nodes: impl Into<Arc<[TreeNode]>>, viewport: Option<(f64, f64)>) -> Self {
        let nodes: Arc<[TreeNode]> = nodes.into();
        let mut ids = HashSet::with_capacity(nodes.len());
        let mut index = HashMap::with_capacity(nodes.len());
        let mut skeleton = Vec::with_capacity(nodes.len());
        // The same bytes as `i|r|name|v|s` and a NUL per node, without building the line.
        let mut content = Sha256::new();
        let mut positions = Sha256::new();
        let mut placed = false;
        for (k, n) in nodes.iter().enumerate() {
            ids.insert(n.i.clone());
            index.entry(n.i.clone()).or_insert(k);
            let name = collapse_ws_cow(&n.n);
            for part in [
                n.i.as_str(),
                "|",
                n.r.as_str(),
                "|",
                &name,
                "|",
                n.v.as_deref().unwrap_or(""),
                "|",
                n.s.as_deref().unwrap_or(""),
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
            skeleton.push(SkeletonEntry {
                id: Some(n.i.clone()),
                kind: n.r.clone(),
                label: truncate_chars(&name, 60),
            });
        }
        let hash = hex::encode(&content.finalize()[..16]);
        let view = if placed {
            positions.update(hash.as_bytes());
            hex::encode(&positions.finalize()[..16])
        } else {
            hash.clone()
        };
        Page {
            content: PageContent::Tree(nodes),
            ids,
            index,
            hash,
            view,
            skeleton,
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
        let mut index = HashMap::new();
        for (k, _, id) in tree.elements() {
            index.entry(id.to_owned()).or_insert(k);
        }
        let mut ids: HashSet<String> = index.keys().cloned().collect();
        ids.extend(call_ids);
        let hash = hex_hash(tree.text_lines());
        let skeleton = skeleton(&tree);
        Ok(Page {
            content: PageContent::Dom { tree, templatized },
            ids,
            index,
            view: hash.clone(),
            hash,
            skeleton,
            viewport: None,
        })
    }

    /// A one-line description (≤ 200 chars) for step items and messages.
    pub fn summary(&self, title: Option<&str>) -> String {
        let (kind, count) = match &self.content {
            PageContent::Tree(n) => ("tree", n.len()),
            PageContent::Dom {
                templatized: Some(_),
                ..
            } => ("templatized dom", self.ids.len()),
            PageContent::Dom { .. } => ("dom", self.ids.len()),
        };
        let headings: Vec<&str> = self
            .skeleton
            .iter()
            .filter(|e| dom::is_heading(&e.kind))
            .map(|e| e.label.as_str())
            .take(2)
            .collect();
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
        let mut ids: Vec<_> = p.ids.iter().cloned().collect();
        ids.sort();
        assert_eq!(ids, vec!["1", "7", "b2"]);
        assert_eq!(p.skeleton.len(), 3);
        assert_eq!(p.skeleton[0].label, "One");
    }

    #[test]
    fn self_closed_raw_text_elements_do_not_swallow_the_rest() {
        let dom = r#"<div><iframe name="ad" title="x>y"/><a id="1">One</a><textarea id="2"/><a id="3">Three</a><br/><div/><a id="4">Four</a></div>"#;
        let p = Page::from_dom(dom).expect("page");
        let mut ids: Vec<_> = p.ids.iter().cloned().collect();
        ids.sort();
        assert_eq!(ids, vec!["1", "2", "3", "4"]);
    }

    #[test]
    fn template_call_ids_count_as_page_ids() {
        let dom = "T1: <div><a id=$1>$2</a></div>\nT2: <li id=$1>$2</li>\n\n<html><body>{T1(12,\"Hello\")}<a id=\"5\">Home</a>{T2(99,\"Item\")}</body></html>";
        let p = Page::from_dom(dom).expect("page");
        assert!(p.ids.contains("12") && p.ids.contains("5") && p.ids.contains("99"));
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
        let nodes = |y: f64| -> Vec<TreeNode> {
            serde_json::from_value(serde_json::json!([
                { "i": "1", "r": "inp", "n": "  Search \t box ", "v": "shoes", "xy": [97.0, y] },
                { "i": "10", "r": "btn", "n": "Go", "s": "disabled" }
            ]))
            .expect("nodes")
        };
        let a = Page::from_tree(nodes(90.0), None);
        // The hash stored by earlier steps: the node lines `i|r|name|v|s`, each NUL-ended.
        let lines = ["1|inp|Search box|shoes|", "10|btn|Go||disabled"];
        assert_eq!(a.hash, hex_hash(lines.iter().map(|l| (*l).to_owned())));
        let scrolled = Page::from_tree(nodes(-300.0), None);
        assert_eq!(scrolled.hash, a.hash);
        assert_ne!(scrolled.view, a.view);
        assert_eq!(Page::from_tree(nodes(90.0), None).view, a.view);
    }

    #[test]
    fn tree_pages_use_node_ids() {
        let nodes: Vec<TreeNode> = serde_json::from_str(
            r#"[{"i":"1","r":"inp","n":"Search box","xy":[97,90]},{"i":"10","r":"btn","n":"Press me"}]"#,
        )
        .expect("nodes");
        let p = Page::from_tree(nodes, Some((780.0, 437.0)));
        assert!(p.ids.contains("10"));
        assert_eq!(
            p.summary(Some("Probe\nPage")),
            "tree: 2 interactive elements; title \"Probe Page\""
        );
    }
}
