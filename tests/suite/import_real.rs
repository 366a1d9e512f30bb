//! `lab import` of what real result files do that clean ones do not: benchmarks criterion
//! saved under one id, failed benchmarks among good ones, build output before the JSON,
//! criterion 0.2 folders without benchmark.json, files of two machines that record none, and
//! a profiler's metric without values. Each outcome is asserted exactly: cells, runs, values
//! and what lab says.

use crate::common;
use crate::common::{import_fixture as fixture, stderr_text as stderr};
use lab::Exit;

use common::{Project, csv_rows};
use std::collections::BTreeMap;

/// The runs of each variant of the latest session of `experiment`, by variant, in file order.
fn runs_by_variant(project: &Project, experiment: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for row in csv_rows(&project.session(experiment).join("runs.csv")) {
        *out.entry(row["variant"].clone()).or_insert(0) += 1;
    }
    out
}

/// Every value of `metric` in the latest session of `experiment`, by run id.
fn values(project: &Project, experiment: &str, metric: &str) -> BTreeMap<String, Vec<f64>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for row in csv_rows(&project.session(experiment).join("samples.csv")) {
        if row["metric"] == metric {
            out.entry(row["run_id"].clone())
                .or_default()
                .push(row["value"].parse().unwrap());
        }
    }
    out
}

/// The `real_time` of every repetition row of a Google Benchmark JSON document (in a file
/// that may hold other text before it), in seconds, in file order.
fn gbench_times(file: &str) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(file).unwrap();
    let start = text.find("\n{").map_or(0, |i| i + 1);
    let document: serde_json::Value = serde_json::from_str(&text[start..]).unwrap();
    let scale = |unit: &str| match unit {
        "ns" => 1e-9,
        "us" => 1e-6,
        "ms" => 1e-3,
        _ => 1.0,
    };
    document["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["run_type"] == "iteration" && b.get("error_occurred").is_none())
        .map(|b| {
            let t = b["real_time"].as_f64().unwrap() * scale(b["time_unit"].as_str().unwrap());
            (b["run_name"].as_str().unwrap().to_string(), t)
        })
        .collect()
}

/// The main metric's values of the latest session of `experiment`, in run order.
fn time_values(project: &Project, experiment: &str) -> Vec<f64> {
    values(project, experiment, "time")
        .into_values()
        .flatten()
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= b.abs() * 1e-12
}

#[test]
fn failed_google_benchmark_rows_are_failed_runs_and_the_others_import() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("gbench/gbench-failing.json");
    let out = project.lab_exits(
        &["import", "gbench", &file, "--into", "failing"],
        Exit::CheckFailed,
    );
    assert!(
        stderr(&out).contains(&format!(
            "note: {file}: 6 of 18 runs failed or were skipped and hold no value: BM_Avx512 ×3 \
             (Google Benchmark: failed or skipped: unsupported), BM_OpenDevice ×3 (Google \
             Benchmark: failed or skipped: cannot open /dev/nonexistent); imported as failed \
             runs, which the exit check reports, and the other runs are analysed"
        )),
        "{}",
        stderr(&out)
    );
    // Six cells of three runs each; the two failed benchmarks' runs hold no value.
    let cells = runs_by_variant(&project, "failing");
    assert_eq!(cells.len(), 6, "{cells:?}");
    assert!(cells.values().all(|n| *n == 3), "{cells:?}");
    let runs = csv_rows(&project.session("failing").join("runs.csv"));
    let errors: Vec<&str> = runs.iter().map(|r| r["spawn_error"].as_str()).collect();
    let failed: Vec<&&str> = errors.iter().filter(|e| !e.is_empty()).collect();
    assert_eq!(failed.len(), 6);
    assert_eq!(
        *failed[0],
        "Google Benchmark: failed or skipped: unsupported"
    );
    assert_eq!(
        *failed[5],
        "Google Benchmark: failed or skipped: cannot open /dev/nonexistent"
    );
    let expected: Vec<f64> = gbench_times(&file).into_iter().map(|(_, t)| t).collect();
    let got = time_values(&project, "failing");
    assert_eq!(got.len(), 12);
    assert!(
        got.iter().zip(&expected).all(|(a, b)| close(*a, *b)),
        "{got:?}"
    );
}

#[test]
fn a_file_with_failed_benchmarks_neither_refuses_an_import_of_several_nor_a_filter() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("gbench/gbench-failing.json");
    // Imported alongside a clean file, the failing one no longer refuses the import.
    let clean = fixture("gbench/gbench.json");
    let out = project.lab_exits(
        &[
            "import",
            "gbench",
            &clean,
            &file,
            "--into",
            "both",
            "--machine",
            "here",
        ],
        Exit::CheckFailed,
    );
    assert!(
        stderr(&out).contains("imported 33 runs of 9 benchmarks"),
        "{}",
        stderr(&out)
    );
    // And a filter keeps only what it names, failed rows included or not.
    let out = project.lab_exits(
        &[
            "import", "gbench", &file, "--into", "sums", "--filter", "BM_Sum",
        ],
        Exit::Ok,
    );
    assert!(
        !stderr(&out).contains("failed or were skipped"),
        "{}",
        stderr(&out)
    );
    assert_eq!(runs_by_variant(&project, "sums").len(), 2);
}

#[test]
fn a_log_with_build_output_before_the_json_imports_the_json() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("gbench/gbench-ci.log");
    let out = project.lab_exits(&["import", "gbench", &file, "--into", "ci"], Exit::Ok);
    assert!(
        stderr(&out).contains(&format!(
            "note: {file}: the JSON document begins on line 3; the 2 lines of other text before it are left out"
        )),
        "{}",
        stderr(&out)
    );
    let expected: Vec<f64> = gbench_times(&file).into_iter().map(|(_, t)| t).collect();
    let got = time_values(&project, "ci");
    assert_eq!(got.len(), 9);
    assert!(
        got.iter().zip(&expected).all(|(a, b)| close(*a, *b)),
        "{got:?}"
    );
    assert_eq!(runs_by_variant(&project, "ci").len(), 3);
    // A file with no JSON document in it at all is still refused where it goes wrong.
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("build.log");
    std::fs::write(
        &text,
        "+ make\nmake: *** No rule to make target 'bench'.  Stop.\n",
    )
    .unwrap();
    let out = project.lab_exits(
        &[
            "import",
            "gbench",
            &text.display().to_string(),
            "--into",
            "none",
        ],
        Exit::Usage,
    );
    assert!(
        stderr(&out).contains("invalid JSON (expected value at line 1 column 1)"),
        "{}",
        stderr(&out)
    );
    assert!(!project.path("experiments/none").exists());
}

#[test]
fn criterion_0_2_folders_without_benchmark_json_are_named_by_their_path() {
    let project = Project::with_fixtures(&[]);
    let tree = fixture("criterion/criterion-0.2-2018");
    let out = project.lab_exits(&["import", "criterion", &tree, "--into", "old"], Exit::Ok);
    assert!(
        stderr(&out).contains(
            "note: criterion benchmark folders without benchmark.json (criterion 0.2, 2018) are named by their folder path below target/criterion"
        ),
        "{}",
        stderr(&out)
    );
    let toml = project.read("experiments/old/lab.toml");
    for label in [
        "count/filter",
        "parse/from_str/16",
        "parse/from_str/256",
        "sum 1000",
    ] {
        assert!(
            toml.contains(&format!("label = \"{label}\"")),
            "{label}\n{toml}"
        );
    }
    let cells = runs_by_variant(&project, "old");
    assert_eq!(cells.len(), 4);
    assert!(cells.values().all(|n| *n == 1));
    // Each sample's value is its time over its iterations, as with benchmark.json.
    let sample: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{tree}/count/filter/new/sample.json")).unwrap(),
    )
    .unwrap();
    let first = sample[1][0].as_f64().unwrap() / sample[0][0].as_f64().unwrap() * 1e-9;
    assert!(close(time_values(&project, "old")[0], first));
}

#[test]
fn two_machines_that_record_none_are_named_as_such_and_kept_apart_when_told() {
    let project = Project::with_fixtures(&[]);
    let desktop = fixture("hyperfine/render-desktop.json");
    let board = fixture("hyperfine/render-board.json");
    let out = project.lab_exits(
        &["import", "hyperfine", &desktop, &board, "--into", "render"],
        Exit::Ok,
    );
    let warning = format!(
        "warning: {desktop} and {board} record no machine, and \"./render scene.txt\" differs \
         between them by more than noise would (median "
    );
    assert!(stderr(&out).contains(&warning), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "they look like two machines, pooled here as one\n  hint: import each machine's files on their own, each with --machine LABEL, into the same experiment"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(runs_by_variant(&project, "render")["render-scene.txt"], 20);
    // Told which machine each file is, they are two sessions of 10 runs.
    for (file, label) in [(&desktop, "desktop"), (&board, "board")] {
        let out = project.lab_exits(
            &[
                "import",
                "hyperfine",
                file,
                "--into",
                "apart",
                "--machine",
                label,
            ],
            Exit::Ok,
        );
        assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    }
    assert_eq!(project.sessions("apart").len(), 2);
    assert_eq!(runs_by_variant(&project, "apart")["render-scene.txt"], 10);
    // One machine's two files of the same command raise nothing.
    let again = fixture("hyperfine/hyperfine-again.json");
    let first = fixture("hyperfine/hyperfine.json");
    let out = project.lab_exits(
        &["import", "hyperfine", &first, &again, "--into", "same"],
        Exit::Ok,
    );
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
}

#[test]
fn a_profiler_metric_without_values_is_left_out_and_said_once() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("jmh/jmh-perfasm.json");
    let out = project.lab_exits(&["import", "jmh", &file, "--into", "asm"], Exit::Ok);
    let said = format!(
        "note: {file}: secondary metric \"·asm\" (1 benchmark) left out: no numeric value recorded (a profiler's text result, or NaN and no raw data)"
    );
    assert_eq!(stderr(&out).matches(&said).count(), 1, "{}", stderr(&out));
    let toml = project.read("experiments/asm/lab.toml");
    assert!(!toml.contains("asm]"), "{toml}");
    assert_eq!(toml.matches("[metric.").count(), 1, "{toml}");
    let chapter = project.read("book/src/asm/index.md");
    assert!(!chapter.contains("no valid run"), "{chapter}");
    // 2 forks × 5 iterations, as in the file.
    let runs = values(&project, "asm", "time");
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.values().all(|v| v.len() == 5));
}

#[test]
fn criterion_benchmarks_saved_under_one_id_stay_apart() {
    let project = Project::with_fixtures(&[]);
    let tree = fixture("criterion/duplicate-ids");
    let out = project.lab_exits(&["import", "criterion", &tree, "--into", "dup"], Exit::Ok);
    assert_eq!(
        stderr(&out)
            .matches("note: criterion saved several benchmarks under one id (bench_with_input with no parameter): each keeps the \" #N\" criterion added to its title and folder, so they stay distinct variants (give them a parameter, BenchmarkId::new(NAME, INPUT), to name them)")
            .count(),
        1,
        "{}",
        stderr(&out)
    );
    let toml = project.read("experiments/dup/lab.toml");
    for label in [
        "checksum/fold",
        "checksum/fold #2",
        "checksum/fold #3",
        "checksum/fold #4",
    ] {
        assert!(
            toml.contains(&format!("label = \"{label}\"")),
            "{label}\n{toml}"
        );
    }
    // Four cells of one run each, each run its own folder's samples.
    let cells = runs_by_variant(&project, "dup");
    assert_eq!(cells.len(), 4, "{cells:?}");
    assert!(cells.values().all(|n| *n == 1));
    let times = values(&project, "dup", "time");
    let mut expected = Vec::new();
    for folder in ["fold", "fold_2", "fold_3", "fold_4"] {
        let text = std::fs::read_to_string(format!("{tree}/checksum/{folder}/new/sample.json"));
        let sample: serde_json::Value = serde_json::from_str(&text.unwrap()).unwrap();
        let first = sample["times"][0].as_f64().unwrap() / sample["iters"][0].as_f64().unwrap();
        expected.push(first * 1e-9);
    }
    let firsts: Vec<f64> = times.values().map(|v| v[0]).collect();
    assert_eq!(firsts.len(), 4);
    for (got, want) in firsts.iter().zip(&expected) {
        assert!(close(*got, *want), "{firsts:?} {expected:?}");
    }
    // The input sizes no longer mix: each cell's bytes per second is its own.
    let rates = values(&project, "dup", "bytes_per_second");
    assert_eq!(rates.len(), 4);
}

#[test]
fn pytest_benchmark_and_go_files_import_end_to_end() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("pytest-benchmark/pytest-benchmark-data.json");
    project.lab_exits(
        &["import", "pytest-benchmark", &file, "--into", "py"],
        Exit::Ok,
    );
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let rounds: Vec<f64> = document["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["stats"]["data"].as_array().unwrap().clone())
        .map(|v| v.as_f64().unwrap())
        .collect();
    // Parametrized tests and the plain one are two experiments, as their parameters differ.
    let mut got = time_values(&project, "py-by-n");
    got.extend(time_values(&project, "py-plain"));
    assert_eq!(got, rounds);
    let toml = project.read("experiments/py-by-n/lab.toml");
    assert!(
        toml.contains("label = \"test_sorts.py::test_insertion\""),
        "{toml}"
    );
    let summary = fixture("pytest-benchmark/pytest-benchmark-summary.json");
    let out = project.lab_exits(
        &["import", "pytest-benchmark", &summary, "--into", "sum"],
        Exit::Usage,
    );
    assert!(
        stderr(&out).contains("hold only summary statistics"),
        "{}",
        stderr(&out)
    );
    assert!(!project.path("experiments/sum").exists());
    let go = fixture("go/go-bench.txt");
    project.lab_exits(&["import", "go", &go, "--into", "gob"], Exit::Ok);
    let cells = runs_by_variant(&project, "gob");
    assert_eq!(cells.len(), 4);
    assert!(cells.values().all(|n| *n == 5));
    let first = time_values(&project, "gob")[0];
    assert!(close(first, 4834e-9), "{first}");
    let toml = project.read("experiments/gob/lab.toml");
    for table in [
        "[metric.bytes_per_op]",
        "[metric.allocs_per_op]",
        "[metric.mb_per_s]",
    ] {
        assert!(toml.contains(table), "{table}\n{toml}");
    }
}

/// Real `go test -bench` files from public repositories: each result line one run.
#[test]
fn real_go_files_import_every_result_line() {
    let project = Project::with_fixtures(&[]);
    let cases = [
        ("go/real/units-size.txt", "units", 1),
        ("go/real/go-pkg-benchmarks-loggers.txt", "loggers", 17),
        ("go/real/simdcbor.txt", "cbor", 72),
        ("go/real/backent-engine.txt", "engine", 50),
        ("go/real/benchstat-crc32-2017.txt", "crc", 360),
    ];
    for (file, into, runs) in cases {
        let path = fixture(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines = text
            .lines()
            .filter(|l| l.starts_with("Benchmark") && l.contains("ns/op"));
        assert_eq!(lines.count(), runs, "{file}");
        project.lab_exits(&["import", "go", &path, "--into", into], Exit::Ok);
        let total: usize = runs_by_variant(&project, into).values().sum();
        assert_eq!(total, runs, "{file}");
    }
}
