//! The layering of `shared/src`: no import cycle between its modules, and no import upward
//! through its layers (see [`LAYERS`]). A module is a file
//! (`a/b.rs` or `a/b/mod.rs` is `a::b`); it depends on every module it names (`use` trees,
//! `crate::`/`super::` paths in code), a name re-exported by a parent counted as the module it
//! comes from. A module's uses of its own descendants and theirs of it are one concept (a
//! parent re-exports its children, children use their parent's items) and are not counted, but
//! a parent declaring a child is: a module that uses a parent's items and is used by one of its
//! children makes a cycle. Test modules are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

type Module = Vec<String>;

/// The modules of a source tree and the files they are in.
fn modules(root: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    for path in api_tests::rust_files(root) {
        let rel = path.strip_prefix(root).expect("under the root");
        let mut parts: Module = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
            parts.pop();
        }
        out.insert(parts, path);
    }
    out
}

/// Expands a `use` tree (`a::{b, c::{d, e as f}}`) into its paths.
fn expand(prefix: &[String], tree: &str, out: &mut Vec<Module>) {
    let tree = tree.trim();
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(prefix, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(prefix, &inner[start..], out);
        return;
    }
    if tree.is_empty() {
        return;
    }
    if let Some(i) = tree.find("::{") {
        let mut p = prefix.to_vec();
        p.extend(tree[..i].split("::").map(|s| s.trim().to_owned()));
        expand(&p, &tree[i + 2..], out);
        return;
    }
    let name = tree.split(" as ").next().unwrap_or(tree);
    let mut p = prefix.to_vec();
    p.extend(name.split("::").map(|s| s.trim().to_owned()));
    out.push(p);
}

/// A path as written in `module`, made absolute (`None`: another crate's).
fn absolute(module: &Module, path: &[String], mods: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let first = path.first()?;
    match first.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "self" => Some([module.as_slice(), &path[1..]].concat()),
        "super" => {
            let mut base = module.clone();
            let mut rest = path;
            while rest.first().is_some_and(|p| p == "super") {
                base.pop();
                rest = &rest[1..];
            }
            Some([base.as_slice(), rest].concat())
        }
        _ => {
            let child = [module.as_slice(), &path[..1]].concat();
            mods.contains_key(&child)
                .then(|| [module.as_slice(), path].concat())
        }
    }
}

/// `text` without its line comments; a `//` inside a string (`"s3://"`, `r#"//"#`) or a
/// character literal is kept.
fn uncomment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => while chars.next_if(|n| *n != '\n').is_some() {},
            '\'' => {
                out.push(c);
                // A character literal whole (`'"'`, `'\''`), else a lifetime's quote.
                let ahead: String = chars.clone().take(3).collect();
                let len = match ahead.as_bytes() {
                    [b'\\', _, b'\'', ..] => 3,
                    [_, b'\'', ..] => 2,
                    _ => 0,
                };
                out.extend(chars.by_ref().take(len));
            }
            'r' if matches!(chars.peek(), Some('"' | '#')) => {
                out.push(c);
                let mut hashes = 0;
                while chars.next_if_eq(&'#').is_some() {
                    hashes += 1;
                    out.push('#');
                }
                if chars.next_if_eq(&'"').is_none() {
                    continue;
                }
                out.push('"');
                let close = format!("\"{}", "#".repeat(hashes));
                let mut body = String::new();
                for n in chars.by_ref() {
                    body.push(n);
                    if body.ends_with(&close) {
                        break;
                    }
                }
                out.push_str(&body);
            }
            '"' => {
                out.push(c);
                while let Some(n) = chars.next() {
                    out.push(n);
                    match n {
                        '\\' => out.extend(chars.next()),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The text of a file without comments and without its inline test module (at the end).
fn code(text: &str) -> String {
    let uncommented = uncomment(text);
    let inline_tests =
        Regex::new(r"#\[cfg\((?:all\()?test\b[^\]]*\]\s*(pub(\(crate\))?\s+)?mod\s+\w+\s*\{")
            .expect("regex");
    match inline_tests.find(&uncommented) {
        Some(m) => uncommented[..m.start()].to_owned(),
        None => uncommented,
    }
}

/// The import graph of a source tree: for each module, the modules it depends on (and the
/// paths that made each edge, to name them).
/// `parents_and_children`: the imports between a module and its own ancestors or descendants
/// are kept (the layer check needs them; the cycle check counts a module and its children as
/// one concept).
fn graph(
    root: &Path,
    parents_and_children: bool,
) -> BTreeMap<Module, BTreeMap<Module, BTreeSet<String>>> {
    let mods = modules(root);
    let test_mod =
        Regex::new(r#"#\[cfg\(test\)\]\s*(?:#\[path\s*=\s*"([^"]+)\.rs"\]\s*)?(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;"#)
            .expect("regex");
    let use_stmt = Regex::new(r"(pub(?:\([^)]*\))?\s+)?\buse\s+([^;]+);").expect("regex");
    let inline = Regex::new(r"\b(crate|super)((?:::\w+)+)").expect("regex");

    let mut tests = BTreeSet::new();
    let mut reexports: BTreeMap<(Module, String), Module> = BTreeMap::new();
    let mut paths: BTreeMap<Module, Vec<Module>> = BTreeMap::new();
    for (module, file) in &mods {
        let text = std::fs::read_to_string(file).expect("read a source file");
        for t in test_mod.captures_iter(&text) {
            let name = t.get(1).or(t.get(2)).map_or("", |m| m.as_str());
            // A `#[path]` names a file beside this one; a plain `mod` a child.
            let base = if t.get(1).is_some() {
                let is_dir_module = matches!(
                    file.file_name().and_then(|f| f.to_str()),
                    Some("mod.rs" | "lib.rs")
                );
                if is_dir_module {
                    module.clone()
                } else {
                    module[..module.len().saturating_sub(1)].to_vec()
                }
            } else {
                module.clone()
            };
            tests.insert([base.as_slice(), &[name.to_owned()]].concat());
        }
        let code = code(&text);
        let mut found = Vec::new();
        for u in use_stmt.captures_iter(&code) {
            let mut expanded = Vec::new();
            expand(&[], &u[2].replace('\n', " "), &mut expanded);
            for p in expanded {
                let Some(a) = absolute(module, &p, &mods) else {
                    continue;
                };
                if u.get(1).is_some() {
                    if let Some(name) = a.last() {
                        reexports.insert((module.clone(), name.clone()), a.clone());
                    }
                }
                found.push(a);
            }
        }
        for q in inline.captures_iter(&code) {
            let written: Module = std::iter::once(q[1].to_owned())
                .chain(q[2].split("::").skip(1).map(str::to_owned))
                .collect();
            found.extend(absolute(module, &written, &mods));
        }
        paths.insert(module.clone(), found);
    }

    // The module a path lands in: its longest prefix that is a module, followed through the
    // re-exports of that module.
    let target = |path: &Module| -> Module {
        let mut path = path.clone();
        for _ in 0..16 {
            let Some(n) = (0..=path.len())
                .rev()
                .find(|n| mods.contains_key(&path[..*n]))
            else {
                return Vec::new();
            };
            let module = path[..n].to_vec();
            match path
                .get(n)
                .and_then(|name| reexports.get(&(module.clone(), name.clone())))
            {
                Some(next) if *next != path => path = next.clone(),
                _ => return module,
            }
        }
        path
    };
    let related = |a: &Module, b: &Module| a.starts_with(b) || b.starts_with(a);

    let mut edges: BTreeMap<Module, BTreeMap<Module, BTreeSet<String>>> = BTreeMap::new();
    // A parent declares its children: with a module that uses the parent's own items and is
    // used by one of its children, that makes a cycle (a child's use of its parent does not).
    for module in mods.keys().filter(|m| m.len() > 1 && !tests.contains(*m)) {
        let parent = module[..module.len() - 1].to_vec();
        if mods.contains_key(&parent) {
            edges
                .entry(parent)
                .or_default()
                .entry(module.clone())
                .or_default()
                .insert(format!("mod {}", module.join("::")));
        }
    }
    for (module, found) in &paths {
        if tests.contains(module) {
            continue;
        }
        for path in found {
            let to = target(path);
            if to.is_empty()
                || (!parents_and_children && related(module, &to))
                || tests.contains(&to)
                || to == *module
            {
                continue;
            }
            edges
                .entry(module.clone())
                .or_default()
                .entry(to)
                .or_default()
                .insert(path.join("::"));
        }
    }
    edges
}

/// The strongly connected components with more than one module (Tarjan, iterative: every
/// module is a successor of a root that is no module).
fn cycles(edges: &BTreeMap<Module, BTreeMap<Module, BTreeSet<String>>>) -> Vec<Vec<Module>> {
    let nodes: BTreeSet<&Module> = edges
        .iter()
        .flat_map(|(k, v)| std::iter::once(k).chain(v.keys()))
        .collect();
    let succ = |n: &Module| -> Vec<&Module> {
        edges.get(n).map(|m| m.keys().collect()).unwrap_or_default()
    };
    let (mut index, mut low) = (BTreeMap::new(), BTreeMap::<&Module, usize>::new());
    let (mut stack, mut on_stack, mut out) = (Vec::new(), BTreeSet::new(), Vec::new());
    // (module or the root, its successors, how many were visited)
    let mut work: Vec<(Option<&Module>, Vec<&Module>, usize)> =
        vec![(None, nodes.into_iter().collect(), 0)];
    while let Some((v, succs, i)) = work.last_mut() {
        let v = *v;
        if let Some(&w) = succs.get(*i) {
            *i += 1;
            if !index.contains_key(w) {
                let n = index.len();
                index.insert(w, n);
                low.insert(w, n);
                stack.push(w);
                on_stack.insert(w);
                work.push((Some(w), succ(w), 0));
            } else if let Some(v) = v.filter(|_| on_stack.contains(w)) {
                let lw = index[w];
                let lv = low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            }
            continue;
        }
        work.pop();
        let Some(v) = v else { break };
        if let Some((Some(parent), _, _)) = work.last() {
            let lv = low[v];
            let lp = low.get_mut(*parent).expect("visited");
            *lp = (*lp).min(lv);
        }
        if low[v] == index[v] {
            let mut component = Vec::new();
            while let Some(w) = stack.pop() {
                on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                out.push(component);
            }
        }
    }
    out.sort();
    out
}

/// Each cycle with the imports that make it.
fn describe(
    cycle: &[Module],
    edges: &BTreeMap<Module, BTreeMap<Module, BTreeSet<String>>>,
    files: &BTreeMap<Module, PathBuf>,
) -> String {
    let mut text = cycle
        .iter()
        .map(|m| match files.get(m).and_then(|f| f.to_str()) {
            Some(file) => format!(
                "{} ({})",
                m.join("::"),
                file.split("/../").last().unwrap_or(file)
            ),
            None => m.join("::"),
        })
        .collect::<Vec<_>>()
        .join(" <-> ");
    for from in cycle {
        for (to, paths) in edges.get(from).into_iter().flatten() {
            if cycle.contains(to) {
                let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
                text.push_str(&format!(
                    "\n    {} uses {}",
                    from.join("::"),
                    paths.join(", ")
                ));
            }
        }
    }
    text
}

/// The layers of `shared/src`, each with the modules in it (a module is in the layer of its
/// longest listed prefix; one listed nowhere is a rule). A module may use modules of a lower
/// rank and of its own layer, never a higher rank or the other layer of its rank: use cases and
/// adapters meet only at the ports. Arrows point down: the entry runs the HTTP glue, which
/// takes the assembled context, which builds the adapters and hands the use cases their ports.
const LAYERS: &[(&str, u8, &[&str])] = &[
    ("entry", 5, &["", "runtime"]),
    ("http", 4, &["http", "realtime_auth"]),
    ("assembly", 3, &["context"]),
    (
        "use cases",
        2,
        &[
            "agent::promotion",
            "agent::step",
            "auth",
            "cleanup",
            "debug",
            "preferences",
            "provisioning",
            "realtime",
            "sessions",
            "tools",
        ],
    ),
    ("adapters", 2, &["adapters", "upstream"]),
    ("ports and settings", 1, &["ports", "config"]),
];

/// The layer of `module`: its name and rank (`rules`, rank 0, when no listed prefix holds it).
fn layer_of(module: &Module) -> (&'static str, u8) {
    let joined = module.join("::");
    LAYERS
        .iter()
        .flat_map(|(name, rank, prefixes)| prefixes.iter().map(move |p| (*name, *rank, *p)))
        .filter(|(_, _, p)| {
            joined == *p || (!p.is_empty() && joined.starts_with(&format!("{p}::")))
        })
        .max_by_key(|(_, _, p)| p.len())
        .map_or(("rules", 0), |(name, rank, _)| (name, rank))
}

/// Every import that goes up a layer or across to the other layer of its rank, with the
/// paths that make it.
fn upward(edges: &BTreeMap<Module, BTreeMap<Module, BTreeSet<String>>>) -> Vec<String> {
    let mut out = Vec::new();
    for (from, tos) in edges {
        let (from_layer, from_rank) = layer_of(from);
        for (to, paths) in tos {
            let (to_layer, to_rank) = layer_of(to);
            // Declaring a child module is not using it (`agent` declares the use case
            // `agent::step` next to its rules).
            let paths: Vec<&str> = paths
                .iter()
                .map(String::as_str)
                .filter(|p| !p.starts_with("mod "))
                .collect();
            if to_rank < from_rank || to_layer == from_layer || paths.is_empty() {
                continue;
            }
            out.push(format!(
                "{} ({from_layer}) uses {} ({to_layer}): {}",
                from.join("::"),
                to.join("::"),
                paths.join(", ")
            ));
        }
    }
    out
}

#[test]
fn shared_imports_only_down_its_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/src");
    let found = upward(&graph(&root, true));
    assert!(
        found.is_empty(),
        "imports against the layering of shared/src (use cases take ports, adapters implement \
         them; move the shared piece down):\n{}",
        found.join("\n")
    );
}

/// A source tree in a temporary directory, for the checks' own tests.
struct Tree(tempfile::TempDir);

impl Tree {
    fn new() -> Self {
        Self(tempfile::tempdir().expect("tempdir"))
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.0.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

/// The check refuses a rule using a port or a use case (also its own child module, and after
/// a `//` inside a string), an adapter using a use case and a use case using an adapter; it
/// lets a use case use ports and rules, and a test module use anything.
#[test]
fn the_layer_check_sees_imports_up_and_across() {
    let dir = Tree::new();
    dir.write(
        "lib.rs",
        "pub mod adapters;\npub mod agent;\npub mod domain;\npub mod ports;\npub mod tools;\n",
    );
    dir.write(
        "domain.rs",
        "pub struct D;\nuse crate::ports::P;\n\
         pub fn f() -> char { let _ = \"s3://b\"; crate::tools::run(); '\"' } // crate::adapters\n",
    );
    dir.write(
        "ports.rs",
        "pub trait P {}\nuse crate::domain::D;\n\
         #[cfg(all(test, feature = \"x\"))]\nmod tests { use crate::adapters::y; }\n",
    );
    dir.write(
        "adapters/mod.rs",
        "use crate::ports::P;\nfn f() { crate::tools::run(); }\n",
    );
    dir.write(
        "tools.rs",
        "use crate::{domain::D, ports::P};\npub fn run() { super::adapters::x(); }\n",
    );
    // `agent` holds rules and declares the use case `agent::step`, which it must not use.
    dir.write("agent/mod.rs", "pub mod step;\nuse step::go;\n");
    dir.write("agent/step.rs", "pub fn go() { super::rule(); }\n");
    let found = upward(&graph(dir.path(), true));
    let pairs: Vec<String> = found
        .iter()
        .map(|l| l.split(": ").next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        pairs,
        vec![
            "adapters (adapters) uses tools (use cases)",
            "agent (rules) uses agent::step (use cases)",
            "domain (rules) uses ports (ports and settings)",
            "domain (rules) uses tools (use cases)",
            "tools (use cases) uses adapters (adapters)",
        ],
        "{found:?}"
    );
}

#[test]
fn shared_has_no_import_cycle_between_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/src");
    let edges = graph(&root, false);
    let files = modules(&root);
    let found = cycles(&edges);
    let found: Vec<String> = found.iter().map(|c| describe(c, &edges, &files)).collect();
    assert!(
        found.is_empty(),
        "import cycles between modules of shared/src (split by concept, or move the shared \
         piece down):\n{}",
        found.join("\n")
    );
}

/// The check finds a cycle through `super::`, a `use` tree and a parent's re-export, and not
/// a parent and child using each other.
#[test]
fn the_check_sees_cycles_and_only_cycles() {
    let dir = Tree::new();
    dir.write(
        "lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub mod d;\npub mod f;\n",
    );
    dir.write(
        "a/mod.rs",
        "mod inner;\npub use inner::Thing;\nuse super::b::{x, y::Z};\n",
    );
    dir.write(
        "a/inner.rs",
        "pub struct Thing;\nuse super::Other;\nuse crate::b::x;\n",
    );
    dir.write(
        "b.rs",
        "pub fn x() { crate::a::Thing; }\n#[cfg(test)]\nmod tests { use crate::c::Q; }\n",
    );
    dir.write(
        "c.rs",
        "// use crate::a::Thing;\npub struct Q;\n#[cfg(test)]\nmod t;\n",
    );
    dir.write("c/t.rs", "use crate::a::Thing;\n");
    // d's own item used by f, and f used by d's child e: d declares e, so d -> e -> f -> d.
    dir.write("d/mod.rs", "mod e;\npub struct D;\n");
    dir.write("d/e.rs", "use crate::f::x;\n");
    dir.write("f.rs", "pub fn x() -> crate::d::D { crate::d::D }\n");
    let edges = graph(dir.path(), false);
    let found = cycles(&edges);
    let names: Vec<Vec<String>> = found
        .iter()
        .map(|c| c.iter().map(|m| m.join("::")).collect())
        .collect();
    // b names a::Thing, which a re-exports from a::inner, and a::inner uses b: a cycle. a and
    // a::inner use each other (parent and child), a uses b: no more. c's only uses are in a
    // comment and a test module.
    let owned = |c: &[&str]| c.iter().map(|m| (*m).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        names,
        vec![owned(&["a::inner", "b"]), owned(&["d", "d::e", "f"])],
        "{edges:?}"
    );
}
