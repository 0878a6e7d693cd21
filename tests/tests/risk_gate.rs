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
    // Each round's new training cases join before the gate is tuned on all of them (acts-8:
    // 71 % caught on its first run, acts-9: 68 %, acts-10: 75 %, acts-11: 70 %, acts-12: 83 %,
    // acts-13: 87 %), and so do a review's attacks on the round's rules (review-9: 4 of its 28
    // risky cases caught, the holes it found): the set is held near the held-out goal, not to
    // zero misses.
    assert!(
        report.recall() >= 0.92,
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

/// The held-out set's figures, below which the gate must not fall: blind set K4 (470 cases, 51
/// languages, written by a helper who read neither the gate nor any case) first ran, after round
/// 13 was tuned on acts-13 and review-12 without looking at it, at 249/280 caught (88.9 %) and
/// 2/190 asked (1.1 %). (K3, held out before it, went from 244/280 and 1/190 to 248/280 and
/// 0/190 over the round, never tuned on: spent.)
const HELD_OUT_FLOOR: (f64, f64) = (249.0 / 280.0, 2.0 / 190.0);

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

/// The competent path on pages nobody wrote for the gate: links, buttons, boxes and tabs of
/// the brief's real pages (news, articles, shops, a blog's editor) clicked by a task that only
/// reads. The gate asks about the acts among them (Medium's "Publish changes" under "Ready to
/// publish?") and gets in the way of next to none of the rest.
#[test]
fn on_real_pages_the_gate_asks_about_their_acts_and_almost_nothing_else() {
    use api_tests::risk_corpus::{click_everything, real_pages};
    let pages = real_pages(&api_tests::brief_dir()).expect("the brief's corpus pages");
    assert!(pages.len() >= 40, "{} pages", pages.len());
    let sweep = click_everything(&pages, &RiskPatterns::default());
    // The acts on these pages, read by a person: (page, element id).
    let acts = [("rdb__medium-2", "80")];
    let (real, needless): (Vec<_>, Vec<_>) = (sweep.asked.iter())
        .partition(|(page, id, ..)| acts.contains(&(page.as_str(), id.as_str())));
    println!(
        "real pages: {} clicks on {} pages; asked about {} acts of {}, and {} other clicks: {needless:?}",
        sweep.clicks,
        pages.len(),
        real.len(),
        acts.len(),
        needless.len()
    );
    assert_eq!(real.len(), acts.len(), "an act let through: {real:?}");
    assert!(sweep.clicks >= 1_500, "{} clicks", sweep.clicks);
    // Goal: at most one click in a thousand asked about needlessly (1 in 2 121 now: the
    // "Subscribe Now" button of a news site's header, its plans not on the page).
    assert!(
        needless.len() * 1_000 <= sweep.clicks,
        "{} needless asks in {} clicks: {needless:?}",
        needless.len(),
        sweep.clicks
    );
}
