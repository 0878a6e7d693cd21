//! Calling the services behind this one (model, search, knowledge service): answers read with
//! a size limit, so a misbehaving upstream cannot make a request allocate without bound, and
//! retries with backoff that never run past the caller's deadline.

/// Why an answer could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadError {
    TooLarge,
    Timeout,
    Transport,
}

/// The body of `resp`, refused once it passes `max` bytes (checked on the declared length
/// first, then on what actually arrives).
pub async fn read_limited(mut resp: reqwest::Response, max: usize) -> Result<Vec<u8>, ReadError> {
    if resp.content_length().is_some_and(|n| n > max as u64) {
        return Err(ReadError::TooLarge);
    }
    let mut out = Vec::new();
    loop {
        let chunk = resp.chunk().await.map_err(|e| {
            if e.is_timeout() {
                ReadError::Timeout
            } else {
                ReadError::Transport
            }
        })?;
        let Some(chunk) = chunk else {
            return Ok(out);
        };
        if out.len() + chunk.len() > max {
            return Err(ReadError::TooLarge);
        }
        out.extend_from_slice(&chunk);
    }
}

/// An HTTP client built on first use: functions that never call an upstream pay nothing for
/// it at cold start.
#[derive(Debug)]
pub struct LazyClient {
    connect_timeout: std::time::Duration,
    client: std::sync::OnceLock<reqwest::Client>,
}

impl LazyClient {
    pub fn new(connect_timeout: std::time::Duration) -> Self {
        Self {
            connect_timeout,
            client: std::sync::OnceLock::new(),
        }
    }

    pub fn get(&self) -> &reqwest::Client {
        self.client.get_or_init(|| {
            crate::adapters::tls::client_builder()
                .connect_timeout(self.connect_timeout)
                .pool_idle_timeout(std::time::Duration::from_secs(60))
                .build()
                .unwrap_or_default()
        })
    }
}

/// What one attempt at an upstream call came to.
#[derive(Debug)]
pub enum Attempt<T, E> {
    Done(T),
    /// Worth another try (429, 5xx, transport), after the upstream's `Retry-After` if given.
    Retry(String, Option<std::time::Duration>),
    /// Not worth another try.
    Fatal(E),
}

/// Why retrying gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GaveUp<E> {
    /// The deadline came before any answer (or the last attempt timed out).
    Timeout,
    /// Every attempt failed; the last reason.
    Failed(String),
    Fatal(E),
}

/// The `Retry-After` seconds of a response, if any.
pub fn retry_after(resp: &reqwest::Response) -> Option<std::time::Duration> {
    resp.headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(std::time::Duration::from_secs)
}

/// A model call through [`with_retries`] (the model's settings name the attempts and their
/// timeout), what gave up told as the model port's error.
pub async fn model_call<F, Fut>(
    what: &str,
    deadline: std::time::Instant,
    cfg: &crate::config::LlmConfig,
    attempt: F,
) -> Result<crate::ports::llm::Completion, crate::ports::llm::LlmError>
where
    F: FnMut(std::time::Duration) -> Fut,
    Fut: std::future::Future<
        Output = Attempt<crate::ports::llm::Completion, crate::ports::llm::LlmError>,
    >,
{
    use crate::ports::llm::LlmError;
    with_retries(
        what,
        deadline,
        cfg.max_retries,
        cfg.attempt_timeout,
        attempt,
    )
    .await
    .map_err(|e| match e {
        GaveUp::Timeout => LlmError::Timeout,
        GaveUp::Failed(why) => LlmError::Unavailable(why),
        GaveUp::Fatal(e) => e,
    })
}

/// An upstream call (model, search, extraction): pauses of 250 ms doubling to 2 s (a
/// `Retry-After` given by the upstream instead, also at most 2 s); the attempts are the
/// caller's setting (`1 + max_retries`).
const UPSTREAM: crate::retry::Policy = crate::retry::Policy {
    attempts: 3,
    first: std::time::Duration::from_millis(250),
    cap: std::time::Duration::from_secs(2),
    jitter: false,
};

/// Calls `attempt` (with the time it may take) up to `1 + max_retries` times with exponential
/// backoff (or the upstream's `Retry-After`, at most 2 s), never past `deadline`. Each
/// failed attempt is logged with `what` and its reason — never a URL, a key or a body.
pub async fn with_retries<T, E, F, Fut>(
    what: &str,
    deadline: std::time::Instant,
    max_retries: u32,
    attempt_timeout: std::time::Duration,
    mut attempt: F,
) -> Result<T, GaveUp<E>>
where
    F: FnMut(std::time::Duration) -> Fut,
    Fut: std::future::Future<Output = Attempt<T, E>>,
{
    use std::time::{Duration, Instant};
    let policy = crate::retry::Policy {
        attempts: max_retries.saturating_add(1),
        ..UPSTREAM
    };
    let mut last = String::new();
    for n in 0..policy.attempts {
        let left = deadline.saturating_duration_since(Instant::now());
        if left < Duration::from_millis(200) {
            break;
        }
        match attempt(left.min(attempt_timeout)).await {
            Attempt::Done(v) => return Ok(v),
            Attempt::Fatal(e) => return Err(GaveUp::Fatal(e)),
            Attempt::Retry(why, after) => {
                tracing::warn!(attempt = n, reason = %why, "{what} failed; retrying if time allows");
                last = why;
                let backoff = after
                    .unwrap_or_else(|| policy.pause_at(n + 1, 0.0))
                    .min(policy.cap);
                if !policy.allows_another(n + 1) || Instant::now() + backoff >= deadline {
                    break;
                }
                tokio::time::sleep(backoff).await;
            }
        }
    }
    if last.is_empty() || last == TIMED_OUT {
        Err(GaveUp::Timeout)
    } else {
        Err(GaveUp::Failed(last))
    }
}

/// Sends `req` and reads its answer (up to `max` bytes): the body of a 2xx; `Retry` for 429,
/// 5xx, transport failures and timeouts; `Fatal` with the reason for any other status or an
/// answer over `max`.
pub async fn exchange(req: reqwest::RequestBuilder, max: usize) -> Attempt<Vec<u8>, String> {
    match exchange_or_refusal(req, max).await {
        Attempt::Done(b) => Attempt::Done(b),
        Attempt::Retry(why, after) => Attempt::Retry(why, after),
        Attempt::Fatal(r) => Attempt::Fatal(r.reason),
    }
}

/// A final (not retried) failure, with the start of the refusing answer's body, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: String,
    pub status: Option<u16>,
    /// At most [`REFUSAL_BODY_BYTES`]; empty when not read.
    pub body: Vec<u8>,
}

/// How much of a refusing answer is read (an error message, not a page).
pub const REFUSAL_BODY_BYTES: usize = 16 * 1024;

/// Like [`exchange`], keeping a 4xx answer's body for callers that adapt to it.
pub async fn exchange_or_refusal(
    req: reqwest::RequestBuilder,
    max: usize,
) -> Attempt<Vec<u8>, Refusal> {
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return Attempt::Retry(transport_reason(&e), None),
    };
    let status = resp.status();
    if status.as_u16() == 429 || status.is_server_error() {
        return Attempt::Retry(format!("status {status}"), retry_after(&resp));
    }
    if !status.is_success() {
        let body = read_limited(resp, REFUSAL_BODY_BYTES)
            .await
            .unwrap_or_default();
        return Attempt::Fatal(Refusal {
            reason: format!("status {status}"),
            status: Some(status.as_u16()),
            body,
        });
    }
    let fatal = |reason: &str| {
        Attempt::Fatal(Refusal {
            reason: reason.into(),
            status: None,
            body: Vec::new(),
        })
    };
    match read_limited(resp, max).await {
        Ok(b) => Attempt::Done(b),
        Err(ReadError::Timeout) => Attempt::Retry(TIMED_OUT.into(), None),
        Err(ReadError::Transport) => Attempt::Retry("connection failed: body".into(), None),
        Err(ReadError::TooLarge) => fatal("oversized answer"),
    }
}

/// The reason given for an attempt that ran out of time.
pub const TIMED_OUT: &str = "attempt timed out";

/// A transport error as a reason without its URL (reqwest errors print it, and a URL may carry
/// a key).
pub fn transport_reason(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        TIMED_OUT.into()
    } else if e.is_connect() {
        "connection failed: connect".into()
    } else if e.is_request() {
        "connection failed: request".into()
    } else {
        "connection failed: transport".into()
    }
}
