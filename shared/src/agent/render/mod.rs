//! Rendering a page for the prompt within a token budget. Token counts are estimated from
//! characters (exact tokenizers cost 0.1–0.9 s to start; the benchmark calibrates the ratio).
//! Renderings are tried from richest to tightest and the first that fits is used; the budget
//! is a hard ceiling: no rendering is ever longer than `Budget::max_chars` characters.
//!
//! Within the budget, names and text go before elements: every element id is listed whenever
//! the ids alone fit (tree: [`tree`]; dom: [`dom`]). Whatever was left out is said in `notes`,
//! which the prompt shows with the page.

mod dom;
mod ids;
mod tree;

use std::collections::HashSet;

use super::page::{Page, PageContent};
use ids::expand_token;
pub(crate) use ids::{grouped_ids, lines_then_ids, not_listed, write_groups};

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
    render_for(page, budget, Hints::default())
}

/// What a big page's rendering keeps readable besides its start and first screen: the task's
/// last acted-on element and the elements named with the task's words.
#[derive(Debug, Default, Clone, Copy)]
pub struct Hints<'a> {
    pub anchor: Option<&'a str>,
    /// [`task_words`] of the instruction.
    pub words: &'a [String],
}

/// Words of an instruction that can name an element: four letters or more, not a common word,
/// lower case, at most [`MAX_TASK_WORDS`].
pub fn task_words(query: &str) -> Vec<String> {
    const COMMON: &[&str] = &[
        "this", "that", "with", "from", "into", "then", "page", "click", "open", "find", "have",
        "there", "their", "your", "about", "what", "which", "when", "where", "please", "enter",
        "select", "button", "link", "field", "type", "submit",
    ];
    let mut out: Vec<String> = Vec::new();
    for w in query.split(|c: char| !c.is_alphanumeric()) {
        let w = w.to_lowercase();
        if w.chars().count() >= 4 && !COMMON.contains(&w.as_str()) && !out.contains(&w) {
            out.push(w);
        }
        if out.len() >= MAX_TASK_WORDS {
            break;
        }
    }
    out
}

/// Words of the task a rendering looks for at most.
pub const MAX_TASK_WORDS: usize = 12;

/// Renders `page` within `budget`, a tree's names kept longest at the start of the page, on its
/// first screen, around `hints.anchor` and where the task's words are.
pub fn render_for(page: &Page, budget: Budget, hints: Hints<'_>) -> Rendered {
    let max = budget.max_chars();
    let (form, text, notes) = match &page.content {
        PageContent::Tree(nodes) => {
            let screen = page.viewport.map(|(_, h)| h);
            tree::render(nodes, hints, screen, max)
        }
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

/// The elements a rendering lists by id plus those its summary lines (`(… 48 more here: …)`)
/// count (for checks and benchmarks).
pub fn listed_or_counted(rendered: &Rendered) -> usize {
    let counted: usize = (rendered.text.lines())
        .filter_map(|l| {
            l.strip_prefix("(… ")?
                .split(' ')
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum();
    ids_in(rendered).len() + counted
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
            .map(|p| p.id_set())
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
}
