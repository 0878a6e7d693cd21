//! A light element tree parsed leniently from a `dom` string with lol_html's streaming
//! rewriter. Every input is bounded: the tree is at most [`MAX_DEPTH`] deep (deeper elements
//! are attached to their ancestor at that depth, so walks over the tree cannot run out of
//! stack), each open/close is O(1), and element labels are computed in one bottom-up pass.

use std::cell::RefCell;
use std::rc::Rc;

use lol_html::html_content::Element;
use lol_html::{doc_text, element, HtmlRewriter, Settings};

use crate::text::{collapse_ws, truncate_chars};

/// Deepest element nesting kept; deeper elements become children of the element at this depth.
/// Real pages stay well below it (the corpus's deepest is under 60).
pub const MAX_DEPTH: u32 = 128;

/// Longest label computed for an element (characters of its visible text).
pub const LABEL_CHARS: usize = 80;

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

/// Elements that never have content; `<br/>` and `<br>` are the same.
const VOID_ELEMENTS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

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

/// An open element on the builder's stack: a node, or a skipped region. A skipped region is
/// only ever the top of the stack: nothing is opened inside one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Node(usize),
    Skipped(usize),
}

#[derive(Default)]
struct Builder {
    nodes: Vec<DomNode>,
    parent: Vec<usize>,
    depth: Vec<u32>,
    stack: Vec<Slot>,
    skipped_regions: usize,
    text: String,
}

impl Builder {
    fn skipping(&self) -> bool {
        matches!(self.stack.last(), Some(Slot::Skipped(_)))
    }

    fn flush_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = collapse_ws(&std::mem::take(&mut self.text));
        if text.is_empty() || self.skipping() {
            return;
        }
        self.push(DomNode::Text(text));
    }

    /// Adds a node under the innermost open element (or, below [`MAX_DEPTH`], under the
    /// ancestor at that depth) and returns its index.
    fn push(&mut self, node: DomNode) -> usize {
        let mut parent = match self.stack.last() {
            Some(Slot::Node(i)) => *i,
            _ => 0,
        };
        if self.depth[parent] >= MAX_DEPTH {
            parent = self.parent[parent];
        }
        let idx = self.nodes.len();
        self.nodes.push(node);
        self.parent.push(parent);
        self.depth.push(self.depth[parent] + 1);
        if let Some(DomNode::Element { children, .. }) = self.nodes.get_mut(parent) {
            children.push(idx);
        }
        idx
    }

    /// Handles a start tag; returns the slot to push when the element has content.
    fn open(&mut self, el: &Element<'_, '_>) -> Option<Slot> {
        self.flush_text();
        if self.skipping() {
            return None;
        }
        let tag = el.tag_name().to_ascii_lowercase();
        if SKIPPED.contains(&tag.as_str()) && !KEPT_BUT_EMPTIED.contains(&tag.as_str()) {
            self.skipped_regions += 1;
            return Some(Slot::Skipped(self.skipped_regions));
        }
        let id = ID_ATTRIBUTES.iter().find_map(|a| {
            el.get_attribute(a)
                .map(|v| truncate_chars(v.trim(), 64))
                .filter(|v| !v.is_empty())
        });
        let attrs = el
            .attributes()
            .iter()
            .filter(|a| KEPT_ATTRIBUTES.contains(&a.name().as_str()))
            .map(|a| (a.name(), truncate_chars(&collapse_ws(&a.value()), 100)))
            .collect();
        let emptied = KEPT_BUT_EMPTIED.contains(&tag.as_str());
        let idx = self.push(DomNode::Element {
            tag,
            id,
            attrs,
            children: Vec::new(),
        });
        if emptied {
            self.skipped_regions += 1;
            return Some(Slot::Skipped(self.skipped_regions));
        }
        Some(Slot::Node(idx))
    }

    /// Handles an end tag: closes the slot and anything left open inside it (elements whose end
    /// tags were missing), so one unclosed element cannot swallow the rest of the page.
    fn close(&mut self, slot: Slot) {
        self.flush_text();
        if let Some(pos) = self.stack.iter().rposition(|s| *s == slot) {
            self.stack.truncate(pos);
        }
    }
}

/// Closes `<tag .../>` of elements that are not void: the simplified and templatized formats
/// write every childless element that way, but an HTML parser ignores the slash — and after
/// `<iframe/>` or `<textarea/>` (raw-text elements) would read the rest of the page as text.
pub fn close_self_closing(html: &str) -> std::borrow::Cow<'_, str> {
    if !html.contains("/>") {
        return std::borrow::Cow::Borrowed(html);
    }
    let bytes = html.as_bytes();
    let mut out = String::with_capacity(html.len() + html.len() / 16);
    let mut last = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            i += 1;
            continue;
        }
        let name_start = i + 1;
        let mut j = name_start;
        while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'-') {
            j += 1;
        }
        if j == name_start || !bytes[name_start].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        // Find the tag's end, skipping quoted attribute values.
        let mut k = j;
        let mut quote = 0u8;
        while k < bytes.len() {
            let b = bytes[k];
            if quote != 0 {
                if b == quote {
                    quote = 0;
                }
            } else if b == b'"' || b == b'\'' {
                quote = b;
            } else if b == b'>' || b == b'<' {
                break;
            }
            k += 1;
        }
        if k >= bytes.len() || bytes[k] != b'>' {
            i = j;
            continue;
        }
        let name = html[name_start..j].to_ascii_lowercase();
        if k > j && bytes[k - 1] == b'/' && !VOID_ELEMENTS.contains(&name.as_str()) {
            out.push_str(&html[last..k - 1]);
            out.push('>');
            out.push_str("</");
            out.push_str(&name);
            out.push('>');
            last = k + 1;
        }
        i = k + 1;
    }
    out.push_str(&html[last..]);
    std::borrow::Cow::Owned(out)
}

impl DomTree {
    /// Parses HTML leniently (invalid markup never fails; text outside elements is kept).
    pub fn parse(html: &str) -> Self {
        let state = Rc::new(RefCell::new(Builder {
            nodes: vec![DomNode::Element {
                tag: "#root".into(),
                id: None,
                attrs: Vec::new(),
                children: Vec::new(),
            }],
            parent: vec![0],
            depth: vec![0],
            stack: vec![Slot::Node(0)],
            ..Builder::default()
        }));
        let on_el = state.clone();
        let on_text = state.clone();
        let settings = Settings {
            element_content_handlers: vec![element!("*", move |el| {
                let slot = on_el.borrow_mut().open(el);
                let has_content = el.can_have_content() && !el.is_self_closing();
                if let (Some(slot), true) = (slot, has_content) {
                    if let Some(handlers) = el.end_tag_handlers() {
                        on_el.borrow_mut().stack.push(slot);
                        let st = on_el.clone();
                        handlers.push(Box::new(move |_end| {
                            st.borrow_mut().close(slot);
                            Ok(())
                        }));
                    }
                }
                Ok(())
            })],
            document_content_handlers: vec![doc_text!(move |t| {
                on_text.borrow_mut().text.push_str(t.as_str());
                Ok(())
            })],
            ..Settings::new()
        };
        // The rewritten output is not needed: discard it instead of building a copy.
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        // Lenient mode never bails out; an error here would be an internal one, and the page is
        // then whatever was parsed so far.
        let _ = rewriter
            .write(html.as_bytes())
            .and_then(|()| rewriter.end());
        let nodes = {
            let mut b = state.borrow_mut();
            b.flush_text();
            std::mem::take(&mut b.nodes)
        };
        let labels = text_labels(&nodes);
        DomTree { nodes, labels }
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
mod tests {
    use super::*;

    fn texts(t: &DomTree) -> Vec<&str> {
        t.nodes
            .iter()
            .filter_map(|n| match n {
                DomNode::Text(s) => Some(s.as_str()),
                _ => None,
            })
            .collect()
    }

    fn max_depth(t: &DomTree) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(0usize, 0usize)];
        while let Some((idx, d)) = stack.pop() {
            deepest = deepest.max(d);
            if let DomNode::Element { children, .. } = &t.nodes[idx] {
                stack.extend(children.iter().map(|&c| (c, d + 1)));
            }
        }
        deepest
    }

    #[test]
    fn scripts_styles_and_comments_never_reach_the_model() {
        let t = DomTree::parse(
            "<p>keep<script>var x = '<a id=9>';</script><style>.a{}</style><!-- note --> me</p>",
        );
        assert!(t.ids().is_empty(), "ids inside scripts do not count");
        assert_eq!(texts(&t).join("|"), "keep|me");
    }

    #[test]
    fn an_unclosed_head_or_skipped_element_does_not_swallow_the_page() {
        let t = DomTree::parse(
            "<html><head><title>T</title><meta charset=utf-8><body><a id=\"1\">x</a></body></html>",
        );
        assert_eq!(t.ids(), vec!["1"]);
        let t = DomTree::parse(
            "<div><svg id=\"1\"><path id=\"9\" d=\"M0\"></div><a id=\"2\">after</a>",
        );
        assert_eq!(
            t.ids(),
            vec!["1", "2"],
            "the svg counts, its drawing does not, and it ends with its parent"
        );
        assert!(!texts(&t).contains(&"T"));
    }

    #[test]
    fn self_closed_raw_text_elements_do_not_swallow_the_rest() {
        assert_eq!(
            close_self_closing("<a/><br/><p class='a/>b'/>"),
            "<a></a><br/><p class='a/>b'></p>"
        );
        assert!(matches!(
            close_self_closing("<p>x</p>"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn broken_markup_is_parsed_leniently() {
        let t = DomTree::parse(r#"<div><a id="1">x<b>y</div><input id="2"/><p>tail"#);
        assert_eq!(t.ids(), vec!["1", "2"]);
        assert!(texts(&t).contains(&"tail"));
        assert_eq!(
            t.text_of(2),
            "x y",
            "the link's text, its unclosed child's included"
        );
    }

    #[test]
    fn deep_nesting_is_flattened_below_the_depth_limit_and_keeps_every_id() {
        // 100 000 unclosed elements, each with an id: no recursion over them can overflow.
        let html: String = (0..100_000).map(|i| format!("<b id=\"{i}\">w")).collect();
        let t = DomTree::parse(&html);
        assert_eq!(t.ids().len(), 100_000);
        assert!(max_depth(&t) <= MAX_DEPTH as usize, "{}", max_depth(&t));
        assert_eq!(t.text_of(1).chars().count(), LABEL_CHARS + 1);
        assert!(t.text_of(1).starts_with("w w w"));
        // Closed nesting as deep, and text after it still lands at the top.
        let closed = format!(
            "{}x{}<p id=\"end\">tail</p>",
            "<i>".repeat(50_000),
            "</i>".repeat(50_000)
        );
        let t = DomTree::parse(&closed);
        assert!(max_depth(&t) <= MAX_DEPTH as usize);
        let DomNode::Element { children, .. } = &t.nodes[0] else {
            panic!("root")
        };
        assert!(children
            .iter()
            .any(|&c| matches!(&t.nodes[c], DomNode::Element { id: Some(id), .. } if id == "end")));
    }

    #[test]
    fn labels_are_bounded_and_linear_for_nested_labelled_elements() {
        // Nested ids each containing everything below: labels stay short.
        let html = format!("{}{}", "<a id=\"x\">".repeat(100), "word ".repeat(10_000));
        let t = DomTree::parse(&html);
        for i in 1..t.nodes.len() {
            assert!(t.text_of(i).chars().count() <= LABEL_CHARS + 1);
        }
        assert_eq!(t.label_of(1, 10), "word word…");
    }
}
