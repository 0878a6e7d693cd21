//! A lenient HTML tokenizer for the page model: start tags with their attributes, end tags and
//! text, in one pass over the input with no backtracking beyond the current tag. It never
//! fails: what is not markup is text. Comments, doctypes and processing instructions are
//! skipped; the content of raw-text elements (`script`, `style`, `textarea`, `title`, ...)
//! runs to their end tag. Character references are left as written (the model reads them as
//! such). `<x/>` closes `x` whatever it is: the simplified and templatized formats write every
//! childless element that way.

/// One piece of markup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token<'a> {
    /// A start tag: lower-case name, attributes (lower-case names, raw values, first of
    /// duplicates kept), and whether it closed itself (`/>`).
    Start {
        name: String,
        attrs: Vec<(String, String)>,
        self_closing: bool,
    },
    /// An end tag, lower-case.
    End(String),
    /// Text between tags, as written.
    Text(&'a str),
}

/// Elements whose content is text up to their end tag (`noscript` as a browser with scripts
/// on reads it).
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// Raw-text elements that stay open even when written `<x/>`, as in browsers (the simplified
/// formats write empty `textarea`s and `iframe`s that way and mean them empty).
const RAW_EVEN_SELF_CLOSED: &[&str] = &["script", "style"];

/// Elements that never have content.
pub const VOID_ELEMENTS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Most attributes kept per tag (the rest are skipped, still in linear time).
const MAX_ATTRS: usize = 64;

/// Calls `sink` for every token of `html`, in order.
pub fn tokenize<'a>(html: &'a str, mut sink: impl FnMut(Token<'a>)) {
    let bytes = html.as_bytes();
    let mut i = 0;
    let mut text_start = 0;
    while i < bytes.len() {
        let Some(off) = memchr_lt(&bytes[i..]) else {
            break;
        };
        let lt = i + off;
        let next = bytes.get(lt + 1).copied();
        let markup = match next {
            Some(b) if b.is_ascii_alphabetic() => start_tag(html, lt),
            Some(b'/') => end_tag(html, lt),
            Some(b'!') | Some(b'?') => Markup::Skip(skip_declaration(bytes, lt)),
            _ => Markup::Plain,
        };
        if matches!(markup, Markup::Plain) {
            // The `<` is text.
            i = lt + 1;
            continue;
        }
        if text_start < lt {
            sink(Token::Text(&html[text_start..lt]));
        }
        match markup {
            Markup::Plain => {}
            Markup::Skip(end) => {
                i = end;
            }
            Markup::End(name, end) => {
                sink(Token::End(name));
                i = end;
            }
            Markup::Start(name, attrs, self_closing, end) => {
                let raw = (!self_closing && RAW_TEXT.contains(&name.as_str()))
                    || RAW_EVEN_SELF_CLOSED.contains(&name.as_str());
                let self_closing = self_closing && !raw;
                if name == "plaintext" {
                    // No end tag: the rest of the input is its text.
                    sink(Token::Start {
                        name,
                        attrs,
                        self_closing: false,
                    });
                    if end < bytes.len() {
                        sink(Token::Text(&html[end..]));
                    }
                    return;
                }
                sink(Token::Start {
                    name: name.clone(),
                    attrs,
                    self_closing,
                });
                i = end;
                if raw {
                    // The content is text up to `</name` (any case), which ends the element.
                    let close = find_end_tag(bytes, end, &name);
                    let content_end = close.map_or(bytes.len(), |(at, _)| at);
                    if end < content_end {
                        sink(Token::Text(&html[end..content_end]));
                    }
                    match close {
                        Some((_, after)) => {
                            sink(Token::End(name));
                            i = after;
                        }
                        None => i = bytes.len(),
                    }
                }
            }
        }
        text_start = i;
    }
    if text_start < bytes.len() {
        sink(Token::Text(&html[text_start..]));
    }
}

enum Markup {
    /// A `<` that starts nothing: text.
    Plain,
    /// Skip to this offset (comment, doctype, processing instruction, a tag cut off by the
    /// end of the input).
    Skip(usize),
    End(String, usize),
    Start(String, Vec<(String, String)>, bool, usize),
}

fn memchr_lt(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'<')
}

fn is_name_byte(b: u8) -> bool {
    !(b.is_ascii_whitespace() || b == b'/' || b == b'>' || b == b'<')
}

/// `<!-- ... -->`, `<!...>` and `<?...>`: the offset after them (the end of input when open).
fn skip_declaration(bytes: &[u8], lt: usize) -> usize {
    let rest = &bytes[lt..];
    if rest.starts_with(b"<!--") {
        // `<!-->` and `<!--->` are whole (empty) comments; `--!>` also ends one.
        if rest.starts_with(b"<!-->") {
            return lt + 5;
        }
        if rest.starts_with(b"<!--->") {
            return lt + 6;
        }
        // One forward scan for the first `--` followed by `>` or `!>`.
        let mut from = lt + 4;
        while let Some(dash) = find(bytes, from, b"--") {
            match bytes.get(dash + 2) {
                Some(b'>') => return dash + 3,
                Some(b'!') if bytes.get(dash + 3) == Some(&b'>') => return dash + 4,
                _ => from = dash + 1,
            }
        }
        return bytes.len();
    }
    bytes[lt..]
        .iter()
        .position(|&b| b == b'>')
        .map_or(bytes.len(), |p| lt + p + 1)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from >= bytes.len() {
        return None;
    }
    bytes[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// `</name ...>` at `lt`: the name and the offset after `>`. `</>` is skipped, `</` and no
/// letter is a bogus comment, `</` at the very end is text.
fn end_tag(html: &str, lt: usize) -> Markup {
    let bytes = html.as_bytes();
    let start = lt + 2;
    match bytes.get(start) {
        Some(b) if b.is_ascii_alphabetic() => {}
        Some(b'>') => return Markup::Skip(start + 1),
        Some(_) => return Markup::Skip(skip_declaration(bytes, lt)),
        None => return Markup::Plain,
    }
    let mut j = start;
    while j < bytes.len() && is_name_byte(bytes[j]) {
        j += 1;
    }
    let name = html[start..j].to_ascii_lowercase();
    let end = bytes[j..]
        .iter()
        .position(|&b| b == b'>')
        .map_or(bytes.len(), |p| j + p + 1);
    Markup::End(name, end)
}

/// `<name attr=value ...>` at `lt`. A tag cut off by the end of the input is dropped with
/// the rest of the input (as browsers do), so no part of it is scanned twice.
fn start_tag(html: &str, lt: usize) -> Markup {
    start_tag_within(html, lt).unwrap_or(Markup::Skip(html.len()))
}

fn start_tag_within(html: &str, lt: usize) -> Option<Markup> {
    let bytes = html.as_bytes();
    let start = lt + 1;
    let mut j = start;
    while j < bytes.len() && is_name_byte(bytes[j]) {
        j += 1;
    }
    let name = html[start..j].to_ascii_lowercase();
    let mut attrs: Vec<(String, String)> = Vec::new();
    loop {
        while j < bytes.len() && (bytes[j].is_ascii_whitespace() || bytes[j] == b'/') {
            // A slash right before `>` closes the element.
            if bytes[j] == b'/' && bytes.get(j + 1) == Some(&b'>') {
                return Some(Markup::Start(name, attrs, true, j + 2));
            }
            j += 1;
        }
        match bytes.get(j) {
            None => return None,
            Some(b'>') => return Some(Markup::Start(name, attrs, false, j + 1)),
            Some(_) => {}
        }
        // An attribute name, then maybe `= value`.
        let name_start = j;
        j += 1;
        while j < bytes.len()
            && !(bytes[j].is_ascii_whitespace() || matches!(bytes[j], b'/' | b'>' | b'='))
        {
            j += 1;
        }
        let attr = html[name_start..j].to_ascii_lowercase();
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        let mut value = "";
        if bytes.get(j) == Some(&b'=') {
            j += 1;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            match bytes.get(j) {
                Some(&q) if q == b'"' || q == b'\'' => {
                    let close = bytes[j + 1..].iter().position(|&b| b == q)?;
                    value = &html[j + 1..j + 1 + close];
                    j += close + 2;
                }
                Some(_) => {
                    let v_start = j;
                    while j < bytes.len() && !(bytes[j].is_ascii_whitespace() || bytes[j] == b'>') {
                        j += 1;
                    }
                    value = &html[v_start..j];
                }
                None => return None,
            }
        }
        if attrs.len() < MAX_ATTRS && !attrs.iter().any(|(k, _)| *k == attr) {
            attrs.push((attr, value.to_owned()));
        }
    }
}

/// The next `</name` (any case) at or after `from`, followed by whitespace, `/` or `>`: its
/// offset and the offset after the tag's `>`.
fn find_end_tag(bytes: &[u8], from: usize, name: &str) -> Option<(usize, usize)> {
    let n = name.len();
    let mut i = from;
    while let Some(off) = bytes.get(i..).and_then(memchr_lt) {
        let at = i + off;
        let tail = &bytes[at..];
        if tail.len() >= n + 2
            && tail[1] == b'/'
            && tail[2..2 + n].eq_ignore_ascii_case(name.as_bytes())
            && tail
                .get(2 + n)
                .is_none_or(|b| b.is_ascii_whitespace() || *b == b'/' || *b == b'>')
        {
            let after = tail[2 + n..]
                .iter()
                .position(|&b| b == b'>')
                .map_or(bytes.len(), |p| at + 2 + n + p + 1);
            return Some((at, after));
        }
        i = at + 1;
    }
    None
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
