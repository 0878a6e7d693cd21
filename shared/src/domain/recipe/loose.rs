//! The approximate match (`RECIPE_MATCH=approximate`): an instruction worded a little
//! differently — other punctuation, "please", "the", "a", "now" — binds to its template too.
//! Words are compared with the filler words left out on both sides: the template's own words
//! must all come, in order; each parameter takes the words between them, cut from the
//! instruction as written. The exact rules still hold: a template needs words of its own, and
//! a parameter followed by words that come again later binds nothing.

use super::{collapsed, specific, split_template, Piece, MAX_PARAM_CHARS};

/// Words an instruction may add or leave out without being another task.
const FILLER: &[&str] = &["please", "kindly", "just", "now", "the", "a", "an"];

/// A word that is not a filler: its lower case and where it is in the text as written.
struct Word {
    lower: String,
    start: usize,
    end: usize,
}

fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let lower = text[s..i].to_lowercase();
                if !FILLER.contains(&lower.as_str()) {
                    out.push(Word {
                        lower,
                        start: s,
                        end: i,
                    });
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// The values `instruction` gives `template`'s parameters, worded loosely.
pub fn bind_loose(template: &str, instruction: &str) -> Option<Vec<(String, String)>> {
    if !specific(template) {
        return None;
    }
    let written = collapsed(instruction);
    let text = words(&written);
    // A value as written: with the sign, point or currency mark stuck to its first word
    // (`-3`, `.5`, `$20`) and a percent sign after its last.
    let span = |ws: &[Word]| {
        let head =
            written[..ws.first()?.start].trim_end_matches(['-', '+', '.', '$', '€', '£', '¥', '#']);
        let tail = written[ws.last()?.end..].trim_start_matches('%');
        let end = written.len() - tail.len();
        Some(written[head.len()..end].to_owned())
    };
    let (mut at, mut out, mut pending) = (0, Vec::new(), None::<String>);
    for piece in split_template(template)? {
        let lit: Vec<String> = match piece {
            Piece::Param(name) => {
                pending = Some(name);
                continue;
            }
            Piece::Literal(lit) => words(&lit).into_iter().map(|w| w.lower).collect(),
        };
        // Only punctuation after a parameter: where its value ends is a guess.
        if lit.is_empty() {
            match pending {
                Some(_) => return None,
                None => continue,
            }
        }
        let here = |j: usize| {
            let ws = text.get(j..j + lit.len());
            ws.is_some_and(|ws| ws.iter().zip(&lit).all(|(w, l)| w.lower == *l))
        };
        let j = match &pending {
            None if here(at) => at,
            None => return None,
            // The parameter takes a word at least; the literal comes once.
            Some(_) => {
                let mut found = (at + 1..text.len()).filter(|&j| here(j));
                let j = found.next()?;
                if found.next().is_some() {
                    return None;
                }
                j
            }
        };
        if let Some(name) = pending.take() {
            out.push((name, span(&text[at..j])?));
        }
        at = j + lit.len();
    }
    match pending {
        Some(name) => out.push((name, span(&text[at..])?)),
        None if at != text.len() => return None,
        None => {}
    }
    let valid = |v: &str| !v.trim().is_empty() && v.chars().count() <= MAX_PARAM_CHARS;
    out.iter().all(|(_, v)| valid(v)).then_some(out)
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
