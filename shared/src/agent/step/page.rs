//! Phase 1 (Load), its page: the page of the request, built and rendered on the blocking pool.
//! Parsing and rendering are CPU work bounded by the input (depth, expansion and budget
//! limits), kept off the async workers so one large page never stalls other requests, and
//! awaited no longer than the step deadline.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use tokio::sync::{OnceCell, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use crate::agent::page::Page;
use crate::agent::render::{render_for, Budget, Rendered};
use crate::agent::request::{InteractRequest, PageInput};
use crate::agent::step::StepPorts;
use crate::domain::secrets::{Finder, Masked};
use crate::error::Error;
use crate::ports::Compressed;

/// The page of a request: the model, its rendering for the prompt, and the raw content kept
/// as the step's snapshot.
pub struct BuiltPage {
    pub page: Page,
    pub rendered: Rendered,
    /// The page as sent: the tree's JSON or the `dom`.
    snapshot: Arc<Vec<u8>>,
    compressed: Arc<OnceCell<Compressed>>,
}

impl std::fmt::Debug for BuiltPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltPage")
            .field("page", &self.page)
            .field("rendered", &self.rendered)
            .finish_non_exhaustive()
    }
}

impl BuiltPage {
    /// Size of the raw snapshot.
    pub fn snapshot_bytes(&self) -> usize {
        self.snapshot.len()
    }

    /// Starts compressing the snapshot in the background (the in-process flow, as soon as the
    /// page is built, so the step goes on meanwhile).
    pub fn start_compressing(&self) {
        let (cell, raw) = (self.compressed.clone(), self.snapshot.clone());
        tokio::spawn(async move {
            // A failure is met again, and reported, by whoever needs the result.
            let _ = cell.get_or_try_init(|| compress(raw)).await;
        });
    }

    /// The compressed snapshot: the one under way or done, or compressed now.
    pub async fn compressed(&self) -> Result<&Compressed, Error> {
        self.compressed
            .get_or_try_init(|| compress(self.snapshot.clone()))
            .await
    }

    /// The snapshot to keep for a task with typed `secrets`: compressed with them masked,
    /// `Ok(None)` when it holds none (keep [`BuiltPage::compressed`]), or an error when it is
    /// too large to search (then it is not kept).
    pub async fn masked(&self, secrets: &Finder) -> Result<Option<Compressed>, Error> {
        if secrets.is_empty() {
            return Ok(None);
        }
        let raw = String::from_utf8_lossy(&self.snapshot);
        match secrets.mask_page(&raw) {
            Masked::Clean => Ok(None),
            Masked::Masked(masked) => Ok(Some(compress(Arc::new(masked.into_bytes())).await?)),
            Masked::TooLarge => Err(Error::internal(
                "the page is too large to search for the task's secrets; its snapshot is not kept",
            )),
        }
    }
}

async fn compress(raw: Arc<Vec<u8>>) -> Result<Compressed, Error> {
    Ok(on_builder("snapshot compression", move || Compressed::of(&raw)).await??)
}

/// Runs `work` on the blocking pool with a page builder's permit. The permit goes with the
/// work: it is held until the work is done, even if the caller gives up waiting for it.
pub async fn on_builder<T: Send + 'static>(
    what: &'static str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Error> {
    let permit = builders()
        .acquire_owned()
        .await
        .map_err(|e| Error::internal(format!("page builders closed: {e}")))?;
    joined(what, with_permit(permit, work)).await
}

/// `work` started on the blocking pool, holding `permit` until it is done.
fn with_permit<T: Send + 'static>(
    permit: OwnedSemaphorePermit,
    work: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<T> {
    tokio::task::spawn_blocking(move || {
        let out = work();
        drop(permit);
        out
    })
}

async fn joined<T>(what: &'static str, handle: JoinHandle<T>) -> Result<T, Error> {
    handle
        .await
        .map_err(|e| Error::internal(format!("{what} failed: {e}")))
}

/// The page model, its rendering and the raw snapshot.
fn build(
    input: PageInput,
    viewport: Option<(f64, f64)>,
    budget: Budget,
    words: &[String],
) -> Result<(Page, Rendered, Vec<u8>), Error> {
    let modelling = tracing::debug_span!("interact.page_model").entered();
    let (page, snapshot) = match input {
        PageInput::Tree { nodes, sent } => (Page::from_tree(nodes, viewport), sent.into_bytes()),
        PageInput::Dom(dom) => {
            let page = Page::from_dom(&dom).map_err(|e| Error::field("dom", e.to_string()))?;
            (page, dom.into_bytes())
        }
    };
    drop(modelling);
    let hints = crate::agent::render::Hints {
        anchor: None,
        words,
    };
    let rendered =
        tracing::debug_span!("interact.render").in_scope(|| render_for(&page, budget, hints));
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
/// future of the result. The build starts at once when a builder is free, so the page is
/// built while the step's first reads and claims are under way; when every builder is busy
/// or spoken for, it waits its turn once awaited (after the request is admitted), so a burst
/// of requests that end up refused queues no work ahead of admitted ones. A build started
/// for a request that is then refused or replayed runs to its end (at most one per builder,
/// and only on a builder nobody was waiting for).
pub fn start(
    ctx: &StepPorts<'_>,
    req: &mut InteractRequest,
    deadline: Instant,
) -> impl Future<Output = Result<BuiltPage, Error>> {
    let content = std::mem::replace(&mut req.page, PageInput::Dom(String::new()));
    let viewport = req.viewport;
    let budget = Budget {
        max_tokens: ctx.agent.page_tokens,
        chars_per_token: ctx.agent.chars_per_token,
    };
    let words = crate::agent::render::task_words(&req.query);
    let work = move || build(content, viewport, budget, &words);
    // A free permit only: tokio hands a returned permit to a queued waiter first.
    let job = match builders().try_acquire_owned() {
        Ok(permit) => Ok(with_permit(permit, work)),
        Err(_) => Err(work),
    };
    async move {
        let job = async {
            let built = match job {
                Ok(started) => joined("page building", started).await,
                Err(work) => on_builder("page building", work).await,
            };
            let (page, rendered, snapshot) = built??;
            Ok(BuiltPage {
                page,
                rendered,
                snapshot: Arc::new(snapshot),
                compressed: Arc::default(),
            })
        };
        in_time(deadline, job).await
    }
}

/// `job`'s answer, or `Overloaded` when it is not in by `deadline`.
pub async fn in_time<T>(
    deadline: Instant,
    job: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let wait = deadline.saturating_duration_since(Instant::now());
    tokio::time::timeout(wait, job)
        .await
        .unwrap_or(Err(Error::Overloaded(
            "the page could not be processed in time",
        )))
}
