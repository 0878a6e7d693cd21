//! The page model: one type for both page representations the extension sends. From an
//! `interactiveTree`, the nodes and their ids (`i`); from a `dom` string (simplified or
//! templatized HTML), a light element tree parsed leniently with lol_html, element ids taken
//! from `data-element-id`/`data-id`/`id` attributes and from template-call arguments mapped
//! through the template legend. Either way: the set of valid element ids, a stable hash, and a
//! skeleton (interactive elements and headings) for summaries and later verification.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;

use lol_html::html_content::{ContentType, Element};
use lol_html::{doc_text, element, RewriteStrSettings};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

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

/// A parsed `dom` page: nodes in document order, node 0 is the root.
#[derive(Debug, Clone, PartialEq)]
pub struct DomTree {
    pub nodes: Vec<DomNode>,
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
    Tree(Vec<TreeNode>),
    Dom {
        tree: DomTree,
        templatized: Option<String>,
    },
}

/// The page of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub content: PageContent,
    /// Every element id an action may use.
    pub ids: HashSet<String>,
    /// Stable hash of the page's meaningful content (whitespace-insensitive).
    pub hash: String,
    pub skeleton: Vec<SkeletonEntry>,
    /// Viewport size, when known (tree rendering puts visible nodes first).
    pub viewport: Option<(f64, f64)>,
}

/// Collapses runs of whitespace into one space.
pub fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out
}

/// At most `max` characters of `s`, with `…` when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn hex_hash(parts: impl Iterator<Item = String>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Page {
    /// The page of an `interactiveTree`.
    pub fn from_tree(nodes: Vec<TreeNode>, viewport: Option<(f64, f64)>) -> Self {
        let ids = nodes.iter().map(|n| n.i.clone()).collect();
        let hash = hex_hash(nodes.iter().map(|n| {
            format!(
                "{}|{}|{}|{}|{}",
                n.i,
                n.r,
                collapse_ws(&n.n),
                n.v.as_deref().unwrap_or(""),
                n.s.as_deref().unwrap_or("")
            )
        }));
        let skeleton = nodes
            .iter()
            .map(|n| SkeletonEntry {
                id: Some(n.i.clone()),
                kind: n.r.clone(),
                label: truncate_chars(&collapse_ws(&n.n), 60),
            })
            .collect();
        Page {
            content: PageContent::Tree(nodes),
            ids,
            hash,
            skeleton,
            viewport,
        }
    }

    /// The page of a `dom` string: simplified HTML, or a templatized string (legend lines
    /// `Tn: ...`, a blank line, then a body with `{Tn(args)}` calls).
    pub fn from_dom(dom: &str) -> Self {
        let templates = Templates::parse(dom);
        let (html, templatized) = match &templates {
            Some(t) => (t.expand(), Some(dom.to_owned())),
            None => (dom.to_owned(), None),
        };
        let tree = DomTree::parse(&close_self_closing(&html));
        let mut ids: HashSet<String> = tree.ids().into_iter().collect();
        if let Some(t) = &templates {
            ids.extend(t.call_ids());
        }
        let hash = hex_hash(tree.text_lines().into_iter());
        let skeleton = tree.skeleton();
        Page {
            content: PageContent::Dom { tree, templatized },
            ids,
            hash,
            skeleton,
            viewport: None,
        }
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
            .filter(|e| e.kind.starts_with('h') && e.kind.len() == 2)
            .map(|e| e.label.as_str())
            .take(2)
            .collect();
        let mut s = format!("{kind}: {count} interactive elements");
        if let Some(t) = title.filter(|t| !t.trim().is_empty()) {
            s.push_str(&format!("; title \"{}\"", collapse_ws(t)));
        }
        if !headings.is_empty() {
            s.push_str(&format!("; headings: {}", headings.join(" | ")));
        }
        truncate_chars(&s, 200)
    }
}

// ------------------------------------------------------------------ DOM parsing

fn is_heading(tag: &str) -> bool {
    matches!(tag, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

/// An open element on the builder's stack: a node, or a skipped region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Node(usize),
    Skipped(usize),
}

#[derive(Default)]
struct Builder {
    nodes: Vec<DomNode>,
    stack: Vec<Slot>,
    skipped_regions: usize,
    text: String,
}

impl Builder {
    fn skipping(&self) -> bool {
        self.stack.iter().any(|s| matches!(s, Slot::Skipped(_)))
    }

    fn flush_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = collapse_ws(&std::mem::take(&mut self.text));
        if text.is_empty() || self.skipping() {
            return;
        }
        let idx = self.nodes.len();
        self.nodes.push(DomNode::Text(text));
        self.attach(idx);
    }

    fn attach(&mut self, idx: usize) {
        let parent = self
            .stack
            .iter()
            .rev()
            .find_map(|s| match s {
                Slot::Node(i) => Some(*i),
                Slot::Skipped(_) => None,
            })
            .unwrap_or(0);
        if let Some(DomNode::Element { children, .. }) = self.nodes.get_mut(parent) {
            children.push(idx);
        }
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
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        });
        let attrs = el
            .attributes()
            .iter()
            .filter(|a| KEPT_ATTRIBUTES.contains(&a.name().as_str()))
            .map(|a| (a.name(), truncate_chars(&collapse_ws(&a.value()), 100)))
            .collect();
        let idx = self.nodes.len();
        let emptied = KEPT_BUT_EMPTIED.contains(&tag.as_str());
        self.nodes.push(DomNode::Element {
            tag,
            id,
            attrs,
            children: Vec::new(),
        });
        self.attach(idx);
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

/// Elements that never have content; `<br/>` and `<br>` are the same.
const VOID_ELEMENTS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

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
            stack: vec![Slot::Node(0)],
            ..Builder::default()
        }));
        let on_el = state.clone();
        let on_text = state.clone();
        let settings = RewriteStrSettings {
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
                t.replace("", ContentType::Text);
                Ok(())
            })],
            ..RewriteStrSettings::new()
        };
        // Lenient mode never bails out; an error here would be an internal one, and the page is
        // then whatever was parsed so far.
        let _ = lol_html::rewrite_str(html, settings);
        let mut b = state.borrow_mut();
        b.flush_text();
        DomTree {
            nodes: std::mem::take(&mut b.nodes),
        }
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

    /// The visible text of a subtree, whitespace-collapsed.
    pub fn text_of(&self, idx: usize) -> String {
        let mut out = String::new();
        self.collect_text(idx, &mut out);
        collapse_ws(&out)
    }

    fn collect_text(&self, idx: usize, out: &mut String) {
        match &self.nodes[idx] {
            DomNode::Text(t) => {
                out.push(' ');
                out.push_str(t);
            }
            DomNode::Element { children, .. } => {
                for &c in children {
                    self.collect_text(c, out);
                }
            }
        }
    }

    /// A label for an element: its text, else its most telling attribute.
    pub fn label_of(&self, idx: usize) -> String {
        let text = self.text_of(idx);
        if !text.is_empty() {
            return text;
        }
        if let DomNode::Element { attrs, .. } = &self.nodes[idx] {
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
                    return v.clone();
                }
            }
        }
        String::new()
    }

    /// Interactive elements (those with ids) and headings, in document order.
    pub fn skeleton(&self) -> Vec<SkeletonEntry> {
        self.nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| match n {
                DomNode::Element { tag, id, .. } if id.is_some() || is_heading(tag) => {
                    Some(SkeletonEntry {
                        id: id.clone(),
                        kind: tag.clone(),
                        label: truncate_chars(&self.label_of(i), 60),
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// The content as lines (tags with ids and kept attributes, and text) for hashing.
    fn text_lines(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|n| match n {
                DomNode::Element { tag, id, attrs, .. } => format!("<{tag} {id:?} {attrs:?}>"),
                DomNode::Text(t) => t.clone(),
            })
            .collect()
    }
}

// ------------------------------------------------------------------ templates

/// The legend of a templatized string and the body that calls it.
#[derive(Debug, Clone, PartialEq)]
pub struct Templates {
    /// Template name → body with `$k` placeholders.
    pub legend: BTreeMap<String, String>,
    pub body: String,
}

/// One `{Tn(args)}` call in a body: where it is and its parsed arguments.
#[derive(Debug, Clone, PartialEq)]
struct Call {
    start: usize,
    end: usize,
    name: String,
    args: Vec<String>,
}

impl Templates {
    /// Recognises a templatized string: legend lines `Tn: ...` (possibly none, then the string
    /// starts with a blank line) followed by a blank line and the body. `None` for plain HTML.
    pub fn parse(dom: &str) -> Option<Self> {
        let mut legend = BTreeMap::new();
        let mut rest = dom;
        loop {
            if let Some(r) = rest.strip_prefix('\n') {
                // The blank line that ends the legend.
                return (!legend.is_empty() || dom.starts_with('\n')).then(|| Templates {
                    legend,
                    body: r.to_owned(),
                });
            }
            let (line, tail) = rest.split_once('\n')?;
            let (name, template) = line.split_once(": ")?;
            let valid = name.len() > 1
                && name.starts_with('T')
                && name[1..].chars().all(|c| c.is_ascii_digit());
            if !valid {
                return None;
            }
            // A template body can span lines: it continues until the next `Tn: ` or blank line.
            let mut template = template.to_owned();
            let mut tail = tail;
            while !tail.starts_with('\n') && !starts_with_template(tail) && !tail.is_empty() {
                let (l, t) = tail.split_once('\n').unwrap_or((tail, ""));
                template.push('\n');
                template.push_str(l);
                tail = t;
            }
            legend.insert(name.to_owned(), template);
            rest = tail;
        }
    }

    fn calls(&self) -> Vec<Call> {
        let bytes = self.body.as_bytes();
        let mut calls = Vec::new();
        let mut i = 0;
        while let Some(off) = self.body[i..].find("{T") {
            let start = i + off;
            let name_end = start
                + 2
                + self.body[start + 2..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .count();
            if name_end == start + 2 || bytes.get(name_end) != Some(&b'(') {
                i = start + 2;
                continue;
            }
            let name = self.body[start + 1..name_end].to_owned();
            match parse_args(&self.body[name_end + 1..]) {
                Some((args, used)) if self.legend.contains_key(&name) => {
                    let end = name_end + 1 + used;
                    calls.push(Call {
                        start,
                        end,
                        name,
                        args,
                    });
                    i = end;
                }
                _ => i = name_end,
            }
        }
        calls
    }

    /// Element ids passed to templates: arguments in positions the template uses as `id=$k`.
    pub fn call_ids(&self) -> Vec<String> {
        let id_positions: BTreeMap<&str, Vec<usize>> = self
            .legend
            .iter()
            .map(|(name, t)| (name.as_str(), id_placeholders(t)))
            .collect();
        let mut ids = Vec::new();
        for call in self.calls() {
            for &k in id_positions
                .get(call.name.as_str())
                .map(Vec::as_slice)
                .unwrap_or(&[])
            {
                if let Some(v) = call.args.get(k - 1) {
                    ids.push(v.trim().to_owned());
                }
            }
        }
        ids
    }

    /// The body with every call replaced by its template, arguments substituted (ids quoted).
    pub fn expand(&self) -> String {
        let mut out = String::with_capacity(self.body.len() * 2);
        let mut last = 0;
        for call in self.calls() {
            out.push_str(&self.body[last..call.start]);
            if let Some(t) = self.legend.get(&call.name) {
                out.push_str(&substitute(t, &call.args));
            }
            last = call.end;
        }
        out.push_str(&self.body[last..]);
        out
    }
}

fn starts_with_template(s: &str) -> bool {
    s.split_once(": ").is_some_and(|(name, _)| {
        name.len() > 1 && name.starts_with('T') && name[1..].chars().all(|c| c.is_ascii_digit())
    })
}

/// Placeholder numbers used as `id=$k` in a template.
fn id_placeholders(template: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(pos) = rest.find("id=$") {
        let digits: String = rest[pos + 4..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(k) = digits.parse() {
            out.push(k);
        }
        rest = &rest[pos + 4..];
    }
    out
}

/// Replaces `$k` (highest k first, so `$12` is not read as `$1`) with the arguments; a
/// placeholder in `id=$k` position gets a quoted value.
fn substitute(template: &str, args: &[String]) -> String {
    let mut out = template.to_owned();
    for k in (1..=args.len()).rev() {
        let v = &args[k - 1];
        out = out.replace(&format!("id=${k}"), &format!("id=\"{}\"", v.trim()));
        out = out.replace(&format!("${k}"), v);
    }
    out
}

/// Parses `a, "b", 3)` after a call's `(`: returns the arguments and the bytes consumed
/// (through the closing `)` and `}`).
fn parse_args(s: &str) -> Option<(Vec<String>, usize)> {
    let mut args = Vec::new();
    let mut chars = s.char_indices().peekable();
    loop {
        while chars.peek().is_some_and(|(_, c)| *c == ' ') {
            chars.next();
        }
        match chars.peek().copied() {
            Some((_, ')')) if args.is_empty() => {
                chars.next();
                break;
            }
            Some((start, '"')) => {
                // A JSON string: find its end, honouring escapes, and decode it.
                chars.next();
                let mut escaped = false;
                let mut end = None;
                for (i, c) in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        end = Some(i);
                        break;
                    }
                }
                let end = end?;
                let raw = &s[start..=end];
                args.push(
                    serde_json::from_str::<String>(raw)
                        .unwrap_or_else(|_| raw[1..raw.len() - 1].to_owned()),
                );
            }
            Some((start, _)) => {
                // A bare argument: up to the next comma or `)`.
                let mut end = s.len();
                while let Some(&(i, c)) = chars.peek() {
                    if c == ',' || c == ')' {
                        end = i;
                        break;
                    }
                    chars.next();
                }
                args.push(s[start..end].to_owned());
            }
            None => return None,
        }
        match chars.next() {
            Some((_, ',')) => continue,
            Some((_, ')')) => break,
            _ => return None,
        }
    }
    let (i, c) = chars.next()?;
    (c == '}').then_some((args, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_id_data_id_and_data_element_id() {
        let p = Page::from_dom(
            r#"<div><a id="1">One</a><button data-id="b2">Two</button><input data-element-id="7" id="search"></div>"#,
        );
        let mut ids: Vec<_> = p.ids.iter().cloned().collect();
        ids.sort();
        assert_eq!(ids, vec!["1", "7", "b2"]);
        assert_eq!(p.skeleton.len(), 3);
        assert_eq!(p.skeleton[0].label, "One");
    }

    #[test]
    fn scripts_styles_and_comments_never_reach_the_model() {
        let t = DomTree::parse(
            "<p>keep<script>var x = '<a id=9>';</script><style>.a{}</style><!-- note --> me</p>",
        );
        assert!(t.ids().is_empty(), "ids inside scripts do not count");
        let texts: Vec<_> = t
            .nodes
            .iter()
            .filter_map(|n| {
                if let DomNode::Text(s) = n {
                    Some(s.as_str())
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(texts.join("|"), "keep|me");
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
        assert!(!t.text_of(0).contains('T'));
    }

    #[test]
    fn self_closed_raw_text_elements_do_not_swallow_the_rest() {
        let dom = r#"<div><iframe name="ad" title="x>y"/><a id="1">One</a><textarea id="2"/><a id="3">Three</a><br/><div/><a id="4">Four</a></div>"#;
        let p = Page::from_dom(dom);
        let mut ids: Vec<_> = p.ids.iter().cloned().collect();
        ids.sort();
        assert_eq!(ids, vec!["1", "2", "3", "4"]);
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
        assert!(t.text_of(0).contains("tail"));
    }

    #[test]
    fn template_calls_expand_and_their_id_arguments_count() {
        let dom = "T1: <div><a id=$1>$2</a><p>$3</p></div>\nT2: <li id=$1>$2</li>\n\n<html><body>{T1(12,\"Hello, \\\"world\\\"\",\"x\")}<a id=\"5\">Home</a>{T2(99,\"Item\")}{T9(1)}</body></html>";
        let t = Templates::parse(dom).expect("templatized");
        assert_eq!(t.legend.len(), 2);
        let mut ids = t.call_ids();
        ids.sort();
        assert_eq!(ids, vec!["12", "99"]);
        let expanded = t.expand();
        assert!(
            expanded.contains(r#"<a id="12">Hello, "world"</a>"#),
            "{expanded}"
        );
        assert!(
            expanded.contains("{T9(1)}"),
            "unknown templates stay as text"
        );
        let p = Page::from_dom(dom);
        assert!(p.ids.contains("12") && p.ids.contains("5") && p.ids.contains("99"));
    }

    #[test]
    fn a_string_starting_with_a_blank_line_is_templatized_without_templates() {
        let t = Templates::parse("\n<html><head/><body><a id=\"3\">x</a></body></html>")
            .expect("format");
        assert!(t.legend.is_empty());
        assert!(Templates::parse("<html><body></body></html>").is_none());
        assert!(Templates::parse("Title: something\n\nbody").is_none());
    }

    #[test]
    fn the_hash_ignores_whitespace_but_not_content() {
        let a = Page::from_dom("<div> <a id=\"1\">Buy   now</a></div>");
        let b = Page::from_dom("<div>\n\t<a id=\"1\">Buy now</a>\n</div>");
        let c = Page::from_dom("<div><a id=\"1\">Buy later</a></div>");
        assert_eq!(a.hash, b.hash);
        assert_ne!(a.hash, c.hash);
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
            p.summary(Some("Probe Page")),
            "tree: 2 interactive elements; title \"Probe Page\""
        );
    }
}
