//! Allowed-domain patterns of a tenant (`app.acme.com`, `*.acme.com`): which pages get the
//! tenant's knowledge. A filter, never a gate.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A validated host pattern: an exact host, or `*.` + a domain matching the domain itself and
/// every subdomain of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DomainPattern(String);

impl DomainPattern {
    /// Lower-cases and checks a pattern; the error says what is wrong.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let p = raw.trim().trim_end_matches('.').to_ascii_lowercase();
        let host = p.strip_prefix("*.").unwrap_or(&p);
        if host.is_empty() {
            return Err("must not be empty".into());
        }
        if host.len() > 253 {
            return Err("must be at most 253 characters".into());
        }
        if host.contains('*') {
            return Err("a wildcard is only allowed as a leading `*.`".into());
        }
        for label in host.split('.') {
            let ok = !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
            if !ok {
                return Err(format!("`{raw}` is not a host name or `*.domain` pattern"));
            }
        }
        if p.starts_with("*.") && !host.contains('.') {
            return Err("a wildcard needs a domain with a dot, like `*.acme.com`".into());
        }
        Ok(DomainPattern(p))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `host` (a host name, any case, optional trailing dot) is covered.
    pub fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match self.0.strip_prefix("*.") {
            Some(base) => {
                host == base
                    || host
                        .strip_suffix(base)
                        .is_some_and(|prefix| prefix.ends_with('.'))
            }
            None => host == self.0,
        }
    }
}

impl TryFrom<String> for DomainPattern {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        DomainPattern::parse(&value)
    }
}

impl From<DomainPattern> for String {
    fn from(p: DomainPattern) -> Self {
        p.0
    }
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_pattern_matches_only_that_host() {
        let p = DomainPattern::parse("App.Acme.com").unwrap();
        assert_eq!(p.as_str(), "app.acme.com");
        assert!(p.matches("app.acme.com"));
        assert!(p.matches("APP.acme.com."));
        assert!(!p.matches("x.app.acme.com"));
        assert!(!p.matches("acme.com"));
    }

    #[test]
    fn wildcard_matches_domain_and_subdomains_but_not_lookalikes() {
        let p = DomainPattern::parse("*.acme.com").unwrap();
        assert!(p.matches("acme.com"));
        assert!(p.matches("app.acme.com"));
        assert!(p.matches("a.b.acme.com"));
        assert!(!p.matches("evilacme.com"));
        assert!(!p.matches("acme.com.evil.net"));
    }

    #[test]
    fn invalid_patterns_are_refused() {
        for bad in [
            "",
            "*.",
            "*",
            "a*.acme.com",
            "*.com",
            "-a.com",
            "a..com",
            "exa mple.com",
            "http://a.com",
        ] {
            assert!(DomainPattern::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(DomainPattern::parse("localhost").is_ok());
    }
}
