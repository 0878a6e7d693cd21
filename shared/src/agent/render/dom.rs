//! Dom pages: the templatized string as sent (when it was templatized and fits); compact HTML
//! (no scripts, styles or comments, collapsed whitespace, long text cut); compact HTML without
//! loose text (only elements with ids, headings and their labels); one line per element with an
//! id, with shorter labels and fewer attributes; ids with tags only; ids grouped by tag. Only
//! when even the grouped ids overflow are elements left out, and the prompt says how many.
//!
//! Elements come first, then the page's words: when a form without loose text is used, the
//! budget it leaves holds the text outside the elements (prices, messages, answers, table
//! cells) in page order, each run cut short, for as many runs as fit ([`loose_text`]).

use super::{grouped_ids, lines_then_ids, not_listed, weight, write_groups, Out};
use crate::agent::page::{DomNode, DomTree};
use crate::text::truncate_chars;

const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

fn attrs_html(id: Option<&str>, attrs: &[(String, String)], only: Option<&[&str]>) -> String {
    let mut out = String::new();
    if let Some(id) = id {
        out.push_str(&format!(" id=\"{id}\""));
    }
    for (k, v) in attrs {
        if only.is_some_and(|o| !o.contains(&k.as_str())) {
            continue;
        }
        let v = truncate_chars(v, crate::agent::page::dom::ATTRIBUTE_CHARS);
        out.push_str(&format!(" {k}=\"{}\"", v.replace('"', "'")));
    }
    out
}

/// Which nodes a pruned rendering keeps: elements with ids, headings, and the text inside
/// them; plus every ancestor of something kept. Children come after their parents, so one
/// reverse pass sees every subtree before its root (no recursion).
fn keep_marks(tree: &DomTree) -> Vec<bool> {
    let own = |n: &DomNode| match n {
        DomNode::Element { tag, id, .. } => {
            id.is_some()
                || matches!(
                    tag.as_str(),
                    "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "label" | "option"
                )
        }
        DomNode::Text(_) => false,
    };
    // Inside a kept element: pass it down in document order.
    let mut inside = vec![false; tree.nodes.len()];
    for (idx, n) in tree.nodes.iter().enumerate() {
        if let DomNode::Element { children, .. } = n {
            let flag = inside[idx] || own(n);
            for &c in children {
                inside[c] = flag;
            }
        }
    }
    let mut marks = vec![false; tree.nodes.len()];
    for idx in (0..tree.nodes.len()).rev() {
        marks[idx] = match &tree.nodes[idx] {
            DomNode::Text(_) => inside[idx],
            n @ DomNode::Element { children, .. } => own(n) || children.iter().any(|&c| marks[c]),
        };
    }
    marks
}

/// Writes the subtree at `idx` as compact HTML; stops once `out` is full. Recursion is bounded
/// by the tree's depth limit (`page::dom::MAX_DEPTH`).
fn html(tree: &DomTree, idx: usize, text_max: usize, marks: Option<&[bool]>, out: &mut Out) {
    if out.is_full() || marks.is_some_and(|m| !m[idx]) {
        return;
    }
    match &tree.nodes[idx] {
        DomNode::Text(t) => {
            // Text is data: a `<` in it must not read as markup (the wrapper that separated it
            // from the next tag may have been left out). The page's spaces around it stay, so
            // words beside inline elements do not run together.
            let (before, after) = tree.spaced(idx);
            let text = truncate_chars(t, text_max).replace('<', "&lt;");
            out.push(&format!(
                "{}{text}{}",
                if before { " " } else { "" },
                if after { " " } else { "" }
            ));
        }
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
                let void = VOID.contains(&tag.as_str()) && children.is_empty();
                let open = format!(
                    "<{tag}{}{}>",
                    attrs_html(id.as_deref(), attrs, None),
                    if void { "/" } else { "" }
                );
                if !out.push(&open) || void {
                    return;
                }
            }
            for &c in children {
                html(tree, c, text_max, marks, out);
            }
            if !root && !wrapper {
                out.push(&format!("</{tag}>"));
            }
        }
    }
}

/// One line per element with an id (and `## ` lines for h1–h3), labels cut to `label_max`,
/// attributes limited to `only`; `None` when the lines do not fit in `max`.
fn element_lines(
    tree: &DomTree,
    label_max: usize,
    only: Option<&[&str]>,
    max: usize,
) -> Option<String> {
    let mut out = Out::new(max);
    for (i, n) in tree.nodes.iter().enumerate() {
        let DomNode::Element { tag, id, attrs, .. } = n else {
            continue;
        };
        let line = match id {
            Some(id) => {
                let label = if label_max == 0 {
                    String::new()
                } else {
                    tree.label_of(i, label_max)
                };
                let attrs = if only == Some(&[]) {
                    String::new()
                } else {
                    attrs_html(None, attrs, only)
                };
                format!("[{id}] <{tag}{attrs}> {label}")
                    .trim_end()
                    .to_owned()
            }
            None if label_max > 0 && matches!(tag.as_str(), "h1" | "h2" | "h3") => {
                format!("## {}", tree.label_of(i, label_max))
            }
            None => continue,
        };
        if !out.line(&line) {
            return None;
        }
    }
    out.finish()
}

/// Longest text run in the page-text section.
const TEXT_RUN: usize = 120;
/// The page-text section's first line.
const TEXT_HEADING: &str = "-- page text --";

/// The page's loose text (runs outside what `marks` keeps) within `room`, as `| ` lines under
/// [`TEXT_HEADING`], each cut to [`TEXT_RUN`] characters: the section, the runs it holds and
/// the runs there are; `None` when there is none or not even one fits.
fn loose_text(tree: &DomTree, marks: &[bool], room: usize) -> Option<(String, usize, usize)> {
    let runs: Vec<&str> = tree
        .nodes
        .iter()
        .zip(marks)
        .filter_map(|(n, kept)| match n {
            DomNode::Text(t) if !kept && t.trim().chars().count() >= 2 => Some(t.trim()),
            _ => None,
        })
        .collect();
    let mut out = Out::new(room);
    if runs.is_empty() || !out.line(TEXT_HEADING) {
        return None;
    }
    let mut shown = 0;
    for t in &runs {
        // `| ` first: a run can never read as an element line (`[id] <tag>`).
        let line = format!(
            "| {}",
            truncate_chars(&crate::text::collapse_ws(t), TEXT_RUN).replace('<', "&lt;")
        );
        // The last run that does not fit whole is cut to the room left (when that says much).
        let room = out.room_for_line() / 4;
        let fits = weight(&line) <= out.room_for_line();
        let line = if fits || room < 20 {
            line
        } else {
            truncate_chars(&line, room)
        };
        if !out.line(&line) {
            break;
        }
        shown += 1;
    }
    (shown > 0).then_some((out.text, shown, runs.len()))
}

/// A form without loose text, with the page's text after it in the budget it leaves, and the
/// note on the text.
fn with_text(mut text: String, tree: &DomTree, marks: &[bool], max: usize) -> (String, String) {
    let room = max.saturating_sub(weight(&text) + super::WEIGHT_SCALE);
    match loose_text(tree, marks, room) {
        Some((section, shown, total)) => {
            text.push('\n');
            text.push_str(&section);
            let note = if shown == total {
                format!("text outside interactive elements listed after them, each run cut to {TEXT_RUN} characters")
            } else {
                format!("text outside interactive elements: the first {shown} of {total} runs listed after them, each cut to {TEXT_RUN} characters")
            };
            (text, note)
        }
        None => (
            text,
            "text outside interactive elements, labels and headings left out".to_owned(),
        ),
    }
}

/// Renders a dom page in at most `max` characters.
pub fn render(
    tree: &DomTree,
    templatized: Option<&str>,
    max: usize,
) -> (&'static str, String, Vec<String>) {
    if let Some(t) = templatized {
        let mut out = Out::new(max);
        for l in t.lines() {
            if !out.line(&crate::text::collapse_ws(l)) {
                break;
            }
        }
        if let Some(text) = out.finish() {
            return ("templatized", text, Vec::new());
        }
    }
    let mut full = Out::new(max);
    html(tree, 0, 200, None, &mut full);
    if let Some(text) = full.finish() {
        return (
            "html",
            text,
            vec![
                "scripts, styles and comments removed; text runs longer than 200 characters cut"
                    .into(),
            ],
        );
    }
    let loose = || "text outside interactive elements, labels and headings left out".to_owned();
    let marks = keep_marks(tree);
    let mut pruned = Out::new(max);
    html(tree, 0, 80, Some(&marks), &mut pruned);
    if let Some(text) = pruned.finish() {
        let (text, note) = with_text(text, tree, &marks, max);
        return ("html-interactive", text, vec![note]);
    }
    let lists: [(&'static str, usize, Option<&[&str]>, &str); 4] = [
        (
            "element-list",
            80,
            None,
            "page structure left out: one line per element",
        ),
        (
            "element-list-tight",
            30,
            Some(&["type", "name", "role", "placeholder", "aria-label"]),
            "page structure left out; labels cut to 30 characters; most attributes left out",
        ),
        (
            "element-list-minimal",
            16,
            Some(&[]),
            "page structure and attributes left out; labels cut to 16 characters",
        ),
        (
            "element-ids",
            0,
            Some(&[]),
            "page structure, attributes and labels left out: every element listed by id and tag",
        ),
    ];
    for (form, label_max, only, note) in lists {
        if let Some(text) = element_lines(tree, label_max, only, max) {
            let (text, text_note) = with_text(text, tree, &marks, max);
            return (form, text, vec![text_note, note.to_owned()]);
        }
    }
    let elements: Vec<(usize, &str, &str)> = tree.elements().collect();
    let items: Vec<(&str, &str)> = elements.iter().map(|&(_, t, i)| (t, i)).collect();
    let line = |e: usize| {
        let (k, tag, id) = elements[e];
        format!("[{id}] <{tag}> {}", tree.label_of(k, 16))
            .trim_end()
            .to_owned()
    };
    if let Some((text, labelled)) = lines_then_ids(&items, line, |k| weight(&line(k)), max) {
        let note = format!(
            "page structure left out; the first {labelled} elements listed with labels cut to 16 characters, the other {} by id only, grouped by tag (a..b stands for every id from a to b)",
            items.len() - labelled
        );
        return ("element-list-and-ids", text, vec![loose(), note]);
    }
    grouped(tree, max, loose())
}

/// Ids grouped by tag; when even those overflow, as many as fit in document order.
fn grouped(tree: &DomTree, max: usize, loose: String) -> (&'static str, String, Vec<String>) {
    let items: Vec<(&str, &str)> = tree.elements().map(|(_, t, i)| (t, i)).collect();
    let total = items.len();
    let mut out = Out::new(max);
    let (listed, _) = write_groups(&mut out, grouped_ids(items.into_iter()));
    let mut notes = vec![
        loose,
        "page structure, attributes and labels left out: element ids grouped by tag (a..b stands for every id from a to b)".to_owned(),
    ];
    let form = if listed == total {
        "element-ids-grouped"
    } else {
        notes.push(not_listed(total, listed));
        "element-ids-trimmed"
    };
    (form, out.text, notes)
}

#[cfg(test)]
mod tests {
    use crate::agent::page::Page;
    use crate::agent::render::tests::budget;
    use crate::agent::render::{ids_in, render};

    fn page(dom: &str) -> Page {
        Page::from_dom(dom).expect("page")
    }

    #[test]
    fn small_dom_renders_as_compact_html() {
        let p = page("<div>\n  <h1>Shop</h1><script>x()</script><a id=\"1\" href=\"/a\" class=\"btn\">Buy   now</a></div>");
        let r = render(&p, budget(1000));
        assert_eq!(r.form, "html");
        assert_eq!(r.text, "<h1>Shop</h1><a id=\"1\" href=\"/a\">Buy now</a>");
    }

    #[test]
    fn words_beside_inline_elements_keep_the_page_s_spaces() {
        let p = page("<div>Solve for <b id=\"3\">x</b> and type.<a id=\"4\">Neque,</a> turpis <i>gra</i>vida</div>");
        let r = render(&p, budget(1000));
        assert_eq!(
            r.text,
            "Solve for <b id=\"3\">x</b> and type.<a id=\"4\">Neque,</a> turpis <i>gra</i>vida"
        );
    }

    #[test]
    fn over_budget_dom_drops_loose_text_first_and_keeps_every_id() {
        let text = "Lorem ipsum dolor sit amet. ".repeat(40);
        let p = page(&format!(
            "<div><p>{text}</p><a id=\"1\">One</a><p>{text}</p><button id=\"2\">Two</button></div>"
        ));
        let r = render(&p, budget(120));
        assert_eq!(r.form, "html-interactive");
        assert!(r.text.contains("id=\"1\"") && r.text.contains("id=\"2\""));
        // The elements come first; what budget is left holds the start of the text.
        let (elements, text) = r
            .text
            .split_once(super::TEXT_HEADING)
            .expect("text section");
        assert!(!elements.contains("Lorem") && text.contains("Lorem ipsum"));
        assert!(
            r.notes[0].contains("the first 1 of 2 runs"),
            "{:?}",
            r.notes
        );
        assert!(r.text.chars().count() <= 120);
        let just_elements = render(&p, budget(70));
        assert!(
            !just_elements.text.contains("Lorem"),
            "{}",
            just_elements.text
        );
        assert!(just_elements.notes[0].starts_with("text outside interactive elements"));
        let tiny = render(&p, budget(5));
        assert!(tiny.text.chars().count() <= 5, "{}", tiny.text);
        assert!(tiny.notes.iter().any(|n| n.contains("are not listed")));
    }

    #[test]
    fn every_form_keeps_every_dom_id_while_the_ids_fit_and_never_passes_the_budget() {
        let text = "Some words here. ".repeat(30);
        let dom = format!("T1: <li><a id=$1>$2</a></li>\n\n<ul>{{T1(4,\"A\")}}{{T1(5,\"B\")}}</ul><p>{text}</p><input id=\"6\" placeholder=\"Search the whole catalogue\">");
        let p = page(&dom);
        let mut forms = std::collections::BTreeSet::new();
        for tokens in (1..=800).step_by(3) {
            let r = render(&p, budget(tokens));
            assert!(r.text.chars().count() <= tokens, "{} at {tokens}", r.form);
            if tokens >= 20 {
                assert_eq!(ids_in(&r), p.id_set(), "form {} at {tokens}", r.form);
            }
            forms.insert(r.form);
        }
        assert!(forms.len() >= 7, "{forms:?}");
    }

    #[test]
    fn templatized_pages_are_sent_as_is_when_they_fit() {
        let dom = "T1: <li><a id=$1>$2</a></li>\n\n<ul>{T1(4,\"A\")}{T1(5,\"B\")}</ul>";
        let p = page(dom);
        let r = render(&p, budget(1000));
        assert_eq!(r.form, "templatized");
        let r = render(&p, budget(40));
        assert_ne!(r.form, "templatized");
        assert!(r.text.contains('4') && r.text.contains('5'));
    }

    #[test]
    fn when_only_ids_fit_the_spare_budget_goes_to_labelled_lines() {
        let links: String = (0..400)
            .map(|i| format!("<a data-element-id=\"{i}\">Section link number {i}</a>"))
            .collect();
        let p = page(&links);
        // 400 `[id] <a>` lines need ~4 000 characters; `a: 0..399` needs 9.
        let r = render(&p, budget(1_500));
        assert_eq!(r.form, "element-list-and-ids");
        assert!(r.text.chars().count() <= 1_500);
        assert_eq!(ids_in(&r), p.id_set(), "every id is still listed");
        assert!(
            r.text.starts_with("[0] <a> Section link nu…"),
            "{}",
            &r.text[..80]
        );
        let labelled = r.text.lines().filter(|l| l.starts_with('[')).count();
        assert!(
            labelled > 30,
            "the spare budget is used: {labelled} labelled"
        );
        assert!(r
            .notes
            .iter()
            .any(|n| n.contains(&format!("the first {labelled} elements"))));
    }

    #[test]
    fn text_that_looks_like_markup_stays_text() {
        let p = page(r#"<p><span>1 <</span>a id="42">x</p><a id="7">ok</a>"#);
        let r = render(&p, budget(1000));
        assert_eq!(r.form, "html");
        assert!(!r.text.contains("<a id=\"42\""), "{}", r.text);
        assert_eq!(ids_in(&r), p.id_set());
    }

    #[test]
    fn non_ascii_pages_are_budgeted_in_characters() {
        let words = "中文文本".repeat(100);
        let p = page(&format!("<p>{words}</p><a id=\"1\">链接</a>"));
        let r = render(&p, budget(500));
        assert_eq!(
            r.form,
            "html",
            "{} chars fit in 500",
            r.text.chars().count()
        );
    }

    #[test]
    fn a_big_page_keeps_its_prices_and_messages_after_the_elements() {
        let rows: String = (0..60)
            .map(|k| {
                format!(
                    "<tr><td>Tent model {k} with a long description of its fabric and poles</td><td>${}.00</td><td><button id=\"b{k}\">Add to cart</button></td></tr>",
                    80 + k
                )
            })
            .collect();
        let p = page(&format!(
            "<p>No results for red shoes</p><table>{rows}</table>"
        ));
        let r = render(&p, budget(2_000));
        assert_ne!(r.form, "html", "the whole page does not fit");
        assert_eq!(ids_in(&r), p.id_set(), "every element is still listed");
        assert!(r.text.contains("No results for red shoes"), "{}", r.text);
        assert!(r.text.contains("$80.00"), "{}", r.text);
        assert!(r.text.chars().count() <= 2_000);
    }
}
