//! agent-eval: the browser scenarios as a benchmark for real models. Starts local-api (in
//! memory) with the model `LLM_*` points at, headless Chromium and the loopback web, runs
//! each scenario as the extension would, and prints per scenario and in total: success,
//! interact steps, model calls, prompt/completion tokens and the estimated cost.
//!
//! ```text
//! agent-eval [--scripted] [--only <name,...>] [--max-steps <n>]
//! agent-eval --list
//! agent-eval --tree <url | corpus file>     the interactiveTree the client would send
//! ```
//! Prices: `EVAL_PRICE_IN` / `EVAL_PRICE_OUT` in USD per million tokens (list prices of the
//! default model `gpt-5-mini` when unset and that model is used). `--scripted` runs the
//! scripted model (checks the scenarios themselves; no key needed).

use std::process::ExitCode;
use std::time::Instant;

use api_tests::browser::cdp::Browser;
use api_tests::browser::model::BrowserModel;
use api_tests::browser::page::snapshot;
use api_tests::browser::rig::Rig;
use api_tests::browser::run::open;
use api_tests::browser::scenario::{all_scenarios, Scenario};
use api_tests::browser::site::{corpus_urls, Site};
use api_tests::AppOptions;

/// The model variables passed through to the server.
const LLM_VARS: &[&str] = &[
    "LLM_API_KEY",
    "OPENAI_API_KEY",
    "LLM_BASE_URL",
    "LLM_MODEL",
    "LLM_VERIFY_MODEL",
    "LLM_MAX_TOKENS",
    "LLM_TOKEN_PARAM",
    "LLM_TEMPERATURE",
    "LLM_REASONING_EFFORT",
    "LLM_API_KEY_HEADER",
    "LLM_API_VERSION",
    "LLM_MAX_RETRIES",
];

/// USD per million prompt and completion tokens.
fn prices() -> Option<(f64, f64)> {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<f64>().ok());
    match (env("EVAL_PRICE_IN"), env("EVAL_PRICE_OUT")) {
        (Some(i), Some(o)) => Some((i, o)),
        _ => {
            let model = std::env::var("LLM_MODEL").unwrap_or_else(|_| "gpt-5-mini".into());
            (model == "gpt-5-mini").then_some((0.25, 2.0))
        }
    }
}

fn arg_after(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|k| args.get(k + 1).cloned())
}

/// Prints the tree the client would send for a URL or a corpus page.
async fn tree(target: &str) -> Result<(), String> {
    let site = Site::start().await;
    let url = corpus_urls()
        .get(target)
        .cloned()
        .unwrap_or_else(|| target.to_owned());
    let browser = Browser::launch(&site.proxy()).await?;
    let tab = browser.new_page().await?;
    open(&tab, &url, url.starts_with("http://shop.test")).await?;
    let page = snapshot(&tab).await?;
    println!("{} — {} ({} nodes)", page.url, page.title, page.nodes.len());
    for n in &page.nodes {
        println!("{n}");
    }
    Ok(())
}

async fn eval(args: &[String]) -> Result<bool, String> {
    let scripted = args.iter().any(|a| a == "--scripted");
    let only: Option<Vec<String>> =
        arg_after(args, "--only").map(|o| o.split(',').map(str::to_owned).collect());
    let max_steps: usize = arg_after(args, "--max-steps")
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let scenarios: Vec<Scenario> = all_scenarios()
        .into_iter()
        .filter(|s| only.as_ref().is_none_or(|o| o.iter().any(|n| n == s.name)))
        .collect();
    if scenarios.is_empty() {
        return Err("no scenario matches --only".into());
    }
    let model = if scripted {
        Some(BrowserModel::start().await)
    } else {
        None
    };
    let opts = match &model {
        Some(m) => AppOptions::with_llm(&m.base_url),
        None => {
            if std::env::var("LLM_API_KEY").is_err() && std::env::var("OPENAI_API_KEY").is_err() {
                return Err(
                    "set LLM_API_KEY (and LLM_BASE_URL / LLM_MODEL) or pass --scripted".into(),
                );
            }
            let mut o = AppOptions::default();
            for k in LLM_VARS {
                if let Ok(v) = std::env::var(k) {
                    o = o.set(k, v);
                }
            }
            o.set(
                "LLM_TIMEOUT_MS",
                std::env::var("LLM_TIMEOUT_MS").unwrap_or_else(|_| "60000".into()),
            )
        }
    };
    let rig = Rig::start(opts).await?;
    let price = prices();
    println!(
        "model: {}\n{:<26} {:>7} {:>5} {:>5} {:>8} {:>7} {:>9} {:>6}  note",
        if scripted {
            "scripted".to_owned()
        } else {
            std::env::var("LLM_MODEL").unwrap_or_else(|_| "gpt-5-mini".into())
        },
        "scenario",
        "result",
        "steps",
        "calls",
        "prompt",
        "compl",
        "cost $",
        "s"
    );
    let (mut passed, mut steps, mut calls, mut prompt, mut completion) = (0, 0, 0, 0, 0);
    for s in &scenarios {
        let started = Instant::now();
        let (out, failed) = rig.attempt(s, model.as_ref(), max_steps).await?;
        let ok = failed.is_empty();
        passed += usize::from(ok);
        steps += out.steps;
        calls += out.llm_calls;
        prompt += out.prompt_tokens;
        completion += out.completion_tokens;
        let cost = price.map_or("n/a".to_owned(), |(i, o)| {
            format!(
                "{:.4}",
                (out.prompt_tokens as f64 * i + out.completion_tokens as f64 * o) / 1e6
            )
        });
        let note = out.error.clone().unwrap_or_else(|| failed.join("; "));
        println!(
            "{:<26} {:>7} {:>5} {:>5} {:>8} {:>7} {:>9} {:>6.1}  {}",
            s.name,
            if ok { "pass" } else { "FAIL" },
            out.steps,
            out.llm_calls,
            out.prompt_tokens,
            out.completion_tokens,
            cost,
            started.elapsed().as_secs_f64(),
            note.chars().take(160).collect::<String>()
        );
    }
    let cost = price.map_or(
        "n/a (set EVAL_PRICE_IN / EVAL_PRICE_OUT)".to_owned(),
        |(i, o)| format!("{:.4}", (prompt as f64 * i + completion as f64 * o) / 1e6),
    );
    println!(
        "total: {passed}/{} passed, {steps} steps, {calls} model calls, {prompt} prompt + {completion} completion tokens, cost ${cost}",
        scenarios.len()
    );
    Ok(passed == scenarios.len())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("--list") => {
            for s in all_scenarios() {
                println!("{:<26} {}  — {}", s.name, s.start, s.task);
            }
            Ok(true)
        }
        Some("--tree") => match args.get(1) {
            Some(t) => tree(t).await.map(|_| true),
            None => Err("--tree needs a URL or a corpus file name".into()),
        },
        _ => eval(&args).await,
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("agent-eval: {e}");
            ExitCode::from(2)
        }
    }
}
