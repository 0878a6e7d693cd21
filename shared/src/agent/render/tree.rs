//! Tree pages: one line per node `[id] role "name" =value (states)`, in document order.
//! Tighter forms shorten names — first those of elements away from the page's focus (the start
//! of the document and the neighbourhood of the task's last acted-on element) — then list
//! ids only beyond the focus, then group ids by role; only when even the grouped ids overflow
//! are elements left out, and the prompt says how many.
//!
//! No viewport split: the shipping extension sends `xy`/`box` in document coordinates without
//! the scroll offset (measured: the same values before and after scrolling), so the server
//! cannot know what is on screen. Clicking an element by id scrolls it into view.

use super::{grouped_ids, lines_then_ids, not_listed, weight, write_groups, Out, WEIGHT_SCALE};
use crate::agent::page::{Nodes, TreeNode};
use std::borrow::Cow;
use std::cell::RefCell;

use crate::text::{collapse_ws_cow, cut_at, truncate_chars};

/// Elements at the start of the document that keep the focus's names.
const FOCUS_START: usize = 40;
/// Elements on each side of the last acted-on element that keep the focus's names.
const FOCUS_AROUND: usize = 30;

/// Which nodes (by document position) are in the focus: the first [`FOCUS_START`], and the
/// [`FOCUS_AROUND`] on each side of `anchor`'s node.
fn focus(nodes: &Nodes, anchor: Option<&str>) -> Vec<bool> {
    let at = anchor.and_then(|id| {
        (0..nodes.len()).find(|&k| nodes.role_and_id(k).is_some_and(|(_, i)| i == id))
    });
    (0..nodes.len())
        .map(|k| k < FOCUS_START || at.is_some_and(|a| k.abs_diff(a) <= FOCUS_AROUND))
        .collect()
}

/// Longest state list shown on a line.
const STATES_MAX: usize = 40;

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

/// Line forms, richest first: (form, name length in the focus, name length elsewhere, note).
const FORMS: &[(&str, usize, usize, &str)] = &[
    ("tree", 100, 100, ""),
    (
        "tree-short-names",
        40,
        40,
        "names longer than 40 characters are cut",
    ),
    (
        "tree-short-far",
        40,
        16,
        "names longer than 40 characters (16 away from the start of the page and from the last action's element) are cut",
    ),
    (
        "tree-compact",
        40,
        8,
        "names cut to 40 characters near the start of the page and the last action's element, to 8 elsewhere",
    ),
    (
        "tree-compact-far",
        40,
        0,
        "names cut to 40 characters near the start of the page and the last action's element; elsewhere elements listed by id, role and state only (clicking an id brings its element into view)",
    ),
];

/// The name lengths the forms use (the last resort's 40 among them), in the order [`Weights`] holds
/// a line's weight at each.
const NAME_MAXES: [usize; 5] = [100, 40, 16, 8, 0];

/// A line's weight at each of [`NAME_MAXES`], each worked out when a form is first weighed
/// that far.
type Weights = [Option<u32>; NAME_MAXES.len()];

fn slot(name_max: usize) -> usize {
    NAME_MAXES
        .iter()
        .position(|m| *m == name_max)
        .unwrap_or(NAME_MAXES.len() - 1)
}

/// The page's nodes in the order they are listed, each marked in the focus or not. A node's
/// parts and weights are worked out when a form is first weighed that far: a form stops at
/// the line where it no longer fits, so only as many nodes as a budget can hold are ever
/// looked at closely, however many the page has.
struct Listing<'a> {
    nodes: &'a Nodes,
    /// Node positions, in listing order.
    order: Vec<u32>,
    /// Whether the `k`-th listed node is in the focus.
    near: Vec<bool>,
    /// The first listed nodes' parts and weights, as far as weighed.
    seen: RefCell<Vec<(Parts<'a>, Weights)>>,
}

impl<'a> Listing<'a> {
    /// In document order.
    fn of(nodes: &'a Nodes, focus: &[bool]) -> Self {
        // u32 holds every position: a tree has fewer nodes than its body has bytes.
        Listing {
            nodes,
            order: (0..nodes.len() as u32).collect(),
            near: focus.to_vec(),
            seen: RefCell::new(Vec::new()),
        }
    }

    /// The focus first, then the rest, each in document order.
    fn focus_first(nodes: &'a Nodes, focus: &[bool]) -> Self {
        let (mut order, mut rest) = (Vec::new(), Vec::new());
        for (k, near) in (0u32..).zip(focus) {
            if *near {
                order.push(k);
            } else {
                rest.push(k);
            }
        }
        let near = order.len();
        order.append(&mut rest);
        Listing {
            nodes,
            near: (0..order.len()).map(|k| k < near).collect(),
            order,
            seen: RefCell::new(Vec::new()),
        }
    }

    /// Runs `f` on the `k`-th node's parts and weights (worked out up to it first); `None`
    /// past the end.
    fn with_seen<T>(&self, k: usize, f: impl FnOnce(&Parts<'a>, &mut Weights) -> T) -> Option<T> {
        let mut seen = self.seen.borrow_mut();
        while seen.len() <= k && seen.len() < self.order.len() {
            let parts = Parts::of(&self.node(seen.len()));
            seen.push((parts, [None; NAME_MAXES.len()]));
        }
        seen.get_mut(k).map(|(parts, weights)| f(parts, weights))
    }

    /// The weight of the `k`-th node's line at `NAME_MAXES[slot]`.
    fn weight(&self, k: usize, slot: usize) -> u64 {
        let weighed = self.with_seen(k, |parts, weights| {
            let max = NAME_MAXES.get(slot).copied().unwrap_or(0);
            // A line is at most a few hundred characters (names cut to 100, states to 40; ids
            // and roles as sent, within the body): its weight fits a u32.
            let w = weights.get_mut(slot)?;
            Some(*w.get_or_insert_with(|| u32::try_from(parts.weight(max)).unwrap_or(u32::MAX)))
        });
        weighed.flatten().map_or(0, u64::from)
    }

    /// The `k`-th node's line with names cut to `name_max`.
    fn line(&self, k: usize, name_max: usize) -> String {
        self.with_seen(k, |parts, _| parts.line(name_max))
            .unwrap_or_default()
    }

    /// The `k`-th node listed.
    fn node(&self, k: usize) -> TreeNode<'a> {
        self.order
            .get(k)
            .and_then(|&at| self.nodes.get(at as usize))
            .unwrap_or_default()
    }

    /// The name length of the `k`-th listed node's line in a form.
    fn name_max(&self, k: usize, near_max: usize, far_max: usize) -> usize {
        if self.near.get(k).copied().unwrap_or(false) {
            near_max
        } else {
            far_max
        }
    }

    /// Whether a form's lines fit in `max`: weighed, not written.
    fn fits(&self, near_max: usize, far_max: usize, max: usize) -> bool {
        let sep = WEIGHT_SCALE as u64;
        let mut total = 0u64;
        for k in 0..self.order.len() {
            let line = self.weight(k, slot(self.name_max(k, near_max, far_max)));
            total += line + if k > 0 { sep } else { 0 };
            if total > max as u64 {
                return false;
            }
        }
        true
    }

    /// The form's text, when it fits in `max`.
    fn write(&self, near_max: usize, far_max: usize, max: usize) -> Option<String> {
        let mut out = Out::new(max);
        for k in 0..self.order.len() {
            out.line(&self.line(k, self.name_max(k, near_max, far_max)));
        }
        out.finish()
    }

    /// The `(role, id)` of the listed nodes in `range`.
    fn kinds(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = (&'a str, &'a str)> + Clone + '_ {
        range.map(|k| {
            self.order
                .get(k)
                .and_then(|&at| self.nodes.role_and_id(at as usize))
                .unwrap_or_default()
        })
    }
}

/// Renders `nodes` in at most `max` characters, the focus around `anchor` (the id of the
/// task's last acted-on element, when it is on the page).
pub fn render(
    nodes: &Nodes,
    anchor: Option<&str>,
    max: usize,
) -> (&'static str, String, Vec<String>) {
    let focus = focus(nodes, anchor);
    let listing = Listing::of(nodes, &focus);
    // The richest form that fits is written once. Every form weighs at least what ids, roles
    // and states alone do: when that does not fit, none does.
    let forms = if listing.fits(0, 0, max) { FORMS } else { &[] };
    for &(form, near_max, far_max, note) in forms {
        if !listing.fits(near_max, far_max, max) {
            continue;
        }
        if let Some(text) = listing.write(near_max, far_max, max) {
            let notes = if note.is_empty() {
                Vec::new()
            } else {
                vec![note.to_owned()]
            };
            return (form, text, notes);
        }
    }
    drop(listing);
    // The focus with its names, then every other id: full names near where the task is
    // beat every element's role without a name.
    let listing = Listing::focus_first(nodes, &focus);
    let items: Vec<(&str, &str)> = listing.kinds(0..listing.order.len()).collect();
    let at40 = slot(40);
    let lines = |k: usize| listing.line(k, 40);
    let line_weight = |k: usize| listing.weight(k, at40) as usize;
    if let Some((text, labelled)) = lines_then_ids(&items, lines, line_weight, max) {
        let note = format!(
            "{labelled} elements (the start of the page and around the last action's element first) listed with names cut to 40 characters; {} more elements by id only, grouped by role (a..b stands for every id from a to b): clicking an id brings its element into view",
            items.len() - labelled
        );
        return ("tree-list-and-ids", text, vec![note]);
    }
    drop(items);
    grouped(&listing, max)
}

/// Ids grouped by role; when even those overflow, as many groups' ids as fit, the focus first.
fn grouped(listing: &Listing<'_>, max: usize) -> (&'static str, String, Vec<String>) {
    let total = listing.order.len();
    let near = listing.near.iter().filter(|n| **n).count();
    let mut out = Out::new(max);
    let (mut listed, complete) = write_groups(&mut out, grouped_ids(listing.kinds(0..near)));
    if complete && near < total {
        listed += write_groups(&mut out, grouped_ids(listing.kinds(near..total))).0;
    }
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
#[path = "tree_tests.rs"]
mod tests;
