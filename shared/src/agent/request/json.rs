//! A JSON reader over a body's text that does what serde_json does for each value it is asked
//! for — strings read as text (escapes undone, surrogates paired), numbers read as numbers
//! (`f64`, out of range refused), or any value skipped with only its form checked — without
//! building anything for what it skips. Nothing here recurses: a skipped value of any depth is
//! walked with a stack of its open brackets.

use std::borrow::Cow;

/// Whether the keys of a skipped object are read as text (so checked as text is), or only
/// skipped: the JSON reader reads the keys of an object it is given and does not want, and
/// skips those of the values inside it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Keys {
    Read,
    Skip,
}

/// Bytes that end a run of plain text in a string: the quote, the escape and control
/// characters.
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = true;
        b += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// The high bit of each byte of `word` (little-endian) that is a quote, a backslash or a
/// control character — exact up to the first such byte, the only one looked at.
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let quote = zero(word ^ (ONES * u64::from(b'"')));
    let backslash = zero(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control
}

pub(super) struct Reader<'a> {
    pub(super) text: &'a str,
    pub(super) at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    pub(super) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.byte() {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    pub(super) fn token(&mut self) -> Option<u8> {
        self.ws();
        self.byte()
    }

    pub(super) fn expect(&mut self, b: u8) -> Option<()> {
        (self.token()? == b).then(|| self.at += 1)
    }

    /// The bytes up to the next quote, escape or control character.
    fn plain(&mut self) -> usize {
        let bytes = self.text.as_bytes();
        let start = self.at;
        // Eight bytes at a time, then byte by byte.
        while let Some(word) = bytes.get(self.at..self.at + 8) {
            let mut eight = [0u8; 8];
            eight.copy_from_slice(word);
            let found = special_bytes(u64::from_le_bytes(eight));
            if found != 0 {
                self.at += (found.trailing_zeros() / 8) as usize;
                return start;
            }
            self.at += 8;
        }
        while self.at < bytes.len() && !SPECIAL[usize::from(bytes[self.at])] {
            self.at += 1;
        }
        start
    }

    /// Four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Option<u16> {
        let digits = self.text.get(self.at..self.at + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        u16::from_str_radix(digits, 16).ok()
    }

    /// A string (at its quote) as text: borrowed when it has no escapes; surrogates must pair.
    pub(super) fn string(&mut self) -> Option<Cow<'a, str>> {
        self.at += 1;
        let start = self.plain();
        if self.byte()? == b'"' {
            self.at += 1;
            return Some(Cow::Borrowed(&self.text[start..self.at - 1]));
        }
        let mut out = String::from(&self.text[start..self.at]);
        loop {
            match self.byte()? {
                b'"' => {
                    self.at += 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    self.at += 1;
                    out.push(self.escape()?);
                }
                _ => return None,
            }
            let from = self.plain();
            out.push_str(&self.text[from..self.at]);
        }
    }

    /// The character of an escape (after its backslash).
    fn escape(&mut self) -> Option<char> {
        let b = self.byte()?;
        self.at += 1;
        Some(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let n = self.hex4()?;
                if !(0xD800..=0xDBFF).contains(&n) {
                    return char::from_u32(u32::from(n));
                }
                if self.text.get(self.at..self.at + 2)? != "\\u" {
                    return None;
                }
                self.at += 2;
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return None;
                }
                let c = 0x1_0000 + ((u32::from(n) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                char::from_u32(c)?
            }
            _ => return None,
        })
    }

    /// A string (at its quote) checked for its form only, as a skipped one is.
    fn skip_string(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            self.plain();
            match self.byte()? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => {
                    self.at += 1;
                    let b = self.byte()?;
                    self.at += 1;
                    match b {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            self.hex4()?;
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
    }

    pub(super) fn literal(&mut self, word: &str) -> Option<()> {
        self.text[self.at..].starts_with(word).then(|| {
            self.at += word.len();
        })
    }

    /// An object's members (at its brace): each key read as text, then `each` reads the value.
    pub(super) fn members(
        &mut self,
        mut each: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>,
    ) -> Option<()> {
        self.at += 1;
        if self.token()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            if self.token()? != b'"' {
                return None;
            }
            let key = self.string()?;
            self.expect(b':')?;
            self.ws();
            each(self, key)?;
            match self.token()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An array's elements (at its bracket): `each` reads each one.
    pub(super) fn elements(&mut self, mut each: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.at += 1;
        if self.token()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.ws();
            each(self)?;
            match self.token()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A scalar value (`true`, `false`, `null`, a number or a string) checked for its form.
    pub(super) fn skip_scalar(&mut self) -> Option<()> {
        match self.byte()? {
            b'"' => self.skip_string(),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            b'-' | b'0'..=b'9' => self.number().map(drop),
            _ => None,
        }
    }

    /// A key of a skipped object and its colon.
    fn skipped_key(&mut self, keys: Keys) -> Option<()> {
        if self.token()? != b'"' {
            return None;
        }
        match keys {
            Keys::Read => self.string().map(drop)?,
            Keys::Skip => self.skip_string()?,
        }
        self.expect(b':')
    }

    /// Any value, checked for its form only; how deep it nests.
    pub(super) fn skip(&mut self, keys: Keys) -> Option<usize> {
        // The open arrays and objects around the next value: `true` for an object.
        let mut open: Vec<bool> = Vec::new();
        let mut deepest = 0;
        loop {
            match self.token()? {
                b @ (b'[' | b'{') => {
                    self.at += 1;
                    let object = b == b'{';
                    let close = if object { b'}' } else { b']' };
                    if self.token()? == close {
                        self.at += 1;
                    } else {
                        open.push(object);
                        deepest = deepest.max(open.len());
                        if object {
                            self.skipped_key(if open.len() == 1 { keys } else { Keys::Skip })?;
                        }
                        continue;
                    }
                    deepest = deepest.max(open.len() + 1);
                }
                _ => self.skip_scalar()?,
            }
            // After a value: close what ends here, then on to the next member or element.
            loop {
                let Some(&object) = open.last() else {
                    return Some(deepest);
                };
                match self.token()? {
                    b',' => {
                        self.at += 1;
                        if object {
                            self.skipped_key(if open.len() == 1 { keys } else { Keys::Skip })?;
                        }
                        break;
                    }
                    b']' if !object => {
                        self.at += 1;
                        open.pop();
                    }
                    b'}' if object => {
                        self.at += 1;
                        open.pop();
                    }
                    _ => return None,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_ends_at_the_first_quote_backslash_or_control_character() {
        // Each special byte at each place of a run longer than a word, behind ASCII and
        // multi-byte characters; the run read eight bytes at a time stops where a byte-by-byte
        // reading does.
        let fillers = ["a", "é", "😀", "\u{7f}", " "];
        let specials = ['"', '\\', '\u{0}', '\u{1f}', '\n'];
        for filler in fillers {
            for special in specials {
                for at in 0..20 {
                    let text = format!("{}{special}{}", filler.repeat(at), filler.repeat(3));
                    let mut r = Reader { text: &text, at: 0 };
                    r.plain();
                    let expected = text
                        .bytes()
                        .position(|b| SPECIAL[usize::from(b)])
                        .unwrap_or(text.len());
                    assert_eq!(r.at, expected, "{text:?}");
                }
            }
            let text = filler.repeat(17);
            let mut r = Reader { text: &text, at: 0 };
            r.plain();
            assert_eq!(r.at, text.len(), "{text:?}");
        }
    }
}
