//! `lab import benchmarkdotnet` of real BenchmarkDotNet exports: each launch's measured
//! iterations are one run's values per operation, `Parameters` become cells, a benchmark that
//! failed a failed run, and a brief export (statistics only) is refused with nothing left behind.

use crate::common;
use lab::Exit;

use common::{Project, csv_rows};
use std::collections::BTreeMap;

fn fixture(relative: &str) -> String {
    crate::common::import_fixture(&format!("benchmarkdotnet/{relative}"))
}

/// Each run's values in the latest session of `experiment`, by `variant/N`, in iteration order.
fn values_by_cell(project: &Project, experiment: &str) -> BTreeMap<String, Vec<f64>> {
    let session = project.session(experiment);
    let cells: BTreeMap<String, String> = csv_rows(&session.join("runs.csv"))
        .into_iter()
        .map(|r| (r["run_id"].clone(), format!("{}/{}", r["variant"], r["N"])))
        .collect();
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for row in csv_rows(&session.join("samples.csv")) {
        out.entry(cells[&row["run_id"]].clone())
            .or_default()
            .push(row["value"].parse().unwrap());
    }
    out
}

/// The file's Workload/Actual iterations per benchmark, per operation in seconds, by
/// `Method/N` (variant names as lab makes them from `Type.Method`).
fn actual_iterations(file: &str) -> BTreeMap<String, Vec<f64>> {
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut out = BTreeMap::new();
    for b in document["Benchmarks"].as_array().unwrap() {
        let values: Vec<f64> = b["Measurements"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["IterationMode"] == "Workload" && m["IterationStage"] == "Actual")
            .map(|m| m["Nanoseconds"].as_f64().unwrap() / m["Operations"].as_f64().unwrap() * 1e-9)
            .collect();
        let n = b["Parameters"].as_str().unwrap().trim_start_matches("N=");
        let variant = format!(
            "{}.{}",
            b["Type"].as_str().unwrap(),
            b["Method"].as_str().unwrap()
        );
        out.insert(format!("{variant}/{n}"), values);
    }
    out
}

#[test]
fn benchmarkdotnet_iterations_are_the_values_of_one_run_per_launch_and_parameter() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("bdn-0.15.8-params-report-full.json");
    project.lab_exits(
        &["import", "benchmarkdotnet", &file, "--into", "hashes"],
        Exit::Ok,
    );
    let got = values_by_cell(&project, "hashes");
    assert_eq!(got, actual_iterations(&file));
    assert_eq!(got.len(), 6);
    assert!(got.values().all(|v| v.len() == 3));
    assert_eq!(
        got["Md5VsSha256Benchmark.Sha256/1000"][0],
        642231700.0 / 1048576.0 * 1e-9
    );
    let runs = csv_rows(&project.session("hashes").join("runs.csv"));
    assert_eq!(runs.len(), 6);
    let toml = project.read("experiments/hashes/lab.toml");
    assert!(toml.contains("N = [1000, 10000, 100000]"), "{toml}");
    assert!(toml.contains("imported = \"BenchmarkDotNet\""), "{toml}");
    project.lab_exits(&["report", "hashes"], Exit::Ok);
    let chapter = crate::common::unlinked(&project.read("book/src/hashes/index.md"));
    // Median and mean of each launch's iterations as measured: BenchmarkDotNet's own mean
    // (666.26 ns for the first) subtracts its overhead estimate and drops outliers first.
    for row in [
        "| Md5VsSha256Benchmark.Sha256 | 1000 | 675 n | 666 n |",
        "| Md5VsSha256Benchmark.Md5 | 100000 | 192 µ | 193 µ |",
    ] {
        assert!(chapter.contains(row), "{row}\n{chapter}");
    }
}

#[test]
fn a_benchmarkdotnet_benchmark_that_failed_is_a_failed_run_beside_the_others() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("bdn-0.14.1-failing-report-full-compressed.json");
    let out = project.lab_exits(
        &["import", "benchmarkdotnet", &file, "--into", "openapi"],
        Exit::CheckFailed,
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "1 of 3 runs failed or were skipped and hold no value: OpenApiBenchmarks.Swashbuckle ×1"
        ),
        "{said}"
    );
    let runs = csv_rows(&project.session("openapi").join("runs.csv"));
    let rows: Vec<(&str, &str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["variant"].as_str(),
                r["samples"].as_str(),
                r["spawn_error"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("OpenApiBenchmarks.AspNetCore", "63", ""),
            ("OpenApiBenchmarks.NSwag", "47", ""),
            (
                "OpenApiBenchmarks.Swashbuckle",
                "0",
                "BenchmarkDotNet: no measurements (the benchmark failed or did not run)"
            ),
        ]
    );
}

#[test]
fn a_brief_benchmarkdotnet_export_is_refused_and_leaves_nothing() {
    let project = Project::with_fixtures(&[]);
    let before = common::tree(project.root());
    let file = fixture("bdn-0.15.1-report-brief.json");
    let out = project.lab_exits(
        &["import", "benchmarkdotnet", &file, "--into", "brief"],
        Exit::Usage,
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("bdn-0.15.1-report-brief.json: 1 of 1 benchmarks"),
        "{said}"
    );
    assert!(said.contains("*-report-full.json"), "{said}");
    assert_eq!(common::tree(project.root()), before);
}
