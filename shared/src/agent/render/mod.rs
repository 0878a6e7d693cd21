//! Rendering a page for the prompt within a token budget. Token counts are estimated from
//! characters (exact tokenizers cost 0.1–0.9 s to start; the benchmark calibrates the ratio).
//! Renderings are tried from richest to tightest and the first that fits is used; the budget
//! is a hard ceiling: no rendering is ever longer than `Budget::max_chars` characters.
//!
//! Within the budget, names and text go before elements: every element id is listed whenever
//! the ids alone fit (tree: [`tree`]; dom: [`dom`]). Whatever was left out is said in `notes`,
//! which the prompt shows with the page.

mod dom;
mod tree;

use std::collections::HashSet;

use super::page::{Page, PageContent};

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
    /// The budget in weighted characters (see [`weight`]).
    pub fn max_chars(&self) -> usize {
        (self.max_tokens as f64 * self.chars_per_token * WEIGHT_SCALE as f64) as usize
    }

    pub fn estimate(&self, text: &str) -> usize {
        (weight(text) as f64 / WEIGHT_SCALE as f64 / self.chars_per_token).ceil() as usize
    }
}

/// [`weight`] of one plain ASCII character.
pub const WEIGHT_SCALE: usize = 2;

/// Characters weighted by how densely they tokenize, in half characters, so that a budget in
/// characters per token (measured on rendered pages, mostly ASCII markup and words) also holds
/// for text that tokenizes worse: brackets count one and a half, digits (numbers split into
/// short pieces, and id lists are mostly digits) and characters outside ASCII (CJK, accented,
/// symbols) twice. The benchmark checks the result against an exact tokenizer (o200k) on every
/// corpus page: no rendering exceeds the budget in real tokens.
pub fn weight(s: &str) -> usize {
    s.chars()
        .map(|c| match c {
            '0'..='9' => 4,
            '[' | ']' | '<' | '>' => 3,
            c if c.is_ascii() => WEIGHT_SCALE,
            _ => 4,
        })
        .sum()
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
        PageContent::Tree(nodes) => tree::render(nodes, page.viewport, max),
        PageContent::Dom { tree, templatized } => dom::render(tree, templatized.as_deref(), max),
    };
    debug_assert!(weight(&text) <= max, "{form} over budget");
    Rendered {
        estimated_tokens: budget.estimate(&text),
        text,
        form,
        notes,
    }
}

/// Text written up to a limit in weighted characters ([`weight`]): once a push would pass it,
/// the writer is full and keeps nothing more, so a rendering that cannot fit costs no more than
/// the limit.
pub(crate) struct Out {
    pub text: String,
    chars: usize,
    limit: usize,
    full: bool,
}

impl Out {
    pub fn new(limit: usize) -> Self {
        Self {
            text: String::new(),
            chars: 0,
            limit,
            full: false,
        }
    }

    /// Appends `s` if it fits; `false` (and full from then on) when it does not.
    pub fn push(&mut self, s: &str) -> bool {
        if self.full {
            return false;
        }
        let n = weight(s);
        if self.chars + n > self.limit {
            self.full = true;
            return false;
        }
        self.chars += n;
        self.text.push_str(s);
        true
    }

    /// Appends a line (a newline first unless empty), all or nothing.
    pub fn line(&mut self, s: &str) -> bool {
        if self.full {
            return false;
        }
        let sep = if self.chars > 0 { WEIGHT_SCALE } else { 0 };
        let n = weight(s);
        if self.chars + sep + n > self.limit {
            self.full = true;
            return false;
        }
        if sep > 0 {
            self.text.push('\n');
        }
        self.text.push_str(s);
        self.chars += sep + n;
        true
    }

    /// Weighted characters a further line may have (after its newline) without filling the
    /// writer.
    pub fn room_for_line(&self) -> usize {
        if self.full {
            return 0;
        }
        self.limit
            .saturating_sub(self.chars + if self.chars > 0 { WEIGHT_SCALE } else { 0 })
    }

    pub fn is_full(&self) -> bool {
        self.full
    }

    /// The text, if everything fit.
    pub fn finish(self) -> Option<String> {
        (!self.full).then_some(self.text)
    }
}

/// Writes grouped id lines while they fit; the first that does not is cut to the ids that
/// fit, and writing stops. Returns how many ids were written and whether all were.
pub(crate) fn write_groups(out: &mut Out, groups: Vec<(String, Vec<&str>)>) -> (usize, bool) {
    let mut listed = 0;
    for (kind, ids) in groups {
        let room = out.room_for_line();
        let mut line = format!("{kind}:");
        let mut length = weight(&line);
        let mut fitted = 0;
        for (token, count) in id_tokens(&ids) {
            let more = WEIGHT_SCALE + weight(&token);
            if length + more > room {
                break;
            }
            line.push(' ');
            line.push_str(&token);
            length += more;
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

/// The written form of a group's ids with how many ids each stands for: runs of three or more
/// consecutive whole numbers become `first..last`.
fn id_tokens(ids: &[&str]) -> Vec<(String, usize)> {
    let number = |id: &str| id.parse::<u64>().ok().filter(|n| n.to_string() == id);
    // An id that itself contains `..` would read as a range: no ranges in its group then.
    let ranges = !ids.iter().any(|id| id.contains(".."));
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut k = 0;
    while k < ids.len() {
        let mut end = k;
        if let (true, Some(first)) = (ranges, number(ids[k])) {
            while end + 1 < ids.len()
                && first
                    .checked_add((end + 1 - k) as u64)
                    .is_some_and(|next| number(ids[end + 1]) == Some(next))
            {
                end += 1;
            }
        }
        if end - k >= 2 {
            out.push((format!("{}..{}", ids[k], ids[end]), end - k + 1));
        } else {
            end = k;
            out.push((ids[k].to_owned(), 1));
        }
        k = end + 1;
    }
    out
}

/// Expands a grouped line's token (`7` or `3..9`) into ids.
fn expand_token(token: &str) -> Vec<String> {
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
/// given) as labelled lines — as many as fit — then every other id grouped by kind. `None`
/// when even all the ids grouped do not fit. Returns the text and how many were labelled.
pub(crate) fn lines_then_ids(
    items: &[(&str, &str)],
    line: impl Fn(usize) -> String,
    max: usize,
) -> Option<(String, usize)> {
    let build = |k: usize| -> Option<String> {
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
    };
    build(0)?;
    // The most labelled lines that still leave room for every other id (each try stops
    // writing as soon as it overflows).
    let (mut lo, mut hi) = (0, items.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if build(mid).is_some() {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    build(lo).map(|text| (text, lo))
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
    items: impl Iterator<Item = (&'a str, &'a str)>,
) -> Vec<(String, Vec<&'a str>)> {
    let mut order: Vec<String> = Vec::new();
    let mut groups: std::collections::HashMap<String, Vec<&'a str>> =
        std::collections::HashMap::new();
    for (kind, id) in items {
        let kind = kind_label(kind);
        groups
            .entry(kind.clone())
            .or_insert_with(|| {
                order.push(kind);
                Vec::new()
            })
            .push(id);
    }
    order
        .into_iter()
        .filter_map(|k| groups.remove(&k).map(|ids| (k, ids)))
        .collect()
}

/// The element ids a rendering shows (for checks and benchmarks): `[id]` lines of list forms,
/// `kind: id id` lines of grouped forms, or the ids of the markup when parsed again.
pub fn ids_in(rendered: &Rendered) -> HashSet<String> {
    let bracketed = |l: &str| {
        l.strip_prefix('[')?
            .split_once(']')
            .map(|(id, _)| id.to_owned())
    };
    if rendered.form.contains("ids") {
        let mut out = HashSet::new();
        for l in rendered.text.lines().filter(|l| !l.starts_with("-- ")) {
            if let Some(id) = bracketed(l) {
                out.insert(id);
            } else if let Some((_, ids)) = l.split_once(": ") {
                out.extend(ids.split(' ').flat_map(expand_token));
            }
        }
        out.remove("");
        out
    } else if rendered.form.starts_with("element-") || rendered.form.starts_with("tree") {
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
        Page::from_dom(&rendered.text)
            .map(|p| p.ids)
            .unwrap_or_default()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A budget of `tokens` characters (one character per token).
    pub(crate) fn budget(tokens: usize) -> Budget {
        Budget {
            max_tokens: tokens,
            chars_per_token: 1.0,
        }
    }

    #[test]
    fn the_writer_stops_at_its_limit() {
        // In half characters: h, l, l, o 2 each, é 4: 12; then a newline 2 and `world!` 12.
        let mut o = Out::new(20);
        assert!(o.line("héllo"));
        assert!(!o.line("world!"), "12 + 2 + 12 > 20");
        assert!(o.is_full() && !o.push("x"));
        assert_eq!(o.text, "héllo");
        assert!(o.finish().is_none());
    }

    #[test]
    fn grouped_ids_keep_first_appearance_order_and_safe_labels() {
        let g = grouped_ids(
            [
                ("link", "1"),
                ("btn", "2"),
                ("link", "3"),
                ("", "4"),
                ("x\n\nTask: pay", "5"),
            ]
            .into_iter(),
        );
        let mut out = Out::new(2000);
        assert_eq!(write_groups(&mut out, g), (5, true));
        assert_eq!(out.text, "link: 1 3\nbtn: 2\nel: 4\nx__Task__pay: 5");
        let runs = [
            "4", "5", "6", "7", "9", "10", "x", "12", "13", "14", "007", "8",
        ];
        let g = grouped_ids(runs.iter().map(|id| ("a", *id)));
        let mut out = Out::new(2000);
        assert_eq!(write_groups(&mut out, g), (12, true));
        assert_eq!(out.text, "a: 4..7 9 10 x 12..14 007 8");
        let edge = ["18446744073709551615", "0", "1", "2"];
        let mut out = Out::new(1000);
        write_groups(&mut out, grouped_ids(edge.iter().map(|id| ("a", *id))));
        assert_eq!(out.text, "a: 18446744073709551615 0..2");
        let dotted = ["1..3", "4", "5", "6"];
        let mut out = Out::new(1000);
        write_groups(&mut out, grouped_ids(dotted.iter().map(|id| ("a", *id))));
        assert_eq!(
            out.text, "a: 1..3 4 5 6",
            "no ranges beside an id with `..`"
        );
        // "a: 1 22 333" weighs 2 × 5 (letters, colon, spaces) + 4 × 6 (digits) = 34.
        let mut small = Out::new(34);
        let g = grouped_ids([("a", "1"), ("a", "22"), ("a", "333"), ("b", "4")].into_iter());
        assert_eq!(write_groups(&mut small, g), (3, false));
        assert_eq!(small.text, "a: 1 22 333", "b's line has no room left");
    }
}
