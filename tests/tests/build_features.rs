//! `scripts/test` builds three selections: the workspace's binaries and every test (in one
//! `cargo build --workspace --bins --tests`, or apart when a run is narrowed), and shared as
//! the functions build it (`cargo test -p shared --lib --no-run`, without the embedded store).
//! Each resolves the dependencies with the features its selection of packages asks for; where
//! two differ, every crate above the difference (the AWS SDK, hyper, reqwest…) is compiled
//! again. This test fails, naming
//! the crates, when any dependency is resolved with other features in one of the three.
//!
//! The test build also skips the targets that are tested from outside (`test = false`: every
//! function, the binaries), since each would be one more test binary to compile and link; a
//! test written in one of them would never run, and fails here instead.

use std::collections::BTreeMap;
use std::process::Command;

/// What `cargo ARGS --locked --offline` prints, run as the tests' cargo in this package.
fn cargo(args: &[&str]) -> Vec<u8> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .args(["--locked", "--offline"])
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "cargo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Each package of a `cargo tree` selection (`args`), with its features.
fn resolved(args: &[&str]) -> BTreeMap<String, String> {
    let tree = [&["tree", "--prefix", "none", "--format", "{p}|{f}"], args].concat();
    String::from_utf8_lossy(&cargo(&tree))
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

/// Every target of the workspace: (package, kind, source file, built as a test).
fn targets() -> Vec<(String, String, std::path::PathBuf, bool)> {
    let meta = cargo(&["metadata", "--no-deps", "--format-version", "1"]);
    let meta: serde_json::Value = serde_json::from_slice(&meta).expect("metadata JSON");
    let mut all = Vec::new();
    for package in meta["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().expect("targets") {
            let kind = target["kind"][0].as_str().unwrap_or_default().to_owned();
            let src = target["src_path"].as_str().unwrap_or_default().into();
            let name = package["name"].as_str().unwrap_or_default().to_owned();
            all.push((name, kind, src, target["test"].as_bool().unwrap_or(true)));
        }
    }
    all
}

#[test]
fn no_test_is_written_where_the_test_build_never_looks() {
    let targets = targets();
    let tested: Vec<&std::path::PathBuf> = (targets.iter()).filter(|t| t.3).map(|t| &t.2).collect();
    let mut skipped = 0;
    let mut problems = std::collections::BTreeSet::new();
    for (package, kind, src, test) in &targets {
        if *test || !matches!(kind.as_str(), "lib" | "bin") {
            continue;
        }
        skipped += 1;
        // A target is the files of its directory, but for a binary beside a tested library
        // (which owns the directory's modules): its own file then.
        let dir = src.parent().expect("a source file's directory");
        let beside_tested =
            (targets.iter()).any(|t| t.3 && t.1 == "lib" && t.2.parent() == Some(dir));
        let files = if kind == "lib" || !beside_tested {
            api_tests::rust_files(dir)
        } else {
            vec![src.clone()]
        };
        for file in files.iter().filter(|f| f == &src || !tested.contains(f)) {
            let text = std::fs::read_to_string(file).expect("read a source file");
            if ["#[test]", "#[tokio::test", "proptest!", "#[cfg(test)]"]
                .iter()
                .any(|m| text.contains(m))
            {
                problems.insert(format!("{package} ({kind}): {}", file.display()));
            }
        }
    }
    assert!(skipped > 40, "{skipped} targets skip the test build");
    assert!(
        problems.is_empty(),
        "tests in targets built with `test = false` never run (move them to the library or \
         tests/, or build the target as a test):\n{}",
        Vec::from_iter(problems).join("\n")
    );
}

/// `scripts/test` runs shared's unit tests without the embedded store only for `context::` and
/// `adapters::`, the modules whose code the feature changes: every other unit test is the same
/// code in both builds. A `cfg` on the feature anywhere else would make that narrowing skip
/// code the functions run, so it fails here, naming the file.
#[test]
fn only_the_modules_the_test_command_reruns_depend_on_the_embedded_store() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/src");
    let mut elsewhere: Vec<String> = api_tests::rust_files(&src)
        .into_iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            text.contains("feature = \"embedded\"")
        })
        .map(|f| f.strip_prefix(&src).unwrap_or(&f).display().to_string())
        .filter(|f| f != "context.rs" && !f.starts_with("adapters/"))
        .collect();
    elsewhere.sort();
    assert!(
        elsewhere.is_empty(),
        "the embedded store's feature is read in {elsewhere:?}"
    );
}
