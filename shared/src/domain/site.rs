//! Hosts and root domains of page URLs, by the public suffix list: `www.example.co.uk` →
//! `example.co.uk`. `localhost`, single labels and IP addresses are returned as they are
//! (the list would make `192.168.1.1` into `1.1`).

use std::net::IpAddr;

/// The host of an absolute URL, or of a bare hostname (`app.acme.com`, `localhost:3000`).
pub fn host_of(url_or_host: &str) -> Option<String> {
    let s = url_or_host.trim();
    if s.is_empty() {
        return None;
    }
    if s.contains("://") {
        return reqwest::Url::parse(s)
            .ok()?
            .host_str()
            .map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase());
    }
    // A bare host, possibly with a port or a path.
    let host = s.split(['/', '?', '#']).next()?;
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) && !h.contains(':') => h,
        _ => host,
    };
    let ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    ok.then(|| host.to_ascii_lowercase())
}

/// A page address as it may be passed on, with the host it names: an absolute URL parsed the
/// way browsers do (WHATWG) and serialised again without credentials or fragment, or
/// `https://<host>/` for a bare hostname. Whoever checks the host must pass on this URL, never
/// the text it was given: parsers disagree on text like `https://a.test\@b.test/` (a browser
/// reads host `a.test`, an RFC 3986 parser `b.test`), the serialisation leaves no room for that.
pub fn normalised_url(url_or_host: &str) -> Option<(String, String)> {
    let s = url_or_host.trim();
    if !s.contains("://") {
        let host = host_of(s)?;
        return Some((format!("https://{host}/"), host));
    }
    let mut url = reqwest::Url::parse(s).ok()?;
    let host = url
        .host_str()?
        .trim_matches(['[', ']'])
        .to_ascii_lowercase();
    // Both only fail for URLs without a host, which were refused above.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_fragment(None);
    Some((url.to_string(), host))
}

/// The registrable ("root") domain of a host.
pub fn root_domain(host: &str) -> String {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.parse::<IpAddr>().is_ok() || !host.contains('.') {
        return host;
    }
    psl::domain_str(&host).map(str::to_owned).unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_domains_follow_the_public_suffix_list() {
        assert_eq!(root_domain("www.google.com"), "google.com");
        assert_eq!(root_domain("www.example.co.uk"), "example.co.uk");
        assert_eq!(root_domain("a.b.github.io"), "b.github.io");
        assert_eq!(root_domain("localhost"), "localhost");
        assert_eq!(root_domain("192.168.1.1"), "192.168.1.1");
        assert_eq!(root_domain("::1"), "::1");
    }

    #[test]
    fn urls_are_passed_on_as_the_host_check_read_them() {
        let n = |s: &str| normalised_url(s).expect(s);
        assert_eq!(
            n("https://www.kb.test\\@evil.com/"),
            (
                "https://www.kb.test/@evil.com/".into(),
                "www.kb.test".into()
            )
        );
        assert_eq!(
            n("https://u:p@KB.test:443/a/../b?q#f"),
            ("https://kb.test/b?q".into(), "kb.test".into())
        );
        assert_eq!(n("kb.test"), ("https://kb.test/".into(), "kb.test".into()));
        assert_eq!(normalised_url("https://"), None);
        assert_eq!(normalised_url("not a host"), None);
    }

    #[test]
    fn hosts_come_from_urls_and_bare_hostnames() {
        assert_eq!(
            host_of("https://App.Acme.com/x?y=1").as_deref(),
            Some("app.acme.com")
        );
        assert_eq!(host_of("app.acme.com").as_deref(), Some("app.acme.com"));
        assert_eq!(host_of("localhost:3000/page").as_deref(), Some("localhost"));
        assert_eq!(
            host_of("http://127.0.0.1:3000/test-page").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(host_of("http://[::1]:8080/").as_deref(), Some("::1"));
        assert_eq!(host_of("not a host"), None);
        assert_eq!(host_of(""), None);
    }
}
