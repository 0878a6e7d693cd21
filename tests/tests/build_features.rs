//! `scripts/test` builds three ways: the workspace's binaries (`cargo build --workspace
//! --bins`), shared as the functions build it (`cargo test -p shared --lib`, without the
//! embedded store) and every test (`cargo test --workspace`). Each resolves the dependencies
//! with the features its selection of packages asks for; where two differ, every crate above
//! the difference (the AWS SDK, hyper, reqwest…) is compiled again. This test fails, naming
//! the crates, when any dependency is resolved with other features in one of the three.

use std::collections::BTreeMap;
use std::process::Command;

/// Each package of a `cargo tree` selection (`args`), with its features.
fn resolved(args: &[&str]) -> BTreeMap<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--locked", "--offline", "--prefix", "none"])
        .args(["--format", "{p}|{f}"])
        .args(args)
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            l.replace(" (*)", "")
                .split_once('|')
                .map(|(p, f)| (p.trim().to_owned(), f.to_owned()))
        })
        // The workspace's own crates are built per selection anyway.
        .filter(|(p, _)| !p.contains(" (/"))
        .collect()
}

/// The crates whose features differ between two selections.
fn differences(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<String> {
    a.iter()
        .filter_map(|(p, f)| {
            let other = b.get(p)?;
            (other != f).then(|| format!("{p}: {f:?} vs {other:?}"))
        })
        .collect()
}

#[test]
fn the_three_builds_of_the_test_command_share_every_dependency_build() {
    let tests = resolved(&["--workspace", "-e", "normal,build,dev"]);
    let bins = resolved(&["--workspace", "-e", "normal,build"]);
    let shared = resolved(&["-p", "shared", "-e", "normal,build,dev"]);
    assert!(tests.len() > 300, "{} packages", tests.len());
    let binaries = differences(&bins, &tests);
    assert!(
        binaries.is_empty(),
        "the binaries' build and the tests' resolve these differently:\n{}",
        binaries.join("\n")
    );
    let alone = differences(&shared, &tests);
    assert!(
        alone.is_empty(),
        "shared built alone and the tests resolve these differently (name the feature in \
         shared's dev-dependencies):\n{}",
        alone.join("\n")
    );
}
