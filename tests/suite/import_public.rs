//! `lab import` of further real result files from public repositories: nanobench JSON that two
//! research projects committed, pytest-benchmark JSON that keeps every round, BenchmarkDotNet
//! exports of 0.9.9, 0.12.1 (cut short) and 0.15.8 (memory diagnoser), and a `go test -bench`
//! log of two packages whose benchmarks share names. Every value is checked against the file
//! itself, and every refusal by its text with nothing left behind.

use crate::common;
use crate::common::{import_fixture as fixture, stderr_text as stderr};
use lab::Exit;

use common::{Project, csv_rows};
use serde_json::Value;
use std::collections::BTreeMap;

fn document(file: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

fn numbers(list: &Value) -> Vec<f64> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// The full name of each variant of `experiment`, by its name, from the lab.toml it wrote.
fn labels(project: &Project, experiment: &str) -> BTreeMap<String, String> {
    let toml: toml::Table = project
        .read(&format!("experiments/{experiment}/lab.toml"))
        .parse()
        .unwrap();
    toml["variant"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let field = |key: &str| v[key].as_str().unwrap().to_string();
            (field("name"), field("label"))
        })
        .collect()
}

/// Every run of the latest session of `experiment`, in run order: its row of runs.csv and its
/// values of `metric`.
fn runs(
    project: &Project,
    experiment: &str,
    metric: &str,
) -> Vec<(BTreeMap<String, String>, Vec<f64>)> {
    let session = project.session(experiment);
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for row in csv_rows(&session.join("samples.csv")) {
        if row["metric"] == metric {
            values
                .entry(row["run_id"].clone())
                .or_default()
                .push(row["value"].parse().unwrap());
        }
    }
    csv_rows(&session.join("runs.csv"))
        .into_iter()
        .map(|row| {
            let got = values.remove(&row["run_id"]).unwrap_or_default();
            (row, got)
        })
        .collect()
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    }
}

fn within(a: f64, b: f64, relative: f64) -> bool {
    (a - b).abs() <= b.abs() * relative
}

/// The counters nanobench writes per epoch, as lab names their metrics.
const COUNTERS: [&str; 6] = [
    "instructions",
    "cpucycles",
    "branchinstructions",
    "branchmisses",
    "pagefaults",
    "contextswitches",
];

/// One real nanobench file imported into `into`: one run per benchmark, in the file's order,
/// its values each epoch's `elapsed` (batch 1) and each counter any epoch read a metric with
/// each epoch's count; nanobench's own median of the epochs reproduced.
fn assert_nanobench_file(project: &Project, file: &str, into: &str, benchmarks: usize) {
    let path = fixture(&format!("nanobench/{file}"));
    project.lab_exits(&["import", "nanobench", &path, "--into", into], Exit::Ok);
    let document = document(&path);
    let results = document["results"].as_array().unwrap();
    assert_eq!(results.len(), benchmarks, "{file}");
    let labels = labels(project, into);
    let times = runs(project, into, "time");
    assert_eq!(times.len(), benchmarks, "{file}");
    for (index, ((row, epochs), result)) in times.iter().zip(results).enumerate() {
        let text = |key: &str| result[key].as_str().unwrap().to_string();
        let label = format!("{}/{}", text("title"), text("name"));
        assert_eq!(labels[&row["variant"]], label, "{file}");
        assert_eq!(result["batch"], 1, "{file} {label}");
        let measurements = result["measurements"].as_array().unwrap();
        let elapsed: Vec<f64> = measurements
            .iter()
            .map(|e| e["elapsed"].as_f64().unwrap())
            .collect();
        assert_eq!(*epochs, elapsed, "{file} {label}");
        let own = result["median(elapsed)"].as_f64().unwrap();
        assert!(within(median(epochs), own, 1e-9), "{file} {label}");
        for counter in COUNTERS {
            let counts: Vec<f64> = measurements
                .iter()
                .map(|e| e[counter].as_f64().unwrap())
                .collect();
            let stored = &runs(project, into, counter)[index].1;
            if counts.iter().any(|c| *c > 0.0) {
                assert_eq!(*stored, counts, "{file} {label} {counter}");
            } else {
                assert!(stored.is_empty(), "{file} {label} {counter}");
            }
        }
    }
}

#[test]
fn real_nanobench_files_of_two_projects_import_every_epoch_and_counter() {
    let project = Project::with_fixtures(&[]);
    for (file, into, benchmarks) in [
        ("nanobench-4.3.11-collision-2023-09-08.json", "gjk", 4),
        (
            "nanobench-4.3.11-collision-2023-10-04-results-1.json",
            "gjk-again",
            4,
        ),
        ("nanobench-4.3.11-zest-sh-rotor.json", "rotor", 38),
        ("nanobench-4.3.11-zest-zernike.json", "zernike", 32),
    ] {
        assert_nanobench_file(&project, file, into, benchmarks);
    }
    // The collision study's page faults are fractions of a fault per iteration (one fault in
    // 1000 iterations of its first epoch), kept as nanobench wrote them.
    let faults = runs(&project, "gjk", "pagefaults");
    assert_eq!(faults[0].1[0], 0.001);
    let toml = project.read("experiments/rotor/lab.toml");
    assert!(toml.contains("label = \"SHRotor/1000\""), "{toml}");
}

/// The param values of a pytest-benchmark entry as lab stores them: text as it is, anything
/// else as compact JSON.
fn param_text(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_string)
}

#[test]
fn a_real_pytest_benchmark_file_that_keeps_its_rounds_imports_every_round() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("pytest-benchmark/real/pytest-benchmark-5.2.3-ferro-ta-data.json");
    let out = project.lab_exits(
        &["import", "pytest-benchmark", &file, "--into", "ta"],
        Exit::Ok,
    );
    assert!(
        stderr(&out).contains("imported 246 runs of 246 benchmarks from pytest-benchmark"),
        "{}",
        stderr(&out)
    );
    let document = document(&file);
    let entries = document["benchmarks"].as_array().unwrap();
    let mut imported = 0;
    // Its params come in three shapes, and each shape is an experiment of its own.
    for (experiment, keys) in [
        ("ta-by-indicator-library", vec!["indicator", "library"]),
        ("ta-by-indicator-libs", vec!["indicator", "libs"]),
        ("ta-by-indicator", vec!["indicator"]),
    ] {
        let shaped: Vec<&Value> = entries
            .iter()
            .filter(|b| b["params"].as_object().unwrap().keys().eq(keys.iter()))
            .collect();
        let labels = labels(&project, experiment);
        let got = runs(&project, experiment, "time");
        assert_eq!(got.len(), shaped.len(), "{experiment}");
        for ((row, rounds), entry) in got.iter().zip(&shaped) {
            let fullname = entry["fullname"].as_str().unwrap();
            assert_eq!(labels[&row["variant"]], fullname.split('[').next().unwrap());
            for key in &keys {
                assert_eq!(row[*key], param_text(&entry["params"][key]), "{fullname}");
            }
            let stats = &entry["stats"];
            assert_eq!(*rounds, numbers(&stats["data"]), "{fullname}");
            assert_eq!(rounds.len() as u64, stats["rounds"].as_u64().unwrap());
            let mean = rounds.iter().sum::<f64>() / rounds.len() as f64;
            let own = stats["mean"].as_f64().unwrap();
            assert!(within(mean, own, 1e-9), "{fullname}: {mean} is not {own}");
        }
        imported += got.len();
    }
    assert_eq!(imported, entries.len());
    assert_eq!(imported, 268);
}

#[test]
fn real_benchmarkdotnet_exports_of_0_15_8_import_and_of_0_12_1_and_0_9_9_are_refused() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("benchmarkdotnet/bdn-0.15.8-memory-report-full.json");
    project.lab_exits(
        &["import", "benchmarkdotnet", &file, "--into", "lists"],
        Exit::Ok,
    );
    let got = runs(&project, "lists", "time");
    let document = document(&file);
    let entries = document["Benchmarks"].as_array().unwrap();
    assert_eq!(got.len(), 2);
    for ((row, values), entry) in got.iter().zip(entries) {
        let actual: Vec<f64> = entry["Measurements"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["IterationMode"] == "Workload" && m["IterationStage"] == "Actual")
            .map(|m| m["Nanoseconds"].as_f64().unwrap() / m["Operations"].as_f64().unwrap() * 1e-9)
            .collect();
        assert_eq!(actual.len(), 3);
        assert_eq!(*values, actual, "{}", row["variant"]);
    }
    let before = common::tree(project.root());
    for (file, said) in [
        (
            "bdn-0.12.1-report-full.json",
            "2 of 2 benchmarks (Benchmarks.Fib10, …) hold statistics but none of the measured \
             iterations (Workload/Actual) they were made from: \"Benchmarks.Fib10\" keeps only \
             Overhead/Jitting ×2, Workload/Jitting ×2, Workload/Pilot ×16.",
        ),
        (
            "bdn-0.9.9-introjsonexport.json",
            "2 of 2 benchmarks (IntroJsonExport.Sleep10, …) hold only BenchmarkDotNet's \
             statistics, no measurements",
        ),
    ] {
        let path = fixture(&format!("benchmarkdotnet/{file}"));
        let out = project.lab_exits(
            &["import", "benchmarkdotnet", &path, "--into", "refused"],
            Exit::Usage,
        );
        assert!(
            stderr(&out).contains(&format!("{path}: {said}")),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(common::tree(project.root()), before);
}

#[test]
fn a_real_go_log_of_two_packages_keeps_their_benchmarks_of_one_name_apart() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("go/real/gofiber-two-packages.txt");
    let out = project.lab_exits(&["import", "go", &file, "--into", "fiber"], Exit::Ok);
    let cache = "github.com/gofiber/fiber/v3/middleware/cache";
    let csrf = "github.com/gofiber/fiber/v3/middleware/csrf";
    assert!(
        stderr(&out).contains(&format!(
            "note: {file} holds the results of 2 packages ({cache}, {csrf}): each benchmark \
             keeps its package as the param pkg, so that benchmarks of one name in two \
             packages stay apart"
        )),
        "{}",
        stderr(&out)
    );
    let labels = labels(&project, "fiber");
    let got: Vec<(String, String, Vec<f64>)> = runs(&project, "fiber", "time")
        .into_iter()
        .map(|(row, values)| (labels[&row["variant"]].clone(), row["pkg"].clone(), values))
        .collect();
    let expected = [
        ("BenchmarkAppendMsgitem", cache, 55.76e-9),
        ("BenchmarkUnmarshalitem", cache, 174.0e-9),
        ("BenchmarkAppendMsgitem", csrf, 0.3733e-9),
        ("BenchmarkUnmarshalitem", csrf, 4.360e-9),
    ];
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for ((label, pkg, values), (name, package, value)) in got.iter().zip(expected) {
        assert_eq!((label.as_str(), pkg.as_str()), (name, package));
        assert_eq!(values.len(), 1);
        assert!(
            within(values[0], value, 1e-12),
            "{name} {package}: {values:?}"
        );
    }
    // Each is its own cell: the 55.76 ns and the 0.3733 ns of BenchmarkAppendMsgitem are no
    // longer pooled.
    let toml = project.read("experiments/fiber/lab.toml");
    assert!(
        toml.contains(&format!("pkg = [\"{cache}\", \"{csrf}\"]")),
        "{toml}"
    );
}
