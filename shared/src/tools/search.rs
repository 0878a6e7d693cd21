//! Search over a workspace: which files (a glob over workspace paths, `globset`) and which
//! lines (a regular expression, `regex`, which runs in linear time, with a compiled-size cap).
//! Every dimension is bounded: files looked at, bytes read, matches returned, line length
//! shown. Pure functions; the use case feeds them file contents.

use globset::{GlobBuilder, GlobMatcher};
use regex::bytes::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Largest regex or glob accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1_000;
/// Most matches a search can ask for.
pub const MAX_MATCHES: usize = 1_000;

/// A search's arguments (grep with a pattern, glob without).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchArgs {
    /// A regular expression searched line by line (grep); without it, files are listed (glob).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Only files whose workspace path matches this glob (`**/*.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// The directory searched (the root when empty).
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub case_insensitive: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_matches: Option<usize>,
}

/// Matches returned when the caller does not say.
pub const DEFAULT_MATCHES: usize = 100;
/// Most files a search looks at.
pub const MAX_FILES: usize = 5_000;
/// Most bytes a search reads over all files.
pub const MAX_SCANNED_BYTES: u64 = 32 * 1024 * 1024;
/// Longest line text returned per match, in characters.
pub const MAX_LINE_CHARS: usize = 240;
/// Compiled size a regex may reach.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Match {
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    pub text: String,
}

/// The compiled search.
#[derive(Debug, Clone)]
pub struct Matcher {
    glob: Option<GlobMatcher>,
    regex: Option<Regex>,
    pub max_matches: usize,
}

impl Matcher {
    pub fn compile(args: &SearchArgs) -> Result<Self, Error> {
        let glob = match &args.glob {
            None => None,
            Some(g) if g.len() > MAX_PATTERN_BYTES => {
                return Err(Error::field("glob", "is longer than 1000 bytes"))
            }
            Some(g) => Some(
                GlobBuilder::new(g)
                    .literal_separator(true)
                    .case_insensitive(args.case_insensitive)
                    .build()
                    .map_err(|e| {
                        Error::field("glob", format!("is not a valid glob: {}", e.kind()))
                    })?
                    .compile_matcher(),
            ),
        };
        let regex = match &args.pattern {
            None => None,
            Some(p) if p.is_empty() => return Err(Error::field("pattern", "must not be empty")),
            Some(p) if p.len() > MAX_PATTERN_BYTES => {
                return Err(Error::field("pattern", "is longer than 1000 bytes"))
            }
            Some(p) => Some(
                RegexBuilder::new(p)
                    .case_insensitive(args.case_insensitive)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .dfa_size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| match e {
                        regex::Error::CompiledTooBig(_) => {
                            Error::field("pattern", "compiles to more than 1 MiB")
                        }
                        _ => Error::field("pattern", "is not a valid regular expression"),
                    })?,
            ),
        };
        let max_matches = match args.max_matches {
            None => DEFAULT_MATCHES,
            Some(n) if (1..=MAX_MATCHES).contains(&n) => n,
            Some(_) => {
                return Err(Error::field(
                    "maxMatches",
                    format!("must be from 1 to {MAX_MATCHES}"),
                ))
            }
        };
        Ok(Self {
            glob,
            regex,
            max_matches,
        })
    }

    /// Whether a file (by workspace path) is searched at all.
    pub fn wants(&self, path: &str) -> bool {
        self.glob.as_ref().is_none_or(|g| g.is_match(path))
    }

    /// Whether lines are searched (grep) or only files listed (glob).
    pub fn greps(&self) -> bool {
        self.regex.is_some()
    }

    /// Appends `content`'s matching lines to `out` until it holds `max_matches`; returns
    /// whether the limit was reached. Files with a NUL in their first 8 KiB count as binary
    /// and are skipped.
    pub fn scan(&self, path: &str, content: &[u8], out: &mut Vec<Match>) -> bool {
        let Some(re) = &self.regex else {
            return false;
        };
        if content[..content.len().min(8192)].contains(&0) {
            return false;
        }
        for (i, line) in content.split(|b| *b == b'\n').enumerate() {
            if out.len() >= self.max_matches {
                return true;
            }
            if re.is_match(line) {
                let text = String::from_utf8_lossy(line);
                let text = text.trim_end_matches('\r');
                out.push(Match {
                    path: path.to_owned(),
                    line: i + 1,
                    text: text.chars().take(MAX_LINE_CHARS).collect(),
                });
            }
        }
        out.len() >= self.max_matches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(pattern: Option<&str>, glob: Option<&str>) -> SearchArgs {
        SearchArgs {
            pattern: pattern.map(str::to_owned),
            glob: glob.map(str::to_owned),
            path: String::new(),
            case_insensitive: false,
            max_matches: Some(3),
        }
    }

    #[test]
    fn globs_match_workspace_paths_with_literal_separators() {
        let m = Matcher::compile(&args(None, Some("src/**/*.rs"))).unwrap();
        assert!(m.wants("src/a/b.rs"));
        assert!(m.wants("src/b.rs"));
        assert!(!m.wants("tests/b.rs"));
        let m = Matcher::compile(&args(None, Some("*.md"))).unwrap();
        assert!(m.wants("README.md"));
        assert!(!m.wants("docs/x.md"));
        assert!(!m.greps());
    }

    #[test]
    fn lines_are_numbered_bounded_and_binary_files_skipped() {
        let m = Matcher::compile(&args(Some("fn \\w+"), None)).unwrap();
        let mut out = Vec::new();
        let hit = m.scan("a.rs", b"use x;\nfn main() {}\r\nfn two() {}\n", &mut out);
        assert!(!hit);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].line, 2);
        assert_eq!(out[0].text, "fn main() {}");
        assert!(m.scan("b.rs", b"fn a\nfn b\nfn c\n", &mut out));
        assert_eq!(out.len(), 3);
        let mut none = Vec::new();
        assert!(!m.scan("bin", b"fn x\0\nfn y", &mut none));
        assert!(none.is_empty());
        let long = format!("fn {}", "x".repeat(1000));
        let mut one = Vec::new();
        m.scan("l", long.as_bytes(), &mut one);
        assert_eq!(one[0].text.chars().count(), MAX_LINE_CHARS);
    }

    #[test]
    fn hostile_patterns_are_refused_by_field() {
        for (p, g, field) in [
            (Some("("), None, "pattern"),
            (Some(""), None, "pattern"),
            (Some("a{1000}{1000}{1000}"), None, "pattern"),
            (None, Some("a[b"), "glob"),
        ] {
            let e = Matcher::compile(&args(p, g)).unwrap_err();
            assert!(
                matches!(&e, Error::Validation(f) if f[0].field == field),
                "{e:?}"
            );
        }
        let mut a = args(Some("x"), None);
        a.max_matches = Some(0);
        assert!(Matcher::compile(&a).is_err());
    }
}
