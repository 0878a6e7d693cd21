//! The risk gate against its labelled corpus (`tests/fixtures/risk/`), held to figures and not
//! to zero misses: on the training set it was built and tuned on, and — the number that counts
//! — on the held-out set written by someone who had not read it and never tuned on, which must
//! not fall below its first-run figures. The goal there (recall at least 95 %, at most 2 % of
//! benign actions asked about) is not met yet: docs/safety.md has the figures. The matrices are
//! printed (`cargo test -p api-tests --test risk_gate -- --nocapture`, or `BENCH_ONLY=risk` in
//! the bench).

use api_tests::risk_corpus::{evaluate, heldout_dir, load, training_dir, Report, LABELS};
use shared::domain::risk::RiskPatterns;

fn judged(dir: &std::path::Path, min_cases: usize, min_languages: usize, held_out: bool) -> Report {
    let cases = load(dir).expect("corpus");
    let report = evaluate(&cases, &RiskPatterns::default());
    if held_out {
        println!("{}", report.summary());
    } else {
        println!("{}", report.render());
    }
    assert!(
        report.broken.is_empty(),
        "cases that cannot run: {:?}",
        report.broken
    );
    assert!(cases.len() >= min_cases, "{} cases", cases.len());
    assert!(
        report.languages.len() >= min_languages,
        "{} languages",
        report.languages.len()
    );
    // Every act the gate models has cases of its own.
    for act in LABELS
        .iter()
        .filter(|l| !matches!(**l, "flagged" | "benign"))
    {
        assert!(
            report.by_act.get(*act).is_some_and(|c| c[0] >= 5),
            "too few {act} cases"
        );
    }
    report
}

#[test]
fn on_its_training_set_the_gate_catches_nearly_every_risky_case_and_rarely_asks_otherwise() {
    let report = judged(&training_dir(), 1_100, 30, false);
    assert!(
        report.recall() >= 0.98,
        "recall {:.1} %, risky actions let through:\n{}",
        100.0 * report.recall(),
        report.misses.join("\n")
    );
    assert!(
        report.false_ask_rate() <= 0.02,
        "benign actions asked about ({:.2} %):\n{}",
        100.0 * report.false_ask_rate(),
        report.false_asks.join("\n")
    );
}

/// The held-out set's figures when it was first run (blind set G, 468 cases: recall 85.4 %,
/// false asks 8.33 %), below which the gate must not fall.
const HELD_OUT_FLOOR: (f64, f64) = (0.854, 0.0834);

#[test]
fn on_cases_nobody_tuned_it_to_the_gate_keeps_at_least_its_first_run_figures() {
    let report = judged(&heldout_dir(), 300, 30, true);
    assert!(
        report.recall() >= HELD_OUT_FLOOR.0,
        "held-out recall {:.1} % (first run {:.1} %)",
        100.0 * report.recall(),
        100.0 * HELD_OUT_FLOOR.0
    );
    assert!(
        report.false_ask_rate() <= HELD_OUT_FLOOR.1,
        "held-out false asks {:.2} % (first run {:.2} %)",
        100.0 * report.false_ask_rate(),
        100.0 * HELD_OUT_FLOOR.1
    );
}
