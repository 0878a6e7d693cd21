//! The approximate match (`RECIPE_MATCH=approximate`): an instruction worded a little
//! differently from the recorded one — other punctuation, "please", "the", "a", "now" — binds
//! to its template too. Words are compared, not characters: the template's own words must all
//! come in order (filler words aside), and each parameter takes the words between them, its
//! value cut from the instruction as the user wrote it. The exact rules still hold: a template
//! needs words of its own, and a parameter followed by words that come again later binds
//! nothing.

use super::{collapsed, specific, split_template, Piece, MAX_PARAM_CHARS};

/// Words an instruction may add or leave out without being another task.
const FILLER: &[&str] = &["please", "kindly", "just", "now", "the", "a", "an"];

/// A word of the instruction: its lower case and where it is in the text as written.
struct Word {
    lower: String,
    start: usize,
    end: usize,
}

fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(Word {
                    lower: text[s..i].to_lowercase(),
                    start: s,
                    end: i,
                });
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn filler(word: &str) -> bool {
    FILLER.contains(&word)
}

/// The template's literal words.
fn literal_words(literal: &str) -> Vec<String> {
    words(literal).into_iter().map(|w| w.lower).collect()
}

/// Where `lit` matches the instruction's words from `at`: the index after its last word.
/// Filler words may be left out on either side (the instruction's skipped, the template's
/// optional); every other word of the template must come, in order.
fn matches_at(text: &[Word], at: usize, lit: &[String]) -> Option<usize> {
    let mut i = at;
    for w in lit {
        while text
            .get(i)
            .is_some_and(|t| filler(&t.lower) && t.lower != *w)
        {
            i += 1;
        }
        match text.get(i) {
            Some(t) if t.lower == *w => i += 1,
            _ if filler(w) => {}
            _ => return None,
        }
    }
    Some(i)
}

/// The values `instruction` gives `template`'s parameters, worded loosely.
pub fn bind_loose(template: &str, instruction: &str) -> Option<Vec<(String, String)>> {
    if !specific(template) {
        return None;
    }
    let written = collapsed(instruction);
    let text = words(&written);
    let mut at = 0;
    let mut out = Vec::new();
    let mut pending: Option<&str> = None;
    let pieces = split_template(template)?;
    let value = |from: usize, to: usize| -> Option<String> {
        let (first, last) = (text.get(from)?, text.get(to.checked_sub(1)?)?);
        (to > from).then(|| written[first.start..last.end].to_owned())
    };
    for piece in &pieces {
        match piece {
            Piece::Param(name) => pending = Some(name),
            Piece::Literal(lit) => {
                let lit = literal_words(lit);
                if lit.iter().all(|w| filler(w)) {
                    // Only punctuation after a parameter: where its value ends is a guess.
                    if pending.is_some() {
                        return None;
                    }
                    continue;
                }
                match pending.take() {
                    Some(name) => {
                        // The parameter takes at least one word; the literal comes once.
                        let mut found: Vec<(usize, usize)> = Vec::new();
                        for j in at + 1..text.len() {
                            let Some(end) = matches_at(&text, j, &lit) else {
                                continue;
                            };
                            // A match that only starts at a filler word more is the same one.
                            if found.last().is_none_or(|&(_, e)| e != end) {
                                found.push((j, end));
                            }
                        }
                        let &(j, end) = found.first()?;
                        if found.len() > 1 {
                            return None;
                        }
                        out.push((name.to_owned(), value(at, j)?));
                        at = end;
                    }
                    None => at = matches_at(&text, at, &lit)?,
                }
            }
        }
    }
    match pending {
        Some(name) => out.push((name.to_owned(), value(at, text.len())?)),
        None if text[at.min(text.len())..].iter().any(|w| !filler(&w.lower)) => return None,
        None => {}
    }
    let valid = out
        .iter()
        .all(|(_, v)| !v.trim().is_empty() && v.chars().count() <= MAX_PARAM_CHARS);
    valid.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            list.iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn other_punctuation_and_filler_words_bind_with_the_values_as_written() {
        let t = "ship {quantity} boxes of {item} to the office";
        assert_eq!(
            bind_loose(t, "Please ship 3 boxes of A4 paper, to office!"),
            vals(&[("quantity", "3"), ("item", "A4 paper")])
        );
        // Two parameters with only punctuation between them: where one ends is a guess.
        let checkout = "ship to {name}, {street}, with {shipping} shipping";
        assert_eq!(
            bind_loose(
                checkout,
                "please ship to Grace Hopper, 1 Main Street, Arlington with standard shipping"
            ),
            None
        );
    }

    #[test]
    fn words_of_the_template_must_all_come_in_order() {
        let t = "click the {button} button on the form";
        assert_eq!(
            bind_loose(t, "Please click the 'Press me' button on the form."),
            vals(&[("button", "Press me")])
        );
        assert_eq!(
            bind_loose(t, "click Press me button on form now"),
            vals(&[("button", "Press me")])
        );
        // A word of its own missing, another added, or the order changed: another task.
        assert_eq!(bind_loose(t, "click the Press me button"), None);
        assert_eq!(
            bind_loose(t, "click the Press me button on the form twice"),
            None
        );
        assert_eq!(bind_loose(t, "on the form click the Press me button"), None);
        // The literal after a parameter must come once.
        assert_eq!(
            bind_loose("add {item} to {list} now", "add back to school to shopping"),
            None
        );
        assert_eq!(bind_loose("{search}", "anything at all"), None);
    }
}
