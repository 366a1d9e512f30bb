//! Properties of every importer, on files generated from random values: a file lab accepts
//! gives back each value it holds in samples.csv, exactly (after the format's documented unit
//! conversion, computed the same way here); a file lab refuses leaves nothing behind.

use crate::common;
use lab::Exit;

use common::{Project, csv_rows};
use proptest::prelude::*;

/// A format lab imports, and how a file of it holding `runs` (each run's values, in the
/// format's own unit) is written.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Hyperfine,
    Gbench,
    Jmh,
    PytestBenchmark,
    Go,
    Criterion,
    Asv,
    BenchmarkDotNet,
    Nanobench,
    Pyperf,
}

const KINDS: [Kind; 10] = [
    Kind::Hyperfine,
    Kind::Gbench,
    Kind::Jmh,
    Kind::PytestBenchmark,
    Kind::Go,
    Kind::Criterion,
    Kind::Asv,
    Kind::BenchmarkDotNet,
    Kind::Nanobench,
    Kind::Pyperf,
];

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Hyperfine => "hyperfine",
            Kind::Gbench => "gbench",
            Kind::Jmh => "jmh",
            Kind::PytestBenchmark => "pytest-benchmark",
            Kind::Go => "go",
            Kind::Criterion => "criterion",
            Kind::Asv => "asv",
            Kind::BenchmarkDotNet => "benchmarkdotnet",
            Kind::Nanobench => "nanobench",
            Kind::Pyperf => "pyperf",
        }
    }

    /// The value lab stores for a value written in the file, as the importer computes it.
    fn stored(self, written: f64) -> f64 {
        match self {
            Kind::Gbench | Kind::Go => written * 1e-9,
            Kind::Jmh => written * 1e-6,
            // One iteration per sample: times[i] / 1 ns, in seconds.
            Kind::Criterion => written / 1.0 * 1e-9,
            Kind::Hyperfine | Kind::PytestBenchmark | Kind::Asv | Kind::Pyperf => written,
            // Nanoseconds of an iteration of BDN_OPERATIONS operations, per operation in seconds.
            Kind::BenchmarkDotNet => written / BDN_OPERATIONS * 1e-9,
            // Seconds per iteration of NANOBENCH_BATCH units, per unit.
            Kind::Nanobench => written / NANOBENCH_BATCH,
        }
    }

    /// Writes the file (or folder) for these runs under `dir`; its path.
    fn write(self, dir: &std::path::Path, runs: &[Vec<f64>]) -> std::path::PathBuf {
        let all: Vec<f64> = runs.iter().flatten().copied().collect();
        if let Kind::Criterion = self {
            let folder = dir.join("c/x/new");
            std::fs::create_dir_all(&folder).unwrap();
            let iters = list(&vec![1.0; all.len()]);
            let sample = format!(
                r#"{{"sampling_mode": "Flat", "iters": {iters}, "times": {}}}"#,
                list(&all)
            );
            std::fs::write(folder.join("sample.json"), sample).unwrap();
            std::fs::write(folder.join("benchmark.json"), r#"{"group_id": "x"}"#).unwrap();
            return dir.join("c");
        }
        if let Kind::Asv = self {
            // In a machine's folder, as asv writes it: benchmarks.json is sought above it.
            std::fs::create_dir_all(dir.join("m")).unwrap();
            let path = dir.join("m/a.json");
            std::fs::write(&path, asv_text(runs)).unwrap();
            return path;
        }
        let (name, text) = self.text(runs, &all);
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The file name and text of a one-file format holding these runs.
    fn text(self, runs: &[Vec<f64>], all: &[f64]) -> (&'static str, String) {
        match self {
            Kind::Hyperfine => (
                "h.json",
                format!(
                    r#"{{"results": [{{"command": "x", "times": {}}}]}}"#,
                    list(all)
                ),
            ),
            Kind::Gbench => {
                let rows: Vec<String> = all
                    .iter()
                    .map(|x| format!(r#"{{"name": "BM_X", "run_name": "BM_X", "run_type": "iteration", "real_time": {x:?}, "time_unit": "ns"}}"#))
                    .collect();
                (
                    "g.json",
                    format!(
                        r#"{{"context": {{}}, "benchmarks": [{}]}}"#,
                        rows.join(", ")
                    ),
                )
            }
            Kind::Jmh => {
                let forks: Vec<String> = runs.iter().map(|r| list(r)).collect();
                let primary = format!(
                    r#"{{"scoreUnit": "us/op", "rawData": [{}]}}"#,
                    forks.join(", ")
                );
                (
                    "j.json",
                    format!(
                        r#"[{{"benchmark": "a.B.c", "mode": "avgt", "primaryMetric": {primary}}}]"#
                    ),
                )
            }
            Kind::PytestBenchmark => (
                "p.json",
                format!(
                    r#"{{"machine_info": {{}}, "benchmarks": [{{"fullname": "t.py::test_x", "stats": {{"data": {}}}}}]}}"#,
                    list(all)
                ),
            ),
            Kind::Go => {
                let lines: Vec<String> = all
                    .iter()
                    .map(|x| format!("BenchmarkX-2\t10\t{x:?} ns/op"))
                    .collect();
                (
                    "go.txt",
                    format!("goos: linux\n{}\nPASS\n", lines.join("\n")),
                )
            }
            Kind::BenchmarkDotNet => ("b-report-full.json", bdn_text(runs)),
            Kind::Nanobench => ("n.json", nanobench_text(runs)),
            Kind::Pyperf => ("y.json", pyperf_text(runs)),
            Kind::Criterion | Kind::Asv => unreachable!("written by Kind::write"),
        }
    }

    /// How the runs group in lab: one run per file for the formats whose file is one
    /// process, one per fork (JMH), one per value where each value is a run.
    fn runs_of(self, runs: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let all: Vec<f64> = runs.iter().flatten().copied().collect();
        match self {
            Kind::Jmh | Kind::Asv | Kind::BenchmarkDotNet | Kind::Nanobench | Kind::Pyperf => {
                runs.to_vec()
            }
            Kind::PytestBenchmark | Kind::Criterion => vec![all],
            Kind::Hyperfine | Kind::Gbench | Kind::Go => all.into_iter().map(|x| vec![x]).collect(),
        }
    }
}

/// An asv result file (format version 2) of one time benchmark whose parameter takes one
/// value per run: each run's values are that combination's samples.
fn asv_text(runs: &[Vec<f64>]) -> String {
    let params: Vec<String> = (0..runs.len()).map(|i| format!("\"{i}\"")).collect();
    let firsts: Vec<f64> = runs.iter().map(|r| r[0]).collect();
    let samples: Vec<String> = runs.iter().map(|r| list(r)).collect();
    format!(
        r#"{{"version": 2, "commit_hash": "0123456789", "params": {{"machine": "m"}},
        "result_columns": ["result", "params", "samples"],
        "results": {{"time_x": [{}, [[{}]], [{}]]}}}}"#,
        list(&firsts),
        params.join(", "),
        samples.join(", ")
    )
}

/// The operations of each iteration in [`bdn_text`]'s files.
const BDN_OPERATIONS: f64 = 16.0;

/// A BenchmarkDotNet full export of one benchmark launched once per run, each value one
/// Workload/Actual iteration's nanoseconds, beside the overhead and result iterations
/// BenchmarkDotNet writes too.
fn bdn_text(runs: &[Vec<f64>]) -> String {
    let mut measurements = Vec::new();
    for (launch, values) in runs.iter().enumerate() {
        for (i, x) in values.iter().enumerate() {
            for (mode, stage) in [
                ("Overhead", "Actual"),
                ("Workload", "Actual"),
                ("Workload", "Result"),
            ] {
                measurements.push(format!(
                    r#"{{"IterationMode": "{mode}", "IterationStage": "{stage}", "LaunchIndex": {}, "IterationIndex": {}, "Operations": {BDN_OPERATIONS}, "Nanoseconds": {x:?}}}"#,
                    launch + 1,
                    i + 1
                ));
            }
        }
    }
    format!(
        r#"{{"Title": "B", "HostEnvironmentInfo": {{"BenchmarkDotNetVersion": "0.15.8"}}, "Benchmarks": [{{"Type": "B", "Method": "X", "Parameters": "", "Statistics": {{}}, "Measurements": [{}]}}]}}"#,
        measurements.join(", ")
    )
}

/// The units of one iteration in [`nanobench_text`]'s files: a power of two, so that dividing
/// by it is exact.
const NANOBENCH_BATCH: f64 = 4.0;

/// nanobench JSON of one benchmark per run, all of one title and name (a benchmark run again by
/// the same `Bench`), each value an epoch's seconds per iteration.
fn nanobench_text(runs: &[Vec<f64>]) -> String {
    let results: Vec<String> = runs
        .iter()
        .map(|values| {
            let epochs: Vec<String> = values
                .iter()
                .map(|x| format!(r#"{{"iterations": 3, "elapsed": {x:?}, "instructions": 0}}"#))
                .collect();
            format!(
                r#"{{"title": "t", "name": "x", "unit": "op", "batch": {NANOBENCH_BATCH}, "epochs": {}, "measurements": [{}]}}"#,
                values.len(),
                epochs.join(", ")
            )
        })
        .collect();
    format!(r#"{{"results": [{}]}}"#, results.join(", "))
}

/// pyperf JSON (format "1.0") of one benchmark, each run one worker process's values in
/// seconds.
fn pyperf_text(runs: &[Vec<f64>]) -> String {
    let runs: Vec<String> = runs
        .iter()
        .map(|values| format!(r#"{{"values": {}}}"#, list(values)))
        .collect();
    format!(
        r#"{{"version": "1.0", "metadata": {{"name": "x", "unit": "second"}}, "benchmarks": [{{"runs": [{}]}}]}}"#,
        runs.join(", ")
    )
}

/// Values as a JSON list, each written so that it reads back as the same number.
fn list(values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", items.join(", "))
}

/// Each run's stored values of the main metric, in run order.
fn stored_runs(project: &Project, experiment: &str) -> Vec<Vec<f64>> {
    let mut out: Vec<(String, Vec<f64>)> = Vec::new();
    for row in csv_rows(&project.session(experiment).join("samples.csv")) {
        if row["metric"] != "time" && row["metric"] != "avgt_time" {
            continue;
        }
        let v: f64 = row["value"].parse().unwrap();
        match out.last_mut() {
            Some((id, vs)) if *id == row["run_id"] => vs.push(v),
            _ => out.push((row["run_id"].clone(), vec![v])),
        }
    }
    out.into_iter().map(|(_, v)| v).collect()
}

/// Positive values of arbitrary mantissa over the orders of magnitude benchmark times take
/// (a nanosecond to a hundred seconds once converted), in the format's unit.
fn value(kind: Kind) -> impl Strategy<Value = f64> {
    let per_second = 1.0 / kind.stored(1.0);
    (1.0f64..10.0, -9i32..2).prop_map(move |(m, e)| m * 10f64.powi(e) * per_second)
}

fn runs(kind: Kind) -> impl Strategy<Value = Vec<Vec<f64>>> {
    proptest::collection::vec(proptest::collection::vec(value(kind), 1..5), 1..4)
}

fn kind_and_runs() -> impl Strategy<Value = (Kind, Vec<Vec<f64>>)> {
    (0usize..KINDS.len()).prop_flat_map(|i| (Just(KINDS[i]), runs(KINDS[i])))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn accepted_files_give_back_every_value_exactly((kind, runs) in kind_and_runs()) {
        let project = Project::with_fixtures(&[]);
        let dir = tempfile::tempdir().unwrap();
        let file = kind.write(dir.path(), &runs).display().to_string();
        project.lab_exits(&["-q", "import", kind.word(), &file, "--into", "p"], Exit::Ok);
        let expected: Vec<Vec<f64>> = kind
            .runs_of(&runs)
            .into_iter()
            .map(|r| r.into_iter().map(|x| kind.stored(x)).collect())
            .collect();
        prop_assert_eq!(stored_runs(&project, "p"), expected);
    }

    #[test]
    fn refused_files_leave_nothing_behind((kind, runs) in kind_and_runs(), at in 0.0f64..1.0) {
        let project = Project::with_fixtures(&[]);
        let before = common::tree(project.root());
        let dir = tempfile::tempdir().unwrap();
        // One value negative: no measurement is, so the file is refused.
        let mut bad = runs.clone();
        let i = ((bad.len() - 1) as f64 * at) as usize;
        bad[i][0] = -bad[i][0];
        let file = kind.write(dir.path(), &bad).display().to_string();
        let out = project.lab_exits(&["import", kind.word(), &file, "--into", "p"], Exit::Usage);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        prop_assert!(err.contains("negative"), "{}", err);
        prop_assert_eq!(common::tree(project.root()), before);
    }
}
