//! Text as the risk gate reads it, whatever the page did to its spelling: character references
//! decoded, Unicode NFKC (fullwidth and mathematical letters, ligatures), lower case with case
//! folding's extra mappings, the confusable skeleton of UTS #39 (`unicode-security`: a Cyrillic
//! `а` reads as a Latin `a`; zero-width characters, soft hyphens and other default-ignorable
//! code points are dropped), then words split at anything that is not a letter, digit or mark.
//! Each word is kept twice: with its combining marks (so `gửi` is not `gui`) and without them
//! (so `páy` is `pay`); a phrase is matched against the form it is written in.
//!
//! A name may also be read in two more ways ([`variants`]): split where a lower-case letter
//! meets a capital (`PayNow`, `DeleteAccount`), and with runs of single letters joined
//! (`P a y`). The gate matches every reading.

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Longest text folded (characters); names are at most a few hundred, URLs a few thousand.
pub const MAX_CHARS: usize = 4_000;

/// A text folded into words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folded {
    /// Words with their combining marks.
    pub marked: Vec<String>,
    /// The same words without combining marks (one for one with `marked`).
    pub plain: Vec<String>,
}

impl Folded {
    pub fn is_empty(&self) -> bool {
        self.marked.is_empty()
    }

    pub fn len(&self) -> usize {
        self.marked.len()
    }

    /// The words of one form.
    pub fn words(&self, marked: bool) -> &[String] {
        if marked {
            &self.marked
        } else {
            &self.plain
        }
    }

    /// The words of one form written together, and where each word starts in it (characters),
    /// with the end as a last entry: phrases of scripts written without spaces are found in it.
    pub fn joined(&self, marked: bool) -> (String, Vec<usize>) {
        let mut text = String::new();
        let mut starts = Vec::with_capacity(self.len() + 1);
        let mut at = 0;
        for w in self.words(marked) {
            starts.push(at);
            text.push_str(w);
            at += w.chars().count();
        }
        starts.push(at);
        (text, starts)
    }
}

/// The folded characters of `text` (entities decoded, NFKC, case folded, skeleton), with the
/// case split of `PayNow` made first when `split_case` is set.
fn fold_chars(text: &str, split_case: bool) -> String {
    let decoded = if text.contains('&') {
        html_escape::decode_html_entities(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    let nfkc: String = decoded.nfkc().take(MAX_CHARS).collect();
    let cased = if split_case {
        split_at_capitals(&nfkc)
    } else {
        nfkc
    };
    // Lower case first (`PIN` must not become `PlN`: the skeleton maps a capital I to l),
    // then the skeleton, then lower case again for prototypes that are capitals.
    let lower: String = fold_case(&cased)
        .chars()
        .filter(|&c| c != TATWEEL)
        .collect();
    let skeleton: String = unicode_security::skeleton(&lower).collect();
    fold_case(&skeleton)
}

/// The Arabic tatweel stretches a word without changing it (`حـــذف` is `حذف`).
const TATWEEL: char = '\u{0640}';

/// Lower case with the mappings case folding adds (`ß` is `ss`, a final sigma is a sigma).
fn fold_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            'ß' | 'ẞ' => out.push_str("ss"),
            'ς' => out.push('σ'),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// `PayNow` as `Pay Now`: a space where a lower-case letter is followed by a capital.
fn split_at_capitals(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev_lower = false;
    for c in text.chars() {
        if prev_lower && c.is_uppercase() {
            out.push(' ');
        }
        // Zero-width characters between the two halves change nothing.
        if !is_ignorable(c) {
            prev_lower = c.is_lowercase();
        }
        out.push(c);
    }
    out
}

/// The format characters a page may put inside a word to break it (the skeleton drops all
/// default-ignorable code points; these are the ones to see through before it).
fn is_ignorable(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{E0000}'..='\u{E0FFF}')
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_combining_mark(c)
}

/// Words of folded characters.
fn words_of(folded: &str) -> Folded {
    let mut out = Folded::default();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Folded| {
        // Marks with no letter left under them (Icelandic `ð` leaves only its stroke) are no
        // word.
        let plain: String = word.chars().filter(|c| !is_combining_mark(*c)).collect();
        if plain.is_empty() {
            word.clear();
        } else {
            out.plain.push(plain);
            out.marked.push(std::mem::take(word));
        }
    };
    for c in folded.chars() {
        if is_word_char(c) {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// `text` as the gate reads it (one reading).
pub fn fold(text: &str) -> Folded {
    words_of(&fold_chars(text, false))
}

/// Whether the user's words hold `value` (folded: case, width and marks aside).
pub fn holds(value: &str, said: &str) -> bool {
    let (said, value) = (fold(said), fold(value));
    !value.is_empty()
        && value.len() <= said.len()
        && (said.plain.windows(value.len())).any(|w| w == value.plain.as_slice())
}

/// Every reading of `text`: as written, split at capitals (when that changes anything), and
/// with runs of single letters joined (when there are any).
pub fn variants(text: &str) -> Vec<Folded> {
    let base = fold(text);
    let mut out = vec![];
    if text.chars().any(char::is_uppercase) {
        let split = words_of(&fold_chars(text, true));
        if split != base {
            out.push(split);
        }
    }
    if let Some(joined) = join_letters(&base) {
        out.push(joined);
    }
    // A soft hyphen or zero-width character may also mark where two words meet
    // (`Genomför\u{AD}överföring`).
    if text.chars().any(is_ignorable) {
        let apart: String = text
            .chars()
            .map(|c| if is_ignorable(c) { ' ' } else { c })
            .collect();
        let split = fold(&apart);
        if split != base {
            out.push(split);
        }
    }
    out.insert(0, base);
    out
}

/// Runs of two or more one-letter words joined into one (`p a y` is `pay`).
fn join_letters(f: &Folded) -> Option<Folded> {
    let single = |w: &String| w.chars().filter(|c| !is_combining_mark(*c)).count() == 1;
    let mut changed = false;
    let mut out = Folded::default();
    let mut k = 0;
    while k < f.len() {
        let run = f.marked[k..].iter().take_while(|w| single(w)).count();
        if run >= 2 {
            out.marked.push(f.marked[k..k + run].concat());
            out.plain.push(f.plain[k..k + run].concat());
            changed = true;
            k += run;
        } else {
            out.marked.push(f.marked[k].clone());
            out.plain.push(f.plain[k].clone());
            k += 1;
        }
    }
    changed.then_some(out)
}

/// Whether `c` belongs to a script written without spaces between words (Chinese, Japanese,
/// Korean as folded (jamo), Thai, Lao, Khmer, Myanmar): phrases in it are found anywhere.
pub fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1100..=0x11FF // Hangul jamo (syllables decompose into them)
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3130..=0x318F
        | 0x31F0..=0x31FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA960..=0xA97F
        | 0xAC00..=0xD7FF
        | 0xF900..=0xFAFF
        | 0x20000..=0x2FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> String {
        fold(text).plain.join(" ")
    }

    #[test]
    fn a_word_of_marks_alone_is_no_word_and_a_folded_text_folds_to_itself() {
        for t in ["við innskráningu", "með", "ð", "takmarka"] {
            let f = fold(t);
            assert!(f.plain.iter().all(|w| !w.is_empty()), "{t}: {f:?}");
            assert_eq!(fold(&f.plain.join(" ")).plain, f.plain, "{t}");
        }
    }

    #[test]
    fn spellings_a_page_controls_fold_to_the_same_words() {
        for spelling in [
            "Pay now",
            "P\u{0430}y now",
            "Pa\u{200B}y now",
            "P\u{00AD}ay now",
            "Ｐａｙ ｎｏｗ",
            "𝐏𝐚𝐲 𝐧𝐨𝐰",
            "𝖯𝖺𝗒 𝗇𝗈𝗐",
            "P&#97;y now",
            "P&#x61;y&nbsp;now",
            "PAY NOW",
            "Páy now",
            "Pay n\u{2060}ow",
        ] {
            assert_eq!(plain(spelling), plain("pay now"), "{spelling:?}");
        }
        assert_eq!(plain("Straße"), plain("STRASSE"));
        assert_eq!(plain("PIN"), plain("pin"), "a capital I stays an i");
    }

    #[test]
    fn camel_case_and_spaced_letters_are_other_readings() {
        let readings: Vec<String> = variants("PayNow")
            .iter()
            .map(|f| f.plain.join(" "))
            .collect();
        assert!(readings.contains(&plain("pay now")), "{readings:?}");
        let readings: Vec<String> = variants("P a y now")
            .iter()
            .map(|f| f.plain.join(" "))
            .collect();
        assert!(readings.contains(&plain("pay now")), "{readings:?}");
        assert_eq!(variants("pay now").len(), 1);
    }

    #[test]
    fn marks_are_kept_in_one_form_and_dropped_in_the_other() {
        let f = fold("Gửi tin nhắn");
        assert_ne!(f.marked[0], f.plain[0]);
        assert_eq!(f.plain[0], plain("gui"));
        assert_eq!(fold("Сообщение").len(), 1);
    }

    #[test]
    fn joined_words_say_where_each_starts() {
        let (text, starts) = fold("ab cde").joined(false);
        assert_eq!(text.chars().count(), 5);
        assert_eq!(starts, vec![0, 2, 5]);
    }
}
