//! The model adapter against scripted servers that behave like the providers users bring:
//! OpenAI's current models (refusing `max_tokens` and a non-default `temperature`), vLLM
//! (refusing unknown fields, answering with its extra fields), Ollama/llama.cpp (no usage,
//! extra timing fields) and Azure OpenAI (`api-key` header, `api-version`, deployment path).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use api_tests::scripted::serve;
use api_tests::{AppOptions, TestApp};
use reqwest::Method;
use serde_json::{json, Value};
use shared::adapters::openai::OpenAiLlm;
use shared::config::AgentConfig;
use shared::ports::llm::{Call, ChatMessage, Llm};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Dialect {
    OpenAi,
    Vllm,
    Ollama,
    Azure,
    /// Refuses whichever token parameter it gets (a server that can never be satisfied).
    Flip,
    /// Refuses every request with a huge error body that names a parameter at its end.
    Huge,
    /// Qwen3 / DeepSeek-R1 behind vLLM or Ollama: the thinking in `content`, in `<think>`,
    /// with a draft action inside it.
    Thinking,
    /// A reasoning model (Gemini 2.5, o-series) that spends a small cap on thinking: an empty
    /// answer cut at `length` below 4000 tokens.
    LengthCut,
    /// `content` as an array of parts (a gateway in front of Anthropic or Gemini).
    Parts,
    /// Structured output: answers the JSON its `response_format` schema asks for, or refuses
    /// a request without one; a forced tool call is answered in `tool_calls`.
    Structured,
    /// Refuses `response_format` and `tools` by name (many OpenAI-compatible servers).
    NoSchema,
    /// A text-only model: refuses image parts as OpenAI does.
    TextOnly,
}

/// One request as the server saw it: path and query, the key headers, the body.
#[derive(Debug, Clone)]
struct Seen {
    target: String,
    authorization: Option<String>,
    api_key: Option<String>,
    body: Value,
}

#[derive(Clone)]
struct Provider {
    base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

const ACTION: &str = "<Thought>Click it.</Thought>\n<Action>click(10)</Action>";

fn openai_error(param: &str, code: &str, message: &str) -> Value {
    json!({ "error": { "message": message, "type": "invalid_request_error", "param": param, "code": code } })
}

/// How each provider answers one request.
fn answer(dialect: Dialect, seen: &Seen) -> (u16, Value) {
    let b = &seen.body;
    match dialect {
        Dialect::OpenAi => {
            if seen.authorization.as_deref() != Some("Bearer provider-key") {
                return (
                    401,
                    json!({ "error": { "message": "Incorrect API key provided" } }),
                );
            }
            if b.get("max_tokens").is_some() {
                return (400, openai_error("max_tokens", "unsupported_parameter",
                    "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."));
            }
            if b.get("temperature")
                .is_some_and(|t| t.as_f64() != Some(1.0))
            {
                return (400, openai_error("temperature", "unsupported_value",
                    "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported."));
            }
            (
                200,
                json!({
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": b["model"],
                    "choices": [{ "index": 0, "message": { "role": "assistant", "content": ACTION, "refusal": null, "annotations": [] }, "finish_reason": "stop" }],
                    "usage": { "prompt_tokens": 120, "completion_tokens": 70,
                        "completion_tokens_details": { "reasoning_tokens": 64 } }
                }),
            )
        }
        Dialect::Vllm => {
            let allowed = ["model", "messages", "max_tokens", "temperature"];
            if let Some(extra) = b
                .as_object()
                .and_then(|o| o.keys().find(|k| !allowed.contains(&k.as_str())))
            {
                return (
                    400,
                    json!({ "object": "error",
                    "message": format!("[{{'type': 'extra_forbidden', 'loc': ('body', '{extra}'), 'msg': 'Extra inputs are not permitted'}}]"),
                    "type": "BadRequestError", "param": null, "code": 400 }),
                );
            }
            (
                200,
                json!({
                    "id": "chatcmpl-v", "object": "chat.completion", "created": 1, "model": b["model"],
                    "choices": [{ "index": 0, "message": { "role": "assistant", "reasoning_content": null, "content": ACTION, "tool_calls": [] },
                        "logprobs": null, "finish_reason": "stop", "stop_reason": null }],
                    "usage": { "prompt_tokens": 90, "total_tokens": 110, "completion_tokens": 20, "prompt_tokens_details": null },
                    "prompt_logprobs": null, "kv_transfer_params": null
                }),
            )
        }
        Dialect::Ollama => (
            200,
            json!({
                "id": "chatcmpl-o", "object": "chat.completion", "model": b["model"],
                "choices": [{ "index": 0, "message": { "role": "assistant", "content": ACTION }, "finish_reason": "stop" }],
                "timings": { "prompt_n": 90, "predicted_n": 20 }
            }),
        ),
        Dialect::Flip => {
            let param = if b.get("max_tokens").is_some() {
                "max_tokens"
            } else {
                "max_completion_tokens"
            };
            (
                400,
                openai_error(
                    param,
                    "unsupported_parameter",
                    &format!("Unsupported parameter: '{param}'"),
                ),
            )
        }
        Dialect::Thinking => (
            200,
            json!({
                "choices": [{ "index": 0, "message": { "role": "assistant",
                    "content": format!("<think>\nThe task says press. Maybe <Action>click(99)</Action>? No, 10 is the button.\n</think>\n\n{ACTION}") },
                    "finish_reason": "stop" }],
                "usage": { "prompt_tokens": 90, "completion_tokens": 60 }
            }),
        ),
        Dialect::LengthCut => {
            let cap = b["max_completion_tokens"]
                .as_u64()
                .or(b["max_tokens"].as_u64())
                .unwrap_or(0);
            let (content, reason) = if cap < 4_000 {
                ("", "length")
            } else {
                (ACTION, "stop")
            };
            (
                200,
                json!({
                    "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": reason }],
                    "usage": { "prompt_tokens": 90, "completion_tokens": cap.min(4_000) }
                }),
            )
        }
        Dialect::Parts => (
            200,
            json!({
                "choices": [{ "index": 0, "message": { "role": "assistant", "content": [
                    { "type": "text", "text": "<Thought>Click it.</Thought>\n" },
                    { "type": "text", "text": "<Action>click(10)</Action>" }
                ] }, "finish_reason": "stop" }],
                "usage": { "prompt_tokens": 90, "completion_tokens": 20 }
            }),
        ),
        Dialect::Structured => {
            let answer = json!({ "thought": "Click it.", "actions": ["click(10)"], "plan": null, "step": null,
                "expect": null, "risk": null, "missing": null, "memory": null, "task_type": null, "search": null });
            let message = if b["tool_choice"]["function"]["name"] == "next_action" {
                json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": "call_1", "type": "function",
                    "function": { "name": "next_action", "arguments": answer.to_string() } }] })
            } else if b["response_format"]["json_schema"]["schema"]["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("actions")))
            {
                json!({ "role": "assistant", "content": answer.to_string() })
            } else {
                return (
                    400,
                    openai_error(
                        "",
                        "bad_request",
                        "this test server answers structured requests only",
                    ),
                );
            };
            (
                200,
                json!({ "choices": [{ "index": 0, "message": message, "finish_reason": "stop" }],
                    "usage": { "prompt_tokens": 90, "completion_tokens": 20 } }),
            )
        }
        Dialect::TextOnly => {
            let has_image = b["messages"].as_array().is_some_and(|m| {
                m.iter().any(|x| {
                    x["content"]
                        .as_array()
                        .is_some_and(|p| p.iter().any(|p| p["type"] == "image_url"))
                })
            });
            if has_image {
                return (
                    400,
                    openai_error(
                        "messages.[1].content.[1].type",
                        "",
                        "Invalid content type. image_url is only supported by certain models.",
                    ),
                );
            }
            (
                200,
                json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": ACTION }, "finish_reason": "stop" }],
                    "usage": { "prompt_tokens": 90, "completion_tokens": 20 } }),
            )
        }
        Dialect::NoSchema => {
            for field in ["response_format", "tools"] {
                if b.get(field).is_some() {
                    return (
                        400,
                        json!({ "object": "error", "message": format!("'{field}' is not supported by this server"), "type": "BadRequestError", "code": 400 }),
                    );
                }
            }
            (
                200,
                json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": ACTION }, "finish_reason": "stop" }],
                    "usage": { "prompt_tokens": 90, "completion_tokens": 20 } }),
            )
        }
        Dialect::Huge => (
            400,
            json!({ "error": { "message": format!("{}Unsupported parameter: 'temperature'", "x".repeat(2_000_000)) } }),
        ),
        Dialect::Azure => {
            if seen.api_key.as_deref() != Some("provider-key") || seen.authorization.is_some() {
                return (
                    401,
                    json!({ "error": { "code": "401", "message": "Access denied due to invalid subscription key" } }),
                );
            }
            if seen.target != "/openai/deployments/agent/chat/completions?api-version=2024-10-21" {
                return (
                    404,
                    json!({ "error": { "code": "404", "message": "Resource not found" } }),
                );
            }
            (
                200,
                json!({
                    "choices": [{ "index": 0, "message": { "role": "assistant", "content": ACTION }, "finish_reason": "stop",
                        "content_filter_results": {} }],
                    "usage": { "prompt_tokens": 100, "completion_tokens": 20 }
                }),
            )
        }
    }
}

async fn provider(dialect: Dialect) -> Provider {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    let addr = serve(Arc::new(move |req, body, query| {
        let header = |n: &str| {
            req.headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let target = match query {
            "" => req.uri().path().to_owned(),
            q => format!("{}?{q}", req.uri().path()),
        };
        let s = Seen {
            target,
            authorization: header("authorization"),
            api_key: header("api-key"),
            body,
        };
        let (status, answer) = answer(dialect, &s);
        log.lock().expect("lock").push(s);
        (status, answer, Duration::ZERO)
    }))
    .await;
    let base_url = match dialect {
        Dialect::Azure => format!("http://{addr}/openai/deployments/agent"),
        _ => format!("http://{addr}/v1"),
    };
    Provider { base_url, seen }
}

impl Provider {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }
}

fn llm(p: &Provider, model: &str, extra: &[(&str, &str)]) -> OpenAiLlm {
    let mut env = vec![
        ("LLM_API_KEY", "provider-key".to_owned()),
        ("LLM_BASE_URL", p.base_url.clone()),
        ("LLM_MODEL", model.to_owned()),
        ("LLM_MAX_RETRIES", "0".to_owned()),
    ];
    env.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
    let cfg =
        AgentConfig::from_lookup(|k| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone()))
            .expect("config")
            .llm
            .expect("llm");
    OpenAiLlm::from_config(cfg).expect("an OpenAI-compatible endpoint")
}

fn prompt() -> Vec<ChatMessage> {
    vec![
        ChatMessage::system("You pick actions."),
        ChatMessage::user("Click the button."),
    ]
}

async fn complete(
    llm: &OpenAiLlm,
) -> Result<shared::ports::llm::Completion, shared::ports::llm::LlmError> {
    llm.complete(&prompt(), Instant::now() + Duration::from_secs(5))
        .await
}

fn keys(body: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = body
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    k.retain(|k| !["model", "messages"].contains(k));
    k.sort_unstable();
    k
}

#[tokio::test]
async fn a_current_openai_model_is_sent_what_it_takes_from_the_first_call() {
    let p = provider(Dialect::OpenAi).await;
    let llm = llm(&p, "gpt-5-mini", &[]);
    let c = complete(&llm).await.expect("completion");
    assert_eq!(c.content, ACTION);
    assert_eq!((c.prompt_tokens, c.completion_tokens), (120, 70));
    let seen = p.seen();
    assert_eq!(seen.len(), 1, "no refused call");
    assert_eq!(
        keys(&seen[0].body),
        vec!["max_completion_tokens", "reasoning_effort"]
    );
    assert_eq!(
        seen[0].body["max_completion_tokens"], 4000,
        "a reasoning model's cap"
    );
    assert_eq!(seen[0].body["reasoning_effort"], "low");
}

#[tokio::test]
async fn an_unknown_model_behind_openai_rules_adapts_once_and_remembers() {
    // A model whose name says nothing (a fine-tune, a gateway alias): the first call sends the
    // classic parameters, each refusal names one, and the adapted set is kept.
    let p = provider(Dialect::OpenAi).await;
    let llm = llm(&p, "acme-agent-v2", &[]);
    let c = complete(&llm).await.expect("completion after adapting");
    assert_eq!(c.content, ACTION);
    let seen = p.seen();
    let sent: Vec<Vec<&str>> = seen.iter().map(|s| keys(&s.body)).collect();
    assert_eq!(
        sent,
        vec![
            vec!["max_tokens", "temperature"],
            vec!["max_completion_tokens", "temperature"],
            vec!["max_completion_tokens"],
        ]
    );
    complete(&llm).await.expect("second completion");
    let seen = p.seen();
    assert_eq!(seen.len(), 4, "the second call goes straight through");
    assert_eq!(keys(&seen[3].body), vec!["max_completion_tokens"]);
}

#[tokio::test]
async fn vllm_gets_max_tokens_and_a_forced_parameter_it_refuses_is_swapped() {
    let p = provider(Dialect::Vllm).await;
    let c = complete(&llm(&p, "Qwen/Qwen2.5-7B-Instruct", &[]))
        .await
        .expect("completion");
    assert_eq!(
        (c.content.as_str(), c.prompt_tokens, c.completion_tokens),
        (ACTION, 90, 20)
    );
    assert_eq!(keys(&p.seen()[0].body), vec!["max_tokens", "temperature"]);
    assert_eq!(p.seen()[0].body["temperature"], 0.0);

    let forced = llm(
        &p,
        "Qwen/Qwen2.5-7B-Instruct",
        &[("LLM_TOKEN_PARAM", "max_completion_tokens")],
    );
    complete(&forced).await.expect("completion after swapping");
    let seen = p.seen();
    assert_eq!(
        keys(&seen[1].body),
        vec!["max_completion_tokens", "temperature"]
    );
    assert_eq!(keys(&seen[2].body), vec!["max_tokens", "temperature"]);
}

#[tokio::test]
async fn ollama_and_llama_cpp_answers_without_usage_are_read() {
    let p = provider(Dialect::Ollama).await;
    let c = complete(&llm(&p, "llama3.1:8b", &[("LLM_TEMPERATURE", "0.3")]))
        .await
        .expect("completion");
    assert_eq!(
        (c.content.as_str(), c.prompt_tokens, c.completion_tokens),
        (ACTION, 0, 0)
    );
    assert_eq!(
        p.seen()[0].body["temperature"]
            .as_f64()
            .map(|t| (t * 10.0).round()),
        Some(3.0)
    );
}

#[tokio::test]
async fn azure_openai_takes_the_key_in_api_key_and_an_api_version() {
    let p = provider(Dialect::Azure).await;
    let settings = [
        ("LLM_API_KEY_HEADER", "api-key"),
        ("LLM_API_VERSION", "2024-10-21"),
    ];
    let c = complete(&llm(&p, "gpt-4.1-mini", &settings))
        .await
        .expect("completion");
    assert_eq!(c.content, ACTION);
    let seen = &p.seen()[0];
    assert_eq!(
        seen.target,
        "/openai/deployments/agent/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(
        seen.authorization, None,
        "the key is not also sent as a bearer token"
    );
    // Without the settings the same server refuses: the test server checks what it says.
    let plain = complete(&llm(&p, "gpt-4.1-mini", &[])).await;
    assert!(plain.is_err());
}

#[tokio::test]
async fn a_refusal_that_names_nothing_sent_fails_without_a_loop() {
    let p = provider(Dialect::OpenAi).await;
    let wrong_key = llm(&p, "gpt-5-mini", &[("LLM_API_KEY_HEADER", "api-key")]);
    assert!(complete(&wrong_key).await.is_err());
    assert_eq!(p.seen().len(), 1, "a 401 is not adapted to");
}

#[tokio::test]
async fn interact_works_with_a_current_openai_model() {
    let p = provider(Dialect::OpenAi).await;
    let opts = AppOptions::with_llm(&p.base_url)
        .set("LLM_API_KEY", "provider-key")
        .set("LLM_MODEL", "o4-mini")
        .set("LLM_VERIFY_MODEL", "o4-mini")
        .set("LLM_PROMPT_CACHE", "on");
    let app = TestApp::spawn_with(opts).await;
    app.seed_user("acme", "ada@acme.com", "s3cret-password")
        .await;
    let token = app.login("ada@acme.com", "s3cret-password").await;
    let body = json!({ "url": "https://www.example.com/", "query": "Click the button",
        "interactiveTree": [{ "i": "10", "r": "btn", "n": "Press me" }] });
    let r = app
        .client
        .request(Method::POST, app.url("/api/agent/interact"))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let answer: Value = r.json().await.expect("json");
    for s in p.seen() {
        assert!(s.body.get("max_tokens").is_none() && s.body.get("temperature").is_none());
        assert_eq!(s.body["reasoning_effort"], "low");
        // The decision's cache key is its task.
        assert_eq!(s.body["prompt_cache_key"], answer["taskId"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_everything_is_asked_a_bounded_number_of_times() {
    let p = provider(Dialect::Flip).await;
    let one = std::sync::Arc::new(llm(&p, "acme-agent", &[]));
    // Thirty calls at once: each gives up after its adaptations; none is remembered.
    let calls = (0..30).map(|_| {
        let one = one.clone();
        async move { complete(&one).await }
    });
    for r in futures::future::join_all(calls).await {
        assert!(r.is_err());
    }
    assert_eq!(
        p.seen().len(),
        30 * 4,
        "one request and three adaptations each"
    );
    complete(&one).await.expect_err("still refused");
    assert_eq!(
        keys(&p.seen()[120].body),
        vec!["max_tokens", "temperature"],
        "nothing kept"
    );

    let huge = provider(Dialect::Huge).await;
    assert!(complete(&llm(&huge, "acme-agent", &[])).await.is_err());
    assert_eq!(huge.seen().len(), 1, "an unread refusal is not adapted to");
}

#[tokio::test]
async fn thinking_in_content_is_left_out_and_its_draft_action_never_runs() {
    let p = provider(Dialect::Thinking).await;
    let c = complete(&llm(&p, "qwen3-32b", &[]))
        .await
        .expect("completion");
    assert_eq!(c.content.trim(), ACTION);
}

#[tokio::test]
async fn an_answer_cut_at_length_is_asked_again_with_room_to_answer() {
    let p = provider(Dialect::LengthCut).await;
    // A model this project does not know as a reasoning one, with the default cap (800).
    let c = complete(&llm(&p, "gemini-2.5-flash", &[]))
        .await
        .expect("completion");
    assert_eq!(c.content, ACTION);
    let seen = p.seen();
    assert_eq!(seen.len(), 2, "one more request, not a retry loop");
    assert_eq!(seen[0].body["max_tokens"], 800);
    assert_eq!(seen[1].body["max_tokens"], 4000);
    // Both calls' tokens are counted.
    assert_eq!(c.completion_tokens, 800 + 4000);
}

#[tokio::test]
async fn content_as_an_array_of_parts_is_read_and_a_claude_model_behind_a_gateway_gets_its_prefix_marked(
) {
    let p = provider(Dialect::Parts).await;
    let c = complete(&llm(&p, "anthropic/claude-sonnet-4-5", &[]))
        .await
        .expect("completion");
    assert_eq!(c.content, ACTION);
    // The system prompt as a text part with cache_control: the cached prefix.
    let body = &p.seen()[0].body;
    assert_eq!(
        body["messages"][0]["content"][0]["cache_control"]["type"],
        "ephemeral"
    );
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        "You pick actions."
    );
    assert_eq!(body["messages"][1]["content"], "Click the button.");
}

#[tokio::test]
async fn a_task_s_calls_carry_its_cache_key_where_the_provider_takes_one() {
    let soon = || Instant::now() + Duration::from_secs(5);
    // OpenAI's own endpoint takes prompt_cache_key (here turned on for the loopback server).
    let p = provider(Dialect::OpenAi).await;
    llm(&p, "gpt-5-mini", &[("LLM_PROMPT_CACHE", "on")])
        .complete_for(&prompt(), soon(), Call::keyed("task-1"))
        .await
        .expect("completion");
    assert_eq!(p.seen()[0].body["prompt_cache_key"], "task-1");
    // vLLM refuses unknown fields: by default neither hint is sent to it.
    let v = provider(Dialect::Vllm).await;
    llm(&v, "Qwen/Qwen3-32B", &[])
        .complete_for(&prompt(), soon(), Call::keyed("task-1"))
        .await
        .expect("completion");
    let body = &v.seen()[0].body;
    assert!(body.get("prompt_cache_key").is_none(), "{body}");
    assert!(body["messages"][0]["content"].is_string(), "{body}");
    // Turned on, vLLM refuses the key by name and the call goes through without it.
    let v = provider(Dialect::Vllm).await;
    llm(&v, "Qwen/Qwen3-32B", &[("LLM_PROMPT_CACHE", "on")])
        .complete_for(&prompt(), soon(), Call::keyed("task-1"))
        .await
        .expect("completion after adapting");
    let seen = v.seen();
    assert_eq!(seen[0].body["prompt_cache_key"], "task-1");
    assert!(seen
        .last()
        .is_some_and(|s| s.body.get("prompt_cache_key").is_none()));
}

#[tokio::test]
async fn structured_output_is_asked_for_decisions_as_configured_and_dropped_where_refused() {
    let soon = || Instant::now() + Duration::from_secs(5);
    let decision = Call {
        cache_key: None,
        schema: Some(shared::agent::output::answer_schema()),
    };
    let read = |content: &str| {
        let tagged = shared::agent::output::from_json(content).expect("a structured answer");
        shared::agent::output::parse_model_output(&tagged)
            .expect("parsed")
            .action
    };
    // A JSON schema: the answer is the JSON it describes.
    let p = provider(Dialect::Structured).await;
    let c = llm(
        &p,
        "gpt-4.1-mini",
        &[("LLM_STRUCTURED_OUTPUT", "json_schema")],
    )
    .complete_for(&prompt(), soon(), decision)
    .await
    .expect("completion");
    assert_eq!(read(&c.content), "click(10)");
    assert_eq!(
        p.seen()[0].body["response_format"]["json_schema"]["strict"],
        true
    );
    // A forced tool call: the answer is its arguments.
    let p = provider(Dialect::Structured).await;
    let c = llm(&p, "gpt-4.1-mini", &[("LLM_STRUCTURED_OUTPUT", "tool")])
        .complete_for(&prompt(), soon(), decision)
        .await
        .expect("completion");
    assert_eq!(read(&c.content), "click(10)");
    // Calls without a schema (the verifier's) never ask for one.
    let p = provider(Dialect::NoSchema).await;
    let structured = llm(&p, "qwen3", &[("LLM_STRUCTURED_OUTPUT", "json_schema")]);
    structured
        .complete(&prompt(), soon())
        .await
        .expect("completion");
    assert!(p.seen()[0].body.get("response_format").is_none());
    // A server that refuses it by name gets the tagged format instead, and keeps it.
    let c = structured
        .complete_for(&prompt(), soon(), decision)
        .await
        .expect("completion after adapting");
    assert_eq!(c.content, ACTION);
    let seen = p.seen();
    assert!(seen[1].body.get("response_format").is_some());
    assert!(seen[2].body.get("response_format").is_none());
    structured
        .complete_for(&prompt(), soon(), decision)
        .await
        .expect("again");
    assert_eq!(p.seen().len(), 4, "not refused a second time");
}

#[tokio::test]
async fn a_text_only_model_that_refuses_the_screenshot_gets_the_text_from_then_on() {
    let p = provider(Dialect::TextOnly).await;
    let llm = llm(&p, "o3-mini", &[("LLM_VISION", "on")]);
    let mut messages = prompt();
    messages[1].images.push("/9j/4AAQSkZJRgABAQAA".into());
    let soon = || Instant::now() + Duration::from_secs(5);
    let c = llm
        .complete(&messages, soon())
        .await
        .expect("completion after adapting");
    assert_eq!(c.content, ACTION);
    llm.complete(&messages, soon()).await.expect("again");
    let seen = p.seen();
    assert_eq!(
        seen.len(),
        3,
        "refused once, then never sent the image again"
    );
    assert!(seen[1].body["messages"][1]["content"].is_string());
    assert!(seen[2].body["messages"][1]["content"].is_string());
}
