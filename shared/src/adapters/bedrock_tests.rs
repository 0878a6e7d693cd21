//! The Converse adapter against a scripted Converse server on loopback (the SDK with an
//! endpoint override and static test credentials): the request it sends, how it reads the
//! answer and its usage, and what each error class becomes.

use std::time::{Duration, Instant};

use aws_credential_types::Credentials;
use serde_json::{json, Value};

use super::*;
use crate::adapters::loopback::answer_each;

const MODEL: &str = "us.anthropic.claude-haiku-4-5-20251001-v1:0";

fn config(model: &str, retries: &str, extra: &[(&str, &str)]) -> LlmConfig {
    let env = |k: &str| match k {
        "LLM_PROVIDER" => Some("bedrock".to_owned()),
        "BEDROCK_MODEL_ID" => Some(model.to_owned()),
        "LLM_MAX_RETRIES" => Some(retries.to_owned()),
        _ => extra
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| (*v).to_owned()),
    };
    crate::config::AgentConfig::from_lookup(env)
        .expect("config")
        .llm
        .expect("a model")
}

fn model_at(url: &str, model: &str, retries: &str) -> BedrockLlm {
    model_with(url, model, retries, &[])
}

fn model_with(url: &str, model: &str, retries: &str, extra: &[(&str, &str)]) -> BedrockLlm {
    let conf = aws_sdk_bedrockruntime::Config::builder()
        .behavior_version(aws_sdk_bedrockruntime::config::BehaviorVersion::latest())
        .region(aws_sdk_bedrockruntime::config::Region::new("us-east-1"))
        .credentials_provider(Credentials::new("AKIDTEST", "secret", None, None, "test"))
        .http_client(super::super::aws::https_client())
        .retry_config(aws_sdk_bedrockruntime::config::retry::RetryConfig::disabled())
        .endpoint_url(url)
        .build();
    BedrockLlm::with_client(
        config(model, retries, extra),
        aws_sdk_bedrockruntime::Client::from_conf(conf),
    )
}

/// A Converse answer with `text`, its stop reason and usage.
fn answer(text: &str, stop: &str, usage: Value) -> &'static str {
    let body = json!({
        "output": { "message": { "role": "assistant", "content": [
            { "reasoningContent": { "reasoningText": { "text": "drafts" } } },
            { "text": text }
        ] } },
        "stopReason": stop,
        "usage": usage,
        "metrics": { "latencyMs": 120 }
    })
    .to_string();
    let text = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    Box::leak(text.into_boxed_str())
}

/// A Converse error of `kind` with AWS's own `message` (never to be shown).
fn error(status: &str, kind: &str, message: &str) -> &'static str {
    let body = json!({ "message": message }).to_string();
    let text = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\nx-amzn-errortype: {kind}:http://internal.amazon.com/coral/com.amazon.bedrock/\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    Box::leak(text.into_boxed_str())
}

fn usage(input: u64, output: u64, read: u64, write: u64) -> Value {
    json!({ "inputTokens": input, "outputTokens": output, "totalTokens": input + output + read + write,
            "cacheReadInputTokens": read, "cacheWriteInputTokens": write })
}

/// The JSON bodies of the requests a server read.
async fn bodies(served: tokio::task::JoinHandle<Vec<String>>) -> Vec<Value> {
    let requests = served.await.expect("served");
    requests.iter().map(|r| parse(r).1).collect()
}

/// A request's path and JSON body.
fn parse(request: &str) -> (String, Value) {
    let path = request.split_whitespace().nth(1).unwrap_or("").to_owned();
    let body = request.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (path, serde_json::from_str(body).unwrap_or(Value::Null))
}

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn conversation() -> Vec<ChatMessage> {
    let mut page = ChatMessage::user("the page");
    page.images.push(PNG.to_owned());
    vec![
        ChatMessage::system("You are a browser agent."),
        ChatMessage::user("the task"),
        page,
    ]
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(20)
}

/// One call of `model` (with `retries`) on `messages` to a server answering `answers`: its
/// result and the requests the server read.
async fn call(
    answers: Vec<&'static str>,
    model: &str,
    retries: &str,
    messages: &[ChatMessage],
) -> (Result<Completion, LlmError>, Vec<String>) {
    let (url, served) = answer_each(answers, false).await;
    let result = model_at(&url, model, retries)
        .complete(messages, deadline())
        .await;
    // A server that got fewer requests than it has answers is stopped here.
    let requests = tokio::time::timeout(Duration::from_millis(200), served)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    (result, requests)
}

#[tokio::test]
async fn the_request_has_the_system_prompt_a_cache_point_the_turns_an_image_and_the_cap() {
    let done = answer(
        "<Thought>t</Thought><Action>click(3)</Action>",
        "end_turn",
        usage(40, 12, 1_500, 0),
    );
    let (url, served) = answer_each(vec![done], false).await;
    let llm = model_at(&url, MODEL, "0");
    let c = llm
        .complete(&conversation(), deadline())
        .await
        .expect("answered");
    assert_eq!(c.content, "<Thought>t</Thought><Action>click(3)</Action>");
    assert_eq!(
        (
            c.prompt_tokens,
            c.completion_tokens,
            c.cached_tokens,
            c.cache_write_tokens
        ),
        (1_540, 12, 1_500, 0)
    );
    let requests = served.await.expect("served");
    let (path, body) = parse(&requests[0]);
    assert_eq!(
        path,
        format!("/model/{}/converse", MODEL.replace(':', "%3A"))
    );
    assert!(requests[0]
        .to_ascii_lowercase()
        .contains("authorization: aws4-hmac-sha256"));
    assert_eq!(
        body["system"],
        json!([{ "text": "You are a browser agent." }, { "cachePoint": { "type": "default" } }])
    );
    let turns = body["messages"].as_array().expect("messages");
    assert_eq!(turns.len(), 1, "the two user messages are one turn: {body}");
    assert_eq!(turns[0]["role"], "user");
    let content = turns[0]["content"].as_array().expect("content");
    assert_eq!(content[0], json!({ "text": "the task" }));
    assert_eq!(content[1], json!({ "text": "the page" }));
    assert_eq!(content[2]["image"]["format"], "png");
    assert_eq!(content[2]["image"]["source"]["bytes"], PNG);
    assert_eq!(body["inferenceConfig"]["maxTokens"], 800);
}

#[tokio::test]
async fn a_model_that_refuses_the_cache_point_or_the_image_gets_neither_from_then_on() {
    let (url, served) = answer_each(
        vec![
            error(
                "400 Bad Request",
                "ValidationException",
                "This model doesn't support prompt caching.",
            ),
            error(
                "400 Bad Request",
                "ValidationException",
                "This model doesn't support image input.",
            ),
            answer("<Action>finish()</Action>", "end_turn", usage(30, 5, 0, 0)),
            answer("<Action>finish()</Action>", "end_turn", usage(30, 5, 0, 0)),
        ],
        false,
    )
    .await;
    let llm = model_at(&url, "us.amazon.nova-lite-v1:0", "0");
    llm.complete(&conversation(), deadline())
        .await
        .expect("answered");
    llm.complete(&conversation(), deadline())
        .await
        .expect("again");
    let bodies = bodies(served).await;
    assert!(bodies[0]["system"].to_string().contains("cachePoint"));
    assert!(!bodies[1]["system"].to_string().contains("cachePoint"));
    assert!(bodies[1].to_string().contains("\"image\""));
    for later in &bodies[2..] {
        assert!(
            !later.to_string().contains("cachePoint") && !later.to_string().contains("\"image\"")
        );
    }
}

#[tokio::test]
async fn throttling_is_retried_inside_the_deadline_and_a_slow_model_is_a_timeout() {
    let (result, requests) = call(
        vec![
            error(
                "429 Too Many Requests",
                "ThrottlingException",
                "Too many requests",
            ),
            error(
                "503 Service Unavailable",
                "ModelNotReadyException",
                "warming",
            ),
            answer("<Action>finish()</Action>", "end_turn", usage(10, 2, 0, 0)),
        ],
        MODEL,
        "2",
        &conversation(),
    )
    .await;
    let c = result.expect("after retries");
    assert_eq!(c.content, "<Action>finish()</Action>");
    assert_eq!(requests.len(), 3);

    let timeout = error(
        "408 Request Timeout",
        "ModelTimeoutException",
        "took too long",
    );
    let (result, _) = call(vec![timeout], MODEL, "0", &conversation()).await;
    assert_eq!(result.expect_err("timed out"), LlmError::Timeout);
}

#[tokio::test]
async fn refusals_tell_the_operator_what_to_enable_never_aws_text() {
    let detail = "arn:aws:iam::123456789012:role/internal-detail";
    let on_demand = "Invocation of model ID x with on-demand throughput isn't supported. Retry \
                     your request with the ID or ARN of an inference profile (123456789012).";
    for (status, kind, aws, says) in [
        (
            "403 Forbidden",
            "AccessDeniedException",
            detail,
            "enable the model",
        ),
        (
            "404 Not Found",
            "ResourceNotFoundException",
            detail,
            "check BEDROCK_MODEL_ID",
        ),
        (
            "400 Bad Request",
            "ValidationException",
            detail,
            "supports the Converse API",
        ),
        (
            "400 Bad Request",
            "ValidationException",
            on_demand,
            "only through an inference profile",
        ),
    ] {
        let llama = "meta.llama3-70b-instruct-v1:0";
        let answers = vec![error(status, kind, aws)];
        let (result, requests) = call(answers, llama, "2", &[ChatMessage::user("hi")]).await;
        let text = result.expect_err("refused").to_string();
        assert!(text.contains(says), "{kind}: {text}");
        assert!(!text.contains("123456789012"), "{text}");
        assert_eq!(requests.len(), 1, "{kind} is not retried");
    }
}

#[tokio::test]
async fn sampling_caching_and_blank_turns_follow_the_settings() {
    let ok = || answer("<Action>finish()</Action>", "end_turn", usage(10, 2, 0, 0));
    let (url, served) = answer_each(vec![ok(), ok()], false).await;
    let off = model_with(&url, MODEL, "0", &[("LLM_PROMPT_CACHE", "off")]);
    let with_blank = [
        ChatMessage::system("rules"),
        ChatMessage::user("task"),
        ChatMessage::assistant("  "),
        ChatMessage::user("the element is not on the page"),
    ];
    off.complete(&with_blank, deadline())
        .await
        .expect("answered");
    let llama = model_with(
        &url,
        "meta.llama3-70b-instruct-v1:0",
        "0",
        &[("LLM_PROMPT_CACHE", "on")],
    );
    llama
        .complete(&with_blank, deadline())
        .await
        .expect("answered");
    let bodies = bodies(served).await;
    assert_eq!(
        bodies[0]["system"],
        json!([{ "text": "rules" }]),
        "LLM_PROMPT_CACHE=off"
    );
    assert_eq!(
        bodies[1]["system"][1],
        json!({ "cachePoint": { "type": "default" } }),
        "on"
    );
    assert_eq!(bodies[0]["inferenceConfig"]["temperature"], 0.0);
    assert_eq!(
        bodies[0]["messages"][1]["content"][0]["text"],
        "(no answer)"
    );
}

#[tokio::test]
async fn an_answer_cut_at_the_cap_is_asked_again_once_with_more_room() {
    let cut = answer("", "max_tokens", usage(100, 800, 0, 0));
    let done = answer(
        "<Action>click(1)</Action>",
        "end_turn",
        usage(100, 900, 0, 0),
    );
    let (result, requests) = call(vec![cut, done], MODEL, "0", &conversation()).await;
    let c = result.expect("answered");
    assert_eq!(c.content, "<Action>click(1)</Action>");
    assert_eq!((c.prompt_tokens, c.completion_tokens), (200, 1_700));
    let bodies: Vec<Value> = requests.iter().map(|r| parse(r).1).collect();
    assert_eq!(bodies[1]["inferenceConfig"]["maxTokens"], 4_000);
}

#[test]
fn turns_alternate_begin_with_the_user_and_only_claude_and_nova_cache() {
    let sent = Sent {
        cache_points: false,
        images: false,
    };
    let (system, turns) = converse_parts(
        &[
            ChatMessage::user("a"),
            ChatMessage::assistant("b"),
            ChatMessage::user("c"),
            ChatMessage::user("d"),
        ],
        sent,
    )
    .expect("parts");
    assert!(system.is_empty());
    assert_eq!(turns.len(), 3);
    assert_eq!(turns[2].content().len(), 2);
    assert!(converse_parts(&[ChatMessage::assistant("x")], sent).is_err());
    assert!(converse_parts(&[ChatMessage::system("only")], sent).is_err());
    assert!(caches_prompts(MODEL));
    assert!(caches_prompts(
        "arn:aws:bedrock:eu-west-1:1:inference-profile/eu.amazon.nova-pro-v1:0"
    ));
    assert!(!caches_prompts("meta.llama3-70b-instruct-v1:0"));
    assert!(!caches_prompts("mistral.mistral-large-2407-v1:0"));
}

#[test]
fn the_longest_and_most_repeated_conversations_are_turned_into_turns_in_one_pass() {
    let sent = Sent {
        cache_points: true,
        images: true,
    };
    // 20 000 messages, runs of the same role merged: 10 000 alternating pairs.
    let many: Vec<ChatMessage> = (0..20_000)
        .map(|k| match k % 4 {
            0 | 1 => ChatMessage::user(format!("u{k}")),
            _ => ChatMessage::assistant(format!("a{k}")),
        })
        .collect();
    let (_, turns) = converse_parts(&many, sent).expect("parts");
    assert_eq!(turns.len(), 10_000);
    assert!(turns.iter().all(|t| t.content().len() == 2));
    // Two megabytes of text and a screenshot that is not base64.
    let mut big = ChatMessage::user("x".repeat(2 << 20));
    big.images.push("not base64 at all %%%".to_owned());
    let (system, turns) = converse_parts(&[ChatMessage::system("s"), big], sent).expect("parts");
    assert_eq!(system.len(), 2, "text and its cache point");
    assert_eq!(turns[0].content().len(), 1, "the broken image is left out");
}
