//! Scripted HTTP servers on loopback standing in for the services behind this one: an
//! OpenAI-compatible chat-completions endpoint that answers a queue of canned replies and
//! records every request it got, a knowledge extraction service, and a Tavily-compatible
//! search engine.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};

/// One scripted answer of the model server.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A completion with this message content.
    Content(String),
    /// An HTTP error status.
    Status(u16),
    /// Wait, then answer with the content.
    Slow(Duration, String),
}

impl Reply {
    /// A well-formed answer.
    pub fn action(thought: &str, action: &str) -> Self {
        Reply::Content(format!(
            "<Thought>{thought}</Thought>\n<Action>{action}</Action>"
        ))
    }
}

pub type Handler =
    Arc<dyn Fn(hyper::Request<()>, Value, &str) -> (u16, Value, Duration) + Send + Sync>;

pub async fn serve(handler: Handler) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let handler = handler.clone();
            let svc = service_fn(move |req: hyper::Request<Incoming>| {
                let handler = handler.clone();
                async move {
                    let (parts, body) = req.into_parts();
                    let bytes = body
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let json: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    let query = parts.uri.query().unwrap_or("").to_owned();
                    let (status, body, delay) =
                        handler(hyper::Request::from_parts(parts, ()), json, &query);
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    let mut resp = hyper::Response::new(Full::new(Bytes::from(body.to_string())));
                    *resp.status_mut() =
                        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::OK);
                    resp.headers_mut()
                        .insert("content-type", "application/json".parse().expect("header"));
                    Ok::<_, Infallible>(resp)
                }
            });
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), svc));
        }
    });
    addr
}

/// An OpenAI chat completion answering `content` to a prompt of `prompt_chars` characters
/// (tokens estimated at four characters each).
pub fn completion(id: &str, prompt_chars: usize, content: &str) -> Value {
    json!({
        "id": id,
        "object": "chat.completion",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": prompt_chars / 4, "completion_tokens": content.len() / 4 }
    })
}

/// The model name test apps give the verification model (`LLM_VERIFY_MODEL`): requests for
/// it are answered from the verdict queue and recorded apart.
pub const VERIFY_MODEL: &str = "scripted-verifier";

#[derive(Default)]
struct LlmState {
    script: VecDeque<Reply>,
    /// Answered once the script is used up (else a 500 says it is exhausted).
    fallback: Option<Reply>,
    requests: Vec<Value>,
    authorization: Vec<String>,
    verdicts: VecDeque<Reply>,
    verdict_requests: Vec<Value>,
    /// System prompts a Converse cache point wrote to the "cache".
    converse_cache: Vec<String>,
}

impl Reply {
    /// A verifier's answer.
    pub fn verdict(yes: bool, confidence: f64, reason: &str) -> Self {
        Reply::Content(format!(
            "<Verdict>{}</Verdict>\n<Confidence>{confidence}</Confidence>\n<Reason>{reason}</Reason>",
            if yes { "yes" } else { "no" }
        ))
    }
}

/// The model id of a Converse request's path (`/model/{id}/converse`), percent-decoded.
fn converse_model(path: &str) -> Option<String> {
    let id = path.strip_prefix("/model/")?.strip_suffix("/converse")?;
    percent_encoding::percent_decode_str(id)
        .decode_utf8()
        .ok()
        .map(|id| id.into_owned())
}

/// A Converse request's text, in the chat-completions shape the assertions read: the system
/// blocks as one system message, each turn's text blocks as one message.
fn as_chat(model: &str, body: &Value) -> Value {
    let text = |blocks: &Value| -> String {
        blocks
            .as_array()
            .map(|b| {
                b.iter()
                    .filter_map(|x| x["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n\n")
            })
            .unwrap_or_default()
    };
    let mut messages = vec![json!({ "role": "system", "content": text(&body["system"]) })];
    for turn in body["messages"].as_array().into_iter().flatten() {
        messages.push(json!({ "role": turn["role"], "content": text(&turn["content"]) }));
    }
    json!({ "model": model, "messages": messages, "converse": body })
}

/// Answers a Converse request from the same queues as the chat completions. Usage follows
/// Bedrock's prompt caching: a system prompt behind a cache point is written to the cache the
/// first time and read from it after (its characters / 4 as tokens).
fn converse(s: &mut LlmState, model: &str, body: &Value) -> (u16, Value, Duration) {
    let chat = as_chat(model, body);
    let chars: usize = chat["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|x| x["content"].as_str())
                .map(str::len)
                .sum()
        })
        .unwrap_or(0);
    let system = chat["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let cached = body["system"].to_string().contains("cachePoint");
    let (read, write) = match cached {
        true if s.converse_cache.contains(&system) => (system.len() / 4, 0),
        true => {
            s.converse_cache.push(system.clone());
            (0, system.len() / 4)
        }
        false => (0, 0),
    };
    let next = if model == VERIFY_MODEL {
        s.verdict_requests.push(chat);
        Some(
            s.verdicts
                .pop_front()
                .unwrap_or_else(|| Reply::verdict(true, 0.9, "looks done")),
        )
    } else {
        s.requests.push(chat);
        s.script.pop_front().or_else(|| s.fallback.clone())
    };
    let answer = |content: String| {
        json!({
            "output": { "message": { "role": "assistant", "content": [{ "text": content }] } },
            "stopReason": "end_turn",
            "usage": { "inputTokens": chars / 4 - read - write, "outputTokens": 20,
                       "totalTokens": chars / 4 + 20,
                       "cacheReadInputTokens": read, "cacheWriteInputTokens": write },
            "metrics": { "latencyMs": 5 }
        })
    };
    let failure = |status: u16| {
        let kind = match status {
            429 => "ThrottlingException",
            500 => "InternalServerException",
            503 => "ServiceUnavailableException",
            403 => "AccessDeniedException",
            404 => "ResourceNotFoundException",
            _ => "ValidationException",
        };
        json!({ "__type": kind, "message": "scripted failure" })
    };
    match next {
        Some(Reply::Content(c)) => (200, answer(c), Duration::ZERO),
        Some(Reply::Slow(d, c)) => (200, answer(c), d),
        Some(Reply::Status(code)) => (code, failure(code), Duration::ZERO),
        None => (500, failure(500), Duration::ZERO),
    }
}

/// The scripted model server.
#[derive(Clone)]
pub struct ScriptedLlm {
    pub base_url: String,
    /// The same server as a Bedrock runtime endpoint (`BEDROCK_ENDPOINT_URL`).
    pub converse_url: String,
    state: Arc<Mutex<LlmState>>,
}

impl ScriptedLlm {
    pub async fn start() -> Self {
        let state = Arc::new(Mutex::new(LlmState::default()));
        let st = state.clone();
        let addr = serve(Arc::new(move |req, body, _| {
            let mut s = st.lock().expect("lock");
            let path = req.uri().path().to_owned();
            if req.method() != hyper::Method::POST {
                return (404, json!({ "error": "not found" }), Duration::ZERO);
            }
            if let Some(model) = converse_model(&path) {
                return converse(&mut s, &model, &body);
            }
            if !path.ends_with("/chat/completions") {
                return (404, json!({ "error": "not found" }), Duration::ZERO);
            }
            s.authorization.push(
                req.headers().get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned(),
            );
            let prompt_chars: usize = body["messages"]
                .as_array()
                .map(|m| m.iter().filter_map(|x| x["content"].as_str()).map(str::len).sum())
                .unwrap_or(0);
            let verifier = body["model"] == VERIFY_MODEL;
            let next = if verifier {
                s.verdict_requests.push(body);
                // Unscripted verdicts confirm.
                Some(s.verdicts.pop_front().unwrap_or_else(|| Reply::verdict(true, 0.9, "looks done")))
            } else {
                s.requests.push(body);
                s.script.pop_front().or_else(|| s.fallback.clone())
            };
            let completion = |content: String| {
                json!({
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
                    // Half the prompt read from the provider's cache, as a long task's is.
                    "usage": { "prompt_tokens": prompt_chars / 4, "completion_tokens": 20,
                               "prompt_tokens_details": { "cached_tokens": prompt_chars / 8 } }
                })
            };
            match next {
                Some(Reply::Content(c)) => (200, completion(c), Duration::ZERO),
                Some(Reply::Slow(d, c)) => (200, completion(c), d),
                Some(Reply::Status(code)) => (code, json!({ "error": { "message": "scripted failure" } }), Duration::ZERO),
                None => (500, json!({ "error": { "message": "script exhausted" } }), Duration::ZERO),
            }
        }))
        .await;
        Self {
            base_url: format!("http://{addr}/v1"),
            converse_url: format!("http://{addr}"),
            state,
        }
    }

    /// Queues replies, answered in order.
    pub fn push(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.lock().expect("lock").script.extend(replies);
    }

    /// Queues verdicts of the verification model, answered in order (then: confirmed).
    pub fn push_verdicts(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.lock().expect("lock").verdicts.extend(replies);
    }

    /// Every request the verification model received.
    pub fn verdict_requests(&self) -> Vec<Value> {
        self.state.lock().expect("lock").verdict_requests.clone()
    }

    /// The reply given whenever the script is used up.
    pub fn fallback(&self, reply: Reply) {
        self.state.lock().expect("lock").fallback = Some(reply);
    }

    /// Every request body received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.state.lock().expect("lock").requests.clone()
    }

    /// The last message of every request received so far: the prompt, or what the server
    /// told the model after a refused answer.
    pub fn last_messages(&self) -> Vec<String> {
        self.requests()
            .iter()
            .filter_map(|q| {
                q["messages"].as_array()?.last()?["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    }

    /// The `Authorization` headers received.
    pub fn authorization(&self) -> Vec<String> {
        self.state.lock().expect("lock").authorization.clone()
    }

    /// The user message of request `k` (the prompt proper).
    pub fn user_prompt(&self, k: usize) -> String {
        self.requests()[k]["messages"][1]["content"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    }
}

#[derive(Default)]
struct KnowledgeState {
    answer: Option<(u16, Value)>,
    queries: Vec<String>,
}

/// The scripted knowledge extraction service.
#[derive(Clone)]
pub struct ScriptedKnowledge {
    pub base_url: String,
    state: Arc<Mutex<KnowledgeState>>,
}

impl ScriptedKnowledge {
    pub async fn start() -> Self {
        let state = Arc::new(Mutex::new(KnowledgeState::default()));
        let st = state.clone();
        let addr = serve(Arc::new(move |req, _, query| {
            let mut s = st.lock().expect("lock");
            if req.uri().path() != "/api/knowledge/resolve" {
                return (404, json!({}), Duration::ZERO);
            }
            s.queries.push(query.to_owned());
            let (status, body) = s.answer.clone().unwrap_or((200, json!({ "context": [] })));
            (status, body, Duration::ZERO)
        }))
        .await;
        Self {
            base_url: format!("http://{addr}"),
            state,
        }
    }

    /// Sets the answer to every lookup.
    pub fn answer(&self, status: u16, body: Value) {
        self.state.lock().expect("lock").answer = Some((status, body));
    }

    /// Raw query strings of the lookups received.
    pub fn queries(&self) -> Vec<String> {
        self.state.lock().expect("lock").queries.clone()
    }
}

#[derive(Default)]
struct SearchState {
    /// Answers given in order before the defaults: status, body, delay.
    queue: VecDeque<(u16, Value, Duration)>,
    /// Default answers to searches restricted to a site, and to open-web searches.
    site: Option<Value>,
    web: Option<Value>,
    /// Added to every default answer.
    delay: Duration,
    requests: Vec<Value>,
    authorization: Vec<String>,
    /// The text `/extract` answers with (none: the page could not be read).
    page_text: Option<String>,
    extracts: Vec<Value>,
}

/// A Tavily-compatible search server (`POST /search`, `POST /extract`).
#[derive(Clone)]
pub struct ScriptedSearch {
    pub base_url: String,
    state: Arc<Mutex<SearchState>>,
}

/// A Tavily answer with these `(title, url, content)` results.
pub fn search_results(hits: &[(&str, &str, &str)]) -> Value {
    let results: Vec<Value> = hits
        .iter()
        .map(|(t, u, c)| json!({ "title": t, "url": u, "content": c, "score": 0.9 }))
        .collect();
    json!({ "query": "q", "results": results, "response_time": 0.2 })
}

impl ScriptedSearch {
    pub async fn start() -> Self {
        let state = Arc::new(Mutex::new(SearchState::default()));
        let st = state.clone();
        let addr = serve(Arc::new(move |req, body, _| {
            let mut s = st.lock().expect("lock");
            if req.uri().path() == "/extract" && req.method() == hyper::Method::POST {
                let url = body["urls"][0].clone();
                s.extracts.push(body);
                let answer = match &s.page_text {
                    Some(t) => json!({ "results": [{ "url": url, "raw_content": t }], "failed_results": [] }),
                    None => json!({ "results": [], "failed_results": [{ "url": url, "error": "could not fetch" }] }),
                };
                return (200, answer, Duration::ZERO);
            }
            if req.uri().path() != "/search" || req.method() != hyper::Method::POST {
                return (404, json!({ "detail": "not found" }), Duration::ZERO);
            }
            s.authorization.push(
                req.headers()
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned(),
            );
            let restricted = body["include_domains"]
                .as_array()
                .is_some_and(|d| !d.is_empty());
            s.requests.push(body);
            if let Some(next) = s.queue.pop_front() {
                return next;
            }
            let empty = search_results(&[]);
            let answer = if restricted {
                s.site.clone()
            } else {
                s.web.clone()
            };
            (200, answer.unwrap_or(empty), s.delay)
        }))
        .await;
        Self {
            base_url: format!("http://{addr}"),
            state,
        }
    }

    /// Answers site-restricted searches with these results (by default: none).
    pub fn site(&self, hits: &[(&str, &str, &str)]) {
        self.state.lock().expect("lock").site = Some(search_results(hits));
    }

    /// Answers open-web searches with these results (by default: none).
    pub fn web(&self, hits: &[(&str, &str, &str)]) {
        self.state.lock().expect("lock").web = Some(search_results(hits));
    }

    /// Delays every default answer.
    pub fn delay(&self, d: Duration) {
        self.state.lock().expect("lock").delay = d;
    }

    /// Answers the next searches with these, in order, before the defaults.
    pub fn then(&self, answers: impl IntoIterator<Item = (u16, Value, Duration)>) {
        self.state.lock().expect("lock").queue.extend(answers);
    }

    /// Every search request body received.
    pub fn requests(&self) -> Vec<Value> {
        self.state.lock().expect("lock").requests.clone()
    }

    /// Answers `/extract` with this page text.
    pub fn page_text(&self, text: &str) {
        self.state.lock().expect("lock").page_text = Some(text.to_owned());
    }

    /// Every `/extract` request body received.
    pub fn extracts(&self) -> Vec<Value> {
        self.state.lock().expect("lock").extracts.clone()
    }

    /// The `Authorization` headers received.
    pub fn authorization(&self) -> Vec<String> {
        self.state.lock().expect("lock").authorization.clone()
    }
}
