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
