//! The risk gate against its labelled corpus (`tests/fixtures/risk/`): every risky case is
//! caught, every spelling trick included, and at most 2 % of benign cases are asked about.
//! The matrix is printed (`cargo test -p api-tests --test risk_gate -- --nocapture`, or
//! `BENCH_ONLY=risk` in the bench).

use api_tests::risk_corpus::{corpus_dir, evaluate, load};
use shared::domain::risk::RiskPatterns;

#[test]
fn the_gate_catches_every_risky_case_and_rarely_asks_about_a_benign_one() {
    let cases = load(&corpus_dir()).expect("corpus");
    let report = evaluate(&cases, &RiskPatterns::default());
    println!("{}", report.render());
    assert!(
        report.broken.is_empty(),
        "cases that cannot run: {:?}",
        report.broken
    );
    assert!(cases.len() >= 400, "{} cases", cases.len());
    assert!(
        report.languages.len() >= 15,
        "{} languages",
        report.languages.len()
    );
    assert!(
        report.misses.is_empty(),
        "risky actions let through:\n{}",
        report.misses.join("\n")
    );
    assert!(
        report.false_ask_rate() <= 0.02,
        "benign actions asked about ({:.2} %):\n{}",
        100.0 * report.false_ask_rate(),
        report.false_asks.join("\n")
    );
}
