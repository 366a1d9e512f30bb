//! The shape of lab's source, held by a test: no source file of any crate over 500 lines unless
//! structure.toml (at the repository root) says why, and no circle of imports between the
//! modules of a crate, at its top level or among the children of any folder module. Imports are
//! the `crate::` and `super::` paths of code outside `#[cfg(test)]` items and test files
//! (`tests.rs`, `*_tests.rs`); comments and strings are not imports. Every crate is read: `src/`
//! and each `crates/NAME/src/`.

mod paths;

use paths::references;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The most lines a source file has unless structure.toml gives a reason.
const MAX_LINES: usize = 500;

/// The repository root: the nearest folder above the test's package holding structure.toml.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("structure.toml").is_file())
        .expect("structure.toml at the repository root")
        .to_path_buf()
}

/// Every crate's source folder: `src/` and `crates/NAME/src/`, where they exist.
fn crate_sources(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("src"))
        .collect();
    dirs.push(root.join("src"));
    dirs.retain(|dir| dir.is_dir());
    dirs.sort();
    dirs
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `path` as structure.toml names it: relative to the repository root, `/` between parts.
fn shown(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative.to_string_lossy().replace('\\', "/")
}

/// What structure.toml allows: files over the limit and circles, each with its reason.
struct Allowed {
    long_files: BTreeMap<String, String>,
    circles: Vec<(BTreeSet<String>, String)>,
}

/// structure.toml read: `[long_files]` (path = reason) and `[[circle]]` (modules, reason).
fn allowed(root: &Path) -> Allowed {
    let text = std::fs::read_to_string(root.join("structure.toml")).unwrap();
    let table: toml::Table = text.parse().expect("structure.toml is TOML");
    let reason =
        |v: Option<&toml::Value>| v.and_then(toml::Value::as_str).unwrap_or("").to_string();
    let long_files = table
        .get("long_files")
        .and_then(toml::Value::as_table)
        .map(|t| {
            t.iter()
                .map(|(k, v)| (k.clone(), reason(Some(v))))
                .collect()
        })
        .unwrap_or_default();
    let circles = table
        .get("circle")
        .and_then(toml::Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    let modules = e.get("modules").and_then(toml::Value::as_array);
                    let names = modules
                        .into_iter()
                        .flatten()
                        .filter_map(toml::Value::as_str);
                    (names.map(str::to_string).collect(), reason(e.get("reason")))
                })
                .collect()
        })
        .unwrap_or_default();
    Allowed {
        long_files,
        circles,
    }
}

#[test]
fn no_source_file_is_over_500_lines_without_a_reason() {
    let root = repository();
    let allowed = allowed(&root);
    let mut problems = Vec::new();
    let mut long = BTreeSet::new();
    for file in crate_sources(&root).iter().flat_map(|dir| rust_files(dir)) {
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        if lines <= MAX_LINES {
            continue;
        }
        let name = shown(&root, &file);
        match allowed.long_files.get(&name) {
            None => problems.push(format!(
                "{name} has {lines} lines: split it (tests into a `_tests.rs` file first), or say in structure.toml's [long_files] why it is one file"
            )),
            Some(reason) if reason.trim().is_empty() => {
                problems.push(format!("{name}: structure.toml gives no reason"));
            }
            Some(_) => {}
        }
        long.insert(name);
    }
    for name in allowed.long_files.keys().filter(|n| !long.contains(*n)) {
        problems.push(format!(
            "{name} is listed in structure.toml but is no longer over {MAX_LINES} lines: remove its entry"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The module path of `file` under the crate's source folder `src`: `store/packed.rs` is
/// `[store, packed]`, `store/mod.rs` `[store]`, `lib.rs` and `main.rs` the root.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|p| ["mod", "lib", "main"].contains(&p.as_str()))
    {
        parts.pop();
    }
    parts
}

/// Whether `file` holds tests only: `tests.rs` or `NAME_tests.rs`.
fn is_test_file(file: &Path) -> bool {
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// For each folder module (by module path), which of its children uses which, each use with
/// the first place it is written.
type Uses = BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>>;

/// Every use of one module by another among siblings of the crate whose sources are in `src`:
/// a path from a file inside child A of a folder to child B of that folder is A → B.
fn sibling_uses(root: &Path, src: &Path) -> Uses {
    let mut uses = Uses::new();
    for file in rust_files(src).into_iter().filter(|f| !is_test_file(f)) {
        let from = module_of(src, &file);
        let text = std::fs::read_to_string(&file).unwrap();
        for (to, line) in references(&text, &from) {
            let k = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            let (Some(a), Some(b)) = (from.get(k), to.get(k)) else {
                continue;
            };
            let place = format!("{}:{line}", shown(root, &file));
            let folder = uses.entry(from[..k].to_vec()).or_default();
            folder
                .entry(a.clone())
                .or_default()
                .entry(b.clone())
                .or_insert(place);
        }
    }
    uses
}

/// The strongly connected groups of more than one node of `graph` (Tarjan, SIAM J. Comput.
/// 1:146, 1972).
fn circles_of(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<BTreeSet<String>> {
    struct Search<'g> {
        graph: &'g BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'g str, (usize, usize)>,
        stack: Vec<&'g str>,
        found: Vec<BTreeSet<String>>,
    }
    impl<'g> Search<'g> {
        fn visit(&mut self, v: &'g str) -> usize {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            let mut low = n;
            for w in self.graph.get(v).into_iter().flat_map(BTreeMap::keys) {
                low = match self.index.get(w.as_str()) {
                    None => low.min(self.visit(w)),
                    Some(&(i, _)) if self.stack.contains(&w.as_str()) => low.min(i),
                    Some(_) => low,
                };
            }
            self.index.insert(v, (n, low));
            if low == n {
                let at = self.stack.iter().position(|x| *x == v).unwrap();
                let group: BTreeSet<String> = self.stack.drain(at..).map(str::to_string).collect();
                if group.len() > 1 {
                    self.found.push(group);
                }
            }
            low
        }
    }
    let mut search = Search {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !search.index.contains_key(v.as_str()) {
            search.visit(v);
        }
    }
    search.found
}

/// A module as the failure names it: its file (`src/store/rows.rs`, `src/plan.rs`), or its
/// folder where a `mod.rs` is its file (`src/store/`).
fn module_file(root: &Path, src: &Path, path: &[String]) -> String {
    let dir = path.iter().fold(src.to_path_buf(), |p, part| p.join(part));
    let file = dir.with_extension("rs");
    if file.is_file() || !dir.is_dir() {
        shown(root, &file)
    } else {
        format!("{}/", shown(root, &dir))
    }
}

/// One circle found: its modules as files, and the uses that close it.
struct Circle {
    modules: BTreeSet<String>,
    uses: Vec<String>,
}

/// Every circle among sibling modules of the crate whose sources are in `src`.
fn circles(root: &Path, src: &Path) -> Vec<Circle> {
    let mut found = Vec::new();
    for (folder, graph) in sibling_uses(root, src) {
        for group in circles_of(&graph) {
            let file = |name: &String| {
                module_file(root, src, &[folder.clone(), vec![name.clone()]].concat())
            };
            let uses = group
                .iter()
                .flat_map(|a| {
                    graph[a]
                        .iter()
                        .filter(|(b, _)| group.contains(*b))
                        .map(move |(b, at)| (a, b, at))
                })
                .map(|(a, b, at)| format!("  {at}: {} uses {}", file(a), file(b)))
                .collect();
            found.push(Circle {
                modules: group.iter().map(file).collect(),
                uses,
            });
        }
    }
    found
}

#[test]
fn no_modules_of_a_crate_import_each_other_in_a_circle() {
    let root = repository();
    let allowed = allowed(&root);
    let found: Vec<Circle> = crate_sources(&root)
        .iter()
        .flat_map(|src| circles(&root, src))
        .collect();
    let mut problems = Vec::new();
    for circle in &found {
        let listed = allowed.circles.iter().find(|(m, _)| *m == circle.modules);
        if listed.is_none_or(|(_, reason)| reason.trim().is_empty()) {
            let names: Vec<&str> = circle.modules.iter().map(String::as_str).collect();
            problems.push(format!(
                "an import circle: {}\n{}\nmove what they share into the lower one (or a small module of its own), so that each pair imports one way",
                names.join(" ↔ "),
                circle.uses.join("\n")
            ));
        }
    }
    for (modules, _) in &allowed.circles {
        if !found.iter().any(|c| c.modules == *modules) {
            let names: Vec<&str> = modules.iter().map(String::as_str).collect();
            problems.push(format!(
                "structure.toml allows a circle that is no longer there ({}): remove its entry",
                names.join(" ↔ ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn paths_are_read_from_code_as_rustc_resolves_them() {
    let text = r#"
//! See [`crate::doc::only`]: comments are not imports.
use super::sibling::Item;
use crate::{top::{self, inner::Deep}, other as renamed};
const S: &str = "crate::in_a_string";
mod inline {
    use super::super::up_two;
}
#[cfg(test)]
mod tests {
    use crate::only_in_tests;
}
#[cfg(test)]
use crate::test_import;
fn f<'a>(c: char) -> char { if c == '{' { '}' } else { crate::after::call() } }
"#;
    let module: Vec<String> = ["store", "rows"].map(String::from).to_vec();
    let found: Vec<(String, usize)> = references(text, &module)
        .into_iter()
        .map(|(path, line)| (path.join("::"), line))
        .collect();
    let expected = [
        ("store::sibling::Item", 3),
        ("top", 4),
        ("top::inner::Deep", 4),
        ("other", 4),
        ("store::up_two", 7),
        ("after::call", 15),
    ];
    let expected: Vec<(String, usize)> = expected.map(|(p, l)| (p.to_string(), l)).to_vec();
    assert_eq!(found, expected);
}
