//! MiniWoB++ as the external yardstick: the 125 task pages of the `miniwob` package (1.1.0,
//! MIT; `scripts/lib.sh` installs it into the tools venv with `--no-deps`) served from
//! 127.0.0.1, each episode opened in headless Chromium, seeded as BrowserGym seeds it
//! (`Math.seedrandom(seed)` before `core.startEpisodeReal()`), with the episode timer raised
//! for a model, and driven by the extension's loop ([`super::run::drive`]) with the
//! instruction in `#query` as the task. Success is MiniWoB's own in-page reward
//! (`WOB_DONE_GLOBAL` with `WOB_REWARD_GLOBAL > 0`), never a check of ours.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use serde_json::Value;

use super::cdp::Browser;
use super::mistakes::{Kind, Tally};
use super::run::{drive, open, Agent, Options, Outcome};
use super::site::respond;

/// The episode timer while a model acts (MiniWoB's default, 10 s, is for scripted agents).
pub const EPISODE_MS: u64 = 10 * 60 * 1000;

/// How the page is sent for a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The `interactiveTree` (the shipping client's default).
    Tree,
    /// Simplified HTML with ids: for tasks that need the page's text or click elements the
    /// tree does not list.
    Dom,
}

/// The task types the prompt-only policy supports and the mode each runs in. A task needs
/// `dom` when the instruction alone does not say what to do and the tree cannot show it:
/// the answer is in page text (read-table, find-word, copy-paste …), or the elements to act
/// on are not interactive ones (spans, divs with click handlers, jQuery UI widgets).
pub const TASKS: &[(&str, Mode)] = &[
    ("click-button", Mode::Tree),
    ("click-button-sequence", Mode::Tree),
    ("click-checkboxes", Mode::Tree),
    ("click-checkboxes-large", Mode::Tree),
    ("click-checkboxes-transfer", Mode::Tree),
    ("click-link", Mode::Dom),
    ("click-option", Mode::Tree),
    ("click-tab", Mode::Tree),
    ("click-tab-2", Mode::Dom),
    ("click-tab-2-easy", Mode::Dom),
    ("click-tab-2-medium", Mode::Dom),
    ("click-tab-2-hard", Mode::Dom),
    ("click-test", Mode::Tree),
    ("click-test-2", Mode::Tree),
    ("click-test-transfer", Mode::Tree),
    ("click-widget", Mode::Dom),
    ("enter-password", Mode::Tree),
    ("enter-text", Mode::Tree),
    ("enter-text-2", Mode::Tree),
    ("enter-text-dynamic", Mode::Tree),
    ("focus-text", Mode::Tree),
    ("focus-text-2", Mode::Tree),
    ("login-user", Mode::Tree),
    ("login-user-popup", Mode::Dom),
    ("choose-list", Mode::Tree),
    ("click-dialog", Mode::Tree),
    ("click-dialog-2", Mode::Tree),
    ("click-collapsible", Mode::Tree),
    ("click-collapsible-nodelay", Mode::Tree),
    ("enter-time", Mode::Tree),
    ("form-sequence-2", Mode::Tree),
    ("multi-layouts", Mode::Dom),
    ("multi-orderings", Mode::Dom),
    ("search-engine", Mode::Tree),
    ("unicode-test", Mode::Tree),
    ("use-spinner", Mode::Tree),
    ("read-table", Mode::Dom),
    ("read-table-2", Mode::Dom),
    ("find-word", Mode::Dom),
    ("simple-arithmetic", Mode::Dom),
    ("simple-algebra", Mode::Dom),
    ("odd-or-even", Mode::Dom),
    ("navigate-tree", Mode::Dom),
];

/// The mode a task runs in (tree for any task not listed).
pub fn mode_of(task: &str) -> Mode {
    TASKS
        .iter()
        .find(|(t, _)| *t == task)
        .map_or(Mode::Tree, |(_, m)| *m)
}

/// The package's `html/` folder: `MINIWOB_DIR`, else the tools venv's copy.
pub fn miniwob_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("MINIWOB_DIR") {
        return Some(PathBuf::from(d));
    }
    let tools = std::env::var_os("AGENT_TOOLS_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/agent-backend")))?;
    let lib = tools.join("venv/lib");
    std::fs::read_dir(&lib)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path().join("site-packages/miniwob/html"))
        .find(|p| p.join("core/core.js").is_file())
}

/// Every task page of the package, by name.
pub fn all_tasks(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("miniwob"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .filter_map(|n| n.strip_suffix(".html").map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        Some("gif") => "image/gif",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("svg") => "image/svg+xml",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

/// A file of `root` for a request path; `None` for anything outside it.
fn file_for(root: &Path, path: &str) -> Option<PathBuf> {
    let rel = path.trim_start_matches('/');
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    if parts.iter().any(|p| *p == ".." || p.contains('\\')) {
        return None;
    }
    Some(parts.iter().fold(root.to_path_buf(), |p, x| p.join(x)))
}

/// Serves `dir` on a free 127.0.0.1 port (Chromium reaches loopback without the proxy).
pub async fn serve(dir: PathBuf) -> Result<SocketAddr, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("bind the MiniWoB server: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let root = Arc::new(dir);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let root = root.clone();
            let svc = service_fn(move |req: Request<Incoming>| {
                let root = root.clone();
                async move {
                    let r: Response<Full<Bytes>> = match file_for(&root, req.uri().path())
                        .and_then(|f| std::fs::read(&f).ok().map(|b| (f, b)))
                    {
                        Some((f, bytes)) => respond(StatusCode::OK, content_type(&f), bytes),
                        None => respond(StatusCode::NOT_FOUND, "text/plain", "not found"),
                    };
                    Ok::<_, Infallible>(r)
                }
            });
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), svc));
        }
    });
    Ok(addr)
}

/// One episode's result.
#[derive(Debug, Clone, Serialize)]
pub struct Episode {
    pub task: String,
    pub seed: u64,
    pub mode: Mode,
    /// The instruction (`#query`).
    pub query: String,
    pub solved: bool,
    /// MiniWoB's reward (time-proportional tasks scale it by the time left).
    pub reward: f64,
    /// Interact calls.
    pub steps: usize,
    pub llm_calls: u64,
    /// Tokens and estimated cost, as the server's answers report them.
    pub usage: shared::domain::TokenUsage,
    /// The server's interventions by kind (confirmations included).
    pub interventions: BTreeMap<String, u64>,
    /// Steps that came from the tenant's recipe, by mode (`replayed`, `healed`).
    pub recipe: BTreeMap<String, u64>,
    /// How the run ended (`ended`: the page ended the episode).
    pub status: String,
    pub actions: Vec<String>,
    /// Each action the client ran with the server's verdict on it (`verification`).
    pub judged: Vec<(String, Value)>,
    pub error: Option<String>,
    pub seconds: f64,
}

impl Episode {
    /// Interventions other than confirmations (which a risky step rightly asks for).
    pub fn unexpected_interventions(&self) -> u64 {
        self.interventions
            .iter()
            .filter(|(k, _)| k.as_str() != "confirmation")
            .map(|(_, n)| n)
            .sum()
    }

    /// Model calls other than the verification judge's: how often the page's timing left a
    /// verdict to the judge differs between two runs of one seed.
    pub fn calls_but_verdicts(&self) -> u64 {
        let verdicts = self.judged.iter().filter(|(_, v)| v["byModel"] == true);
        self.llm_calls.saturating_sub(verdicts.count() as u64)
    }
}

/// What the page shows once the episode is over, as a site's confirmation would: MiniWoB's
/// START cover (over the finished task) as a named element the extension's tree lists.
const SHOW_END: &str = "(() => { const c = document.getElementById('sync-task-cover');
  if (c) { c.setAttribute('role', 'button'); c.setAttribute('aria-label', 'START'); } return true; })()";

/// Seeds and starts the episode of the open task page; its instruction.
const START: &str = "(seed, ms) => { Math.seedrandom(seed); core.EPISODE_MAX_TIME = ms;
  core.startEpisodeReal(); return true; }";

/// Runs one episode of `task` at `base` (the MiniWoB server's address) in a new tab.
pub async fn episode(
    agent: &Agent,
    browser: &Browser,
    base: SocketAddr,
    task: &str,
    seed: u64,
    max_steps: usize,
    finish_after_end: bool,
) -> Episode {
    let started = Instant::now();
    let mode = mode_of(task);
    let mut out = Outcome::default();
    let mut query = String::new();
    let mut reward = 0.0;
    let result: Result<(), String> = async {
        let tab = browser.new_page().await?;
        let r = async {
            open(&tab, &format!("http://{base}/miniwob/{task}.html"), true).await?;
            let start = format!("({START})({}, {EPISODE_MS})", Value::from(seed.to_string()));
            tab.eval(&start).await?;
            super::page::settle(&tab).await;
            query = tab
                .eval("document.getElementById('query').innerText")
                .await?
                .as_str()
                .unwrap_or("")
                .trim()
                .to_owned();
            let opts = Options {
                dom: mode == Mode::Dom,
                finish_after_end: finish_after_end.then_some(SHOW_END),
                ..Options::new(max_steps)
            };
            // A question the task really calls for is answered yes.
            let mut replies = std::iter::repeat_with(|| "Yes.".to_owned()).take(3);
            drive(
                agent,
                &tab,
                &query,
                &mut replies,
                Some("WOB_DONE_GLOBAL === true"),
                opts,
                &mut out,
            )
            .await?;
            reward = tab
                .eval("WOB_DONE_GLOBAL ? WOB_REWARD_GLOBAL : 0")
                .await?
                .as_f64()
                .unwrap_or(0.0);
            Ok(())
        }
        .await;
        tab.close().await;
        r
    }
    .await;
    if let Err(e) = result {
        out.error = Some(e);
        if out.status.is_empty() {
            out.status = "error".into();
        }
    }
    let confirmations = out.questions.len() as u64;
    let mut interventions = out.interventions;
    let asked = interventions.get("confirmation").copied().unwrap_or(0);
    if confirmations > asked {
        // A question the server reported as no intervention of its own: the model's.
        interventions.insert("model_question".into(), confirmations - asked);
    }
    Episode {
        task: task.to_owned(),
        seed,
        mode,
        query,
        solved: reward > 0.0,
        reward,
        steps: out.steps,
        llm_calls: out.llm_calls,
        usage: out.usage,
        interventions,
        recipe: out.recipe,
        status: out.status,
        actions: out.actions,
        judged: out.judged,
        error: out.error,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// Runs `episodes` (task, seed) `parallel` at a time, in the given order of results.
pub async fn run_all(
    agent: &Agent,
    browser: &Browser,
    base: SocketAddr,
    episodes: &[(String, u64)],
    parallel: usize,
    max_steps: usize,
) -> Vec<Episode> {
    use futures::StreamExt;
    futures::stream::iter(
        episodes
            .iter()
            .map(|(task, seed)| episode(agent, browser, base, task, *seed, max_steps, false)),
    )
    .buffered(parallel.max(1))
    .collect()
    .await
}

/// Episodes run with the policy in an error mode, for [`error_table`].
#[derive(Debug, Clone)]
pub struct ErrorRun {
    /// What the row is called (the mode, or a kind alone).
    pub label: String,
    pub episodes: Vec<Episode>,
    /// What the policy injected during the run.
    pub tally: Tally,
}

/// The row of an error run: mistakes injected, episodes solved, model calls against the
/// same episodes without mistakes (`baseline`), how the episodes ended and what the server
/// did (its interventions by kind). A run with several kinds also says, per kind, how the
/// episodes whose task got such a mistake fared (episodes of one task type whose seeds give
/// the same instruction are counted together).
pub fn error_table(baseline: &[Episode], runs: &[ErrorRun]) -> String {
    let calls = |eps: &[Episode]| eps.iter().map(|e| e.llm_calls).sum::<u64>();
    let base_of = |e: &Episode| {
        baseline
            .iter()
            .find(|b| b.task == e.task && b.seed == e.seed)
    };
    let mut out = format!(
        "{:<30} {:>8} {:>9} {:>6} {:>7} {:>7}  endings / server interventions\n",
        "errors", "injected", "solved", "calls", "extra", "per ep"
    );
    let row = |label: &str, injected: String, eps: &[Episode]| {
        let base: u64 = eps.iter().filter_map(base_of).map(|b| b.llm_calls).sum();
        let extra = calls(eps) as i64 - base as i64;
        let mut endings: BTreeMap<&str, u64> = BTreeMap::new();
        let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
        for e in eps {
            *endings.entry(e.status.as_str()).or_default() += 1;
            for (k, n) in &e.interventions {
                *kinds.entry(k.as_str()).or_default() += n;
            }
        }
        let list = |m: &BTreeMap<&str, u64>| {
            m.iter()
                .map(|(k, n)| format!("{k}:{n}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        format!(
            "{:<30} {:>8} {:>5}/{:<3} {:>6} {:>+7} {:>7.2}  {} / {}\n",
            label,
            injected,
            eps.iter().filter(|e| e.solved).count(),
            eps.len(),
            calls(eps),
            extra,
            extra as f64 / eps.len().max(1) as f64,
            list(&endings),
            if kinds.is_empty() {
                "-".to_owned()
            } else {
                list(&kinds)
            }
        )
    };
    out.push_str(&row("none (baseline)", "-".into(), baseline));
    out.push_str(&judged_line(baseline));
    for r in runs {
        out.push_str(&row(&r.label, r.tally.total().to_string(), &r.episodes));
        out.push_str(&verdict_lines(r));
        if r.tally.by_kind.len() > 1 {
            for (kind, n) in &r.tally.by_kind {
                let hit: Vec<Episode> = r
                    .episodes
                    .iter()
                    .filter(|e| {
                        r.tally
                            .by_task
                            .get(&e.query)
                            .is_some_and(|m| m.contains_key(kind))
                    })
                    .cloned()
                    .collect();
                out.push_str(&row(
                    &format!("  episodes with {kind}"),
                    n.to_string(),
                    &hit,
                ));
            }
        }
    }
    out
}

/// An action's name and element (`click(7)`, `setValue(3`): what a mistake's action and the
/// action the client ran are matched by (the server may write the value another way).
fn name_and_element(action: &str) -> String {
    let a = action.trim();
    match a.find(',') {
        Some(k) if a.starts_with("setValue(") || a.starts_with("selectOption(") => a[..k].into(),
        _ => a.to_owned(),
    }
}

/// How the server judged every action the client ran in `eps`: worked, unconfirmed, failed.
pub fn judged_line(eps: &[Episode]) -> String {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, v) in eps.iter().flat_map(|e| e.judged.iter()) {
        let class = if v["unconfirmed"] == true {
            "unconfirmed"
        } else if v["success"] == true {
            "worked"
        } else {
            "failed"
        };
        *counts.entry(class).or_default() += 1;
    }
    let list: Vec<String> = counts.iter().map(|(k, n)| format!("{k}:{n}")).collect();
    format!("  every action judged: {}\n", list.join(" "))
}

/// What the server made of the injected mistakes of a run (issue 52).
#[derive(Debug, Clone, Default)]
pub struct Judged {
    /// For wrong clicks, values typed into the wrong field and values typed into what takes no
    /// text: how each action the mistake wrote fared — `worked`, `unconfirmed`, `failed` (the
    /// server's verdict on it), `no verdict` (it ran and the episode ended), `not run` (the
    /// server refused it).
    pub by_kind: BTreeMap<Kind, BTreeMap<&'static str, u64>>,
    /// Premature finishes injected, refused by the server, and accepted (an episode marked
    /// completed before the page ended it).
    pub finishes: (u64, u64, usize),
    /// Episodes lost without a model call (a recipe replayed into a failure).
    pub modelless: usize,
}

impl Judged {
    /// How many of `kind`'s mistakes fared `class`.
    pub fn count(&self, kind: Kind, class: &str) -> u64 {
        (self.by_kind.get(&kind))
            .and_then(|m| m.get(class))
            .copied()
            .unwrap_or(0)
    }
}

/// The verdicts on a run's injected mistakes.
pub fn judged_mistakes(run: &ErrorRun) -> Judged {
    let mut out = Judged::default();
    for kind in [Kind::OtherClick, Kind::OtherField, Kind::IntoLabel] {
        for (task, made) in &run.tally.actions {
            let eps: Vec<&Episode> = run.episodes.iter().filter(|e| &e.query == task).collect();
            for (_, action) in made.iter().filter(|(k, _)| *k == kind) {
                let want = name_and_element(action);
                let verdicts: Vec<&Value> = (eps.iter().flat_map(|e| e.judged.iter()))
                    .filter(|(a, _)| name_and_element(a) == want)
                    .map(|(_, v)| v)
                    .collect();
                let ran = (eps.iter().flat_map(|e| e.actions.iter()))
                    .any(|a| name_and_element(a) == want);
                let class = match verdicts.first() {
                    _ if !ran => "not run",
                    None => "no verdict",
                    Some(v) if v["unconfirmed"] == true => "unconfirmed",
                    Some(v) if v["success"] == true => "worked",
                    Some(_) => "failed",
                };
                *out.by_kind
                    .entry(kind)
                    .or_default()
                    .entry(class)
                    .or_default() += 1;
            }
        }
    }
    let injected = run.tally.by_kind.get(&Kind::Finish).copied().unwrap_or(0);
    let refused: u64 = (run.episodes.iter())
        .filter_map(|e| e.interventions.get("finish_refused"))
        .sum();
    let accepted = (run.episodes.iter())
        .filter(|e| e.status == "completed" && !e.solved)
        .count();
    out.finishes = (injected, refused, accepted);
    out.modelless = (run.episodes.iter())
        .filter(|e| !e.solved && e.llm_calls == 0)
        .count();
    out
}

/// [`judged_mistakes`] as lines of the error table.
pub fn verdict_lines(run: &ErrorRun) -> String {
    let j = judged_mistakes(run);
    let mut out = String::new();
    for (kind, counts) in &j.by_kind {
        let list: Vec<String> = counts.iter().map(|(k, n)| format!("{k}:{n}")).collect();
        out.push_str(&format!("  judged {kind}: {}\n", list.join(" ")));
    }
    let (injected, refused, accepted) = j.finishes;
    if injected > 0 {
        out.push_str(&format!(
            "  early finishes: injected {injected}, refused {refused}, accepted {accepted}\n"
        ));
    }
    if j.modelless > 0 {
        out.push_str(&format!(
            "  unsolved without a model call: {}\n",
            j.modelless
        ));
    }
    out
}

/// The episodes each error run did not solve: task, seed, how it ended, the mistakes made on
/// its task and the actions the client got (a closer look at what the server did not recover
/// from).
pub fn unsolved_list(runs: &[ErrorRun]) -> String {
    let mut out = String::new();
    for r in runs {
        let lost: Vec<&Episode> = r.episodes.iter().filter(|e| !e.solved).collect();
        if lost.is_empty() {
            continue;
        }
        out.push_str(&format!("unsolved with {}:\n", r.label));
        for e in lost {
            let made = r.tally.by_task.get(&e.query).map_or(String::new(), |m| {
                m.iter()
                    .map(|(k, n)| format!("{k}:{n}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            out.push_str(&format!(
                "  {} seed {}: {} [{}] {}\n",
                e.task,
                e.seed,
                e.status,
                made,
                e.actions.join(" ; ").chars().take(300).collect::<String>()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_stay_inside_the_folder() {
        let root = Path::new("/srv/miniwob");
        assert_eq!(
            file_for(root, "/miniwob/click-button.html"),
            Some(root.join("miniwob").join("click-button.html"))
        );
        assert_eq!(file_for(root, "/core/../../etc/passwd"), None);
        assert_eq!(file_for(root, "/a\\..\\b"), None);
    }

    #[test]
    fn every_listed_task_is_listed_once() {
        let mut names: Vec<&str> = TASKS.iter().map(|(t, _)| *t).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TASKS.len());
        assert!(TASKS.len() >= 40);
    }
}
