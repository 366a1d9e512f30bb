//! The crate graph against its page: every `lab-*` dependency a `Cargo.toml` of the workspace
//! declares is a row's "depends on" in docs/src/topics/architecture.md, and every one the page shows
//! is declared. The layers under the book build without its crates.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

const PAGE: &str = "docs/src/topics/architecture.md";
/// Crates only the book and the command line may pull in.
const BOOK_CRATES: [&str; 3] = ["tera", "plotters", "mdbook-driver"];
/// The layers that must build without them.
const BELOW_THE_BOOK: [&str; 7] = [
    "lab-basis",
    "lab-stats",
    "lab-config",
    "lab-store",
    "lab-exec",
    "lab-findings",
    "lab-judge",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The package's name and its `[dependencies]` table, from one Cargo.toml.
fn manifest(path: &Path) -> (String, toml::Table) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = doc["package"]["name"].as_str().unwrap().to_string();
    let deps = doc
        .get("dependencies")
        .and_then(|d| d.as_table())
        .cloned()
        .unwrap_or_default();
    (name, deps)
}

/// Every package of the workspace with its `[dependencies]`.
fn workspace() -> BTreeMap<String, toml::Table> {
    let mut paths = vec![root().join("Cargo.toml")];
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let path = entry.unwrap().path().join("Cargo.toml");
        if path.is_file() {
            paths.push(path);
        }
    }
    paths.iter().map(|p| manifest(p)).collect()
}

/// The `lab-*` edges the manifests declare.
fn declared() -> Graph {
    workspace()
        .into_iter()
        .map(|(name, deps)| {
            let lab = deps.keys().filter(|d| d.starts_with("lab-")).cloned();
            (name, lab.collect())
        })
        .collect()
}

/// The edges the architecture page's table shows: `| `lab-x` | what | `lab-a`, `lab-b` |`.
fn drawn() -> Graph {
    let page = std::fs::read_to_string(root().join(PAGE)).unwrap();
    let mut graph = Graph::new();
    for line in page.lines().filter(|l| l.starts_with("| `lab")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let name = cells[0].trim_matches('`').to_string();
        let deps = cells[2]
            .split(',')
            .map(|d| d.trim().trim_matches('`'))
            .filter(|d| d.starts_with("lab-"))
            .map(str::to_string)
            .collect();
        graph.insert(name, deps);
    }
    graph
}

#[test]
fn the_crate_graph_is_the_one_its_page_draws() {
    let mut declared = declared();
    let mut drawn = drawn();
    // The command line's row says "every crate above": it may use any of them.
    let top = declared.remove("lab").expect("the lab package");
    drawn.remove("lab");
    let below: BTreeSet<String> = drawn.keys().cloned().collect();
    assert!(
        top.is_subset(&below),
        "lab uses a crate the page does not list: {top:?}"
    );
    for (name, deps) in &declared {
        let shown = drawn.get(name).unwrap_or_else(|| {
            panic!("{name} is a crate of the workspace but has no row in {PAGE}")
        });
        assert_eq!(
            deps, shown,
            "{name}'s Cargo.toml and its row in {PAGE} differ: mend whichever is wrong"
        );
    }
    let extra: Vec<&String> = drawn
        .keys()
        .filter(|n| !declared.contains_key(*n))
        .collect();
    assert!(
        extra.is_empty(),
        "{PAGE} shows crates that do not exist: {extra:?}"
    );
}

#[test]
fn the_layers_under_the_book_build_without_its_crates() {
    let packages = workspace();
    for start in BELOW_THE_BOOK {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.to_string()];
        while let Some(name) = todo.pop() {
            if !seen.insert(name.clone()) {
                continue;
            }
            let deps = &packages[&name];
            for book in BOOK_CRATES {
                assert!(
                    !deps.contains_key(book),
                    "{start} pulls in {book} through {name}"
                );
            }
            todo.extend(deps.keys().filter(|d| d.starts_with("lab-")).cloned());
        }
    }
}
