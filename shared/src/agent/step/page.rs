//! Phase 1: the page of the request, built and rendered on the blocking pool. Parsing and
//! rendering are CPU work bounded by the input (depth, expansion and budget limits), kept off
//! the async workers so one large page never stalls other requests, and awaited no longer
//! than the step deadline.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use futures::future::{BoxFuture, FutureExt, Shared};
use tokio::sync::Semaphore;

use crate::agent::page::Page;
use crate::agent::render::{render, Budget, Rendered};
use crate::agent::request::{InteractRequest, PageInput};
use crate::context::AppContext;
use crate::error::Error;
use crate::ports::Compressed;

/// The step's snapshot being compressed on the blocking pool (it may be awaited more than
/// once).
pub type PendingSnapshot = Shared<BoxFuture<'static, Result<Arc<Compressed>, String>>>;

/// The page of a request: the model, its rendering for the prompt, and the raw content kept
/// as the step's snapshot.
pub struct BuiltPage {
    pub page: Page,
    pub rendered: Rendered,
    snapshot: Arc<[u8]>,
    compressing: OnceLock<PendingSnapshot>,
}

impl std::fmt::Debug for BuiltPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltPage")
            .field("page", &self.page)
            .field("rendered", &self.rendered)
            .field("snapshot_bytes", &self.snapshot.len())
            .finish_non_exhaustive()
    }
}

impl BuiltPage {
    /// Size of the raw snapshot.
    pub fn snapshot_bytes(&self) -> usize {
        self.snapshot.len()
    }

    /// The compressed snapshot; compression starts on the first call (in the background: the
    /// in-process flow calls this as soon as the page is built, so the step goes on meanwhile)
    /// and takes a page builder's permit, like the build.
    pub fn compressed(&self) -> PendingSnapshot {
        self.compressing
            .get_or_init(|| {
                let raw = self.snapshot.clone();
                let job = tokio::spawn(async move {
                    let permit = builders()
                        .acquire_owned()
                        .await
                        .map_err(|e| format!("page builders closed: {e}"))?;
                    tokio::task::spawn_blocking(move || {
                        let compressed = Compressed::of(&raw);
                        drop(permit);
                        compressed
                    })
                    .await
                    .map_err(|e| format!("snapshot compression failed: {e}"))?
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
                });
                async move {
                    job.await
                        .unwrap_or_else(|e| Err(format!("snapshot compression failed: {e}")))
                }
                .boxed()
                .shared()
            })
            .clone()
    }
}

/// The page model, its rendering and the raw snapshot.
fn build(
    input: PageInput,
    viewport: Option<(f64, f64)>,
    budget: Budget,
) -> Result<(Page, Rendered, Vec<u8>), Error> {
    let modelling = tracing::debug_span!("interact.page_model").entered();
    let (page, snapshot) = match input {
        PageInput::Tree(nodes) => {
            let snapshot = serde_json::to_vec(&nodes).unwrap_or_default();
            (Page::from_tree(nodes, viewport), snapshot)
        }
        PageInput::Dom(dom) => {
            let page = Page::from_dom(&dom).map_err(|e| Error::field("dom", e.to_string()))?;
            (page, dom.into_bytes())
        }
    };
    drop(modelling);
    let rendered = tracing::debug_span!("interact.render").in_scope(|| render(&page, budget));
    Ok((page, rendered, snapshot))
}

/// Pages built at once, at most: one per core (at least two), so a burst of large pages
/// cannot take every thread of the blocking pool; the rest wait their turn within their
/// deadline.
fn builders() -> Arc<Semaphore> {
    static BUILDERS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    BUILDERS
        .get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
            Arc::new(Semaphore::new(cores.clamp(2, 16)))
        })
        .clone()
}

/// Starts building the page of `req` (taking its content out of the request) and returns the
/// future of the result.
pub fn start(
    ctx: &AppContext,
    req: &mut InteractRequest,
    deadline: Instant,
) -> impl Future<Output = Result<BuiltPage, Error>> {
    let content = std::mem::replace(&mut req.page, PageInput::Dom(String::new()));
    let viewport = req.viewport;
    let budget = Budget {
        max_tokens: ctx.config.agent.page_tokens,
        chars_per_token: ctx.config.agent.chars_per_token,
    };
    async move {
        let wait = deadline.saturating_duration_since(Instant::now());
        let job = async {
            let permit = builders()
                .acquire_owned()
                .await
                .map_err(|e| Error::internal(format!("page builders closed: {e}")))?;
            // The permit goes with the work: it is held until the work is done, even if the
            // request gives up waiting for it.
            let (page, rendered, snapshot) = tokio::task::spawn_blocking(move || {
                let built = build(content, viewport, budget);
                drop(permit);
                built
            })
            .await
            .map_err(|e| Error::internal(format!("page building failed: {e}")))??;
            Ok(BuiltPage {
                page,
                rendered,
                snapshot: snapshot.into(),
                compressing: OnceLock::new(),
            })
        };
        tokio::time::timeout(wait, job)
            .await
            .unwrap_or(Err(Error::Overloaded(
                "the page could not be processed in time",
            )))
    }
}
