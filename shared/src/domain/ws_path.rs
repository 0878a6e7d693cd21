//! Workspace paths: what a client names is checked and normalised here, before any adapter
//! sees it. A path is relative to the workspace root, `/`-separated, with `.` and empty
//! segments dropped; `..`, absolute paths, drive letters, backslashes, control characters
//! (NUL included), percent-encoded escapes and over-long paths are refused. Adapters then only
//! ever join validated segments onto their root (and the local one refuses symlinks on top).

use std::fmt;

/// Longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;
/// Most segments in a path.
pub const MAX_DEPTH: usize = 32;
/// Longest single segment, in bytes (the common file-system limit).
pub const MAX_SEGMENT_BYTES: usize = 255;

/// A validated path inside a workspace; the empty path is the root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct WsPath {
    segments: Vec<String>,
}

/// Why a path was refused (the message names the rule; the field is the caller's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PathError(pub &'static str);

impl WsPath {
    /// The workspace root.
    pub fn root() -> Self {
        Self::default()
    }

    /// Validates and normalises a client-supplied path (`""`, `"."` and `"/"`-free forms name
    /// the root).
    pub fn parse(raw: &str) -> Result<Self, PathError> {
        if raw.len() > MAX_PATH_BYTES {
            return Err(PathError("is longer than 1024 bytes"));
        }
        if raw.chars().any(char::is_control) {
            return Err(PathError("contains a control character"));
        }
        if raw.chars().any(is_invisible) {
            return Err(PathError(
                "contains an invisible or text-direction character (it would hide the real name from whoever approves)",
            ));
        }
        if raw.contains('\\') {
            return Err(PathError("contains a backslash; use `/`"));
        }
        if raw.starts_with('/') || raw.starts_with('~') {
            return Err(PathError("must be relative to the workspace root"));
        }
        let bytes = raw.as_bytes();
        if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
            return Err(PathError("must be relative to the workspace root"));
        }
        if has_percent_escape(raw) {
            return Err(PathError("contains a percent-encoded sequence"));
        }
        let mut segments = Vec::new();
        for seg in raw.split('/') {
            match seg {
                "" | "." => continue,
                ".." => return Err(PathError("must not contain `..`")),
                s if s.len() > MAX_SEGMENT_BYTES => {
                    return Err(PathError("has a segment longer than 255 bytes"))
                }
                s => segments.push(s.to_owned()),
            }
        }
        if segments.len() > MAX_DEPTH {
            return Err(PathError("is nested deeper than 32 levels"));
        }
        Ok(Self { segments })
    }

    /// Like [`WsPath::parse`], but the root is refused (files, deletions).
    pub fn parse_entry(raw: &str) -> Result<Self, PathError> {
        let p = Self::parse(raw)?;
        if p.is_root() {
            return Err(PathError(
                "must name an entry inside the workspace, not its root",
            ));
        }
        Ok(p)
    }

    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The last segment (`""` for the root).
    pub fn name(&self) -> &str {
        self.segments.last().map(String::as_str).unwrap_or("")
    }

    /// The containing directory (the root's parent is the root).
    pub fn parent(&self) -> WsPath {
        let mut segments = self.segments.clone();
        segments.pop();
        Self { segments }
    }

    /// This path with one more segment, checked like any other.
    pub fn join(&self, name: &str) -> Result<WsPath, PathError> {
        if self.is_root() {
            Self::parse(name)
        } else {
            Self::parse(&format!("{self}/{name}"))
        }
    }

    /// Whether `other` is this path or inside it.
    pub fn contains(&self, other: &WsPath) -> bool {
        other.segments.starts_with(&self.segments)
    }

    pub fn depth(&self) -> usize {
        self.segments.len()
    }
}

impl fmt::Display for WsPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.segments.join("/"))
    }
}

/// Unicode format characters that change how a name reads without being seen: bidi
/// overrides and isolates, zero-width characters, the BOM, the soft hyphen.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

/// `%` followed by two hex digits anywhere: the HTTP layer has decoded the request once, so a
/// remaining escape is an attempt to smuggle `..`, `/` or NUL past a later decoder.
fn has_percent_escape(raw: &str) -> bool {
    raw.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_dots_and_empty_segments() {
        assert_eq!(WsPath::parse("a/./b//c/").unwrap().to_string(), "a/b/c");
        assert!(WsPath::parse("").unwrap().is_root());
        assert!(WsPath::parse(".").unwrap().is_root());
        assert!(WsPath::parse("./").unwrap().is_root());
        assert_eq!(WsPath::parse("src/main.rs").unwrap().name(), "main.rs");
        assert_eq!(WsPath::parse("a/b").unwrap().parent().to_string(), "a");
        assert_eq!(WsPath::parse("..a/b..").unwrap().to_string(), "..a/b..");
    }

    #[test]
    fn refuses_every_kind_of_escape() {
        for bad in [
            "..",
            "../x",
            "a/../../x",
            "a/..",
            "/etc/passwd",
            "~/x",
            "C:/x",
            "c:x",
            "a\\..\\b",
            "%2e%2e/x",
            "a/%2E%2e",
            "a%2fb",
            "x%00",
            "a\0b",
            "a\nb",
            "src/\u{202E}gnp.sh",
            "a\u{200B}b",
            "\u{FEFF}x",
        ] {
            assert!(WsPath::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(WsPath::parse(&"a/".repeat(33)).is_err());
        assert!(WsPath::parse(&"a".repeat(256)).is_err());
        assert!(WsPath::parse(&"ab/".repeat(400)).is_err());
        assert!(
            WsPath::parse("100%").is_ok(),
            "a lone percent sign is a name"
        );
    }

    #[test]
    fn entries_are_not_the_root_and_joins_stay_checked() {
        assert!(WsPath::parse_entry(".").is_err());
        assert!(WsPath::parse_entry("a").is_ok());
        let a = WsPath::parse("a").unwrap();
        assert!(a.join("..").is_err());
        assert_eq!(a.join("b").unwrap().to_string(), "a/b");
        assert!(a.contains(&WsPath::parse("a/b").unwrap()));
        assert!(!a.contains(&WsPath::parse("ab").unwrap()));
        assert!(WsPath::root().contains(&a));
    }
}
