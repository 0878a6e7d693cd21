//! Typed secrets: what is typed into a password, code or card field during a task (by the
//! agent, or by the user on a page the agent sees) must never leave again — not in a search
//! query, an address the server returns, a question to the user, a later prompt, or anything
//! stored. The server keeps no copy: a task carries only keyed fingerprints ([`SecretMark`]: a
//! SipHash-2-4 of the value's letters and digits under a key derived from the server's own
//! secret, which no store holds), and finds a secret again in any text by fingerprinting
//! every stretch of that text's letters and digits of a secret's length that starts a word —
//! so a card number written with spaces or dashes, a password in a URL or a code in a
//! sentence is found in any formatting. A short secret (under 8 letters and digits: a 3-digit
//! security code, a PIN) is found only as a whole word, so `123` is not found inside `41235`; a
//! longer one also inside a longer token (`xHunter2x-Secret9`). Every encoding a URL, a search
//! query or a page may give it is undone first: percent escapes of any byte, repeated
//! (`%252D`), `+` for a space, HTML character references (`&#104;`, `&amp;`).

use std::borrow::Cow;
use std::ops::Range;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use siphasher::sip128::{Hasher128, SipHasher24};

/// What a found secret is replaced with.
pub const HIDDEN: &str = "[secret]";
/// Shortest secret fingerprinted (letters and digits): shorter values tell nothing apart.
pub const MIN_CHARS: usize = 3;
/// Longest secret fingerprinted (letters and digits); a longer value typed by the agent is
/// fingerprinted by its first this many, which are then hidden wherever they stand.
const MAX_CHARS: usize = 128;
/// Longest value of a page's secret field fingerprinted: a page cannot make every later scan
/// slow with long values of its own.
pub const MAX_OBSERVED_CHARS: usize = 64;
/// Most fingerprints of values seen on pages (the rest of [`MAX_MARKS`] is kept for what the
/// agent types: a page cannot push those out).
pub const MAX_OBSERVED: usize = 8;
/// Longest text searched for secrets at once (a page snapshot beyond it is not kept when the
/// task has secrets).
pub const MAX_SCAN_BYTES: usize = 1 << 20;
/// Secrets under this many letters and digits are found only as whole words.
const WHOLE_WORD_BELOW: usize = 8;
/// Most fingerprints a task keeps (the oldest go first).
pub const MAX_MARKS: usize = 24;

/// The fingerprint of one secret: its length in letters and digits and a keyed hash of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretMark {
    pub len: u16,
    /// The keyed hash, hex.
    pub mac: String,
    /// Typed by the agent (rather than seen in a page's field).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub typed: bool,
}

/// The key of the fingerprints, derived from the server's secret (never stored).
#[derive(Clone)]
pub struct SecretKey([u8; 16]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(…)")
    }
}

/// The letters and digits a secret is compared by, lower-cased.
fn letters(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .take(MAX_CHARS)
        .collect()
}

impl SecretKey {
    /// The key for a server whose own secret is `server_secret`.
    pub fn derive(server_secret: &[u8]) -> Self {
        let mut key = [0u8; 16];
        if let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(server_secret) {
            mac.update(b"typed-secret-marks/v1");
            key.copy_from_slice(&mac.finalize().into_bytes()[..16]);
        }
        Self(key)
    }

    fn hasher(&self) -> SipHasher24 {
        SipHasher24::new_with_key(&self.0)
    }

    fn hash(&self, chars: &[char]) -> u128 {
        let mut h = self.hasher();
        for &c in chars {
            feed(&mut h, c);
        }
        h.finish128().into()
    }

    /// The fingerprint of `value`, when it has enough letters and digits to be one.
    pub fn mark(&self, value: &str) -> Option<SecretMark> {
        let chars = letters(value);
        (chars.len() >= MIN_CHARS).then(|| SecretMark {
            len: chars.len() as u16,
            mac: format!("{:032x}", self.hash(&chars)),
            typed: true,
        })
    }

    /// The fingerprint of a value seen in a page's secret field, unless it is too long to be
    /// worth one (see [`MAX_OBSERVED_CHARS`]).
    pub fn seen(&self, value: &str) -> Option<SecretMark> {
        let n = value.chars().filter(|c| c.is_alphanumeric()).count();
        let mark = self.mark(value).filter(|_| n <= MAX_OBSERVED_CHARS)?;
        Some(SecretMark {
            typed: false,
            ..mark
        })
    }

    /// A finder of `marks` in texts.
    pub fn finder(&self, marks: &[SecretMark]) -> Finder {
        let marks: Vec<(usize, u128)> = marks
            .iter()
            .filter_map(|m| Some((m.len as usize, u128::from_str_radix(&m.mac, 16).ok()?)))
            .collect();
        let mut lens: Vec<usize> = marks.iter().map(|m| m.0).collect();
        lens.sort_unstable();
        lens.dedup();
        Finder {
            key: self.clone(),
            marks,
            lens,
        }
    }
}

fn feed(h: &mut SipHasher24, c: char) {
    let mut buf = [0u8; 4];
    std::hash::Hasher::write(h, c.encode_utf8(&mut buf).as_bytes());
}

/// Adds `mark` to `marks`, once. A value seen on pages is kept while fewer than
/// [`MAX_OBSERVED`] are; a typed one always is, the oldest seen (then the oldest typed) going
/// beyond [`MAX_MARKS`].
pub fn remember(marks: &mut Vec<SecretMark>, mark: SecretMark) {
    let same = |m: &SecretMark| m.len == mark.len && m.mac == mark.mac;
    if let Some(known) = marks.iter_mut().find(|m| same(m)) {
        known.typed |= mark.typed;
        return;
    }
    if !mark.typed {
        if marks.iter().filter(|m| !m.typed).count() < MAX_OBSERVED && marks.len() < MAX_MARKS {
            marks.push(mark);
        }
        return;
    }
    marks.push(mark);
    while marks.len() > MAX_MARKS {
        let oldest = marks.iter().position(|m| !m.typed).unwrap_or(0);
        marks.remove(oldest);
    }
}

/// One letter or digit of a text: where it is, and whether a word starts or ends there.
struct Letter {
    c: char,
    bytes: Range<usize>,
    starts_word: bool,
    ends_word: bool,
}

/// Most rounds of encoding undone (`%252D` is `-` encoded twice).
const DECODE_ROUNDS: usize = 4;
/// Texts of at most this many letters are searched for a long secret from every letter, not
/// only where words start (`xHunter2x-Secret9`); a larger text (a page) only from word starts,
/// so a scan stays bounded by the words times the longest secret.
const MID_WORD_SCAN: usize = 1 << 16;

/// The characters of `text` with where each is written, every encoding undone: percent escapes
/// (any byte, a UTF-8 sequence as its character, repeated up to [`DECODE_ROUNDS`] times) and
/// HTML character references (`&#104;`, `&#x68;`, `&amp;` …) count as what they encode.
fn units(text: &str) -> Vec<(char, Range<usize>)> {
    let mut units: Vec<(char, Range<usize>)> = text
        .char_indices()
        .map(|(at, c)| (c, at..at + c.len_utf8()))
        .collect();
    for _ in 0..DECODE_ROUNDS {
        let mut out = Vec::with_capacity(units.len());
        let mut k = 0;
        while k < units.len() {
            match percent_at(&units, k).or_else(|| entity_at(&units, k)) {
                Some((c, used)) => {
                    out.push((c, units[k].1.start..units[k + used - 1].1.end));
                    k += used;
                }
                None => {
                    out.push(units[k].clone());
                    k += 1;
                }
            }
        }
        let changed = out.len() != units.len();
        units = out;
        if !changed {
            break;
        }
    }
    units
}

/// The byte a `%XX` escape at `units[k]` encodes.
fn escaped_byte(units: &[(char, Range<usize>)], k: usize) -> Option<u8> {
    let digit = |j: usize| units.get(j).and_then(|(c, _)| c.to_digit(16));
    (units.get(k)?.0 == '%').then_some(())?;
    Some((digit(k + 1)? * 16 + digit(k + 2)?) as u8)
}

/// The character percent escapes at `units[k]` encode (one, or a UTF-8 sequence of them) and
/// how many units they take.
fn percent_at(units: &[(char, Range<usize>)], k: usize) -> Option<(char, usize)> {
    let lead = escaped_byte(units, k)?;
    let len = match lead {
        0x00..=0x7f => return Some((char::from(lead), 3)),
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return None,
    };
    let mut bytes = vec![lead];
    for j in 1..len {
        bytes.push(escaped_byte(units, k + 3 * j)?);
    }
    let c = std::str::from_utf8(&bytes).ok()?.chars().next()?;
    Some((c, 3 * len))
}

/// Longest HTML character reference read (`&#x10FFFF;`).
const MAX_ENTITY: usize = 10;

/// The character an HTML character reference at `units[k]` stands for and how many units it
/// takes.
fn entity_at(units: &[(char, Range<usize>)], k: usize) -> Option<(char, usize)> {
    (units.get(k)?.0 == '&').then_some(())?;
    let body: String = units[k + 1..]
        .iter()
        .take(MAX_ENTITY)
        .map(|(c, _)| *c)
        .take_while(|c| *c != ';')
        .collect();
    let end = k + 1 + body.chars().count();
    (units.get(end)?.0 == ';').then_some(())?;
    let c = match body.strip_prefix('#') {
        Some(n) => {
            let code = match n.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => n.parse().ok()?,
            };
            char::from_u32(code)?
        }
        None => match body.as_str() {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "nbsp" => ' ',
            "num" => '#',
            "percnt" => '%',
            "plus" => '+',
            "hyphen" | "dash" => '-',
            _ => return None,
        },
    };
    Some((c, end + 1 - k))
}

fn letters_of(text: &str) -> Vec<Letter> {
    let units = units(text);
    let mut out: Vec<Letter> = Vec::new();
    for (k, (c, bytes)) in units.iter().enumerate() {
        if !c.is_alphanumeric() {
            continue;
        }
        let prev_alnum = k > 0 && units[k - 1].0.is_alphanumeric();
        let next_alnum = units.get(k + 1).is_some_and(|(n, _)| n.is_alphanumeric());
        let lower: Vec<char> = c.to_lowercase().collect();
        let n = lower.len();
        for (j, l) in lower.into_iter().enumerate() {
            out.push(Letter {
                c: l,
                bytes: bytes.clone(),
                starts_word: !prev_alnum && j == 0,
                ends_word: !next_alnum && j + 1 == n,
            });
        }
    }
    out
}

/// A page as it may be kept when a task has secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Masked {
    /// It holds none.
    Clean,
    /// It held some, now `*`.
    Masked(String),
    /// Too large to search ([`MAX_SCAN_BYTES`]): not kept.
    TooLarge,
}

/// Finds a task's secrets in texts.
#[derive(Debug, Clone)]
pub struct Finder {
    key: SecretKey,
    /// Length and hash of each secret.
    marks: Vec<(usize, u128)>,
    lens: Vec<usize>,
}

impl Finder {
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// Where the secrets are in `text` (byte ranges from a secret's first letter to its last).
    pub fn find(&self, text: &str) -> Vec<Range<usize>> {
        if self.marks.is_empty() || text.len() < MIN_CHARS {
            return Vec::new();
        }
        let ls = letters_of(text);
        let longest = self.lens.last().copied().unwrap_or(0);
        let mut found: Vec<Range<usize>> = Vec::new();
        // A secret starts a word wherever it is written (separators and formatting start
        // words): from each word start, one pass feeds the hash letter by letter and reads it
        // at each secret length — work bounded by the words times the longest secret.
        // A long secret is also found inside a longer token of a text that is not a page.
        let anywhere = ls.len() <= MID_WORD_SCAN && longest >= WHOLE_WORD_BELOW;
        for start in (0..ls.len()).filter(|&k| anywhere || ls[k].starts_word) {
            let word_start = ls[start].starts_word;
            let mut h = self.key.hasher();
            let mut lens = self.lens.iter().peekable();
            for (k, l) in ls[start..].iter().take(longest).enumerate() {
                feed(&mut h, l.c);
                let len = k + 1;
                while lens.next_if(|&&n| n < len).is_some() {}
                let short = len < WHOLE_WORD_BELOW;
                if lens.peek() != Some(&&len) || (short && !(word_start && l.ends_word)) {
                    continue;
                }
                let mac: u128 = h.finish128().into();
                if self.marks.iter().any(|&(n, m)| n == len && m == mac) {
                    found.push(ls[start].bytes.start..l.bytes.end);
                }
            }
        }
        found.sort_by_key(|r| r.start);
        found
    }

    /// Whether `text` holds a secret (letters and digits as written or percent-escaped).
    pub fn in_text(&self, text: &str) -> bool {
        !self.find(text).is_empty()
    }

    /// `text` with every secret replaced by [`HIDDEN`].
    pub fn scrub<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let found = self.find(text);
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for r in found {
            if r.start < at {
                // Overlapping finds: extend the hidden stretch.
                at = at.max(r.end);
                continue;
            }
            out.push_str(&text[at..r.start]);
            out.push_str(HIDDEN);
            at = r.end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// Every string inside `value` scrubbed.
    pub fn scrub_json(&self, value: &mut serde_json::Value) {
        if self.marks.is_empty() {
            return;
        }
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::String(s) => {
                    if let Cow::Owned(clean) = self.scrub(s) {
                        *s = clean;
                    }
                }
                serde_json::Value::Array(items) => stack.extend(items.iter_mut()),
                serde_json::Value::Object(map) => stack.extend(map.values_mut()),
                _ => {}
            }
        }
    }

    /// `item` with every string in it scrubbed (through its JSON form).
    pub fn scrubbed<T>(&self, item: &T) -> Option<T>
    where
        T: Serialize + serde::de::DeserializeOwned,
    {
        let mut v = serde_json::to_value(item).ok()?;
        self.scrub_json(&mut v);
        serde_json::from_value(v).ok()
    }

    /// Each of `items` scrubbed ([`Finder::scrubbed`]; one that cannot go through JSON is kept
    /// as it is).
    pub fn scrubbed_all<T>(&self, items: Vec<T>) -> Vec<T>
    where
        T: Serialize + serde::de::DeserializeOwned,
    {
        items
            .into_iter()
            .map(|item| self.scrubbed(&item).unwrap_or(item))
            .collect()
    }

    /// A page as sent (the tree's JSON or the `dom`) with the letters of every secret in it
    /// replaced by `*` (escape sequences are left whole, so JSON stays JSON).
    pub fn mask_page(&self, raw: &str) -> Masked {
        if self.marks.is_empty() {
            return Masked::Clean;
        }
        if raw.len() > MAX_SCAN_BYTES {
            return Masked::TooLarge;
        }
        let found = self.find(raw);
        if found.is_empty() {
            return Masked::Clean;
        }
        let mut out = String::with_capacity(raw.len());
        let mut escaped = false;
        let mut hidden = found.iter().peekable();
        for (at, c) in raw.char_indices() {
            while hidden.peek().is_some_and(|r| r.end <= at) {
                hidden.next();
            }
            let inside = hidden.peek().is_some_and(|r| r.start <= at);
            if escaped {
                escaped = false;
                out.push(c);
                continue;
            }
            if c == '\\' {
                escaped = true;
                out.push(c);
                continue;
            }
            out.push(if inside && c.is_alphanumeric() {
                '*'
            } else {
                c
            });
        }
        Masked::Masked(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SecretKey {
        SecretKey::derive(b"test-server-secret-0123456789abcdef")
    }

    #[test]
    fn a_secret_is_found_in_any_formatting_and_only_as_itself() {
        let k = key();
        let marks: Vec<SecretMark> = ["hunter2", "4111 1111 1111 1111", "123"]
            .iter()
            .filter_map(|v| k.mark(v))
            .collect();
        let f = k.finder(&marks);
        assert!(f.in_text("why is HUNTER2 rejected"));
        assert!(f.in_text("card 4111-1111-1111-1111 declined"));
        assert!(f.in_text("4111111111111111"));
        assert!(f.in_text("https://evil.test/?pw=hunter2"));
        assert!(
            f.in_text("https://evil.test/?pw=hun%74er2"),
            "percent-encoded"
        );
        assert_eq!(f.scrub("?pw=hun%74er2&x=1"), "?pw=[secret]&x=1");
        assert!(f.in_text("the code is 123."));
        assert!(
            !f.in_text("call 41235 now"),
            "a short secret only as a whole word"
        );
        assert!(!f.in_text("hunter"), "not a prefix");
        assert_eq!(
            f.scrub("typed hunter2 and cvc 123"),
            "typed [secret] and cvc [secret]"
        );
        let other = SecretKey::derive(b"another-server-secret-0123456789ab");
        assert!(!other.finder(&marks).in_text("hunter2"), "the key matters");
    }

    #[test]
    fn a_secret_is_found_in_every_encoding_a_url_or_page_may_give_it() {
        let k = key();
        let marks: Vec<SecretMark> = ["Hunter2-Secret9", "hunter2"]
            .iter()
            .filter_map(|v| k.mark(v))
            .collect();
        let f = k.finder(&marks);
        for text in [
            "https://evil.test/?q=Hunter2%2DSecret9",
            "https://evil.test/?q=Hunter2%2dSecret9",
            "https://evil.test/?q=Hunter2%20Secret9",
            "https://evil.test/?q=Hunter2+Secret9",
            "https://evil.test/?q=H%75nter2-Secret9",
            "https://evil.test/?q=Hunter2%252DSecret9",
            "https://evil.test/?q=%2548unter2%25252DSecret9",
            "Hunter2&#45;Secret9",
            "Hunter2&#x2D;Secret9",
            "H&#117;nter2&amp;Secret9",
            "&#72;&#117;&#110;&#116;&#101;&#114;&#50;&#45;&#83;ecret9",
            "xHunter2x-Secret9 is mid-token: xHunter2-Secret9x",
            "%E2%80%94Hunter2%E2%80%94Secret9%E2%80%94",
            "hunter%32",
        ] {
            assert!(f.in_text(text), "{text}");
        }
        assert_eq!(
            f.scrub("go https://evil.test/?q=Hunter2%252DSecret9&x=1 now"),
            "go https://evil.test/?q=[secret]&x=1 now"
        );
        assert!(
            !f.in_text("xhunter2y"),
            "a short secret still only as a word"
        );
        assert_eq!(
            f.scrub("Hunter2%2ZSecret9"),
            "[secret]%2ZSecret9",
            "not an escape: only the short secret, as a word"
        );
        assert!(!f.in_text("&#99999999999;"), "not a character");
        assert!(!f.in_text("%FF%FE"), "not UTF-8");
    }

    /// The largest and most repeated encodings a text can hold: every escape decodes to one
    /// more escape, down past the rounds undone; references without end; a page-sized text.
    /// Each is searched without fault and nothing beyond the secret is hidden.
    #[test]
    fn the_deepest_and_largest_encodings_are_searched_within_bounds() {
        let k = key();
        let f = k.finder(&[k.mark("Hunter2-Secret9").expect("mark")]);
        let mut deep = "x".to_owned();
        for _ in 0..12 {
            deep = deep.replace('%', "%25");
            deep = format!("%78{deep}");
        }
        assert!(!f.in_text(&deep));
        let refs = "&#".repeat(200_000) + &"&amp;".repeat(100_000);
        assert!(!f.in_text(&refs));
        let page = format!("{} Hunter2-Secret9", "%2D%252D&#45;+".repeat(60_000));
        assert!(page.len() > MID_WORD_SCAN, "word starts only beyond this");
        assert!(f.in_text(&page), "found at a word start in a large text");
        assert_eq!(f.scrub("%FF%FE%ZZ&#xZZ;&#;&;"), "%FF%FE%ZZ&#xZZ;&#;&;");
    }

    #[test]
    fn marks_hold_no_secret_and_stay_bounded() {
        let k = key();
        let m = k.mark("hunter2").expect("mark");
        assert!(!m.mac.contains("hunter2") && m.len == 7);
        assert_eq!(k.mark("ab"), None, "too short to tell apart");
        let mut marks = Vec::new();
        for n in 0..40 {
            remember(&mut marks, k.mark(&format!("secret-{n}")).expect("mark"));
        }
        remember(&mut marks, k.mark("secret-39").expect("mark"));
        assert_eq!(marks.len(), MAX_MARKS);
        // A page's values cannot push out what the agent typed.
        let typed = marks.clone();
        for n in 0..40 {
            remember(&mut marks, k.seen(&format!("page-{n}")).expect("seen"));
        }
        assert_eq!(marks, typed, "seen values only fill room that is free");
        let mut few = vec![k.mark("typed-one").expect("mark")];
        for n in 0..40 {
            remember(&mut few, k.seen(&format!("page-{n}")).expect("seen"));
        }
        assert_eq!(few.len(), 1 + MAX_OBSERVED);
        assert_eq!(k.seen(&"x".repeat(MAX_OBSERVED_CHARS + 1)), None);
    }

    #[test]
    fn pages_keep_their_form_when_masked() {
        let k = key();
        let marks = vec![k.mark("hunter2").expect("mark")];
        let f = k.finder(&marks);
        let raw = r#"[{"i":"5","r":"inp","n":"Password","v":"hunter2"},{"i":"6","n":"a\nb"}]"#;
        let Masked::Masked(masked) = f.mask_page(raw) else {
            panic!("not masked")
        };
        assert!(!masked.contains("hunter2"));
        assert!(
            serde_json::from_str::<serde_json::Value>(&masked).is_ok(),
            "{masked}"
        );
        let huge = format!("{raw}{}", " word".repeat(MAX_SCAN_BYTES / 5 + 1));
        assert_eq!(
            f.mask_page(&huge),
            Masked::TooLarge,
            "not searched, not kept"
        );
        let mut v = serde_json::json!({ "a": ["x hunter2 y", { "b": "HUNTER2" }] });
        f.scrub_json(&mut v);
        assert_eq!(v.to_string(), r#"{"a":["x [secret] y",{"b":"[secret]"}]}"#);
    }
}
