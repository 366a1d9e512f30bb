//! `lab import asv` of real asv result files: each parameter combination's samples become one
//! run's values, asv's parameters and the commit become cells, failed and skipped benchmarks
//! failed runs, a results folder one session per machine, and a file of summaries only is
//! refused with nothing left behind.

use crate::common;
use lab::Exit;

use common::{Project, csv_rows};
use std::collections::BTreeMap;

fn fixture(relative: &str) -> String {
    crate::common::import_fixture(&format!("asv/{relative}"))
}

const VM: &str = "results/vm/4c3316fa-existing-py_work_asv-venv_bin_python.json";

/// Each run's values of `metric` in the latest session of `experiment`, by its cell
/// (`n/order` from runs.csv), in iteration order.
fn values_by_cell(project: &Project, experiment: &str) -> BTreeMap<String, Vec<f64>> {
    let session = project.session(experiment);
    let cells: BTreeMap<String, String> = csv_rows(&session.join("runs.csv"))
        .into_iter()
        .map(|r| (r["run_id"].clone(), format!("{}/{}", r["n"], r["order"])))
        .collect();
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for row in csv_rows(&session.join("samples.csv")) {
        out.entry(cells[&row["run_id"]].clone())
            .or_default()
            .push(row["value"].parse().unwrap());
    }
    out
}

/// The samples the file holds for `name`, per parameter combination.
fn samples(file: &str, name: &str) -> Vec<Vec<f64>> {
    let document: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(file)
            .unwrap()
            .replace("NaN", "null"),
    )
    .unwrap();
    let row = document["results"][name].as_array().unwrap();
    row[11]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn asv_samples_are_the_values_of_one_run_per_parameter_combination() {
    let project = Project::with_fixtures(&[]);
    let file = fixture(VM);
    project.lab_exits(
        &[
            "import",
            "asv",
            &file,
            "--into",
            "sorts",
            "--filter",
            "time_sort",
        ],
        Exit::Ok,
    );
    let got = values_by_cell(&project, "sorts");
    let want = samples(&file, "bench_sorts.Sorts.time_sort");
    let cells = ["100/sorted", "100/shuffled", "1000/sorted", "1000/shuffled"];
    assert_eq!(got.len(), 4);
    for (cell, values) in cells.iter().zip(&want) {
        assert_eq!(&got[*cell], values, "{cell}");
        assert_eq!(values.len(), 10);
    }
    assert_eq!(got["1000/shuffled"][0], 6.145499992271652e-05);
    let runs = csv_rows(&project.session("sorts").join("runs.csv"));
    assert_eq!(runs.len(), 4);
    assert!(runs.iter().all(|r| r["commit"] == "4c3316fa"));
    let toml = project.read("experiments/sorts/lab.toml");
    assert!(
        toml.contains("label = \"bench_sorts.Sorts.time_sort\""),
        "{toml}"
    );
    project.lab_exits(&["report", "sorts"], Exit::Ok);
    let chapter = crate::common::unlinked(&project.read("book/src/sorts/index.md"));
    // The medians of the samples, which asv's own `result` also holds; one commit is no column.
    for row in [
        "| bench_sorts.Sorts.time_sort | 1000 | shuffled | 65.3 µ |",
        "| bench_sorts.Sorts.time_sort | 100 | sorted | 1.36 µ |",
    ] {
        assert!(chapter.contains(row), "{row}\n{chapter}");
    }
}

#[test]
fn an_asv_results_folder_is_a_session_per_machine_with_failed_runs_judged() {
    let project = Project::with_fixtures(&[]);
    let out = project.lab_exits(
        &["import", "asv", &fixture("results"), "--into", "s"],
        Exit::CheckFailed,
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("2 machines or builds (vm, labvm)"), "{said}");
    assert!(
        said.contains("bench_sorts.time_fails ×1 (asv: failed)"),
        "{said}"
    );
    let sessions = project.sessions("s-time-by-commit-n-order");
    assert_eq!(sessions.len(), 2);
    let mut commits: Vec<(String, usize)> = sessions
        .iter()
        .map(|s| {
            let runs = csv_rows(&s.join("runs.csv"));
            (runs[0]["commit"].clone(), runs.len())
        })
        .collect();
    commits.sort();
    assert_eq!(commits, [("4c3316fa".into(), 4), ("b28ff83d".into(), 4)]);
    let sizes = csv_rows(&project.session("s-size-by-commit").join("samples.csv"));
    assert_eq!(sizes.len(), 1);
    assert_eq!(sizes[0]["value"].parse::<f64>().unwrap(), 8056.0);
    let skipped = csv_rows(&project.session("s-time-by-commit-param1").join("runs.csv"));
    let errors: Vec<&str> = skipped.iter().map(|r| r["spawn_error"].as_str()).collect();
    assert_eq!(errors, ["", "asv: skipped (n/a)"]);
}

#[test]
fn an_asv_file_of_summaries_only_is_refused_and_leaves_nothing() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("summary-only/vm/b28ff83d-existing-py_work_asv-venv_bin_python.json");
    let out = project.lab_exits(&["import", "asv", &file, "--into", "sum"], Exit::Usage);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("3 of 7 benchmarks (bench_sorts.Partly.time_sum, …) hold only asv's summary"),
        "{said}"
    );
    assert!(said.contains("asv run --record-samples"), "{said}");
    assert!(!project.path("experiments/sum").exists());
    assert!(!project.path("data/sum").exists());
}
