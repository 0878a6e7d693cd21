//! The web the test browser sees: an HTTP proxy on loopback that every page request goes
//! through. It serves a small shop (`http://shop.test/`: search, product pages, a cart, a
//! two-page checkout that records orders, a journal that loads more entries as it is
//! scrolled, a help page), the widget lab (`http://lab.test/`, [`super::lab`]), the corpus pages at `http://corpus.test/<file>` (their
//! `https://` links made `http://`), a plain page for any other document, and 404 for
//! anything else, so no page reaches the network.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::{lab, shop};

/// The host corpus pages are served from.
pub const CORPUS_HOST: &str = "corpus.test";

/// The corpus directory of the brief (`CORPUS_DIR` overrides it).
pub fn corpus_dir() -> PathBuf {
    std::env::var_os("CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::brief_dir().join("corpus"))
}

/// The address each corpus page is served at: `http://corpus.test/<file>` (one host
/// Chromium never upgrades to https, which it does for hosts on its HSTS preload list).
pub fn corpus_urls() -> HashMap<String, String> {
    let manifest = std::fs::read_to_string(corpus_dir().join("MANIFEST.tsv")).unwrap_or_default();
    manifest
        .lines()
        .skip(1)
        .filter_map(|line| line.split('\t').next())
        .filter(|name| name.ends_with(".html"))
        .map(|name| (name.to_owned(), format!("http://{CORPUS_HOST}/{name}")))
        .collect()
}

/// An order the shop recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub name: String,
    pub address: String,
    pub shipping: String,
    pub at_the_door: bool,
    pub items: Vec<String>,
}

#[derive(Default)]
pub struct SiteState {
    pub orders: Vec<Order>,
    pub cart: Vec<String>,
    /// Every document URL requested, in order.
    pub visited: Vec<String>,
    /// How the checkout's delivery page is changed, when it is (the recipes' changed-page runs).
    pub checkout_change: Option<CheckoutChange>,
}

/// A change to the checkout's delivery page, as sites change between two runs of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckoutChange {
    /// "Continue to review" is now "Review details".
    RenamedButton,
    /// The fields come in another order, after a new promotion block with a link.
    MovedElements,
    /// A newsletter dialog covers the form until it is dismissed.
    ExtraDialog,
}

/// The running proxy.
#[derive(Clone)]
pub struct Site {
    pub addr: SocketAddr,
    pub state: Arc<Mutex<SiteState>>,
}

impl Site {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the site proxy");
        let addr = listener.local_addr().expect("addr");
        let state = Arc::new(Mutex::new(SiteState {
            cart: vec![shop::DEFAULT_CART_ITEM.to_owned()],
            ..SiteState::default()
        }));
        let corpus: Arc<HashMap<String, PathBuf>> = Arc::new(
            corpus_urls()
                .into_iter()
                .map(|(name, url)| (url, corpus_dir().join("pages").join(name)))
                .collect(),
        );
        let st = state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (st, corpus) = (st.clone(), corpus.clone());
                let svc = service_fn(move |req: Request<Incoming>| {
                    let (st, corpus) = (st.clone(), corpus.clone());
                    async move { Ok::<_, Infallible>(answer(req, &st, &corpus).await) }
                });
                tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), svc));
            }
        });
        Self { addr, state }
    }

    /// The proxy as Chromium's `--proxy-server` wants it.
    pub fn proxy(&self) -> String {
        self.addr.to_string()
    }

    pub fn orders(&self) -> Vec<Order> {
        self.state
            .lock()
            .map(|s| s.orders.clone())
            .unwrap_or_default()
    }
}

/// A response with this status, content type and body.
pub fn respond(status: StatusCode, kind: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    if let Ok(v) = kind.parse() {
        r.headers_mut().insert("content-type", v);
    }
    r
}

/// A 200 HTML document titled `title` (escaped) with `style` in its head and `body` as given.
pub fn html_page(title: &str, style: &str, body: &str) -> Response<Full<Bytes>> {
    respond(
        StatusCode::OK,
        "text/html; charset=utf-8",
        format!(
            "<!doctype html><html lang=en><head><meta charset=utf-8><title>{}</title>\
             <style>body{{font:16px sans-serif;margin:24px}} {style}</style></head><body>{body}</body></html>",
            super::shop::escape(title)
        ),
    )
}

/// A `303 See Other` to `location`.
pub fn redirect(location: &str) -> Response<Full<Bytes>> {
    let mut r = respond(StatusCode::SEE_OTHER, "text/plain", "");
    if let Ok(v) = location.parse() {
        r.headers_mut().insert("location", v);
    }
    r
}

async fn answer(
    req: Request<Incoming>,
    state: &Mutex<SiteState>,
    corpus: &HashMap<String, PathBuf>,
) -> Response<Full<Bytes>> {
    if req.method() == Method::CONNECT {
        // No TLS tunnels: https pages do not exist in this web.
        return respond(StatusCode::BAD_GATEWAY, "text/plain", "no tunnels");
    }
    let (parts, body) = req.into_parts();
    let host = parts
        .uri
        .host()
        .map(str::to_owned)
        .or_else(|| {
            parts
                .headers
                .get("host")
                .and_then(|h| h.to_str().ok())
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().unwrap_or("").to_owned();
    let url = format!(
        "http://{host}{}",
        parts
            .uri
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
    );
    let document = parts
        .headers
        .get("accept")
        .and_then(|a| a.to_str().ok())
        .is_some_and(|a| a.contains("text/html"));
    let form = if parts.method == Method::POST {
        body.collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default()
    } else {
        Bytes::new()
    };
    if document {
        if let Ok(mut s) = state.lock() {
            s.visited.push(url.clone());
        }
    }
    if host == shop::HOST {
        return shop::answer(&parts.method, &path, &query, &form, state);
    }
    if host == lab::HOST {
        return lab::answer(&path, &query);
    }
    if let Some(file) = corpus.get(&url) {
        // This web has no TLS: links and forms to https:// pages lead to their http:// twins.
        return match std::fs::read(file) {
            Ok(html) => respond(
                StatusCode::OK,
                "text/html; charset=utf-8",
                String::from_utf8_lossy(&html)
                    .replace("\"https://", "\"http://")
                    .replace("'https://", "'http://"),
            ),
            Err(_) => respond(StatusCode::NOT_FOUND, "text/plain", "missing corpus page"),
        };
    }
    if document {
        let safe = shop::escape(&url);
        return respond(
            StatusCode::OK,
            "text/html; charset=utf-8",
            format!("<!doctype html><title>Followed: {safe}</title><h1>You are on {safe}</h1>"),
        );
    }
    respond(StatusCode::NOT_FOUND, "text/plain", "not in the test web")
}
