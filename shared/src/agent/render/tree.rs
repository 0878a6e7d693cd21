//! Tree pages: one line per node `[id] role "name" =value (states)`, in document order.
//! Tighter forms shorten names — first those of elements away from the page's focus — then,
//! for a page too large to list whole, name as many elements as fit and summarise the rest by
//! role where they are ("48 more: 40 link, 8 btn"), instead of one bare `[id] link` line each
//! that tells a model nothing. Only when even the focus does not fit are ids listed bare,
//! grouped by role, and the prompt says how many are left out.
//!
//! The focus: the start of the document, its first screen (the client's coordinates are the
//! document's: before any scroll, those within the viewport's height are on screen), the
//! neighbourhood of the task's last acted-on element, and the elements whose names hold the
//! task's words.

use super::{
    grouped_ids, lines_then_ids, not_listed, weight, write_groups, Hints, Out, WEIGHT_SCALE,
};
use crate::agent::page::{Nodes, TreeNode};
use std::borrow::Cow;
use std::cell::RefCell;

use crate::text::{collapse_ws_cow, cut_at, truncate_chars};

/// Elements at the start of the document that keep the focus's names.
const FOCUS_START: usize = 40;
/// Elements on each side of the last acted-on element that keep the focus's names.
const FOCUS_AROUND: usize = 30;
/// Elements of the first screen, and elements named with the task's words, in the focus at
/// most (a page can claim every element is on screen).
const FOCUS_SCREEN: usize = 150;
const FOCUS_WORDS: usize = 100;

/// Which nodes (by document position) are in the focus. A task word that names more than
/// [`FOCUS_WORDS`] elements tells none apart and is not looked for.
fn focus(nodes: &Nodes, hints: Hints<'_>, screen: Option<f64>) -> Vec<bool> {
    let at = hints.anchor.and_then(|id| {
        (0..nodes.len()).find(|&k| nodes.role_and_id(k).is_some_and(|(_, i)| i == id))
    });
    let mut uses = vec![0usize; hints.words.len()];
    for n in nodes.iter() {
        for (w, u) in words_in(n.n, hints.words).zip(&mut uses) {
            *u += usize::from(w);
        }
    }
    let (mut on_screen, mut worded) = (0, 0);
    (0..nodes.len())
        .map(|k| {
            let n = nodes.get(k).unwrap_or_default();
            let visible = screen.is_some_and(|h| n.xy.is_some_and(|[_, y]| (0.0..h).contains(&y)));
            let visible = visible && on_screen < FOCUS_SCREEN;
            on_screen += usize::from(visible);
            let telling = words_in(n.n, hints.words)
                .zip(&uses)
                .any(|(w, u)| w && *u <= FOCUS_WORDS);
            let named = telling && worded < FOCUS_WORDS;
            worded += usize::from(named);
            k < FOCUS_START || at.is_some_and(|a| k.abs_diff(a) <= FOCUS_AROUND) || visible || named
        })
        .collect()
}

/// For each of `words` (lower case), whether `name` holds it as a whole word.
fn words_in<'w>(name: &str, words: &'w [String]) -> impl Iterator<Item = bool> + 'w {
    let lower = if words.is_empty() {
        String::new()
    } else {
        name.to_lowercase()
    };
    let own: Vec<String> = (lower.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    words.iter().map(move |t| own.iter().any(|w| w == t))
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

/// Renders `nodes` in at most `max` characters, focused by `hints` and the first `screen`
/// height.
pub fn render(
    nodes: &Nodes,
    hints: Hints<'_>,
    screen: Option<f64>,
    max: usize,
) -> (&'static str, String, Vec<String>) {
    let focus = focus(nodes, hints, screen);
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
    if let Some((text, named, summarised)) = named_and_summarised(&listing, max) {
        let note = format!(
            "{named} elements listed (names cut to 40 characters at the start of the page, on its first screen, around the last action's element and where the task's words are; to 16 elsewhere); {summarised} more counted by role where they are, without ids: findText or scroll reaches them"
        );
        return ("tree-named-summary", text, vec![note]);
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

/// Weight reserved for one summary line (`(… 1234 more here: 1000 link, 200 btn, …)`).
const SUMMARY_WEIGHT: usize = 200 * WEIGHT_SCALE;
/// Roles named in a summary line at most.
const SUMMARY_ROLES: usize = 4;

/// The focus with names cut to 40, then other elements in document order with names cut to
/// 16 while they fit, and the rest counted by role, one line where each run of them is.
/// `None` when the focus alone does not fit. Returns the text, the elements listed and those
/// counted.
fn named_and_summarised(listing: &Listing<'_>, max: usize) -> Option<(String, usize, usize)> {
    let total = listing.order.len();
    let sep = WEIGHT_SCALE;
    let runs_of_focus = (0..total)
        .filter(|&k| listing.near[k] && (k == 0 || !listing.near[k - 1]))
        .count();
    let focus: usize = (0..total)
        .filter(|&k| listing.near[k])
        .map(|k| listing.weight(k, slot(40)) as usize + sep)
        .sum();
    let mut left = max.checked_sub(focus + (runs_of_focus + 1) * (SUMMARY_WEIGHT + sep))?;
    // Others are named in document order until one does not fit; the rest are counted.
    let mut named = vec![false; total];
    for k in (0..total).filter(|&k| !listing.near[k]) {
        let w = listing.weight(k, slot(16)) as usize + sep;
        if w > left {
            break;
        }
        left -= w;
        named[k] = true;
    }
    let mut out = Out::new(max);
    let mut run: Vec<&str> = Vec::new();
    let (mut listed, mut counted) = (0, 0);
    let mut flush = |out: &mut Out, run: &mut Vec<&str>| {
        if !run.is_empty() {
            counted += run.len();
            out.line(&summary(run));
            run.clear();
        }
    };
    for (k, others) in named.iter().enumerate() {
        let near = listing.near[k];
        if near || *others {
            flush(&mut out, &mut run);
            listed += 1;
            out.line(&listing.line(k, if near { 40 } else { 16 }));
        } else {
            run.push(
                listing
                    .kinds(k..k + 1)
                    .next()
                    .map_or("el", |(role, _)| role),
            );
        }
    }
    flush(&mut out, &mut run);
    Some((out.finish()?, listed, counted))
}

/// One line for a run of elements left out: how many, by role, most first.
fn summary(roles: &[&str]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for role in roles {
        match counts.iter_mut().find(|(r, _)| r == role) {
            Some((_, n)) => *n += 1,
            None => counts.push((role, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut parts: Vec<String> = (counts.iter().take(SUMMARY_ROLES))
        .map(|(r, n)| format!("{n} {}", truncate_chars(r, 16)))
        .collect();
    if counts.len() > SUMMARY_ROLES {
        parts.push("…".into());
    }
    format!("(… {} more here: {})", roles.len(), parts.join(", "))
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
