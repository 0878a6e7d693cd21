//! The TLS of every HTTPS client the server makes (the model, search, extraction, Pusher, the
//! AWS SDK's connector, MCP servers): rustls on ring with Mozilla's root certificates compiled
//! in (`webpki-roots`). A function trusts the same roots wherever it runs, reads no
//! certificate files when it starts, and links one crypto library. HTTP/1.1 only.

use std::sync::{Arc, OnceLock};

/// rustls on ring with Mozilla's roots; `None` (logged) if rustls refused the set-up.
fn config() -> Option<rustls::ClientConfig> {
    static CONFIG: OnceLock<Option<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map(|b| b.with_root_certificates(roots).with_no_client_auth())
                .inspect_err(|e| tracing::error!(error = %e, "the TLS set-up was refused"))
                .ok()
        })
        .clone()
}

/// A client builder with the server's TLS. ring is also made the process's default rustls
/// provider, so a client built without this (a library's own) works the same way.
pub fn client_builder() -> reqwest::ClientBuilder {
    // Err only when a default is already installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = reqwest::Client::builder();
    match config() {
        Some(tls) => builder.tls_backend_preconfigured(tls),
        None => builder,
    }
}

/// A client with the server's TLS and reqwest's other defaults.
pub fn client() -> reqwest::Client {
    client_builder().build().unwrap_or_else(|e| {
        tracing::error!(error = %e, "the HTTPS client could not be built");
        reqwest::Client::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The roots are Mozilla's, and a client builds with them (no provider installed
    /// beforehand, no certificate file read).
    #[test]
    fn clients_build_with_the_compiled_in_roots() {
        let tls = config().expect("rustls accepts ring's defaults");
        assert!(webpki_roots::TLS_SERVER_ROOTS.len() > 100);
        assert!(tls.alpn_protocols.is_empty(), "HTTP/1.1 only");
        assert!(client_builder().build().is_ok());
        let _ = client();
    }
}
