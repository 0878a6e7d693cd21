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
    "autocomplete",
    "placeholder",
    "value",
    "role",
    "title",
    "alt",
    "href",
    "aria-expanded",
    "aria-checked",
    "aria-selected",
    "aria-pressed",
    "disabled",
    "checked",
    "selected",
    "contenteditable",
    "autofocus",
    "for",
];

/// Longest attribute value kept (and shown to the model).
pub const ATTRIBUTE_CHARS: usize = 100;
/// Longest `href` kept: as long as an address an action can carry.
pub const HREF_CHARS: usize = 2_000;

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
    /// [`SPACE_BEFORE`] | [`SPACE_AFTER`] of each text node (0 for elements).
    spacing: Vec<u8>,
    /// The `<label>` of each form field that has one: the label around it, or the one whose
    /// `for` names it.
    field_labels: std::collections::HashMap<usize, usize>,
}

/// Nodes a wrapping `<label>` is searched for its field (the field is near its start).
const LABEL_SCAN: usize = 64;

/// Whether a text run had white space before ([`SPACE_BEFORE`]) and after ([`SPACE_AFTER`])
/// it as written: `Pa<span>y</span>` reads "Pay", `Pay <span>now</span>` "Pay now".
const SPACE_BEFORE: u8 = 1;
const SPACE_AFTER: u8 = 2;

/// Elements that flow inside a line of text: their text joins their neighbours' without a
/// space unless the page wrote one. Any other element starts a new piece of text.
const INLINE: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd",
    "label", "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var",
    "del", "ins", "button",
];

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
    /// [`SPACE_BEFORE`] | [`SPACE_AFTER`] of each text node (0 for elements).
    spacing: Vec<u8>,
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
    /// The drawing's node and the text of its `<title>` so far (an icon's name).
    icon: Option<(usize, String)>,
}

impl Skip {
    fn new(tag: String) -> Self {
        Self {
            tag,
            inner: Vec::new(),
            icon: None,
        }
    }

    /// Whether text now belongs to a drawing's `<title>`.
    fn in_title(&self) -> bool {
        self.icon.is_some() && self.inner.last().is_some_and(|t| t == "title")
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
        let raw = std::mem::take(&mut self.text);
        let text = collapse_ws(&raw);
        if !text.is_empty() {
            let mut spacing = 0;
            if raw.starts_with(char::is_whitespace) {
                spacing |= SPACE_BEFORE;
            }
            if raw.ends_with(char::is_whitespace) {
                spacing |= SPACE_AFTER;
            }
            let idx = self.push(DomNode::Text(text));
            self.spacing[idx] = spacing;
        }
    }

    /// Adds a node under the innermost open element and returns its index.
    fn push(&mut self, node: DomNode) -> usize {
        let parent = self.stack.last().copied().unwrap_or(0);
        let idx = self.nodes.len();
        self.nodes.push(node);
        self.spacing.push(0);
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
            .map(|(k, v)| {
                // An address is kept whole (the risk gate reads what it performs); the prompt
                // shows every attribute cut to ATTRIBUTE_CHARS.
                let max = if k == "href" {
                    HREF_CHARS
                } else {
                    ATTRIBUTE_CHARS
                };
                let v = truncate_chars(&collapse_ws(&v), max);
                (k, v)
            })
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
            let mut skip = Skip::new(tag);
            if skip.tag == "svg" {
                skip.icon = Some((idx, String::new()));
            }
            self.skip = Some(skip);
        } else if self.stack.len() <= MAX_DEPTH {
            self.stack.push(idx);
        }
    }

    /// Leaves a skipped element; a drawing's `<title>` becomes its `title` (an icon's name,
    /// read like an image's `alt`) unless it has one.
    fn end_skip(&mut self) {
        let Some(Skip {
            icon: Some((idx, title)),
            ..
        }) = self.skip.take()
        else {
            return;
        };
        let title = truncate_chars(&collapse_ws(&title), 100);
        if let Some(DomNode::Element { attrs, .. }) = self.nodes.get_mut(idx) {
            if !title.is_empty() && !attrs.iter().any(|(k, _)| k == "title") {
                attrs.push(("title".into(), title));
            }
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
                self.end_skip();
                return;
            }
            // The end of an enclosing element ends a drawing or frame with it.
            if skip.ends_with_parent() {
                if let Some(pos) = open_at(self) {
                    self.end_skip();
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
            spacing: vec![0],
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
            Token::Text(t) => match &mut b.skip {
                None => b.text.push_str(t),
                Some(skip) if skip.in_title() => {
                    if let Some((_, title)) = &mut skip.icon {
                        if title.len() < 400 {
                            title.push_str(t);
                        }
                    }
                }
                Some(_) => {}
            },
        });
        b.flush_text();
        b.end_skip();
        let labels = text_labels(&b.nodes, &b.spacing);
        let mut tree = DomTree {
            nodes: b.nodes,
            labels,
            spacing: b.spacing,
            field_labels: Default::default(),
        };
        tree.field_labels = tree.label_targets();
        tree
    }

    /// Whether text node `idx` had white space before and after it as written (a rendering
    /// keeps "Solve for <b>x</b> and" apart where the page did).
    pub fn spaced(&self, idx: usize) -> (bool, bool) {
        let s = self.spacing.get(idx).copied().unwrap_or(0);
        (s & SPACE_BEFORE != 0, s & SPACE_AFTER != 0)
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
        self.labelled(idx, max, true)
    }

    /// A field's name: its text label, else its attributes other than `value` — what is
    /// typed into a field is not its name (a pre-filled or autofilled password, a user's
    /// own details).
    pub fn field_label(&self, idx: usize, max: usize) -> String {
        self.labelled(idx, max, false)
    }

    fn labelled(&self, idx: usize, max: usize, by_value: bool) -> String {
        let text = self.text_of(idx);
        if !text.is_empty() {
            return truncate_chars(text, max.min(LABEL_CHARS));
        }
        // A field is named as a browser names it: its `aria-label`, else its `<label>`.
        let aria = match self.nodes.get(idx) {
            Some(DomNode::Element { attrs, .. }) => attrs
                .iter()
                .find(|(k, v)| k == "aria-label" && !v.trim().is_empty()),
            _ => None,
        };
        let label = (self.field_labels.get(&idx)).map(|&l| self.text_of(l));
        match (aria, label.filter(|l| !l.is_empty())) {
            (None, Some(label)) => truncate_chars(label, max.min(LABEL_CHARS)),
            _ => self.label_from(idx, max, by_value),
        }
    }

    /// The `<label>` of each form field that has one: the first field inside a label without
    /// `for`, or the element a label's `for` names (the first label of a field counts).
    fn label_targets(&self) -> std::collections::HashMap<usize, usize> {
        let mut out = std::collections::HashMap::new();
        let (mut by_id, mut named) = (std::collections::HashMap::new(), Vec::new());
        for (k, n) in self.nodes.iter().enumerate() {
            let DomNode::Element { tag, id, attrs, .. } = n else {
                continue;
            };
            if let Some(id) = id {
                by_id.entry(id.as_str()).or_insert(k);
            }
            if tag != "label" {
                continue;
            }
            match attrs.iter().find(|(a, _)| a == "for") {
                Some((_, target)) => named.push((target.as_str(), k)),
                None => {
                    let inside = (k + 1..=self.last_inside(k)).take(LABEL_SCAN);
                    if let Some(field) = inside.into_iter().find(|&c| field(&self.nodes[c])) {
                        out.entry(field).or_insert(k);
                    }
                }
            }
        }
        for (target, k) in named {
            if let Some(&field) = by_id.get(target) {
                out.entry(field).or_insert(k);
            }
        }
        out
    }

    /// A label from an element's attributes alone (a text area's text is its value, not its
    /// name).
    pub fn attribute_label(&self, idx: usize, max: usize) -> String {
        self.label_from(idx, max, true)
    }

    fn label_from(&self, idx: usize, max: usize, by_value: bool) -> String {
        const KEYS: [&str; 7] = [
            "aria-label",
            "title",
            "placeholder",
            "alt",
            "value",
            "name",
            "data-name",
        ];
        if let Some(DomNode::Element { attrs, .. }) = self.nodes.get(idx) {
            for key in KEYS.iter().filter(|k| by_value || **k != "value") {
                if let Some((_, v)) = attrs.iter().find(|(k, _)| k == key) {
                    return truncate_chars(v, max);
                }
            }
        }
        String::new()
    }

    /// The `<form>` around node `at` and the last node inside it, if any.
    pub fn form_around(&self, at: usize) -> Option<(usize, usize)> {
        let mut found = None;
        for (k, n) in self.nodes.iter().enumerate().take(at) {
            if matches!(n, DomNode::Element { tag, .. } if tag == "form") {
                let end = self.last_inside(k);
                if at <= end {
                    found = Some((k, end));
                }
            }
        }
        found
    }

    /// The innermost dialog or form around node `at` (a `<dialog>`, an element whose role is
    /// `dialog` or `alertdialog` or that is `aria-modal`, a `<form>`), the last node inside and
    /// whether it is a dialog.
    pub fn holder_around(&self, at: usize) -> Option<(usize, usize, bool)> {
        let mut found = None;
        for (k, n) in self.nodes.iter().enumerate().take(at) {
            let DomNode::Element { tag, attrs, .. } = n else {
                continue;
            };
            let is = |name: &str, values: &[&str]| {
                attrs.iter().any(|(a, v)| {
                    a == name && values.contains(&v.trim().to_ascii_lowercase().as_str())
                })
            };
            let dialog = tag == "dialog"
                || is("role", &["dialog", "alertdialog"])
                || is("aria-modal", &["true"]);
            if dialog || tag == "form" {
                let end = self.last_inside(k);
                if at <= end {
                    found = Some((k, end, dialog));
                }
            }
        }
        found
    }

    /// What a dialog or form at `holder` says besides its controls: its `aria-label`, then
    /// its headings and text in order (not the text of its buttons, links and lists), at
    /// most `max` characters.
    pub fn holder_text(&self, holder: usize, end: usize, max: usize) -> String {
        let mut out = String::new();
        if let Some(DomNode::Element { attrs, .. }) = self.nodes.get(holder) {
            if let Some((_, v)) = attrs.iter().find(|(a, _)| a == "aria-label") {
                out.push_str(v.trim());
            }
        }
        let mut k = holder + 1;
        while k <= end && out.chars().count() < max {
            match self.nodes.get(k) {
                Some(DomNode::Element { tag, .. })
                    if matches!(
                        tag.as_str(),
                        "button" | "a" | "select" | "option" | "textarea" | "script" | "style"
                    ) =>
                {
                    k = self.last_inside(k) + 1;
                    continue;
                }
                Some(DomNode::Text(t)) if !t.trim().is_empty() => {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    out.push_str(t.trim());
                }
                None => break,
                _ => {}
            }
            k += 1;
        }
        truncate_chars(&out, max)
    }

    /// The text of the `<option>` inside the element at `select` whose value or text is
    /// `value`.
    pub fn option_text(&self, select: usize, value: &str) -> Option<String> {
        let want = value.trim();
        self.options(select)
            .find(|(attrs, text)| {
                text.trim() == want || attrs.iter().any(|(a, v)| a == "value" && v.trim() == want)
            })
            .map(|(_, text)| text)
    }

    /// The text of the option list `select` shows: the one marked `selected`, else its first
    /// (as a browser shows it).
    pub fn selected_option(&self, select: usize) -> Option<String> {
        let mut first = None;
        for (attrs, text) in self.options(select) {
            if attrs.iter().any(|(a, _)| a == "selected") {
                return Some(text);
            }
            first.get_or_insert(text);
        }
        first
    }

    /// The options inside list `select`: each one's attributes and text.
    fn options(&self, select: usize) -> impl Iterator<Item = (&[(String, String)], String)> + '_ {
        (select + 1..=self.last_inside(select)).filter_map(move |k| {
            let Some(DomNode::Element {
                tag,
                attrs,
                children,
                ..
            }) = self.nodes.get(k)
            else {
                return None;
            };
            if tag != "option" {
                return None;
            }
            let text: Vec<&str> = children
                .iter()
                .filter_map(|&c| match self.nodes.get(c) {
                    Some(DomNode::Text(t)) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            Some((attrs.as_slice(), text.join(" ")))
        })
    }

    /// The texts before node `at` that label it, within `reach` nodes, nearest first: those
    /// after the nearest heading, then the heading's, leaving out other controls' own words (a
    /// button's or a link's).
    pub fn texts_before(&self, at: usize, reach: usize) -> Vec<&str> {
        let (mut inside_until, mut heading_until) = (None, None);
        let (mut heading, mut texts): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
        for k in at.saturating_sub(reach)..at {
            if inside_until.is_some_and(|end| k <= end) {
                continue;
            }
            match self.nodes.get(k) {
                Some(DomNode::Element { tag, .. })
                    if matches!(
                        tag.as_str(),
                        "button" | "a" | "select" | "option" | "textarea"
                    ) =>
                {
                    inside_until = Some(self.last_inside(k));
                }
                Some(DomNode::Element { tag, .. })
                    if matches!(tag.as_str(), "h1" | "h2" | "h3" | "h4" | "h5" | "h6") =>
                {
                    (heading, texts) = (Vec::new(), Vec::new());
                    heading_until = Some(self.last_inside(k));
                }
                Some(DomNode::Text(t)) if !t.trim().is_empty() => {
                    match heading_until.is_some_and(|end| k <= end) {
                        true => heading.push(t.trim()),
                        false => texts.push(t.trim()),
                    }
                }
                _ => {}
            }
        }
        texts.into_iter().rev().chain(heading).collect()
    }

    /// The last node inside `idx` (itself when it has no children): nodes come in document
    /// order, so an element's content is the run of nodes after it up to its last child's.
    fn last_inside(&self, mut idx: usize) -> usize {
        // Each step goes one level down: at most the depth limit of steps.
        while let Some(DomNode::Element { children, .. }) = self.nodes.get(idx) {
            match children.last() {
                Some(&c) => idx = c,
                None => break,
            }
        }
        idx
    }

    /// The content as lines (tags with ids and kept attributes, and text) for hashing.
    pub fn text_lines(&self) -> impl Iterator<Item = String> + '_ {
        self.nodes.iter().map(|n| match n {
            DomNode::Element { tag, id, attrs, .. } => format!("<{tag} {id:?} {attrs:?}>"),
            DomNode::Text(t) => t.clone(),
        })
    }
}

/// Whether an element gets a text label: it has an id, or it is a heading or a `<label>`.
fn labelled(node: &DomNode) -> bool {
    matches!(node, DomNode::Element { tag, id, .. } if id.is_some() || is_heading(tag) || tag == "label")
}

/// A form field a `<label>` names: an input (not a hidden one), a list or a text area.
fn field(node: &DomNode) -> bool {
    match node {
        DomNode::Element { tag, attrs, .. } => match tag.as_str() {
            "select" | "textarea" => true,
            "input" => !attrs
                .iter()
                .any(|(k, v)| k == "type" && v.eq_ignore_ascii_case("hidden")),
            _ => false,
        },
        DomNode::Text(_) => false,
    }
}

/// What names an element that shows no text: an icon's `aria-label`, `alt` or `title`.
fn icon_name(attrs: &[(String, String)]) -> &str {
    ["aria-label", "alt", "title"]
        .iter()
        .find_map(|k| attrs.iter().find(|(a, v)| a == k && !v.trim().is_empty()))
        .map_or("", |(_, v)| v.as_str())
}

/// The text prefix of every labelled element, computed bottom-up in one pass: a node's prefix
/// is built from its children's (each at most `LABEL_CHARS + 1` characters), so the work is
/// linear in the page whatever its shape. Pieces are joined as a browser shows them: text
/// split across inline elements without a space between stays one word (`Pa<span>y</span>`),
/// a block element or white space as written separates; an icon without text is named by its
/// `aria-label`, `alt` or `title`. Prefixes of unlabelled elements are dropped as soon as their
/// parent has used them.
fn text_labels(nodes: &[DomNode], spacing: &[u8]) -> Vec<String> {
    let cap = LABEL_CHARS + 1;
    let mut prefix: Vec<String> = vec![String::new(); nodes.len()];
    // White space around each node's text as it reads from outside (text runs as written).
    let mut edges: Vec<u8> = spacing.to_vec();
    for idx in (0..nodes.len()).rev() {
        let DomNode::Element { children, .. } = &nodes[idx] else {
            continue;
        };
        let mut out = String::new();
        let mut count = 0;
        let mut lead = 0;
        let mut trail = false;
        for &c in children {
            if count >= cap {
                break;
            }
            let (piece, around, block): (&str, u8, bool) = match &nodes[c] {
                DomNode::Text(t) => (t, spacing.get(c).copied().unwrap_or(0), false),
                DomNode::Element { tag, attrs, .. } => {
                    let text = prefix[c].as_str();
                    let piece = if text.is_empty() {
                        icon_name(attrs)
                    } else {
                        text
                    };
                    (piece, edges[c], !INLINE.contains(&tag.as_str()))
                }
            };
            if piece.is_empty() {
                continue;
            }
            if count == 0 {
                lead = if block {
                    SPACE_BEFORE
                } else {
                    around & SPACE_BEFORE
                };
            } else if trail || block || around & SPACE_BEFORE != 0 {
                out.push(' ');
                count += 1;
            }
            for ch in piece.chars().take(cap.saturating_sub(count)) {
                out.push(ch);
                count += 1;
            }
            trail = block || around & SPACE_AFTER != 0;
        }
        edges[idx] = lead | if trail { SPACE_AFTER } else { 0 };
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
