//! Rendering a page for the prompt within a token budget. Token counts are estimated from
//! characters (exact tokenizers cost 0.1–0.9 s to start; the benchmark calibrates the ratio).
//! Renderings are tried from richest to tightest and the first that fits is used:
//!
//! - tree: one line per node `[id] role "name" =value (states)`, nodes in the viewport first;
//!   then shorter names; then off-screen nodes dropped (counted in a note).
//! - dom: the templatized string as sent (when it was templatized); compact HTML (no scripts,
//!   styles or comments, collapsed whitespace, long text cut); compact HTML without loose text
//!   (only elements with ids, headings and their labels); one line per element with an id.
//!   Element ids are never dropped from a dom rendering.
//!
//! Whatever was left out is said in `notes`, which the prompt shows with the page.

use super::page::{collapse_ws, truncate_chars, DomNode, DomTree, Page, PageContent, TreeNode};

/// Characters per token assumed when budgeting (measured on rendered corpus pages with the
/// o200k tokenizer by the benchmark).
pub const DEFAULT_CHARS_PER_TOKEN: f64 = 2.5;

/// How much of the prompt a page may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub max_tokens: usize,
    pub chars_per_token: f64,
}

impl Budget {
    pub fn max_chars(&self) -> usize {
        (self.max_tokens as f64 * self.chars_per_token) as usize
    }

    pub fn estimate(&self, text: &str) -> usize {
        (text.chars().count() as f64 / self.chars_per_token).ceil() as usize
    }
}

/// A rendered page.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub text: String,
    pub estimated_tokens: usize,
    /// Which rendering was used.
    pub form: &'static str,
    /// What was left out, for the prompt.
    pub notes: Vec<String>,
}

/// Renders `page` within `budget`.
pub fn render(page: &Page, budget: Budget) -> Rendered {
    let max = budget.max_chars();
    let (form, text, notes) = match &page.content {
        PageContent::Tree(nodes) => render_tree(nodes, page.viewport, max),
        PageContent::Dom { tree, templatized } => render_dom(tree, templatized.as_deref(), max),
    };
    Rendered {
        estimated_tokens: budget.estimate(&text),
        text,
        form,
        notes,
    }
}

// ------------------------------------------------------------------ tree

fn in_viewport(n: &TreeNode, viewport: Option<(f64, f64)>) -> bool {
    match (viewport, n.xy) {
        (Some((w, h)), Some([x, y])) => (0.0..=w).contains(&x) && (0.0..=h).contains(&y),
        _ => true,
    }
}

fn tree_line(n: &TreeNode, name_max: usize) -> String {
    let mut line = format!("[{}] {}", n.i, if n.r.is_empty() { "el" } else { &n.r });
    let name = collapse_ws(&n.n);
    if !name.is_empty() {
        line.push_str(&format!(" \"{}\"", truncate_chars(&name, name_max)));
    }
    if let Some(v) = n.v.as_deref().map(collapse_ws).filter(|v| !v.is_empty()) {
        line.push_str(&format!(" ={}", truncate_chars(&v, name_max)));
    }
    if let Some(s) = n.s.as_deref().filter(|s| !s.is_empty()) {
        line.push_str(&format!(" ({s})"));
    }
    line
}

fn render_tree(
    nodes: &[TreeNode],
    viewport: Option<(f64, f64)>,
    max: usize,
) -> (&'static str, String, Vec<String>) {
    let (visible, offscreen): (Vec<&TreeNode>, Vec<&TreeNode>) =
        nodes.iter().partition(|n| in_viewport(n, viewport));
    let join = |vis_max: usize, off_max: usize| {
        let mut lines: Vec<String> = visible.iter().map(|n| tree_line(n, vis_max)).collect();
        if !offscreen.is_empty() {
            lines.push("-- below or beside the viewport --".into());
            lines.extend(offscreen.iter().map(|n| tree_line(n, off_max)));
        }
        lines.join("\n")
    };
    for (form, vis_max, off_max) in [
        ("tree", 100, 100),
        ("tree-short-names", 40, 40),
        ("tree-short-offscreen", 40, 16),
    ] {
        let text = join(vis_max, off_max);
        if text.len() <= max {
            let notes = if vis_max < 100 {
                vec![format!("names longer than {vis_max} characters are cut")]
            } else {
                Vec::new()
            };
            return (form, text, notes);
        }
    }
    // Still too long: keep every visible node, then off-screen nodes while they fit.
    let mut text: String = visible
        .iter()
        .map(|n| tree_line(n, 40))
        .collect::<Vec<_>>()
        .join("\n");
    let mut kept = 0;
    for n in &offscreen {
        let line = tree_line(n, 16);
        if text.len() + line.len() + 1 > max {
            break;
        }
        text.push('\n');
        text.push_str(&line);
        kept += 1;
    }
    let dropped = offscreen.len() - kept;
    let mut notes = vec!["names longer than 40 characters are cut".to_owned()];
    if dropped > 0 {
        notes.push(format!(
            "{dropped} elements outside the viewport are not listed; scroll to reach them"
        ));
    }
    ("tree-trimmed", text, notes)
}

// ------------------------------------------------------------------ dom

const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

fn attrs_html(id: &Option<String>, attrs: &[(String, String)], only: Option<&[&str]>) -> String {
    let mut out = String::new();
    if let Some(id) = id {
        out.push_str(&format!(" id=\"{id}\""));
    }
    for (k, v) in attrs {
        if only.is_some_and(|o| !o.contains(&k.as_str())) {
            continue;
        }
        out.push_str(&format!(" {k}=\"{}\"", v.replace('"', "'")));
    }
    out
}

/// Which nodes a pruned rendering keeps: elements with ids, headings, and the text inside
/// them; plus every ancestor of something kept.
fn keep_marks(tree: &DomTree) -> Vec<bool> {
    fn walk(tree: &DomTree, idx: usize, inside_kept: bool, marks: &mut Vec<bool>) -> bool {
        match &tree.nodes[idx] {
            DomNode::Text(_) => {
                marks[idx] = inside_kept;
                inside_kept
            }
            DomNode::Element {
                tag, id, children, ..
            } => {
                let own = id.is_some()
                    || matches!(
                        tag.as_str(),
                        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "label" | "option"
                    );
                let mut any = own;
                for &c in children {
                    any |= walk(tree, c, inside_kept || own, marks);
                }
                marks[idx] = any;
                any
            }
        }
    }
    let mut marks = vec![false; tree.nodes.len()];
    if !tree.nodes.is_empty() {
        walk(tree, 0, false, &mut marks);
    }
    marks
}

fn html(tree: &DomTree, idx: usize, text_max: usize, marks: Option<&[bool]>, out: &mut String) {
    if marks.is_some_and(|m| !m[idx]) {
        return;
    }
    match &tree.nodes[idx] {
        DomNode::Text(t) => out.push_str(&truncate_chars(t, text_max)),
        DomNode::Element {
            tag,
            id,
            attrs,
            children,
        } => {
            let root = tag == "#root";
            // Anonymous single-child wrappers add nothing for the model.
            let wrapper = !root
                && id.is_none()
                && attrs.is_empty()
                && matches!(
                    tag.as_str(),
                    "div" | "span" | "section" | "main" | "article" | "html" | "body"
                );
            if !root && !wrapper {
                out.push('<');
                out.push_str(tag);
                out.push_str(&attrs_html(id, attrs, None));
                if VOID.contains(&tag.as_str()) && children.is_empty() {
                    out.push_str("/>");
                    return;
                }
                out.push('>');
            }
            for &c in children {
                html(tree, c, text_max, marks, out);
            }
            if !root && !wrapper {
                out.push_str("</");
                out.push_str(tag);
                out.push('>');
            }
        }
    }
}

fn element_lines(tree: &DomTree, label_max: usize, only: Option<&[&str]>) -> String {
    let mut lines = Vec::new();
    for (i, n) in tree.nodes.iter().enumerate() {
        if let DomNode::Element { tag, id, attrs, .. } = n {
            if let Some(id) = id {
                let label = truncate_chars(&tree.label_of(i), label_max);
                lines.push(
                    format!("[{id}] <{tag}{}> {label}", attrs_html(&None, attrs, only))
                        .trim_end()
                        .to_owned(),
                );
            } else if matches!(tag.as_str(), "h1" | "h2" | "h3") {
                lines.push(format!(
                    "## {}",
                    truncate_chars(&tree.label_of(i), label_max)
                ));
            }
        }
    }
    lines.join("\n")
}

fn render_dom(
    tree: &DomTree,
    templatized: Option<&str>,
    max: usize,
) -> (&'static str, String, Vec<String>) {
    if let Some(t) = templatized {
        let compact: String = t.lines().map(collapse_ws).collect::<Vec<_>>().join("\n");
        if compact.len() <= max {
            return ("templatized", compact, Vec::new());
        }
    }
    let mut full = String::new();
    html(tree, 0, 200, None, &mut full);
    if full.len() <= max {
        return (
            "html",
            full,
            vec![
                "scripts, styles and comments removed; text runs longer than 200 characters cut"
                    .into(),
            ],
        );
    }
    let marks = keep_marks(tree);
    let mut pruned = String::new();
    html(tree, 0, 80, Some(&marks), &mut pruned);
    let loose = format!(
        "text outside interactive elements, labels and headings left out ({} of {} characters)",
        full.len().saturating_sub(pruned.len()),
        full.len()
    );
    if pruned.len() <= max {
        return ("html-interactive", pruned, vec![loose]);
    }
    let lines = element_lines(tree, 80, None);
    if lines.len() <= max {
        return (
            "element-list",
            lines,
            vec![
                loose,
                "page structure left out: one line per element".into(),
            ],
        );
    }
    let tight = element_lines(
        tree,
        30,
        Some(&["type", "name", "role", "placeholder", "aria-label"]),
    );
    if tight.len() <= max {
        return (
            "element-list-tight",
            tight,
            vec![
                loose,
                "page structure left out; labels cut to 30 characters; most attributes left out"
                    .into(),
            ],
        );
    }
    let minimal = element_lines(tree, 16, Some(&[]));
    let mut notes = vec![
        loose,
        "page structure and attributes left out; labels cut to 16 characters".to_owned(),
    ];
    if minimal.len() > max {
        notes.push("the page exceeds the budget even so: every element is still listed".into());
    }
    ("element-list-minimal", minimal, notes)
}

/// The element ids a rendering shows (for checks and benchmarks): `[id]` lines of list forms,
/// or the ids of the markup when parsed again.
pub fn ids_in(rendered: &Rendered) -> std::collections::HashSet<String> {
    if rendered.form.starts_with("element-list") || rendered.form.starts_with("tree") {
        rendered
            .text
            .lines()
            .filter_map(|l| {
                l.strip_prefix('[')?
                    .split_once(']')
                    .map(|(id, _)| id.to_owned())
            })
            .collect()
    } else {
        Page::from_dom(&rendered.text).ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(tokens: usize) -> Budget {
        Budget {
            max_tokens: tokens,
            chars_per_token: 1.0,
        }
    }

    #[test]
    fn small_dom_renders_as_compact_html() {
        let p = Page::from_dom("<div>\n  <h1>Shop</h1><script>x()</script><a id=\"1\" href=\"/a\" class=\"btn\">Buy   now</a></div>");
        let r = render(&p, budget(1000));
        assert_eq!(r.form, "html");
        assert_eq!(r.text, "<h1>Shop</h1><a id=\"1\" href=\"/a\">Buy now</a>");
    }

    #[test]
    fn over_budget_dom_drops_loose_text_first_and_keeps_every_id() {
        let text = "Lorem ipsum dolor sit amet. ".repeat(40);
        let dom = format!(
            "<div><p>{text}</p><a id=\"1\">One</a><p>{text}</p><button id=\"2\">Two</button></div>"
        );
        let p = Page::from_dom(&dom);
        let r = render(&p, budget(120));
        assert_eq!(r.form, "html-interactive");
        assert!(r.text.contains("id=\"1\"") && r.text.contains("id=\"2\""));
        assert!(!r.text.contains("Lorem"));
        assert!(r.notes[0].starts_with("text outside interactive elements"));
        let tiny = render(&p, budget(5));
        assert!(
            tiny.text.contains("[1]") && tiny.text.contains("[2]"),
            "{}",
            tiny.text
        );
        assert!(tiny.notes.iter().any(|n| n.contains("exceeds the budget")));
    }

    #[test]
    fn every_form_keeps_every_dom_id() {
        let text = "Some words here. ".repeat(30);
        let dom = format!("T1: <li><a id=$1>$2</a></li>\n\n<ul>{{T1(4,\"A\")}}{{T1(5,\"B\")}}</ul><p>{text}</p><input id=\"6\" placeholder=\"Search the whole catalogue\">");
        let p = Page::from_dom(&dom);
        let mut forms = std::collections::BTreeSet::new();
        for tokens in (1..=800).step_by(7) {
            let r = render(&p, budget(tokens));
            assert_eq!(ids_in(&r), p.ids, "form {} at {tokens}", r.form);
            forms.insert(r.form);
        }
        assert!(forms.len() >= 5, "{forms:?}");
    }

    #[test]
    fn templatized_pages_are_sent_as_is_when_they_fit() {
        let dom = "T1: <li><a id=$1>$2</a></li>\n\n<ul>{T1(4,\"A\")}{T1(5,\"B\")}</ul>";
        let p = Page::from_dom(dom);
        let r = render(&p, budget(1000));
        assert_eq!(r.form, "templatized");
        let r = render(&p, budget(40));
        assert_ne!(r.form, "templatized");
        assert!(r.text.contains("4") && r.text.contains("5"));
    }

    #[test]
    fn tree_lists_visible_nodes_first_and_trims_offscreen_ones_last() {
        let nodes: Vec<TreeNode> = (0..50)
            .map(|i| TreeNode {
                i: i.to_string(),
                r: "link".into(),
                n: format!("Link number {i} with a rather long accessible name for testing"),
                v: None,
                s: None,
                xy: Some([10.0, if i < 5 { 100.0 } else { 5000.0 }]),
                r#box: None,
            })
            .collect();
        let p = Page::from_tree(nodes, Some((800.0, 600.0)));
        let full = render(&p, budget(100_000));
        assert_eq!(full.form, "tree");
        assert!(full.text.starts_with("[0] link \"Link number 0"));
        let lines: Vec<&str> = full.text.lines().collect();
        assert_eq!(lines[5], "-- below or beside the viewport --");
        let tight = render(&p, budget(600));
        assert_eq!(tight.form, "tree-trimmed");
        for i in 0..5 {
            assert!(
                tight.text.contains(&format!("[{i}] ")),
                "visible node {i} kept"
            );
        }
        assert!(tight
            .notes
            .iter()
            .any(|n| n.contains("outside the viewport are not listed")));
    }
}
