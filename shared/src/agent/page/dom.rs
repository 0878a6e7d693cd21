//! A light element tree built from a `dom` string by a lenient tokenizer ([`super::html`]).
//! Every input is bounded: at most [`MAX_DEPTH`] elements are open at a time (deeper ones are
//! attached to the element at that depth, so walks over the tree cannot run out of stack, and
//! an end tag is matched against at most that many open elements), the tokenizer never looks
//! back, and element labels are computed in one bottom-up pass — linear in the page whatever
//! its shape.

use super::html::{tokenize, Token, VOID_ELEMENTS};
use crate::text::{collapse_ws, truncate_chars};

/// Deepest element nesting kept; deeper elements become children of the element at this depth.
/// Real pages stay well below it (the corpus's deepest is under 60).
pub const MAX_DEPTH: usize = 128;

/// Longest label computed for an element (characters of its visible text).
pub const LABEL_CHARS: usize = 80;

/// Longest element id taken from the page; longer ones (and ids with spaces, quotes, commas or
/// parentheses) cannot be written in an action, so their elements count as having none.
pub const MAX_ID_CHARS: usize = 128;

/// Attributes kept from the DOM (everything else is noise for the model).
pub const KEPT_ATTRIBUTES: &[&str] = &[
    "aria-label",
    "data-name",
    "name",
    "type",
    "placeholder",
    "value",
    "role",
    "title",
    "alt",
    "href",
    "aria-expanded",
    "aria-checked",
    "aria-selected",
    "disabled",
    "checked",
    "selected",
];

/// Attributes that carry the element id, most specific first.
pub const ID_ATTRIBUTES: &[&str] = &["data-element-id", "data-id", "id"];

/// Elements whose content never reaches the model. (`head` is not among them: real pages
/// often leave it implicitly closed; its `title`, scripts and styles are skipped one by one.)
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "iframe", "object", "title",
];

/// Skipped elements that still count themselves (an icon or frame with an element id can be
/// acted on); only their content is dropped.
const KEPT_BUT_EMPTIED: &[&str] = &["svg", "iframe", "object"];

/// An element or a text run of a parsed DOM.
#[derive(Debug, Clone, PartialEq)]
pub enum DomNode {
    Element {
        tag: String,
        /// The element's id (see [`ID_ATTRIBUTES`]).
        id: Option<String>,
        attrs: Vec<(String, String)>,
        children: Vec<usize>,
    },
    Text(String),
}

/// A parsed `dom` page: nodes in document order, node 0 is the root. A node's children always
/// come after it, so a reverse pass sees children before parents.
#[derive(Debug, Clone, PartialEq)]
pub struct DomTree {
    pub nodes: Vec<DomNode>,
    /// The visible text of each element with an id and of each heading, whitespace-collapsed,
    /// at most [`LABEL_CHARS`] + 1 characters (so a cut can be detected); empty otherwise.
    labels: Vec<String>,
}

pub fn is_heading(tag: &str) -> bool {
    matches!(tag, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

/// Whether an id can be written in an action (`click(<id>)`) and listed unambiguously
/// (`[id]` lines, `a..b` ranges).
pub fn usable_id(id: &str) -> bool {
    !id.is_empty()
        && id.chars().count() <= MAX_ID_CHARS
        && !id.contains("..")
        && !id
            .chars()
            .any(|c| c.is_whitespace() || "\"'`(),[]".contains(c))
}

#[derive(Default)]
struct Builder {
    nodes: Vec<DomNode>,
    /// Open elements, the root first; at most `MAX_DEPTH` more.
    stack: Vec<usize>,
    /// An element whose content is dropped (templates, drawings, frames).
    skip: Option<Skip>,
    text: String,
}

/// A skipped element: its tag and the elements open inside it (at most `MAX_DEPTH`), so that
/// an end tag inside closes an inner element first.
struct Skip {
    tag: String,
    inner: Vec<String>,
}

impl Skip {
    fn new(tag: String) -> Self {
        Self {
            tag,
            inner: Vec::new(),
        }
    }

    /// Drawings and frames end with an enclosing element whose end tag comes first (a missing
    /// `</svg>` must not swallow the page); a template ends only with its own end tag.
    fn ends_with_parent(&self) -> bool {
        KEPT_BUT_EMPTIED.contains(&self.tag.as_str())
    }
}

impl Builder {
    fn tag_of(&self, idx: usize) -> &str {
        match &self.nodes[idx] {
            DomNode::Element { tag, .. } => tag,
            DomNode::Text(_) => "",
        }
    }

    fn flush_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = collapse_ws(&std::mem::take(&mut self.text));
        if !text.is_empty() {
            self.push(DomNode::Text(text));
        }
    }

    /// Adds a node under the innermost open element and returns its index.
    fn push(&mut self, node: DomNode) -> usize {
        let parent = self.stack.last().copied().unwrap_or(0);
        let idx = self.nodes.len();
        self.nodes.push(node);
        if let Some(DomNode::Element { children, .. }) = self.nodes.get_mut(parent) {
            children.push(idx);
        }
        idx
    }

    fn open(&mut self, tag: String, attrs: Vec<(String, String)>, self_closing: bool) {
        if let Some(skip) = &mut self.skip {
            let has_content = !self_closing && !VOID_ELEMENTS.contains(&tag.as_str());
            if has_content && skip.inner.len() < MAX_DEPTH {
                skip.inner.push(tag);
            }
            return;
        }
        self.flush_text();
        let has_content = !self_closing && !VOID_ELEMENTS.contains(&tag.as_str());
        if SKIPPED.contains(&tag.as_str()) && !KEPT_BUT_EMPTIED.contains(&tag.as_str()) {
            if has_content {
                self.skip = Some(Skip::new(tag));
            }
            return;
        }
        let id = ID_ATTRIBUTES.iter().find_map(|a| {
            attrs
                .iter()
                .find(|(k, _)| k == a)
                .map(|(_, v)| v.trim())
                .filter(|v| usable_id(v))
                .map(str::to_owned)
        });
        let kept = attrs
            .into_iter()
            .filter(|(k, _)| KEPT_ATTRIBUTES.contains(&k.as_str()))
            .map(|(k, v)| (k, truncate_chars(&collapse_ws(&v), 100)))
            .collect();
        let emptied = KEPT_BUT_EMPTIED.contains(&tag.as_str());
        let idx = self.push(DomNode::Element {
            tag: tag.clone(),
            id,
            attrs: kept,
            children: Vec::new(),
        });
        if !has_content {
            return;
        }
        if emptied {
            self.skip = Some(Skip::new(tag));
        } else if self.stack.len() <= MAX_DEPTH {
            self.stack.push(idx);
        }
    }

    /// Closes the innermost open element named `tag` and anything left open inside it
    /// (elements whose end tags were missing), so one unclosed element cannot swallow the rest
    /// of the page. An end tag that matches nothing is ignored.
    fn close(&mut self, tag: &str) {
        let open_at = |b: &Builder| {
            (1..b.stack.len())
                .rev()
                .find(|&p| b.tag_of(b.stack[p]) == tag)
        };
        if let Some(skip) = &mut self.skip {
            if let Some(pos) = skip.inner.iter().rposition(|t| t == tag) {
                skip.inner.truncate(pos);
                return;
            }
            if skip.tag == tag {
                self.skip = None;
                return;
            }
            // The end of an enclosing element ends a drawing or frame with it.
            if skip.ends_with_parent() {
                if let Some(pos) = open_at(self) {
                    self.skip = None;
                    self.stack.truncate(pos);
                }
            }
            return;
        }
        self.flush_text();
        if let Some(pos) = open_at(self) {
            self.stack.truncate(pos);
        }
    }
}

impl DomTree {
    /// Parses HTML leniently (invalid markup never fails; text outside elements is kept).
    pub fn parse(html: &str) -> Self {
        let mut b = Builder {
            nodes: vec![DomNode::Element {
                tag: "#root".into(),
                id: None,
                attrs: Vec::new(),
                children: Vec::new(),
            }],
            stack: vec![0],
            ..Builder::default()
        };
        tokenize(html, |token| match token {
            Token::Start {
                name,
                attrs,
                self_closing,
            } => b.open(name, attrs, self_closing),
            Token::End(name) => b.close(&name),
            Token::Text(t) => {
                if b.skip.is_none() {
                    b.text.push_str(t);
                }
            }
        });
        b.flush_text();
        let labels = text_labels(&b.nodes);
        DomTree {
            nodes: b.nodes,
            labels,
        }
    }

    /// Every element with an id, in document order: node index, tag and id.
    pub fn elements(&self) -> impl Iterator<Item = (usize, &str, &str)> + '_ {
        self.nodes.iter().enumerate().filter_map(|(k, n)| match n {
            DomNode::Element {
                tag, id: Some(id), ..
            } => Some((k, tag.as_str(), id.as_str())),
            _ => None,
        })
    }

    /// Every element id, in document order.
    pub fn ids(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter_map(|n| match n {
                DomNode::Element { id: Some(id), .. } => Some(id.clone()),
                _ => None,
            })
            .collect()
    }

    /// The visible text of an element with an id or of a heading (see [`DomTree::labels`]).
    pub fn text_of(&self, idx: usize) -> &str {
        self.labels.get(idx).map_or("", String::as_str)
    }

    /// A label for an element of at most `max` characters: its text, else its most telling
    /// attribute. Only elements with ids and headings have text labels.
    pub fn label_of(&self, idx: usize, max: usize) -> String {
        let text = self.text_of(idx);
        if !text.is_empty() {
            return truncate_chars(text, max.min(LABEL_CHARS));
        }
        if let Some(DomNode::Element { attrs, .. }) = self.nodes.get(idx) {
            for key in [
                "aria-label",
                "title",
                "placeholder",
                "alt",
                "value",
                "name",
                "data-name",
            ] {
                if let Some((_, v)) = attrs.iter().find(|(k, _)| k == key) {
                    return truncate_chars(v, max);
                }
            }
        }
        String::new()
    }

    /// The content as lines (tags with ids and kept attributes, and text) for hashing.
    pub fn text_lines(&self) -> impl Iterator<Item = String> + '_ {
        self.nodes.iter().map(|n| match n {
            DomNode::Element { tag, id, attrs, .. } => format!("<{tag} {id:?} {attrs:?}>"),
            DomNode::Text(t) => t.clone(),
        })
    }
}

/// Whether an element gets a text label: it has an id, or it is a heading.
fn labelled(node: &DomNode) -> bool {
    matches!(node, DomNode::Element { tag, id, .. } if id.is_some() || is_heading(tag))
}

/// The text prefix of every labelled element, computed bottom-up in one pass: a node's prefix
/// is built from its children's (each at most `LABEL_CHARS + 1` characters), so the work is
/// linear in the page whatever its shape. Prefixes of unlabelled elements are dropped as soon
/// as their parent has used them.
fn text_labels(nodes: &[DomNode]) -> Vec<String> {
    let cap = LABEL_CHARS + 1;
    let mut prefix: Vec<String> = vec![String::new(); nodes.len()];
    for idx in (0..nodes.len()).rev() {
        let DomNode::Element { children, .. } = &nodes[idx] else {
            continue;
        };
        let mut out = String::new();
        let mut count = 0;
        for &c in children {
            if count >= cap {
                break;
            }
            let piece: &str = match &nodes[c] {
                DomNode::Text(t) => t,
                DomNode::Element { .. } => &prefix[c],
            };
            if piece.is_empty() {
                continue;
            }
            if count > 0 {
                out.push(' ');
                count += 1;
            }
            for ch in piece.chars().take(cap.saturating_sub(count)) {
                out.push(ch);
                count += 1;
            }
        }
        // Children's prefixes are consumed: free those nobody will ask for.
        for &c in children {
            if !labelled(&nodes[c]) {
                prefix[c] = String::new();
            }
        }
        prefix[idx] = out;
    }
    for (p, n) in prefix.iter_mut().zip(nodes) {
        if !labelled(n) {
            *p = String::new();
        }
    }
    prefix
}

#[cfg(test)]
#[path = "dom_tests.rs"]
mod tests;
