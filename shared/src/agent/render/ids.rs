//! Element ids grouped by kind (`link: 3 4 9`, runs as `3..9`): the tightest renderings that
//! still name every element, and the last resort that labels as many elements as fit before
//! them.

use std::collections::HashMap;

use super::{weight, Out, WEIGHT_SCALE};

/// Writes grouped id lines while they fit; the first that does not is cut to the ids that
/// fit, and writing stops. Returns how many ids were written and whether all were.
pub(crate) fn write_groups(out: &mut Out, groups: Vec<(String, Vec<&str>)>) -> (usize, bool) {
    let mut listed = 0;
    let mut line = String::new();
    for (kind, ids) in groups {
        let room = out.room_for_line();
        line.clear();
        line.push_str(&kind);
        line.push(':');
        let mut length = weight(&line);
        let mut fitted = 0;
        for (first, last) in id_runs(&ids) {
            let (token, count) = if first == last {
                (weight(ids[first]), 1)
            } else {
                (
                    weight(ids[first]) + weight("..") + weight(ids[last]),
                    last - first + 1,
                )
            };
            if length + WEIGHT_SCALE + token > room {
                break;
            }
            line.push(' ');
            line.push_str(ids[first]);
            if last > first {
                line.push_str("..");
                line.push_str(ids[last]);
            }
            length += WEIGHT_SCALE + token;
            fitted += count;
        }
        if fitted > 0 {
            out.line(&line);
        }
        listed += fitted;
        if fitted < ids.len() {
            return (listed, false);
        }
    }
    (listed, true)
}

/// The tokens of a group's ids, as (first, last) positions: runs of three or more
/// consecutive whole numbers are one token, `first..last`; any other id is its own.
fn id_runs(ids: &[&str]) -> Vec<(usize, usize)> {
    // An id that itself contains `..` would read as a range: no ranges in its group then.
    let ranges = !ids.iter().any(|id| id.contains(".."));
    let numbers: Vec<Option<u64>> = ids
        .iter()
        .map(|id| whole_number(id).filter(|_| ranges))
        .collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < ids.len() {
        let mut end = k;
        while numbers[end]
            .and_then(|n| n.checked_add(1))
            .is_some_and(|next| numbers.get(end + 1) == Some(&Some(next)))
        {
            end += 1;
        }
        if end - k < 2 {
            end = k;
        }
        out.push((k, end));
        k = end + 1;
    }
    out
}

/// Expands a grouped line's token (`7` or `3..9`) into ids.
pub(super) fn expand_token(token: &str) -> Vec<String> {
    if let Some((a, b)) = token.split_once("..") {
        if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>()) {
            if a <= b {
                return (a..=b).map(|n| n.to_string()).collect();
            }
        }
    }
    vec![token.to_owned()]
}

/// The note when even the ids of a page overflow its budget.
pub(crate) fn not_listed(total: usize, listed: usize) -> String {
    format!(
        "{} of {total} elements are not listed (the page exceeds the budget even as ids); scroll or use findText to reach the rest",
        total.saturating_sub(listed)
    )
}

/// Heads the ids after the labelled lines of [`lines_then_ids`].
pub(crate) const OTHERS: &str = "-- the other elements, by id --";

/// The last resort before leaving elements out: the first elements of `items` (in the order
/// given) as labelled lines (`line`, weighing `line_weight`) — as many as fit — then every
/// other id grouped by kind. `None` when even all the ids grouped do not fit. Returns the text
/// and how many were labelled.
///
/// The number of labelled lines is searched for by weighing the candidates, not writing them:
/// the lines' weights are added up once (as far as they can fit at all), and each tail's
/// grouped ids are weighed in one pass with no allocation ([`Tails`]); the text is written
/// once, for the count found.
pub(crate) fn lines_then_ids(
    items: &[(&str, &str)],
    line: impl Fn(usize) -> String,
    line_weight: impl Fn(usize) -> usize,
    max: usize,
) -> Option<(String, usize)> {
    let sep = WEIGHT_SCALE;
    // The first k lines' weight with their newlines, for every k whose lines fit alone.
    let mut labelled = vec![0usize];
    for k in 0..items.len() {
        let total = labelled[k] + line_weight(k) + if k > 0 { sep } else { 0 };
        if total > max {
            break;
        }
        labelled.push(total);
    }
    let tails = Tails::new(items);
    let mut tallies = Vec::new();
    let mut fits = |k: usize| -> bool {
        let Some(&lines) = labelled.get(k) else {
            return false;
        };
        if k == items.len() {
            return lines <= max;
        }
        let (ids, groups) = tails.weigh(k, &mut tallies);
        let total = if k == 0 {
            ids + (groups - 1) * sep
        } else {
            lines + weight(OTHERS) + ids + (groups + 1) * sep
        };
        total <= max
    };
    if !fits(0) {
        return None;
    }
    // The most labelled lines that still leave room for every other id.
    let (mut lo, mut hi) = (0, items.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    write_lines_then_ids(items, &line, lo, max).map(|text| (text, lo))
}

/// The first `k` of `items` as lines, then the others' ids grouped; `None` if it overflows.
fn write_lines_then_ids(
    items: &[(&str, &str)],
    line: &impl Fn(usize) -> String,
    k: usize,
    max: usize,
) -> Option<String> {
    let mut out = Out::new(max);
    for i in 0..k {
        if !out.line(&line(i)) {
            return None;
        }
    }
    if k < items.len() {
        if k > 0 && !out.line(OTHERS) {
            return None;
        }
        let (_, complete) = write_groups(&mut out, grouped_ids(items[k..].iter().copied()));
        if !complete {
            return None;
        }
    }
    out.finish()
}

/// The grouped ids of any tail of a list of `(kind, id)` items, weighed as [`write_groups`]
/// writes them: what each item contributes is worked out once.
struct Tails {
    /// Per item: its kind (numbered by first appearance), its id's weight, its id as a whole
    /// number (written canonically) and whether the id holds `..`.
    kind: Vec<usize>,
    weight: Vec<usize>,
    number: Vec<Option<u64>>,
    dotted: Vec<bool>,
    /// Per kind: the weight of its line's `kind:`.
    label: Vec<usize>,
}

/// A run of consecutive whole-number ids: three or more are written `first..last`.
#[derive(Clone, Copy, Default)]
struct Run {
    len: usize,
    last: Option<u64>,
    first_weight: usize,
    last_weight: usize,
    /// The run written id by id.
    plain: usize,
}

impl Run {
    fn weight(&self) -> usize {
        if self.len >= 3 {
            WEIGHT_SCALE + self.first_weight + weight("..") + self.last_weight
        } else {
            self.plain
        }
    }
}

/// One kind's line as a tail is weighed.
#[derive(Clone, Copy, Default)]
struct Tally {
    seen: bool,
    dotted: bool,
    /// Every id written on its own.
    plain: usize,
    /// The runs closed so far, ranges written as ranges.
    ranged: usize,
    run: Run,
}

impl Tails {
    fn new(items: &[(&str, &str)]) -> Self {
        let (kind, labels) = lines_of(items.iter().map(|(k, _)| *k));
        Self {
            kind,
            weight: items.iter().map(|(_, id)| weight(id)).collect(),
            number: items.iter().map(|(_, id)| whole_number(id)).collect(),
            dotted: items.iter().map(|(_, id)| id.contains("..")).collect(),
            label: labels.iter().map(|l| weight(l) + weight(":")).collect(),
        }
    }

    /// The weight of the grouped lines of the items from `k` on (newlines between them not
    /// counted), and how many lines there are.
    fn weigh(&self, k: usize, tallies: &mut Vec<Tally>) -> (usize, usize) {
        tallies.clear();
        tallies.resize(self.label.len(), Tally::default());
        for j in k..self.kind.len() {
            let t = &mut tallies[self.kind[j]];
            let (w, n) = (self.weight[j], self.number[j]);
            t.seen = true;
            t.dotted |= self.dotted[j];
            t.plain += WEIGHT_SCALE + w;
            let next = t.run.last.and_then(|l| l.checked_add(1));
            if t.run.len > 0 && next.is_some() && next == n {
                t.run.len += 1;
                t.run.last = n;
                t.run.last_weight = w;
                t.run.plain += WEIGHT_SCALE + w;
            } else {
                t.ranged += t.run.weight();
                t.run = Run {
                    len: 1,
                    last: n,
                    first_weight: w,
                    last_weight: w,
                    plain: WEIGHT_SCALE + w,
                };
            }
        }
        let mut total = 0;
        let mut lines = 0;
        for (t, label) in tallies.iter().zip(&self.label).filter(|(t, _)| t.seen) {
            lines += 1;
            total += label
                + if t.dotted {
                    t.plain
                } else {
                    t.ranged + t.run.weight()
                };
        }
        (total, lines)
    }
}

/// An id that is a whole number written canonically (`7`, not `007` or `+7`).
fn whole_number(id: &str) -> Option<u64> {
    let canonical = !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_digit())
        && (id == "0" || !id.starts_with('0'));
    canonical.then(|| id.parse().ok()).flatten()
}

/// A kind (role or tag) as a grouped line's label: letters, digits, `-` and `_` only, so a
/// client's role can neither break the line nor fake another.
fn kind_label(kind: &str) -> String {
    let label: String = kind
        .chars()
        .take(32)
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if label.is_empty() {
        "el".into()
    } else {
        label
    }
}

/// Element ids grouped by kind, in order of first appearance: lines `link: 3 4 9` are the
/// tightest form that still names every element.
pub(crate) fn grouped_ids<'a>(
    items: impl Iterator<Item = (&'a str, &'a str)> + Clone,
) -> Vec<(String, Vec<&'a str>)> {
    let (line, labels) = lines_of(items.clone().map(|(k, _)| k));
    let mut groups: Vec<(String, Vec<&str>)> =
        labels.into_iter().map(|l| (l, Vec::new())).collect();
    for ((_, id), at) in items.zip(line) {
        if let Some((_, ids)) = groups.get_mut(at) {
            ids.push(id);
        }
    }
    groups
}

/// Each item's line, and the lines' labels in order of first appearance: kinds whose labels
/// come out the same share a line (each kind is labelled once).
fn lines_of<'a>(kinds: impl Iterator<Item = &'a str>) -> (Vec<usize>, Vec<String>) {
    let mut by_kind: HashMap<&str, usize> = HashMap::new();
    let mut by_label: HashMap<String, usize> = HashMap::new();
    let mut labels = Vec::new();
    let line = kinds
        .map(|k| {
            *by_kind.entry(k).or_insert_with(|| {
                *by_label.entry(kind_label(k)).or_insert_with_key(|l| {
                    labels.push(l.clone());
                    labels.len() - 1
                })
            })
        })
        .collect();
    (line, labels)
}

#[cfg(test)]
#[path = "ids_tests.rs"]
mod tests;
