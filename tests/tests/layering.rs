//! The layering of `shared/src`: no import cycle between its modules. A module is a file
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
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read the source tree") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
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

/// The text of a file without comments and without its inline test module (at the end).
fn code(text: &str) -> String {
    let uncommented: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let inline_tests =
        Regex::new(r"#\[cfg\(test\)\]\s*(pub(\(crate\))?\s+)?mod\s+\w+\s*\{").expect("regex");
    match inline_tests.find(&uncommented) {
        Some(m) => uncommented[..m.start()].to_owned(),
        None => uncommented,
    }
}

/// The import graph of a source tree: for each module, the modules it depends on (and the
/// paths that made each edge, to name them).
fn graph(root: &Path) -> BTreeMap<Module, BTreeMap<Module, BTreeSet<String>>> {
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
            if to.is_empty() || related(module, &to) || tests.contains(&to) {
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

#[test]
fn shared_has_no_import_cycle_between_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/src");
    let edges = graph(&root);
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
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(
        "lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub mod d;\npub mod f;\n",
    );
    write(
        "a/mod.rs",
        "mod inner;\npub use inner::Thing;\nuse super::b::{x, y::Z};\n",
    );
    write(
        "a/inner.rs",
        "pub struct Thing;\nuse super::Other;\nuse crate::b::x;\n",
    );
    write(
        "b.rs",
        "pub fn x() { crate::a::Thing; }\n#[cfg(test)]\nmod tests { use crate::c::Q; }\n",
    );
    write(
        "c.rs",
        "// use crate::a::Thing;\npub struct Q;\n#[cfg(test)]\nmod t;\n",
    );
    write("c/t.rs", "use crate::a::Thing;\n");
    // d's own item used by f, and f used by d's child e: d declares e, so d -> e -> f -> d.
    write("d/mod.rs", "mod e;\npub struct D;\n");
    write("d/e.rs", "use crate::f::x;\n");
    write("f.rs", "pub fn x() -> crate::d::D { crate::d::D }\n");
    let edges = graph(dir.path());
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
