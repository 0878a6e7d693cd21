//! The README and `docs/` name only what exists: every link leads to a file, every repository
//! path they name is there, every `cargo run -p` names a package of the workspace, every
//! `scripts/` command is an executable script, and every `agent-admin` command they show is
//! one the built tool knows (run with `--help`). The README stays a front door: at most 200
//! lines, linking every document.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// README.md and every `docs/*.md`, with their text.
fn documents() -> Vec<(PathBuf, String)> {
    let root = root();
    let mut paths = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read a document");
            (p, text)
        })
        .collect()
}

/// The targets of a document's Markdown links (`](target)`), without anchors.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            let target = rest[..end].split('#').next().unwrap_or_default().trim();
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                out.push(target.to_owned());
            }
            rest = &rest[end..];
        }
    }
    out
}

/// The words of a document that read as a path in the repository: inside backticks or a code
/// block, starting with one of its top-level entries (`shared/src/…`, `template.yaml`), and
/// holding no placeholder (`<name>`, `*`, `{id}`, `…`).
fn repository_paths(text: &str, top: &BTreeSet<String>) -> Vec<String> {
    let spans = commands(text);
    let mut out = Vec::new();
    for word in spans.iter().flat_map(|(s, _)| s.split_whitespace()) {
        let word = word.trim_matches(|c: char| "\"'(),;:.".contains(c));
        let first = word.split('/').next().unwrap_or_default();
        let placeholder =
            word.contains(['<', '*', '{', '$', '…', '|', '=', '?']) || word.contains("..");
        let named =
            (word.contains('/') && top.contains(first)) || top.contains(word) && word.contains('.');
        if named && !placeholder {
            out.push(word.to_owned());
        }
    }
    out
}

fn top_level() -> BTreeSet<String> {
    std::fs::read_dir(root())
        .expect("root")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && n != "target")
        .collect()
}

/// The packages of the workspace, by name.
fn packages() -> BTreeSet<String> {
    let root = root();
    let mut manifests = vec![
        root.join("local/Cargo.toml"),
        root.join("admin/Cargo.toml"),
        root.join("tests/Cargo.toml"),
        root.join("shared/Cargo.toml"),
    ];
    for e in std::fs::read_dir(root.join("functions"))
        .expect("functions/")
        .flatten()
    {
        manifests.push(e.path().join("Cargo.toml"));
    }
    manifests
        .iter()
        .filter_map(|m| std::fs::read_to_string(m).ok())
        .filter_map(|t| {
            let line = t.lines().find(|l| l.trim_start().starts_with("name ="))?;
            Some(line.split('"').nth(1)?.to_owned())
        })
        .collect()
}

/// Every line of a code block and every inline code span, as written, with whether it came
/// from a code block (where a line is a command to run).
fn commands(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            out.push((line.trim().to_owned(), true));
        } else {
            let spans = line.split('`').skip(1).step_by(2);
            out.extend(spans.map(|s| (s.to_owned(), false)));
        }
    }
    out
}

/// The files each document names that do not exist, as `document: name`: `named` gives a
/// document's names, and `base` what a name is relative to.
fn missing(named: impl Fn(&str) -> Vec<String>, base: impl Fn(&Path) -> PathBuf) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in documents() {
        for name in named(&text) {
            if !base(&path).join(&name).exists() {
                out.push(format!("{}: {name}", path.display()));
            }
        }
    }
    out
}

#[test]
fn every_link_leads_to_a_file_that_exists() {
    let dir = |p: &Path| p.parent().expect("a directory").to_path_buf();
    let missing = missing(links, dir);
    assert!(
        missing.is_empty(),
        "links to nothing:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_repository_path_named_exists() {
    let top = top_level();
    let missing = missing(|t| repository_paths(t, &top), |_| root());
    assert!(
        missing.is_empty(),
        "paths that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_command_names_a_package_and_a_script_that_exist() {
    let (root, packages) = (root(), packages());
    let mut wrong = Vec::new();
    for (path, text) in documents() {
        for (line, fenced) in commands(&text) {
            let words: Vec<&str> = line.split_whitespace().collect();
            for (k, w) in words.iter().enumerate() {
                if *w == "-p" && words.get(k.wrapping_sub(1)).is_some_and(|p| *p == "run") {
                    let name = words.get(k + 1).copied().unwrap_or_default();
                    if !packages.contains(name) {
                        wrong.push(format!("{}: no package {name:?}: {line}", path.display()));
                    }
                }
                let script = w.trim_matches(|c: char| "\"'(),;:.".contains(c));
                let Some(name) = script.strip_prefix("scripts/") else {
                    continue;
                };
                if name.is_empty() || name.contains(['<', '*']) {
                    continue;
                }
                // In a command's place in a code block (first, after `bash` or variables) it
                // must run; named anywhere else it must exist.
                let ran = fenced && words[..k].iter().all(|p| *p == "bash" || p.contains('='));
                let file = root.join("scripts").join(name);
                let ok = std::fs::metadata(&file).is_ok_and(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    !ran || m.permissions().mode() & 0o111 != 0 || name.ends_with(".py")
                });
                if !ok {
                    wrong.push(format!("{}: no script {script}: {line}", path.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The `agent-admin` commands the documents show, as its words before the first option
/// (`user create`, `recipe promote`).
fn admin_commands() -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for (_, text) in documents() {
        for (line, _) in commands(&text) {
            let Some(after) = line
                .split_once("cargo run -p admin --")
                .map(|(_, a)| a)
                .or_else(|| line.split_once("agent-admin ").map(|(_, a)| a))
            else {
                continue;
            };
            let words: Vec<String> = after
                .split_whitespace()
                .filter(|w| *w != "--json")
                .take_while(|w| {
                    w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-')
                })
                .take(2)
                .map(str::to_owned)
                .collect();
            if !words.is_empty() {
                out.insert(words);
            }
        }
    }
    out
}

#[tokio::test]
#[ignore = "needs the built binaries: scripts/test builds them"]
async fn every_agent_admin_command_shown_is_one_the_tool_knows() {
    let shown = admin_commands();
    assert!(shown.len() >= 10, "{shown:?}");
    let mut unknown = Vec::new();
    for words in &shown {
        let out = api_tests::process::command("agent-admin")
            .args(words)
            .arg("--help")
            .output()
            .await
            .expect("run agent-admin");
        if !out.status.success() {
            unknown.push(format!(
                "agent-admin {}: {}",
                words.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
}

#[test]
fn the_readme_is_a_front_door_that_links_every_document() {
    let docs = documents();
    let (_, readme) = &docs[0];
    let lines = readme.lines().count();
    assert!(lines <= 200, "the README has {lines} lines");
    let linked: BTreeSet<String> = links(readme).into_iter().collect();
    for (path, _) in &docs[1..] {
        let name = format!("docs/{}", path.file_name().expect("name").to_string_lossy());
        assert!(linked.contains(&name), "the README does not link {name}");
    }
}
