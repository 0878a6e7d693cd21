//! Email addresses as login identities: trimmed, lower-cased, minimally checked.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Longest address accepted (RFC 5321 path limit).
pub const MAX_EMAIL_LEN: usize = 254;

/// A normalised email address (trimmed, ASCII-lowercased).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Email(String);

impl Email {
    /// Normalises and checks `raw`; the error says what is wrong with it.
    pub fn parse(raw: &str) -> Result<Self, &'static str> {
        let s = raw.trim();
        if s.is_empty() {
            return Err("must not be empty");
        }
        if s.len() > MAX_EMAIL_LEN {
            return Err("must be at most 254 characters");
        }
        let Some((local, domain)) = s.rsplit_once('@') else {
            return Err("must be an email address");
        };
        let domain_ok = !domain.is_empty()
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains("..");
        if local.is_empty() || !domain_ok || s.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err("must be an email address");
        }
        Ok(Email(s.to_ascii_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_case_and_whitespace() {
        assert_eq!(
            Email::parse("  Ada@Example.COM ").unwrap().as_str(),
            "ada@example.com"
        );
    }

    #[test]
    fn rejects_what_is_not_an_address() {
        for bad in [
            "",
            "   ",
            "ada",
            "@x.com",
            "ada@",
            "ada@.com",
            "ada@x..com",
            "a da@x.com",
        ] {
            assert!(Email::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(Email::parse(&format!("{}@x.com", "a".repeat(260))).is_err());
    }
}
