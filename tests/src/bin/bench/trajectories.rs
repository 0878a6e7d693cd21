//! The competent trajectories of the browser suite (the lab's widgets, the shop's checkouts,
//! the corpus pages) in headless Chromium with the scripted model: per task, interact
//! requests, model calls per request, prompt tokens per model call (o200k) and the share of
//! each prompt that repeats the previous one of the task as a prefix (what a provider's prompt
//! cache can reuse). Needs Chromium (`CHROMIUM` or `chromium` on the PATH).

use api_tests::browser::model::BrowserModel;
use api_tests::browser::rig::Rig;
use api_tests::browser::run::Options;
use api_tests::browser::scenario::{
    checkout_in_own_words, lab_scenarios, one_answer_checkout, shop_scenarios,
};
use api_tests::AppOptions;

use super::reasoning::common_prefix;

pub async fn local_suite() {
    let model = BrowserModel::start().await;
    let rig = match Rig::start(AppOptions::with_llm(&model.base_url)).await {
        Ok(r) => r,
        Err(e) => {
            println!("trajectories: skipped ({e})");
            return;
        }
    };
    let Ok(bpe) = tiktoken_rs::o200k_base() else {
        println!("trajectories: tokenizer unavailable");
        return;
    };
    let tokens = |s: &str| bpe.encode_with_special_tokens(s).len();
    let mut all = lab_scenarios();
    all.push(checkout_in_own_words());
    all.push(one_answer_checkout());
    all.extend(shop_scenarios());
    all.extend(api_tests::browser::corpus::corpus_scenarios());
    println!("competent trajectories (scripted model, extension-like client):");
    println!(
        "  {:32} {:>5} {:>6} {:>11} {:>13} {:>14}",
        "task", "steps", "calls", "calls/step", "tokens/call", "prefix repeat"
    );
    let (mut steps, mut calls, mut all_tokens, mut shares) = (0, 0, Vec::new(), Vec::new());
    for scenario in &all {
        let Ok((out, failed)) = rig.attempt(scenario, Some(&model), Options::new(15)).await else {
            println!("  {:32} (no tab)", scenario.name);
            continue;
        };
        let prompts = model.prompts();
        let sizes: Vec<usize> = prompts.iter().map(|p| tokens(p)).collect();
        let repeat: Vec<f64> = prompts
            .windows(2)
            .map(|pair| {
                let prefix: String = pair[1]
                    .chars()
                    .take(common_prefix(&pair[0], &pair[1]))
                    .collect();
                tokens(&prefix) as f64 / tokens(&pair[1]).max(1) as f64
            })
            .collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let reuse = if repeat.is_empty() {
            "—".to_owned()
        } else {
            format!("{:.0}%", 100.0 * mean(&repeat))
        };
        println!(
            "  {:32} {:>5} {:>6} {:>11.2} {:>13.0} {:>14}{}",
            scenario.name,
            out.steps,
            prompts.len(),
            prompts.len() as f64 / out.steps.max(1) as f64,
            mean(&sizes.iter().map(|&t| t as f64).collect::<Vec<_>>()),
            reuse,
            if failed.is_empty() {
                String::new()
            } else {
                format!("  FAILED {failed:?}")
            }
        );
        steps += out.steps;
        calls += prompts.len();
        all_tokens.extend(sizes);
        shares.extend(repeat);
    }
    let mean_tokens = all_tokens.iter().sum::<usize>() as f64 / all_tokens.len().max(1) as f64;
    println!(
        "  all {} tasks: {steps} steps, {calls} main-model calls ({:.2} per step), {mean_tokens:.0} prompt tokens per call, {:.0}% of each prompt repeats the previous one as a prefix",
        all.len(),
        calls as f64 / steps.max(1) as f64,
        100.0 * shares.iter().sum::<f64>() / shares.len().max(1) as f64,
    );
}
