//! `lab import nanobench` of nanobench's JSON: each benchmark's epochs are one run's values per
//! unit, its counters secondary metrics, and the other templates are refused with nothing left
//! behind.

use crate::common;
use lab::Exit;

use common::{Project, csv_rows};
use std::collections::BTreeMap;

fn fixture(relative: &str) -> String {
    crate::common::import_fixture(&format!("nanobench/{relative}"))
}

/// The stored values of `metric` in the latest session of `experiment`, by variant, in epoch
/// order.
fn values_by_variant(
    project: &Project,
    experiment: &str,
    metric: &str,
) -> BTreeMap<String, Vec<f64>> {
    let session = project.session(experiment);
    let variants: BTreeMap<String, String> = csv_rows(&session.join("runs.csv"))
        .into_iter()
        .map(|r| (r["run_id"].clone(), r["variant"].clone()))
        .collect();
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for row in csv_rows(&session.join("samples.csv")) {
        if row["metric"] == metric {
            out.entry(variants[&row["run_id"]].clone())
                .or_default()
                .push(row["value"].parse().unwrap());
        }
    }
    out
}

#[test]
fn nanobench_epochs_are_the_values_of_one_run_and_its_counters_are_kept() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("nanobench-2020-docs-render.json");
    project.lab_exits(&["import", "nanobench", &file, "--into", "rng"], Exit::Ok);
    let runs = csv_rows(&project.session("rng").join("runs.csv"));
    assert_eq!(runs.len(), 2);
    let times = values_by_variant(&project, "rng", "time");
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for result in document["results"].as_array().unwrap() {
        // The variant's name is `title/name` made a name: each run of other characters a '-'.
        let variant = format!(
            "Benchmarking-std-mt19937_64-and-std-knuth_b-std-{}",
            result["name"].as_str().unwrap().trim_start_matches("std::")
        );
        let epochs: Vec<f64> = result["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["elapsed"].as_f64().unwrap())
            .collect();
        assert_eq!(times[&variant], epochs, "{variant}");
    }
    let instructions = values_by_variant(&project, "rng", "instructions");
    assert_eq!(
        instructions["Benchmarking-std-mt19937_64-and-std-knuth_b-std-mt19937_64"][0],
        125.885714285714
    );
    let toml = project.read("experiments/rng/lab.toml");
    assert!(toml.contains("imported = \"nanobench\""), "{toml}");
    project.lab_exits(&["report", "rng"], Exit::Ok);
    let chapter = crate::common::unlinked(&project.read("book/src/rng/index.md"));
    // Medians of the epochs: nanobench's own median(elapsed) is 25.44 ns and 31.94 ns, its
    // median(instructions) 125.99 and 170.01.
    for row in [
        "| Benchmarking-std-mt19937_64-and-std-knuth_b-std-mt19937_64 | 25.4 n |",
        "| Benchmarking-std-mt19937_64-and-std-knuth_b-std-knuth_b | 31.9 n |",
        "| Benchmarking-std-mt19937_64-and-std-knuth_b-std-mt19937_64 | 126 |",
        "| Benchmarking-std-mt19937_64-and-std-knuth_b-std-knuth_b | 170 |",
    ] {
        assert!(chapter.contains(row), "{row}\n{chapter}");
    }
}

#[test]
fn nanobench_csv_and_pyperf_templates_are_refused_and_leave_nothing() {
    let project = Project::with_fixtures(&[]);
    let before = common::tree(project.root());
    for file in ["nanobench-4.6.0-csv.csv", "nanobench-4.6.0-pyperf.json"] {
        let out = project.lab_exits(
            &["import", "nanobench", &fixture(file), "--into", "x"],
            Exit::Usage,
        );
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(file), "{said}");
        assert!(said.contains("templates::json()"), "{said}");
    }
    assert_eq!(common::tree(project.root()), before);
}
