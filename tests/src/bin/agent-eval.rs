//! agent-eval: the browser scenarios and MiniWoB++ as a benchmark for real models. Starts
//! local-api (in memory) with the model `LLM_*` points at, headless Chromium and the loopback
//! web, runs each scenario or episode as the extension would, and prints per scenario (or
//! task) and in total: success, interact steps, model calls, prompt/completion/cached tokens,
//! the server's cost estimate and its interventions by kind.
//!
//! ```text
//! agent-eval [--suite local|miniwob] [--scripted] [--json] [--max-steps <n>]
//!            [--only|--tasks <name,...>] [--seeds <n>] [--parallel <n>]
//!            [--errors <kind:rate,...[;...]>] [--each]
//! agent-eval --list
//! agent-eval --tree <url | corpus file>     the interactiveTree the client would send
//! ```
//! `--suite local` (default) runs the shop and corpus scenarios; `--suite miniwob` the
//! supported MiniWoB task types (or `--tasks`, any of the package's 125), `--seeds` seeds each
//! (5). `--scripted` answers with the scripted model (local) or the prompt-only policy
//! (miniwob), exactly as the tests do. `CLIENT=ideal` runs the idealised client instead of
//! the shipping extension's measured behaviour.
//! `--errors kind:rate,…` (or `POLICY_ERRORS`; `POLICY_SEED` seeds the draws) makes the
//! prompt-only policy (`--suite miniwob --scripted`) inject the mistakes real models make
//! (`browser::mistakes`: fence, bad_id, scroll, verifier_no, spelling, other_click, finish;
//! `all:rate`): the same episodes run first without mistakes (the baseline), then with them,
//! each run in a fresh server, and a table says per run the mistakes injected, episodes
//! solved, model calls and the extra ones against the baseline, how the episodes ended and
//! what the server did. `;` separates modes run one after the other
//! (`--errors 'fence:0.3;finish:0.3;all:0.2'`); `--each` runs a mode of several kinds as each
//! kind alone first. The per-task table above it is the last run's.
//! Cost: the server's estimate under its price table (the built-in list prices, or
//! `LLM_PRICES`, passed through); `n/a` for a model the table does not know. `--scripted` runs
//! the scripted model (checks the scenarios themselves; no key needed).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use serde::Serialize;

use api_tests::browser::actions::Client;
use api_tests::browser::cdp::Browser;
use api_tests::browser::miniwob::{
    all_tasks, error_table, miniwob_dir, run_all, serve, unsolved_list, Episode, ErrorRun, TASKS,
};
use api_tests::browser::mistakes::Errors;
use api_tests::browser::model::BrowserModel;
use api_tests::browser::page::snapshot;
use api_tests::browser::policy::Policy;
use api_tests::browser::rig::Rig;
use api_tests::browser::run::{open, Options};
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
    "LLM_PROVIDER",
    "BEDROCK_MODEL_ID",
    "BEDROCK_VERIFY_MODEL_ID",
    "BEDROCK_ENDPOINT_URL",
    "AWS_REGION",
    "LLM_PRICES",
];

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

/// One run of the table: a scenario or a MiniWoB task's episodes.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    name: String,
    runs: usize,
    solved: usize,
    steps: usize,
    llm_calls: u64,
    usage: shared::domain::TokenUsage,
    cost_usd: Option<f64>,
    interventions: BTreeMap<String, u64>,
    seconds: f64,
    note: String,
    /// MiniWoB: each episode (seed, solved, steps, calls, interventions, actions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    episodes: Vec<Episode>,
}

impl Row {
    fn add(
        &mut self,
        solved: bool,
        steps: usize,
        calls: u64,
        usage: shared::domain::TokenUsage,
        kinds: &BTreeMap<String, u64>,
    ) {
        self.runs += 1;
        self.solved += usize::from(solved);
        self.steps += steps;
        self.llm_calls += calls;
        self.usage.add(usage);
        self.cost_usd = self.usage.cost_usd();
        for (k, n) in kinds {
            *self.interventions.entry(k.clone()).or_default() += n;
        }
    }

    /// Adds another row's counts (for the total).
    fn absorb(&mut self, r: &Row) {
        self.runs += r.runs;
        self.solved += r.solved;
        self.steps += r.steps;
        self.llm_calls += r.llm_calls;
        self.usage.add(r.usage);
        self.cost_usd = self.usage.cost_usd();
        self.seconds += r.seconds;
        for (k, n) in &r.interventions {
            *self.interventions.entry(k.clone()).or_default() += n;
        }
    }

    fn print(&self) {
        let kinds: Vec<String> = self
            .interventions
            .iter()
            .map(|(k, n)| format!("{k}:{n}"))
            .collect();
        println!(
            "{:<28} {:>5}/{:<3} {:>5} {:>5} {:>8} {:>8} {:>7} {:>9} {:>6.1}  {} {}",
            self.name,
            self.solved,
            self.runs,
            self.steps,
            self.llm_calls,
            self.usage.prompt_tokens,
            self.usage.cached_tokens,
            self.usage.completion_tokens,
            self.cost_usd
                .map_or("n/a".to_owned(), |c| format!("{c:.4}")),
            self.seconds,
            kinds.join(" "),
            self.note.chars().take(160).collect::<String>()
        );
    }
}

/// The app's model settings: the scripted model's address, or what `LLM_*` points at.
fn app_options(scripted: Option<&str>) -> Result<AppOptions, String> {
    if let Some(base) = scripted {
        return Ok(AppOptions::with_llm(base));
    }
    let bedrock = std::env::var("LLM_PROVIDER").is_ok_and(|p| p == "bedrock");
    if bedrock && std::env::var("BEDROCK_MODEL_ID").is_err() {
        return Err("LLM_PROVIDER=bedrock needs BEDROCK_MODEL_ID (and AWS credentials)".into());
    }
    if !bedrock && std::env::var("LLM_API_KEY").is_err() && std::env::var("OPENAI_API_KEY").is_err()
    {
        return Err(
            "set LLM_API_KEY (and LLM_BASE_URL / LLM_MODEL), or LLM_PROVIDER=bedrock and \
             BEDROCK_MODEL_ID, or pass --scripted"
                .into(),
        );
    }
    let mut o = AppOptions::default();
    for k in LLM_VARS {
        if let Ok(v) = std::env::var(k) {
            o = o.set(k, v);
        }
    }
    Ok(o.set(
        "LLM_TIMEOUT_MS",
        std::env::var("LLM_TIMEOUT_MS").unwrap_or_else(|_| "60000".into()),
    ))
}

/// The browser scenarios (`--suite local`).
async fn local_rows(args: &[String], scripted: bool, max_steps: usize) -> Result<Vec<Row>, String> {
    let only: Option<Vec<String>> = arg_after(args, "--only")
        .or_else(|| arg_after(args, "--tasks"))
        .map(|o| o.split(',').map(str::to_owned).collect());
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
    let rig = Rig::start(app_options(model.as_ref().map(|m| m.base_url.as_str()))?).await?;
    let mut rows = Vec::new();
    for s in &scenarios {
        let started = Instant::now();
        let (out, failed) = rig
            .attempt(s, model.as_ref(), Options::new(max_steps))
            .await?;
        let mut row = Row {
            name: s.name.to_owned(),
            note: out.error.clone().unwrap_or_else(|| failed.join("; ")),
            ..Row::default()
        };
        row.add(
            failed.is_empty(),
            out.steps,
            out.llm_calls,
            out.usage,
            &out.interventions,
        );
        row.seconds = started.elapsed().as_secs_f64();
        rows.push(row);
    }
    Ok(rows)
}

/// The error modes of the prompt-only policy, one run each: `--errors` (modes separated by
/// `;`), else `POLICY_ERRORS` (one mode); seeded by `POLICY_SEED` either way. With `--each`,
/// a mode of several kinds runs as each kind alone first.
fn error_modes(args: &[String]) -> Result<Vec<Errors>, String> {
    let env = Errors::from_env()?;
    let given: Vec<Errors> = match arg_after(args, "--errors") {
        Some(spec) => spec
            .split(';')
            .filter(|m| !m.trim().is_empty())
            .map(|m| {
                Errors::parse(m)
                    .map(|e| e.with_seed(env.seed))
                    .map_err(|e| format!("--errors: {e}"))
            })
            .collect::<Result<_, _>>()?,
        None => vec![env],
    };
    let each = args.iter().any(|a| a == "--each");
    let mut modes = Vec::new();
    for mode in given.into_iter().filter(|m| !m.is_empty()) {
        if each && mode.rates.len() > 1 {
            modes.extend(mode.rates.keys().map(|k| mode.only(*k)));
        }
        modes.push(mode);
    }
    Ok(modes)
}

/// One run's results per task, in the order run.
fn rows_of(results: Vec<Episode>) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    for e in results {
        if rows.last().is_none_or(|r| r.name != e.task) {
            rows.push(Row {
                name: e.task.clone(),
                ..Row::default()
            });
        }
        let Some(row) = rows.last_mut() else { continue };
        row.add(e.solved, e.steps, e.llm_calls, e.usage, &e.interventions);
        row.seconds += e.seconds;
        if !e.solved && row.note.is_empty() {
            row.note = format!(
                "seed {}: {}{}",
                e.seed,
                e.status,
                e.error
                    .as_deref()
                    .map(|x| format!(" ({x})"))
                    .unwrap_or_default()
            );
        }
        row.episodes.push(e);
    }
    rows
}

/// An error run's summary for `--json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorSummary {
    label: String,
    injected: BTreeMap<String, u64>,
    episodes: usize,
    solved: usize,
    llm_calls: u64,
    extra_llm_calls: i64,
    endings: BTreeMap<String, u64>,
    interventions: BTreeMap<String, u64>,
}

impl ErrorSummary {
    fn of(run: &ErrorRun, baseline: &[Episode]) -> Self {
        let mut endings = BTreeMap::new();
        let mut interventions = BTreeMap::new();
        for e in &run.episodes {
            *endings.entry(e.status.clone()).or_default() += 1;
            for (k, n) in &e.interventions {
                *interventions.entry(k.clone()).or_default() += n;
            }
        }
        let calls: u64 = run.episodes.iter().map(|e| e.llm_calls).sum();
        let base: u64 = run
            .episodes
            .iter()
            .filter_map(|e| {
                baseline
                    .iter()
                    .find(|b| b.task == e.task && b.seed == e.seed)
            })
            .map(|b| b.llm_calls)
            .sum();
        Self {
            label: run.label.clone(),
            injected: run
                .tally
                .by_kind
                .iter()
                .map(|(k, n)| (k.name().to_owned(), *n))
                .collect(),
            episodes: run.episodes.len(),
            solved: run.episodes.iter().filter(|e| e.solved).count(),
            llm_calls: calls,
            extra_llm_calls: calls as i64 - base as i64,
            endings,
            interventions,
        }
    }
}

/// What a MiniWoB run with mistakes adds to the output: the comparison table and its data.
struct ErrorReport {
    mode: Errors,
    table: String,
    baseline_solved: bool,
    runs: Vec<ErrorSummary>,
}

/// MiniWoB++ episodes (`--suite miniwob`): the supported task types (or `--tasks`, any of
/// the package's), `--seeds` seeds each; with an error mode, the baseline and the runs with
/// mistakes (the rows are the last run's).
async fn miniwob_rows(
    args: &[String],
    scripted: bool,
    max_steps: usize,
) -> Result<(Vec<Row>, Option<ErrorReport>), String> {
    let dir = miniwob_dir().ok_or(
        "the miniwob package is missing (scripts/agent-eval installs it; or set MINIWOB_DIR)",
    )?;
    let available = all_tasks(&dir);
    let tasks: Vec<String> = match arg_after(args, "--tasks") {
        Some(t) => t.split(',').map(str::to_owned).collect(),
        None => TASKS.iter().map(|(t, _)| (*t).to_owned()).collect(),
    };
    if let Some(bad) = tasks.iter().find(|t| !available.contains(t)) {
        return Err(format!(
            "no MiniWoB task {bad:?} (see {})",
            dir.join("miniwob").display()
        ));
    }
    let seeds: u64 = arg_after(args, "--seeds")
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let json = args.iter().any(|a| a == "--json");
    let parallel: usize = arg_after(args, "--parallel")
        .and_then(|n| n.parse().ok())
        .unwrap_or(if scripted { 4 } else { 2 });
    let modes = if scripted {
        error_modes(args)?
    } else if args.iter().any(|a| a == "--errors") {
        return Err("--errors is for the prompt-only policy: add --scripted".into());
    } else {
        Vec::new()
    };
    let base = serve(dir).await?;
    let episodes: Vec<(String, u64)> = tasks
        .iter()
        .flat_map(|t| (0..seeds).map(move |s| (t.clone(), s)))
        .collect();
    // One run in a fresh server (recipes and memory start empty), the policy making `errors`.
    let run = |errors: Errors| {
        let episodes = &episodes;
        async move {
            let policy = if scripted {
                Some(Policy::start_with(errors).await)
            } else {
                None
            };
            let rig =
                Rig::start(app_options(policy.as_ref().map(|p| p.base_url.as_str()))?).await?;
            let results = run_all(
                &rig.agent,
                &rig.browser,
                base,
                episodes,
                parallel,
                max_steps,
            )
            .await;
            let tally = policy.map(|p| p.tally()).unwrap_or_default();
            Ok::<_, String>((results, tally))
        }
    };
    let Some(last_mode) = modes.last().cloned() else {
        return Ok((rows_of(run(Errors::none()).await?.0), None));
    };
    let (baseline, _) = run(Errors::none().with_seed(last_mode.seed)).await?;
    let mut runs: Vec<ErrorRun> = Vec::new();
    for mode in modes {
        eprintln!("agent-eval: running with mistakes {mode}");
        let (episodes, tally) = run(mode.clone()).await?;
        let label = mode.to_string();
        runs.push(ErrorRun {
            label,
            episodes,
            tally,
        });
    }
    let report = ErrorReport {
        table: format!(
            "{}{}",
            error_table(&baseline, &runs),
            if json {
                String::new()
            } else {
                unsolved_list(&runs)
            }
        ),
        baseline_solved: baseline.iter().all(|e| e.solved),
        runs: runs
            .iter()
            .map(|r| ErrorSummary::of(r, &baseline))
            .collect(),
        mode: last_mode,
    };
    let last = runs.pop().map(|r| r.episodes).unwrap_or_default();
    Ok((rows_of(last), Some(report)))
}

async fn eval(args: &[String]) -> Result<bool, String> {
    let scripted = args.iter().any(|a| a == "--scripted");
    let json = args.iter().any(|a| a == "--json");
    let suite = arg_after(args, "--suite").unwrap_or_else(|| "local".into());
    let max_steps: usize = arg_after(args, "--max-steps")
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let (rows, errors) = match suite.as_str() {
        "local" if args.iter().any(|a| a == "--errors") => {
            return Err("--errors is for --suite miniwob --scripted".into())
        }
        "local" => (local_rows(args, scripted, max_steps).await?, None),
        "miniwob" => miniwob_rows(args, scripted, max_steps).await?,
        other => return Err(format!("unknown suite {other:?} (local or miniwob)")),
    };
    let mut total = Row {
        name: "total".into(),
        ..Row::default()
    };
    for r in &rows {
        total.absorb(r);
    }
    let model = if scripted {
        "scripted".to_owned()
    } else {
        std::env::var("LLM_MODEL").unwrap_or_else(|_| "gpt-5-mini".into())
    };
    // With mistakes, episodes are expected to fail: the run passes when the baseline did.
    let passed = match &errors {
        Some(e) => e.baseline_solved,
        None => total.solved == total.runs,
    };
    if json {
        let mut out = serde_json::json!({
            "suite": suite,
            "model": model,
            "client": format!("{:?}", Client::from_env()).to_lowercase(),
            "rows": rows,
            "total": total,
            "successRate": if total.runs == 0 { 0.0 } else { total.solved as f64 / total.runs as f64 },
        });
        if let Some(e) = &errors {
            out["errors"] = serde_json::json!({
                "mode": e.mode.to_string(),
                "seed": e.mode.seed,
                "runs": e.runs,
            });
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?
        );
        return Ok(passed);
    }
    println!(
        "suite: {suite}, model: {model}\n{:<28} {:>9} {:>5} {:>5} {:>8} {:>8} {:>7} {:>9} {:>6}  interventions note",
        "task", "solved", "steps", "calls", "prompt", "cached", "compl", "cost $", "s"
    );
    for r in &rows {
        r.print();
    }
    total.print();
    println!(
        "success rate {:.1} % ({} of {}){}",
        100.0 * total.solved as f64 / total.runs.max(1) as f64,
        total.solved,
        total.runs,
        if total.cost_usd.is_none() {
            "; cost: n/a (the server has no price for the model: set LLM_PRICES)"
        } else {
            ""
        }
    );
    if let Some(e) = &errors {
        println!(
            "\nmistakes (the rows above: the last run), seed {}:\n{}",
            e.mode.seed, e.table
        );
    }
    Ok(passed)
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
