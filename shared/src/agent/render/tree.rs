//! Tree pages: one line per node `[id] role "name" =value (states)`, nodes in the viewport
//! first. Tighter forms shorten names (off-screen ones first), then list ids with roles and
//! states only, then group ids by role; only when even the grouped ids overflow are elements
//! left out — off-screen ones first — and the prompt says how many.

use super::{grouped_ids, lines_then_ids, not_listed, weight, write_groups, Out, WEIGHT_SCALE};
use crate::agent::page::{Nodes, TreeNode};
use std::borrow::Cow;
use std::cell::RefCell;

use crate::text::{collapse_ws_cow, cut_at, truncate_chars};

/// Separates visible nodes from the rest.
const OFFSCREEN: &str = "-- below or beside the viewport --";

/// Longest state list shown on a line.
const STATES_MAX: usize = 40;

fn in_viewport(xy: Option<[f64; 2]>, viewport: Option<(f64, f64)>) -> bool {
    match (viewport, xy) {
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

/// The name lengths the forms use (and the last resort's 16), in the order [`Weights`] holds
/// a line's weight at each.
const NAME_MAXES: [usize; 6] = [100, 40, 16, 10, 8, 0];

/// A line's weight at each of [`NAME_MAXES`], each worked out when a form is first weighed
/// that far.
type Weights = [Option<u32>; NAME_MAXES.len()];

fn slot(name_max: usize) -> usize {
    NAME_MAXES
        .iter()
        .position(|m| *m == name_max)
        .unwrap_or(NAME_MAXES.len() - 1)
}

/// The page's nodes in the order they are listed (those in the viewport first). A node's
/// parts and weights are worked out when a form is first weighed that far: a form stops at
/// the line where it no longer fits, so only as many nodes as a budget can hold are ever
/// looked at closely, however many the page has.
struct Listing<'a> {
    nodes: &'a Nodes,
    /// Node positions: the first `visible` are in the viewport.
    order: Vec<u32>,
    visible: usize,
    /// The first listed nodes' parts and weights, as far as weighed.
    seen: RefCell<Vec<(Parts<'a>, Weights)>>,
}

impl<'a> Listing<'a> {
    fn of(nodes: &'a Nodes, viewport: Option<(f64, f64)>) -> Self {
        // u32 holds every position: a tree has fewer nodes than its body has bytes.
        let (mut order, mut offscreen) = (Vec::new(), Vec::new());
        for (xy, k) in nodes.positions().zip(0u32..) {
            if in_viewport(xy, viewport) {
                order.push(k);
            } else {
                offscreen.push(k);
            }
        }
        let visible = order.len();
        order.append(&mut offscreen);
        Listing {
            nodes,
            order,
            visible,
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

    /// Whether a form's lines (and the off-screen separator) fit in `max`: weighed, not
    /// written.
    fn fits(&self, vis_max: usize, off_max: usize, max: usize) -> bool {
        let (vis, off) = (slot(vis_max), slot(off_max));
        let sep = WEIGHT_SCALE as u64;
        let (mut total, mut lines) = (0u64, 0u64);
        let mut add = |w: u64| {
            total += w + if lines > 0 { sep } else { 0 };
            lines += 1;
            total <= max as u64
        };
        for k in 0..self.order.len() {
            if k == self.visible && !add(weight(OFFSCREEN) as u64) {
                return false;
            }
            let line = self.weight(k, if k < self.visible { vis } else { off });
            if !add(line) {
                return false;
            }
        }
        true
    }

    /// The form's text, when it fits in `max`.
    fn write(&self, vis_max: usize, off_max: usize, max: usize) -> Option<String> {
        let mut out = Out::new(max);
        for k in 0..self.order.len() {
            if k == self.visible {
                out.line(OFFSCREEN);
            }
            let name_max = if k < self.visible { vis_max } else { off_max };
            out.line(&self.line(k, name_max));
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

/// Renders `nodes` in at most `max` characters.
pub fn render(
    nodes: &Nodes,
    viewport: Option<(f64, f64)>,
    max: usize,
) -> (&'static str, String, Vec<String>) {
    let listing = Listing::of(nodes, viewport);
    // The richest form that fits is written once. Every form weighs at least what the last
    // (ids, roles and states) does: when that does not fit, none does.
    let forms = if listing.fits(0, 0, max) { FORMS } else { &[] };
    for &(form, vis_max, off_max, note) in forms {
        if !listing.fits(vis_max, off_max, max) {
            continue;
        }
        if let Some(text) = listing.write(vis_max, off_max, max) {
            let notes = if note.is_empty() {
                Vec::new()
            } else {
                vec![note.to_owned()]
            };
            return (form, text, notes);
        }
    }
    let items: Vec<(&str, &str)> = listing.kinds(0..listing.order.len()).collect();
    let at16 = slot(16);
    let lines = |k: usize| listing.line(k, 16);
    let line_weight = |k: usize| listing.weight(k, at16) as usize;
    if let Some((text, labelled)) = lines_then_ids(&items, lines, line_weight, max) {
        let note = format!(
            "the first {labelled} elements (those in the viewport first) listed with names cut to 16 characters, the other {} by id only, grouped by role (a..b stands for every id from a to b)",
            items.len() - labelled
        );
        return ("tree-list-and-ids", text, vec![note]);
    }
    drop(items);
    grouped(&listing, max)
}

/// Ids grouped by role; when even those overflow, as many groups' ids as fit, visible first.
fn grouped(listing: &Listing<'_>, max: usize) -> (&'static str, String, Vec<String>) {
    let total = listing.order.len();
    let mut out = Out::new(max);
    let (mut listed, complete) =
        write_groups(&mut out, grouped_ids(listing.kinds(0..listing.visible)));
    if complete && listing.visible < total && out.line(OFFSCREEN) {
        listed += write_groups(&mut out, grouped_ids(listing.kinds(listing.visible..total))).0;
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
