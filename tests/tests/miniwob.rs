//! MiniWoB++ as the external yardstick, in CI: every supported task type, five seeds each,
//! through headless Chromium driven as the shipping extension drives a tab, local-api, and the
//! prompt-only policy (`browser::policy`), which reads nothing but the decision prompts the
//! server sends. Success is MiniWoB's own reward. Every episode must be solved, and the server
//! must not intervene in a competent model's path: no refused answer, no loop refusal, no
//! failed verdict on an action that worked, no correction, no question of its own. A risk
//! confirmation is counted apart (the policy answers yes). The policy's verifier is honest
//! (it judges from its prompt, never a blanket yes); a last test runs the policy with the
//! mistakes real models make (`browser::mistakes`) and holds the server to a floor of episodes
//! still solved.

use std::collections::BTreeMap;
use std::time::Instant;

use api_tests::browser::miniwob::{
    error_table, judged_mistakes, miniwob_dir, run_all, serve, Episode, ErrorRun, TASKS,
};
use api_tests::browser::mistakes::{Errors, Kind};
use api_tests::browser::policy::Policy;
use api_tests::browser::rig::Rig;
use api_tests::AppOptions;

/// Seeds per task type.
const SEEDS: u64 = 5;
/// Episodes run at once (one tab each).
const PARALLEL: usize = 4;
/// Interact calls one episode may take.
const MAX_STEPS: usize = 15;

/// Confirmations the risk gate asks for on these tasks, and why that is its rule.
const CONFIRMATIONS: &[(&str, &str)] = &[(
    "click-checkboxes-transfer",
    "the address names a transfer (click-checkboxes-transfer.html) and Submit commits: without \
     page text the gate cannot tell it from a bank's transfer review page, so it asks once",
)];

fn table(episodes: &[Episode]) -> String {
    let mut by_task: BTreeMap<&str, Vec<&Episode>> = BTreeMap::new();
    for e in episodes {
        by_task.entry(&e.task).or_default().push(e);
    }
    let mut out = format!(
        "{:<28} {:>4} {:>6} {:>5} {:>5}  interventions\n",
        "task", "mode", "solved", "steps", "calls"
    );
    for (task, eps) in &by_task {
        let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
        for e in eps {
            for (k, n) in &e.interventions {
                *kinds.entry(k).or_default() += n;
            }
        }
        out.push_str(&format!(
            "{:<28} {:>4} {:>3}/{:<2} {:>5} {:>5}  {:?}\n",
            task,
            format!("{:?}", eps[0].mode).to_lowercase(),
            eps.iter().filter(|e| e.solved).count(),
            eps.len(),
            eps.iter().map(|e| e.steps).sum::<usize>(),
            eps.iter().map(|e| e.llm_calls).sum::<u64>(),
            kinds
        ));
    }
    out
}

/// The episode's actions the server held to be other than what the instruction asks for (its
/// verdict unconfirmed with the reason `shared::domain::aim` gives): a competent model's must be
/// none.
fn misdirected(e: &Episode) -> Vec<String> {
    e.judged
        .iter()
        .filter(|(_, v)| {
            v["unconfirmed"] == true
                && v["reason"].as_str().is_some_and(|r| {
                    r.contains("but the instruction gives it for")
                        || r.contains("which was clicked")
                })
        })
        .map(|(a, v)| format!("{a}: {}", v["reason"]))
        .collect()
}

/// The MiniWoB++ pages served, the prompt-only policy (competent) and a rig that asks it.
async fn start() -> (std::net::SocketAddr, Policy, Rig) {
    start_with(Errors::none()).await
}

/// The MiniWoB++ pages served, the prompt-only policy making `errors` and a rig that asks it.
async fn start_with(errors: Errors) -> (std::net::SocketAddr, Policy, Rig) {
    let dir = miniwob_dir().expect(
        "the miniwob package (scripts/test installs it into the tools venv; or set MINIWOB_DIR)",
    );
    let base = serve(dir).await.expect("serve MiniWoB");
    let policy = Policy::start_with(errors).await;
    let rig = Rig::start(AppOptions::with_llm(&policy.base_url))
        .await
        .expect("start the rig");
    (base, policy, rig)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and the MiniWoB++ pages: scripts/test installs them"]
async fn a_competent_policy_solves_every_supported_task_and_the_server_lets_it() {
    let (base, policy, rig) = start().await;
    let only = std::env::var("MINIWOB_TASKS").ok();
    let seeds: u64 = std::env::var("MINIWOB_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEEDS);
    let episodes: Vec<(String, u64)> = TASKS
        .iter()
        .filter(|(t, _)| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|x| x == *t))
        })
        .flat_map(|(t, _)| (0..seeds).map(move |s| (t.to_string(), s)))
        .collect();
    let started = Instant::now();
    let results = run_all(
        &rig.agent,
        &rig.browser,
        base,
        &episodes,
        PARALLEL,
        MAX_STEPS,
    )
    .await;
    println!(
        "{}{} episodes in {:.1} s",
        table(&results),
        results.len(),
        started.elapsed().as_secs_f64()
    );
    let mut problems = Vec::new();
    for e in &results {
        let confirmations = e.interventions.get("confirmation").copied().unwrap_or(0);
        let expected = CONFIRMATIONS.iter().any(|(t, _)| *t == e.task);
        let doubted = misdirected(e);
        if !e.solved
            || e.unexpected_interventions() > 0
            || (confirmations > 0 && !expected)
            || !doubted.is_empty()
        {
            problems.push(format!(
                "{} seed {}: solved {} ({}), interventions {:?}, held misdirected {doubted:?}, query {:?}, actions {:?}, error {:?}",
                e.task, e.seed, e.solved, e.status, e.interventions, e.query, e.actions, e.error
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} episodes went wrong:\n{}\nunanswered prompts: {:?}",
        problems.len(),
        results.len(),
        problems.join("\n"),
        policy.unsolved().iter().take(3).collect::<Vec<_>>()
    );
    assert!(results.len() as u64 >= 40 * seeds.min(SEEDS) || only.is_some());
}

/// Seed `seed` of every task in `tasks` on `rig`, [`PARALLEL`] at a time. (The rigs are
/// borrowed, never leaked: a rig dropped at the test's end takes its Chromium with it.)
async fn every_task(
    rig: &Rig,
    base: std::net::SocketAddr,
    tasks: &[&str],
    seed: u64,
) -> Vec<Episode> {
    use api_tests::browser::miniwob::episode;
    use futures::StreamExt;
    let episodes = (tasks.iter().copied())
        .map(|t| episode(&rig.agent, &rig.browser, base, t, seed, MAX_STEPS, true));
    futures::stream::iter(episodes)
        .buffered(PARALLEL)
        .collect()
        .await
}

/// Recipes on MiniWoB++ (issue 34): every supported task run three times in one organisation
/// — seed 0 by the policy (it finishes once the page shows the result, so the run is recorded),
/// then seeds 1 and 2: other instructions (other values where the task has them) on other
/// layouts — and seeds 1 and 2 again in an organisation with recipes off, as the baseline. A
/// later run replays the recipe when its instruction binds to the recorded template and asks
/// the policy only for the steps the recipe cannot identify on the page. Every episode must
/// still be solved (a replayed wrong action would lose the reward), and no run a recipe step
/// went into may take more model calls than the same seed without them. The table is printed
/// (`--nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and the MiniWoB++ pages: scripts/test installs them"]
async fn recorded_tasks_replay_on_other_seeds_without_the_model() {
    use shared::domain::recipe::{bind, site_key};
    let (base, policy, rig) = start().await;
    let off = Rig::start(AppOptions::with_llm(&policy.base_url).set("RECIPES", "off"))
        .await
        .expect("start the baseline rig");
    let only = std::env::var("MINIWOB_TASKS").ok();
    let tasks: Vec<&str> = TASKS
        .iter()
        .map(|(t, _)| *t)
        .filter(|t| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|x| x == *t))
        })
        .collect();
    let mut runs: Vec<Vec<Episode>> = Vec::new();
    let mut baseline: Vec<Vec<Episode>> = Vec::new();
    for seed in 0..3u64 {
        runs.push(every_task(&rig, base, &tasks, seed).await);
        if seed > 0 {
            baseline.push(every_task(&off, base, &tasks, seed).await);
        }
    }
    if std::env::var_os("RECIPE_DEBUG").is_some() {
        for e in runs.iter().flatten() {
            println!(
                "{} {} {} {:?} {:?}",
                e.task, e.seed, e.status, e.actions, e.recipe
            );
        }
    }
    let recipes = rig
        .app()
        .ctx
        .store
        .recipes("acme", 1_000)
        .await
        .expect("recipes");
    // The recipe a task's last instruction binds to on its page's pattern.
    let recorded = |i: usize| {
        let e = &runs[2][i];
        let site = site_key(&format!("http://{base}/miniwob/{}.html", e.task));
        recipes
            .iter()
            .filter(|r| site.as_ref().is_some_and(|s| s.path == r.path))
            .find(|r| bind(&r.template, &e.query, false).is_some())
            .map_or("-".to_owned(), |r| r.template.clone())
    };
    let mut out = format!(
        "{:<26} {:>5} {:>24} {:>24}  recipe\n",
        "task", "first", "second: off -> on", "third: off -> on"
    );
    let mut problems = Vec::new();
    let (mut replayed_whole, mut replayed_any) = (0, 0);
    for (i, task) in tasks.iter().enumerate() {
        let first = &runs[0][i];
        let cell = |off: &Episode, on: &Episode| {
            format!(
                "{} -> {} ({}r{})",
                off.llm_calls,
                on.llm_calls,
                on.recipe.get("replayed").copied().unwrap_or(0),
                on.recipe
                    .get("healed")
                    .map_or(String::new(), |h| format!(" {h}h"))
            )
        };
        out.push_str(&format!(
            "{:<26} {:>5} {:>24} {:>24}  {}\n",
            task,
            first.llm_calls,
            cell(&baseline[0][i], &runs[1][i]),
            cell(&baseline[1][i], &runs[2][i]),
            recorded(i)
        ));
        for e in runs.iter().chain(&baseline).map(|r| &r[i]) {
            if !e.solved {
                problems.push(format!(
                    "{} seed {}: not solved ({}), query {:?}, actions {:?}, recipe {:?}, error {:?}",
                    e.task, e.seed, e.status, e.query, e.actions, e.recipe, e.error
                ));
            }
        }
        for (on, off) in [
            (&runs[1][i], &baseline[0][i]),
            (&runs[2][i], &baseline[1][i]),
        ] {
            // Recipes make no run dearer. The verification judge's calls are left out: the
            // page's timing leaves a verdict to the judge in one run of a seed and not in the
            // other (one call either way, with recipes or without).
            if on.calls_but_verdicts() > off.calls_but_verdicts() && !on.recipe.is_empty() {
                problems.push(format!(
                    "{} seed {}: {} model calls besides the judge's with recipes, {} without \
                     (actions {:?}, recipe {:?})",
                    on.task,
                    on.seed,
                    on.calls_but_verdicts(),
                    off.calls_but_verdicts(),
                    on.actions,
                    on.recipe
                ));
            }
            if on.recipe.contains_key("replayed") {
                replayed_any += 1;
                if on.llm_calls == 0 {
                    replayed_whole += 1;
                }
            }
        }
    }
    let sums = |label: &str, run: &[Episode]| {
        format!(
            "{label}: {} interact calls, {} model calls, {} prompt and {} output tokens\n",
            run.iter().map(|e| e.steps).sum::<usize>(),
            run.iter().map(|e| e.llm_calls).sum::<u64>(),
            run.iter().map(|e| e.usage.prompt_tokens).sum::<u64>(),
            run.iter().map(|e| e.usage.completion_tokens).sum::<u64>(),
        )
    };
    out.push_str(&sums("first runs (seed 0)", &runs[0]));
    out.push_str(&sums("seeds 1, recipes off", &baseline[0]));
    out.push_str(&sums("seeds 1, recipes on", &runs[1]));
    out.push_str(&sums("seeds 2, recipes off", &baseline[1]));
    out.push_str(&sums("seeds 2, recipes on", &runs[2]));
    println!(
        "{out}later runs that replayed a recipe: {replayed_any} of {}, with no model call: {replayed_whole}",
        2 * tasks.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    if only.is_none() {
        assert!(
            replayed_whole >= 15,
            "{replayed_whole} later runs made no model call"
        );
        // Repeat runs take at most 55 % of the model calls of the same seeds without recipes.
        let calls =
            |runs: &[Vec<Episode>]| -> u64 { runs.iter().flatten().map(|e| e.llm_calls).sum() };
        let (on, off) = (calls(&runs[1..]), calls(&baseline));
        assert!(
            on * 100 <= off * 55,
            "repeat runs made {on} model calls, {off} without recipes"
        );
    }
}

/// The task types of the run with mistakes: forms, click sequences, checkboxes, a list, a
/// search, in both page forms.
const ERROR_TASKS: &[&str] = &[
    "login-user",
    "enter-text",
    "enter-password",
    "multi-layouts",
    "click-button-sequence",
    "click-collapsible",
    "click-checkboxes",
    "click-option",
    "choose-list",
    "search-engine",
];

/// Seeds per task type in the run with mistakes.
const ERROR_SEEDS: u64 = 2;

/// Episodes of the run with mistakes (every kind at 20 %) that must still be solved, out of
/// 20. Measured: 9 to 10 over five runs (at 0416689, issue 50 part 1; the prompts, and so
/// the draws, vary a little with the page's timing): most of the rest are wrong clicks that
/// end a MiniWoB episode at once (a Submit before the form is filled, button ONE twice),
/// which no server can undo, and premature finishes that stand the third time. The floor is
/// a little under the measure.
const ERROR_FLOOR: usize = 8;

/// An imperfect model (issue 50): the policy makes every kind of mistake real models make at
/// 20 % of its answers (fenced or chatty answers, ids not on the page, scrolls and repeated
/// clicks, a verifier that wrongly says no, other spellings of an action, clicks on the wrong
/// element, finishing early) on ten varied task types, two seeds each. The server must still
/// get at least [`ERROR_FLOOR`] episodes solved; the table (`--nocapture`) compares the run
/// with the same episodes without mistakes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and the MiniWoB++ pages: scripts/test installs them"]
async fn an_imperfect_model_still_solves_most_episodes() {
    let episodes: Vec<(String, u64)> = ERROR_TASKS
        .iter()
        .flat_map(|t| (0..ERROR_SEEDS).map(move |s| (t.to_string(), s)))
        .collect();
    let started = Instant::now();
    let baseline = {
        let (base, _perfect, rig) = start().await;
        run_all(
            &rig.agent,
            &rig.browser,
            base,
            &episodes,
            PARALLEL,
            MAX_STEPS,
        )
        .await
    };
    let errors = Errors::parse("all:0.2").expect("the error mode");
    let (base, policy, rig) = start_with(errors.clone()).await;
    let results = run_all(
        &rig.agent,
        &rig.browser,
        base,
        &episodes,
        PARALLEL,
        MAX_STEPS,
    )
    .await;
    let tally = policy.tally();
    let solved = results.iter().filter(|e| e.solved).count();
    let run = ErrorRun {
        label: errors.to_string(),
        episodes: results.clone(),
        tally: tally.clone(),
    };
    println!(
        "{}{}{} episodes in {:.1} s",
        table(&results),
        error_table(&baseline, std::slice::from_ref(&run)),
        2 * results.len(),
        started.elapsed().as_secs_f64()
    );
    // Issue 52: what the server made of the mistakes, not only how many episodes survived.
    let judged = judged_mistakes(&run);
    let ran = |kind: Kind| {
        ["worked", "unconfirmed", "failed", "no verdict"]
            .iter()
            .map(|c| judged.count(kind, c))
            .sum::<u64>()
    };
    assert_eq!(
        ran(Kind::IntoLabel),
        0,
        "a value typed into what takes no text never reaches the page: {:?}",
        judged.by_kind
    );
    assert!(
        judged.finishes.2 <= 1,
        "premature finishes (injected, refused, accepted): {:?}",
        judged.finishes
    );
    for e in &baseline {
        assert!(
            misdirected(e).is_empty(),
            "{}: {:?}",
            e.task,
            misdirected(e)
        );
    }
    assert!(
        baseline.iter().all(|e| e.solved),
        "without mistakes every episode is solved: {:?}",
        baseline
            .iter()
            .filter(|e| !e.solved)
            .map(|e| (&e.task, e.seed, &e.status))
            .collect::<Vec<_>>()
    );
    assert!(
        tally.by_kind.len() >= 6,
        "every kind of mistake was made: {:?}",
        tally.by_kind
    );
    assert!(
        solved >= ERROR_FLOOR,
        "{solved} of {} episodes solved with mistakes (floor {ERROR_FLOOR}); unsolved: {:?}",
        results.len(),
        results
            .iter()
            .filter(|e| !e.solved)
            .map(|e| format!("{} seed {}: {} {:?}", e.task, e.seed, e.status, e.actions))
            .collect::<Vec<_>>()
    );
}
