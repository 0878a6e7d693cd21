//! Tree pages: one line per node `[id] role "name" =value (states)`, nodes in the viewport
//! first. Tighter forms shorten names (off-screen ones first), then list ids with roles and
//! states only, then group ids by role; only when even the grouped ids overflow are elements
//! left out — off-screen ones first — and the prompt says how many.

use super::{grouped_ids, lines_then_ids, not_listed, weight, write_groups, Out, WEIGHT_SCALE};
use crate::agent::page::{Nodes, TreeNode};
use std::borrow::Cow;

use crate::text::{collapse_ws_cow, cut_at, truncate_chars};

/// Separates visible nodes from the rest.
const OFFSCREEN: &str = "-- below or beside the viewport --";

/// Longest state list shown on a line.
const STATES_MAX: usize = 40;

fn in_viewport(n: &TreeNode<'_>, viewport: Option<(f64, f64)>) -> bool {
    match (viewport, n.xy) {
        (Some((w, h)), Some([x, y])) => (0.0..=w).contains(&x) && (0.0..=h).contains(&y),
        _ => true,
    }
}

/// A node's parts as its lines show them, whitespace collapsed once for every form (names
/// come collapsed from [`Nodes`]).
struct Parts<'a> {
    id: &'a str,
    /// The role as one word (a client's role cannot break its line).
    role: Cow<'a, str>,
    name: Cow<'a, str>,
    value: Cow<'a, str>,
    states: Cow<'a, str>,
}

impl<'a> Parts<'a> {
    fn of(n: &TreeNode<'a>) -> Self {
        let role = collapse_ws_cow(n.r);
        Parts {
            id: n.i,
            role: if role.is_empty() {
                "el".into()
            } else if role.contains(' ') {
                role.replace(' ', "_").into()
            } else {
                role
            },
            name: Cow::Borrowed(n.n),
            value: n.v.map(collapse_ws_cow).unwrap_or_default(),
            states: n.s.map(collapse_ws_cow).unwrap_or_default(),
        }
    }

    /// The line with names and values cut to `name_max` (0: no name, no value).
    fn line(&self, name_max: usize) -> String {
        let mut line = format!("[{}] {}", self.id, self.role);
        if name_max > 0 {
            if !self.name.is_empty() {
                line.push_str(&format!(" \"{}\"", truncate_chars(&self.name, name_max)));
            }
            if !self.value.is_empty() {
                line.push_str(&format!(" ={}", truncate_chars(&self.value, name_max)));
            }
        }
        if !self.states.is_empty() {
            line.push_str(&format!(" ({})", truncate_chars(&self.states, STATES_MAX)));
        }
        line
    }

    /// `weight(&self.line(name_max))`, without writing the line.
    fn weight(&self, name_max: usize) -> usize {
        let mut w = weight("[] ") + weight(self.id) + weight(&self.role);
        if name_max > 0 {
            if !self.name.is_empty() {
                w += weight(" \"\"") + cut_weight(&self.name, name_max);
            }
            if !self.value.is_empty() {
                w += weight(" =") + cut_weight(&self.value, name_max);
            }
        }
        if !self.states.is_empty() {
            w += weight(" ()") + cut_weight(&self.states, STATES_MAX);
        }
        w
    }
}

/// `weight(&truncate_chars(s, max))`, without cutting.
fn cut_weight(s: &str, max: usize) -> usize {
    cut_at(s, max).map_or(weight(s), |end| weight(&s[..end]) + weight("…"))
}

/// Line forms, richest first: (form, name length in the viewport, name length outside, note).
const FORMS: &[(&str, usize, usize, &str)] = &[
    ("tree", 100, 100, ""),
    (
        "tree-short-names",
        40,
        40,
        "names longer than 40 characters are cut",
    ),
    (
        "tree-short-offscreen",
        40,
        16,
        "names longer than 40 characters (16 outside the viewport) are cut",
    ),
    (
        "tree-compact",
        16,
        8,
        "names cut to 16 characters (8 outside the viewport)",
    ),
    (
        "tree-compact-offscreen",
        10,
        0,
        "names cut to 10 characters; elements outside the viewport listed by id, role and state only",
    ),
    (
        "tree-ids",
        0,
        0,
        "names and values left out: every element listed by id, role and state",
    ),
];

/// Whether a form's lines (and the off-screen separator) fit in `max`: measured, not written.
fn fits(
    visible: &[Parts],
    offscreen: &[Parts],
    vis_max: usize,
    off_max: usize,
    max: usize,
) -> bool {
    let sep = WEIGHT_SCALE;
    let mut total = 0usize;
    let mut lines = 0usize;
    let mut add = |w: usize| {
        total += w + if lines > 0 { sep } else { 0 };
        lines += 1;
        total <= max
    };
    visible.iter().all(|p| add(p.weight(vis_max)))
        && (offscreen.is_empty()
            || (add(weight(OFFSCREEN)) && offscreen.iter().all(|p| add(p.weight(off_max)))))
}

/// Renders `nodes` in at most `max` characters.
pub fn render(
    nodes: &Nodes,
    viewport: Option<(f64, f64)>,
    max: usize,
) -> (&'static str, String, Vec<String>) {
    let (visible, offscreen): (Vec<TreeNode>, Vec<TreeNode>) =
        nodes.iter().partition(|n| in_viewport(n, viewport));
    let vis: Vec<Parts> = visible.iter().map(Parts::of).collect();
    let off: Vec<Parts> = offscreen.iter().map(Parts::of).collect();
    // The richest form that fits is written once. Every form weighs at least what the last
    // (ids, roles and states) does: when that does not fit, none does.
    let forms = if fits(&vis, &off, 0, 0, max) {
        FORMS
    } else {
        &[]
    };
    for &(form, vis_max, off_max, note) in forms {
        if !fits(&vis, &off, vis_max, off_max, max) {
            continue;
        }
        let mut out = Out::new(max);
        for p in &vis {
            out.line(&p.line(vis_max));
        }
        if !off.is_empty() {
            out.line(OFFSCREEN);
            for p in &off {
                out.line(&p.line(off_max));
            }
        }
        if let Some(text) = out.finish() {
            let notes = if note.is_empty() {
                Vec::new()
            } else {
                vec![note.to_owned()]
            };
            return (form, text, notes);
        }
    }
    let ordered: Vec<&Parts> = vis.iter().chain(&off).collect();
    let items: Vec<(&str, &str)> = visible
        .iter()
        .chain(&offscreen)
        .map(|n| (n.r, n.i))
        .collect();
    let lines = |k: usize| ordered[k].line(16);
    if let Some((text, labelled)) = lines_then_ids(&items, lines, |k| ordered[k].weight(16), max) {
        let note = format!(
            "the first {labelled} elements (those in the viewport first) listed with names cut to 16 characters, the other {} by id only, grouped by role (a..b stands for every id from a to b)",
            items.len() - labelled
        );
        return ("tree-list-and-ids", text, vec![note]);
    }
    grouped(&visible, &offscreen, max)
}

/// Ids grouped by role; when even those overflow, as many groups' ids as fit, visible first.
fn grouped(
    visible: &[TreeNode],
    offscreen: &[TreeNode],
    max: usize,
) -> (&'static str, String, Vec<String>) {
    let mut out = Out::new(max);
    let (mut listed, complete) =
        write_groups(&mut out, grouped_ids(visible.iter().map(|n| (n.r, n.i))));
    if complete && !offscreen.is_empty() && out.line(OFFSCREEN) {
        listed += write_groups(&mut out, grouped_ids(offscreen.iter().map(|n| (n.r, n.i)))).0;
    }
    let total = visible.len() + offscreen.len();
    let form = if listed == total {
        "tree-ids-grouped"
    } else {
        "tree-ids-trimmed"
    };
    let mut notes =
        vec!["names, values and states left out: element ids grouped by role (a..b stands for every id from a to b)".to_owned()];
    if listed < total {
        notes.push(not_listed(total, listed));
    }
    (form, out.text, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::page::Page;
    use crate::agent::render::tests::budget;
    use crate::agent::render::{ids_in, render as render_page, weight, Budget, WEIGHT_SCALE};

    fn nodes(count: usize, visible: usize) -> Nodes {
        let mut out = Nodes::default();
        for i in 0..count {
            let (id, name) = (
                i.to_string(),
                format!("Link number {i} with a rather long accessible name for testing"),
            );
            out.push(TreeNode {
                s: (i % 7 == 0).then_some("disabled"),
                xy: Some([10.0, if i < visible { 100.0 } else { 5000.0 }]),
                ..TreeNode::new(&id, if i % 3 == 0 { "btn" } else { "link" }, &name)
            });
        }
        out
    }

    #[test]
    fn a_line_is_measured_exactly_as_it_is_written() {
        let names = [
            "",
            "Go",
            "  Ünïcödé   näme  with spaces ",
            "数字 1234567890",
            &"x".repeat(150),
        ];
        for (k, name) in names.iter().enumerate() {
            let (id, value, states) = (
                format!("{k}7"),
                format!("{name} value"),
                "disabled, checked,".repeat(k + 1),
            );
            let node = TreeNode {
                v: (k % 2 == 0).then_some(value.as_str()),
                s: (k % 3 == 0).then_some(states.as_str()),
                ..TreeNode::new(&id, [" btn", " two words ", "", "inp"][k % 4], name)
            };
            let parts = Parts::of(&node);
            for name_max in [0, 8, 10, 16, 40, 100] {
                assert_eq!(
                    parts.weight(name_max),
                    weight(&parts.line(name_max)),
                    "{node:?} at {name_max}"
                );
            }
        }
    }

    #[test]
    fn tree_lists_visible_nodes_first_and_shortens_names_before_dropping_elements() {
        let p = Page::from_tree(nodes(50, 5), Some((800.0, 600.0)));
        let full = render_page(&p, budget(100_000));
        assert_eq!(full.form, "tree");
        assert!(full.text.starts_with("[0] btn \"Link number 0"));
        let lines: Vec<&str> = full.text.lines().collect();
        assert_eq!(lines[5], OFFSCREEN);
        let mut forms = Vec::new();
        for tokens in (50..4000).step_by(25) {
            let r = render_page(&p, budget(tokens));
            assert!(r.text.chars().count() <= tokens, "{} at {tokens}", r.form);
            if !forms.contains(&r.form) {
                forms.push(r.form);
            }
            // Every id is listed whenever the grouped ids alone fit.
            let all_ids: usize = p
                .id_set()
                .iter()
                .map(|i| (weight(i) + WEIGHT_SCALE) / WEIGHT_SCALE)
                .sum::<usize>()
                + 60;
            if tokens >= all_ids {
                assert_eq!(ids_in(&r), p.id_set(), "{} at {tokens}", r.form);
            }
            for i in 0..5 {
                assert!(
                    ids_in(&r).contains(&i.to_string()) || tokens < 60,
                    "visible {i} kept at {tokens}"
                );
            }
        }
        assert!(forms.len() >= 6, "{forms:?}");
    }

    #[test]
    fn a_huge_visible_tree_stays_within_the_budget() {
        // 50 000 nodes, all "visible": the rendering is cut, never over the ceiling.
        let p = Page::from_tree(nodes(50_000, 50_000), None);
        let r = render_page(&p, budget(15_000));
        assert!(r.text.chars().count() <= 15_000);
        assert_eq!(r.form, "tree-ids-trimmed");
        assert!(
            r.notes.iter().any(|n| n.contains("are not listed")),
            "{:?}",
            r.notes
        );
        assert!(ids_in(&r).contains("0"));
    }

    #[test]
    fn an_article_sized_tree_lists_every_id() {
        // 838 links with long names in a 6 000-token budget: every id reaches the prompt.
        let p = Page::from_tree(nodes(838, 40), Some((800.0, 600.0)));
        let r = render_page(
            &p,
            Budget {
                max_tokens: 6_000,
                chars_per_token: 2.5,
            },
        );
        assert_eq!(ids_in(&r), p.id_set(), "{}", r.form);
    }
}
