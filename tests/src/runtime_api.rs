//! A Lambda Runtime API emulator on loopback: the process boundary a function binary talks
//! to inside Lambda (`/2018-06-01/runtime/invocation/next`, `.../response`, `.../error`,
//! `/init/error`). Lets tests and benchmarks run the real function binaries.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::sync::{mpsc, Mutex};

/// What the function reported for one invocation (or its init).
#[derive(Debug, Clone)]
pub enum Outcome {
    Response(serde_json::Value),
    Error(serde_json::Value),
    InitError(serde_json::Value),
}

struct Shared {
    events: Mutex<mpsc::Receiver<(String, String)>>,
    outcomes: mpsc::Sender<(Outcome, Instant)>,
    first_poll: mpsc::Sender<Instant>,
}

/// A running emulator.
pub struct RuntimeApi {
    pub addr: SocketAddr,
    events: mpsc::Sender<(String, String)>,
    outcomes: mpsc::Receiver<(Outcome, Instant)>,
    polls: mpsc::Receiver<Instant>,
}

impl RuntimeApi {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (ev_tx, ev_rx) = mpsc::channel(16);
        let (out_tx, out_rx) = mpsc::channel(16);
        let (poll_tx, poll_rx) = mpsc::channel(64);
        let shared = Arc::new(Shared {
            events: Mutex::new(ev_rx),
            outcomes: out_tx,
            first_poll: poll_tx,
        });
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let shared = shared.clone();
                let svc = service_fn(move |req| {
                    let shared = shared.clone();
                    async move { Ok::<_, Infallible>(answer(&shared, req).await) }
                });
                tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), svc));
            }
        });
        Self {
            addr,
            events: ev_tx,
            outcomes: out_rx,
            polls: poll_rx,
        }
    }

    /// The environment a function process needs to talk to this emulator.
    pub fn env(&self, function: &str) -> Vec<(String, String)> {
        [
            ("AWS_LAMBDA_RUNTIME_API", self.addr.to_string()),
            ("AWS_LAMBDA_FUNCTION_NAME", function.to_owned()),
            ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256".into()),
            ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST".into()),
            ("AWS_LAMBDA_LOG_STREAM_NAME", "local".into()),
            (
                "AWS_LAMBDA_LOG_GROUP_NAME",
                format!("/aws/lambda/{function}"),
            ),
            ("AWS_REGION", "us-east-1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// Queues one event and waits (up to `timeout`) for its outcome and when it arrived.
    pub async fn invoke(
        &mut self,
        event: &serde_json::Value,
        timeout: Duration,
    ) -> Option<(Outcome, Instant)> {
        let id = uuid::Uuid::new_v4().to_string();
        self.events.send((id, event.to_string())).await.ok()?;
        tokio::time::timeout(timeout, self.outcomes.recv())
            .await
            .ok()
            .flatten()
    }

    /// Waits for the function's first poll for work (its init is done).
    pub async fn first_poll(&mut self, timeout: Duration) -> Option<Instant> {
        tokio::time::timeout(timeout, self.polls.recv())
            .await
            .ok()
            .flatten()
    }

    /// Waits for an outcome that was not asked for (an init error).
    pub async fn next_outcome(&mut self, timeout: Duration) -> Option<Outcome> {
        tokio::time::timeout(timeout, self.outcomes.recv())
            .await
            .ok()
            .flatten()
            .map(|(o, _)| o)
    }
}

async fn answer(shared: &Shared, req: hyper::Request<Incoming>) -> hyper::Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let json = || serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    let reply = |status: u16, body: String| {
        let mut r = hyper::Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::OK);
        r
    };
    if method == hyper::Method::GET && path == "/2018-06-01/runtime/invocation/next" {
        let _ = shared.first_poll.try_send(Instant::now());
        let next = shared.events.lock().await.recv().await;
        let Some((id, event)) = next else {
            return reply(500, "emulator closed".into());
        };
        let deadline = chrono::Utc::now().timestamp_millis() + 30_000;
        let mut r = reply(200, event);
        let h = r.headers_mut();
        h.insert("lambda-runtime-aws-request-id", id.parse().expect("header"));
        h.insert(
            "lambda-runtime-deadline-ms",
            deadline.to_string().parse().expect("header"),
        );
        h.insert(
            "lambda-runtime-invoked-function-arn",
            "arn:aws:lambda:us-east-1:000000000000:function:local"
                .parse()
                .expect("header"),
        );
        h.insert(
            "lambda-runtime-trace-id",
            "Root=1-00000000-000000000000000000000000"
                .parse()
                .expect("header"),
        );
        h.insert("content-type", "application/json".parse().expect("header"));
        return r;
    }
    let outcome = if path == "/2018-06-01/runtime/init/error" {
        Outcome::InitError(json())
    } else if path.ends_with("/response") {
        Outcome::Response(json())
    } else if path.ends_with("/error") {
        Outcome::Error(json())
    } else {
        return reply(404, "unknown path".into());
    };
    let _ = shared.outcomes.send((outcome, Instant::now())).await;
    reply(202, r#"{"status":"OK"}"#.into())
}
