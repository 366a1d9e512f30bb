//! `lab import` of real result files made on this machine (hyperfine, Google Benchmark,
//! pyperf, criterion; JMH written from its documented format): every raw value becomes a run's
//! iteration value, the manifest names the tool and each file's hash, and the usual chapter
//! follows. Files lab does not understand, and experiments that are not imported, are refused.

use crate::common;
use crate::common::{import_fixture as fixture, stderr_text as stderr};
use lab::Exit;

use common::{Project, csv_rows};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::process::Output;

fn manifest(project: &Project, experiment: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(project.session(experiment).join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Each run's values of the main metric (the first one stored), in iteration order, by run id.
fn values(project: &Project, experiment: &str) -> Vec<(String, Vec<f64>)> {
    let rows = csv_rows(&project.session(experiment).join("samples.csv"));
    let main = rows
        .first()
        .map(|r| r["metric"].clone())
        .unwrap_or_default();
    metric_values(project, experiment, &main)
}

/// Each run's values of `metric`, in iteration order, by run id (runs without one left out).
fn metric_values(project: &Project, experiment: &str, metric: &str) -> Vec<(String, Vec<f64>)> {
    let mut out: Vec<(String, Vec<f64>)> = Vec::new();
    let rows = csv_rows(&project.session(experiment).join("samples.csv"));
    for row in rows.iter().filter(|r| r["metric"] == metric) {
        let v: f64 = row["value"].parse().unwrap();
        match out.last_mut() {
            Some((id, vs)) if *id == row["run_id"] => vs.push(v),
            _ => out.push((row["run_id"].clone(), vec![v])),
        }
    }
    out
}

#[test]
fn hyperfine_runs_become_runs_and_the_record_names_the_files() {
    let project = Project::with_fixtures(&["tiny"]);
    let first = fixture("hyperfine/hyperfine.json");
    let again = fixture("hyperfine/hyperfine-again.json");
    project.lab_exits(
        &["import", "hyperfine", &first, &again, "--into", "sleeps"],
        Exit::Ok,
    );
    let toml = project.read("experiments/sleeps/lab.toml");
    for line in [
        "imported = \"hyperfine\"",
        "name = \"sleep-0.01\"\nlabel = \"sleep 0.01\"",
        "[metric.time]\njson = \"time\"\nunit = \"s\"\nbetter = \"lower\"",
    ] {
        assert!(toml.contains(line), "{line}\n{toml}");
    }
    // 10 + 10 runs in the first file, 5 more of `sleep 0.01` in the second.
    let runs = csv_rows(&project.session("sleeps").join("runs.csv"));
    assert_eq!(runs.len(), 25);
    assert_eq!(
        runs.iter().filter(|r| r["variant"] == "sleep-0.01").count(),
        15
    );
    let v = values(&project, "sleeps");
    assert_eq!(v[0].1, vec![0.01091137478]);
    assert!(v.iter().all(|(_, vs)| vs.len() == 1));
    let m = manifest(&project, "sleeps");
    assert_eq!(m["imported"]["tool"], "hyperfine");
    let hash = format!("{:x}", Sha256::digest(std::fs::read(&first).unwrap()));
    assert_eq!(m["imported"]["files"][0]["sha256"], hash.as_str());
    assert_eq!(m["imported"]["files"][1]["path"], again.as_str());
    // Each run's values are its log too, so a re-analysis reads them like any output.
    let log = common::run_stdout(&project.session("sleeps"), "r0001");
    assert_eq!(log, "{\"time\": 1.091137478e-2}\n");
    let chapter = project.read("book/src/sleeps/index.md");
    assert!(chapter.contains("(measured by hyperfine)"), "{chapter}");
    assert!(chapter.contains("lab did not run these processes: hyperfine measured them"));
    // lab never runs an imported experiment; a second import adds a session.
    let out = project.lab_exits(&["run", "sleeps"], Exit::Usage);
    assert!(stderr(&out).contains("holds results measured by hyperfine: lab does not run it"));
    project.lab_exits(
        &["import", "hyperfine", &again, "--into", "sleeps"],
        Exit::Ok,
    );
    assert_eq!(project.sessions("sleeps").len(), 2);
    assert_eq!(
        csv_rows(&project.session("sleeps").join("runs.csv")).len(),
        5
    );
}

#[test]
fn google_benchmark_repetitions_are_runs_and_its_aggregates_are_left_out() {
    let project = Project::with_fixtures(&[]);
    project.lab_exits(
        &[
            "import",
            "gbench",
            &fixture("gbench/gbench.json"),
            "--into",
            "gb",
        ],
        Exit::Ok,
    );
    let runs = csv_rows(&project.session("gb").join("runs.csv"));
    // Three benchmarks × 5 repetitions; the mean, median, stddev and cv entries are not runs.
    assert_eq!(runs.len(), 15);
    let v = values(&project, "gb");
    assert!(
        (v[0].1[0] - 54.973_233_356_730_42e-9).abs() < 1e-18,
        "{:?}",
        v[0]
    );
    assert!(
        project
            .read("experiments/gb/lab.toml")
            .contains("label = \"BM_Accumulate/64\"")
    );
}

#[test]
fn pyperf_calibration_runs_are_warm_ups_and_warm_up_values_are_kept_as_such() {
    let project = Project::with_fixtures(&[]);
    project.lab_exits(
        &[
            "import",
            "pyperf",
            &fixture("pyperf/pyperf.json"),
            "--into",
            "py",
        ],
        Exit::Ok,
    );
    assert!(
        project
            .read("experiments/py/lab.toml")
            .contains("warmup_iterations = 1")
    );
    let runs = csv_rows(&project.session("py").join("runs.csv"));
    assert_eq!(runs.len(), 11);
    assert_eq!(runs[0]["warmup"], "true", "the calibration run");
    assert!(runs[1..].iter().all(|r| r["warmup"] == "false"));
    let v = values(&project, "py");
    // The first measured run: its warm-up value, then its two values.
    assert_eq!(
        v[1].1,
        vec![
            2.9110349731298335e-06,
            2.226705657942807e-06,
            3.173594184863182e-06
        ]
    );
    let check = project.lab_exits(&["check", "py", "--json"], Exit::Ok);
    let json: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert!(json.to_string().contains("every run reported every metric"));
}

#[test]
fn jmh_forks_are_runs_and_mixed_kinds_of_value_are_split() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("jmh/jmh.json");
    project.lab_exits(&["import", "jmh", &file, "--into", "mixed"], Exit::Ok);
    let throughput = project.read("experiments/mixed-throughput-by-threads/lab.toml");
    assert!(throughput.contains("unit = \"ops/s\""), "{throughput}");
    let time = project.read("experiments/mixed-time-plain/lab.toml");
    assert!(time.contains("unit = \"s\""), "{time}");
    assert_eq!(values(&project, "mixed-time-plain")[1].1[4], 12.6234e-6);
    assert!(!project.path("experiments/mixed").exists());
    project.lab_exits(
        &[
            "import",
            "jmh",
            &file,
            "--into",
            "sort",
            "--filter",
            "sortThroughput",
        ],
        Exit::Ok,
    );
    let toml = project.read("experiments/sort/lab.toml");
    assert!(toml.contains("[params]\nthreads = [2]"), "{toml}");
    assert!(toml.contains("better = \"higher\""), "{toml}");
    let v = values(&project, "sort");
    assert_eq!(v.len(), 3, "3 forks");
    assert!(v.iter().all(|(_, vs)| vs.len() == 5), "5 iterations each");
    assert_eq!(v[0].1[0], 1523411.2834);
    // A file with only JMH's summary is imported as one value per benchmark, marked so.
    let summary = fixture("jmh/jmh-summary-only.json");
    project.lab_exits(
        &[
            "import",
            "jmh",
            &summary,
            "--into",
            "latency",
            "--filter",
            "sortLatency",
        ],
        Exit::Ok,
    );
    assert_eq!(
        manifest(&project, "latency")["imported"]["summary_only"],
        true
    );
}

#[test]
fn criterion_sample_files_are_one_run_each() {
    let project = Project::with_fixtures(&[]);
    let (a, b) = (
        fixture("criterion/analysis-run1"),
        fixture("criterion/analysis-run2"),
    );
    project.lab_exits(&["import", "criterion", &a, &b, "--into", "crit"], Exit::Ok);
    let v = values(&project, "crit");
    assert_eq!(v.len(), 2);
    let sample: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{a}/new/sample.json")).unwrap())
            .unwrap();
    let expected =
        sample["times"][0].as_f64().unwrap() / sample["iters"][0].as_f64().unwrap() / 1e9;
    assert!(
        (v[0].1[0] - expected).abs() < 1e-12 * expected,
        "{:?} {expected}",
        v[0]
    );
    assert_eq!(v[0].1.len(), sample["times"].as_array().unwrap().len());
}

/// Hostile benchmark names and a file name with a newline still give a lab.toml that reads
/// back with the names intact.
fn hostile_names_read_back_intact(project: &Project, hyperfine: &str) {
    let evil = project.path("evil\n[x].json");
    let text = std::fs::read_to_string(hyperfine).unwrap().replacen(
        "\"sleep 0.01\"",
        "\"<script>alert(1)</script> \\\"q\\\"\\n[[variant]]\"",
        1,
    );
    std::fs::write(&evil, text).unwrap();
    project.lab_exits(
        &[
            "import",
            "hyperfine",
            evil.to_str().unwrap(),
            "--into",
            "evil",
        ],
        Exit::Ok,
    );
    let toml = project.read("experiments/evil/lab.toml");
    // Each label reads back as the one value it was, not as TOML of its own: two variants.
    let parsed: toml::Table = toml.parse().unwrap();
    let labels: Vec<&str> = parsed["variant"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.get("label").and_then(toml::Value::as_str))
        .collect();
    assert_eq!(
        labels,
        [
            "<script>alert(1)</script> \"q\"\n[[variant]]",
            "sleep 0.012"
        ],
        "{toml}"
    );
}

#[test]
fn files_and_experiments_lab_cannot_import_into_are_refused() {
    let project = Project::with_fixtures(&["tiny"]);
    let pyperf = fixture("pyperf/pyperf.json");
    let out = project.lab_exits(
        &["import", "hyperfine", &pyperf, "--into", "x"],
        Exit::Usage,
    );
    assert!(stderr(&out).contains(&format!("{pyperf}: not hyperfine --export-json output")));
    let hyperfine = fixture("hyperfine/hyperfine.json");
    let out = project.lab_exits(
        &["import", "hyperfine", &hyperfine, "--into", "tiny"],
        Exit::Usage,
    );
    assert!(
        stderr(&out).contains("holds benchmarks lab runs itself"),
        "{}",
        stderr(&out)
    );
    hostile_names_read_back_intact(&project, &hyperfine);
    assert!(!project.read("book/src/evil/index.md").contains("<script>"));
    let out = project.lab_exits(
        &["import", "hyperfine", &hyperfine, "--into", "../up"],
        Exit::Usage,
    );
    assert!(
        stderr(&out).contains("a new experiment is a folder inside this project"),
        "{}",
        stderr(&out)
    );
    let out = project.lab_exits(
        &["import", "hyperfine", &hyperfine, "--into", "bad name"],
        Exit::Usage,
    );
    assert!(
        stderr(&out).contains("the experiment name \"bad name\""),
        "{}",
        stderr(&out)
    );
    assert!(project.sessions("x").is_empty() && !project.path("experiments/x").exists());
}

/// The experiments a mixed JMH suite is split into, with their variant names.
const FIELD_PARTS: [(&str, &str); 4] = [
    (
        "field-throughput-by-size",
        "ReentrantLockBench.lockUnlockThroughput",
    ),
    ("field-time-plain", "StampedLockBench.optimisticRead"),
    ("field-sample_time-plain", "StampedLockBench.readLatency"),
    ("field-time-by-size", "ReentrantLockBench.lockUnlockTime"),
];

#[test]
fn a_jmh_suite_of_long_names_mixed_parameters_units_and_modes_imports_in_one_go() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("jmh/jmh-field.json");
    let out = project.lab_exits(&["import", "jmh", &file, "--into", "field"], Exit::Ok);
    let package = "org.openjdk.bench.java.util.concurrent.locks.experimental";
    for (experiment, variant) in FIELD_PARTS {
        let toml = project.read(&format!("experiments/{experiment}/lab.toml"));
        let entry = format!("name = \"{variant}\"\nlabel = \"{package}.{variant}\"");
        assert!(toml.contains(&entry), "{entry}\n{toml}");
        project.lab_exits(&["check", experiment], Exit::Ok);
    }
    // Throughput keeps ops/ms, one run per size; times are in seconds.
    let throughput = values(&project, "field-throughput-by-size");
    assert_eq!(throughput.len(), 2);
    assert_eq!(throughput[0].1, [1523.25, 1534.5, 1529.75]);
    assert_eq!(throughput[1].1, [311.5, 309.25, 312.0]);
    assert_eq!(values(&project, "field-time-plain")[0].1[2], 0.0126e-6);
    // Sample mode: each iteration is its histogram's weighted mean.
    let sampled = values(&project, "field-sample_time-plain");
    assert_eq!(sampled.len(), 1);
    let [first, last] = sampled[0].1[..] else {
        panic!("{sampled:?}")
    };
    assert!((first - 0.022e-6).abs() < 1e-18 && (last - 0.04e-6).abs() < 1e-18);
    assert_eq!(
        values(&project, "field-time-by-size")[0].1,
        [0.65e-6, 0.66e-6, 0.64e-6]
    );
    // One fork per benchmark is said plainly, once per experiment.
    let err = stderr(&out);
    assert_eq!(
        err.matches("note: every benchmark holds one fork of JMH")
            .count(),
        4,
        "{err}"
    );
    let chapter = project.read("book/src/field-time-plain/index.md");
    assert!(
        chapter.contains("> **Note.** every benchmark holds one fork of JMH"),
        "{chapter}"
    );
    assert!(err.contains("no interval across processes"), "{err}");
    assert!(project.path("book/src/field-time-plain/index.md").is_file());
}

/// `lab import jmh jmh-field.json --into INTO --filter F…`, ending as `expected`.
fn import_field(project: &Project, into: &str, filters: &[&str], expected: Exit) -> Output {
    let file = fixture("jmh/jmh-field.json");
    let mut args = vec!["import", "jmh", &file, "--into", into];
    for filter in filters {
        args.extend(["--filter", filter]);
    }
    project.lab_exits(&args, expected)
}

#[test]
fn a_filter_by_mode_or_unit_selects_before_the_file_is_read_further() {
    let project = Project::with_fixtures(&[]);
    let out = import_field(&project, "sampled", &["mode=sample"], Exit::Ok);
    assert!(stderr(&out).contains("imported 1 run of 1 benchmark"));
    let toml = project.read("experiments/sampled/lab.toml");
    assert!(toml.contains("[metric.sample_time]"), "{toml}");
    assert_eq!(values(&project, "sampled").len(), 1);
    import_field(&project, "ops", &["unit=ops/ms", "size"], Exit::Usage);
    import_field(&project, "ops", &["unit=ops/ms", "Lock"], Exit::Ok);
    assert_eq!(values(&project, "ops").len(), 2);
    let out = import_field(&project, "none", &["unit=furlongs"], Exit::Usage);
    assert_eq!(
        stderr(&out).trim_end(),
        "error: the files hold no JMH benchmark to import that --filter unit=furlongs selects"
    );
    let out = import_field(&project, "none", &["kind=x"], Exit::Usage);
    assert!(stderr(&out).contains(
        "--filter kind=x: unknown key \"kind\" (expected name=TEXT, mode=MODE, unit=UNIT, or TEXT to match names)"
    ), "{}", stderr(&out));
    let hyperfine = fixture("hyperfine/hyperfine.json");
    let out = project.lab_exits(
        &[
            "import",
            "hyperfine",
            &hyperfine,
            "--into",
            "none",
            "--filter",
            "mode=avgt",
        ],
        Exit::Usage,
    );
    assert_eq!(
        stderr(&out).trim_end(),
        "error: --filter mode=avgt: only JMH results have modes; hyperfine files are selected by name=TEXT or unit=UNIT"
    );
    assert!(!project.path("experiments/none").exists());
    // -q prints no summary and no progress: only what the reader must know.
    let out = project.lab_exits(
        &[
            "-q",
            "import",
            "jmh",
            &fixture("jmh/jmh-field.json"),
            "--into",
            "quiet",
        ],
        Exit::Ok,
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().map(|l| l.split(':').next().unwrap()).collect();
    // The `·stack` profiler result left out, then the chapter's four notes.
    assert_eq!(lines, ["note"; 5]);
    assert!(
        err.starts_with("note: ")
            && err.contains("secondary metric \"·stack\" (1 benchmark) left out"),
        "{err}"
    );
}

#[test]
fn an_import_that_fails_part_way_leaves_nothing_behind() {
    let project = Project::with_fixtures(&["tiny"]);
    // The third of the four experiments exists and is not an imported one.
    std::fs::rename(
        project.path("experiments/tiny"),
        project.path("experiments/field-sample_time-plain"),
    )
    .unwrap();
    let before = project.read("experiments/field-sample_time-plain/lab.toml");
    let file = fixture("jmh/jmh-field.json");
    let out = project.lab_exits(&["import", "jmh", &file, "--into", "field"], Exit::Usage);
    assert!(
        stderr(&out).contains("holds benchmarks lab runs itself"),
        "{}",
        stderr(&out)
    );
    for (experiment, _) in FIELD_PARTS {
        if experiment != "field-sample_time-plain" {
            assert!(
                !project.path(&format!("experiments/{experiment}")).exists(),
                "{experiment}"
            );
        }
        assert!(
            !project.path(&format!("data/{experiment}")).exists(),
            "{experiment}"
        );
    }
    assert_eq!(
        project.read("experiments/field-sample_time-plain/lab.toml"),
        before
    );
    assert_eq!(staging_folders(&project), Vec::<String>::new());
    // Once the way is clear, the same import goes through.
    std::fs::remove_dir_all(project.path("experiments/field-sample_time-plain")).unwrap();
    project.lab_exits(&["import", "jmh", &file, "--into", "field"], Exit::Ok);
    // And again into the experiments it made: a second session each.
    project.lab_exits(&["import", "jmh", &file, "--into", "field"], Exit::Ok);
    for (experiment, _) in FIELD_PARTS {
        assert_eq!(project.sessions(experiment).len(), 2, "{experiment}");
    }
}

/// Each session of `experiment` as (machine label, run count, first value).
fn sessions_by_machine(project: &Project, experiment: &str) -> Vec<(String, usize, String)> {
    let mut out: Vec<(String, usize, String)> = project
        .sessions(experiment)
        .iter()
        .map(|dir| {
            let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
            let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
            let label = manifest["imported"]["machine"]
                .as_str()
                .unwrap()
                .to_string();
            let runs = csv_rows(&dir.join("runs.csv")).len();
            let first = csv_rows(&dir.join("samples.csv"))[0]["value"].clone();
            (label, runs, first)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn files_from_two_machines_are_two_sessions_whatever_their_order() {
    let project = Project::with_fixtures(&[]);
    let here = fixture("gbench/gbench.json");
    let there = fixture("gbench/gbench-other-host.json");
    let out = project.lab_exits(
        &["import", "gbench", &here, &there, "--into", "ab"],
        Exit::Ok,
    );
    assert!(
        stderr(&out).contains(
            "note: the files come from 2 machines or builds (m1-mini, vm): one session each, never pooled"
        ),
        "{}",
        stderr(&out)
    );
    project.lab_exits(
        &["import", "gbench", &there, &here, "--into", "ba"],
        Exit::Ok,
    );
    let ab = sessions_by_machine(&project, "ab");
    assert_eq!(ab.len(), 2);
    assert_eq!((ab[0].0.as_str(), ab[0].1), ("m1-mini", 15));
    assert_eq!((ab[1].0.as_str(), ab[1].1), ("vm", 15));
    assert_eq!(
        ab,
        sessions_by_machine(&project, "ba"),
        "order does not matter"
    );
    // The same lab.toml, with 5 repetitions: those of one machine.
    let body = |name: &str| -> String {
        let toml = project.read(&format!("experiments/{name}/lab.toml"));
        let lines = toml.lines().filter(|l| !l.starts_with('#'));
        let title = format!("title = \"{name}:");
        lines
            .collect::<Vec<_>>()
            .join("\n")
            .replace(&title, "title = \"NAME:")
    };
    assert_eq!(body("ab"), body("ba"));
    assert!(body("ab").contains("repetitions = 5\n"), "{}", body("ab"));
    // Said to be one machine, they are one session of 30 runs.
    project.lab_exits(
        &[
            "import",
            "gbench",
            &here,
            &there,
            "--into",
            "one",
            "--machine",
            "lab-vm",
        ],
        Exit::Ok,
    );
    let one = sessions_by_machine(&project, "one");
    assert_eq!(one.len(), 1);
    assert_eq!((one[0].0.as_str(), one[0].1), ("lab-vm", 30));
}

#[test]
fn old_formats_and_compressed_files_import_end_to_end() {
    let project = Project::with_fixtures(&[]);
    let cases = [
        ("pyperf", "pyperf/pyperf-gzip.json.gz", "gz", 11),
        ("gbench", "gbench/gbench-1.4.json", "gb14", 9),
        ("pyperf", "pyperf/perf-0.9.json", "perf09", 7),
        ("criterion", "criterion/criterion-0.2", "c02", 1),
    ];
    for (format, file, into, runs) in cases {
        let out = project.lab_exits(
            &["import", format, &fixture(file), "--into", into],
            Exit::Ok,
        );
        assert!(
            stderr(&out).contains(&format!(
                "imported {runs} run{} of ",
                if runs == 1 { "" } else { "s" }
            )),
            "{file}: {}",
            stderr(&out)
        );
        assert_eq!(
            csv_rows(&project.session(into).join("runs.csv")).len(),
            runs
        );
    }
    let file = fixture("gbench/gbench-aggregates-only.json");
    let out = project.lab_exits(&["import", "gbench", &file, "--into", "agg"], Exit::Usage);
    assert!(
        stderr(&out).starts_with(&format!(
            "error: {file}: 12 rows, all aggregates: mean, median, stddev, cv; lab needs the per-repetition rows"
        )),
        "{}",
        stderr(&out)
    );
    assert!(!project.path("experiments/agg").exists());
}

#[test]
fn hyperfine_runs_that_failed_are_failed_runs_judged_by_the_exit_check() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("hyperfine/hyperfine-failing.json");
    let out = project.lab_exits(
        &["import", "hyperfine", &file, "--into", "flaky"],
        Exit::CheckFailed,
    );
    let runs = csv_rows(&project.session("flaky").join("runs.csv"));
    let codes: Vec<&str> = runs.iter().map(|r| r["exit_code"].as_str()).collect();
    assert_eq!(codes, ["0", "1", "0", "0", "1", "0"]);
    assert_eq!(manifest(&project, "flaky")["imported"]["exit_codes"], true);
    let summary = String::from_utf8_lossy(&out.stdout);
    let exited = summary
        .lines()
        .find(|l| l.contains("every run exited normally"))
        .unwrap();
    assert_eq!(
        exited.trim(),
        "fail          every run exited normally: run r0002: exit code 1, and 1 more"
    );
    // The four runs that exited 0 are the ones analysed.
    let analysis = project.read("book/src/flaky/analysis.json");
    assert!(analysis.contains("\"n\": 4"), "{analysis}");
}

#[test]
fn every_metric_a_file_records_per_run_is_a_metric_of_the_experiment() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("hyperfine/hyperfine-2.0-metrics.json");
    project.lab_exits(&["import", "hyperfine", &file, "--into", "hf2"], Exit::Ok);
    let toml = project.read("experiments/hf2/lab.toml");
    let tables: Vec<&str> = toml.lines().filter(|l| l.starts_with("[metric.")).collect();
    assert_eq!(
        tables,
        [
            "[metric.time]",
            "[metric.memory_peak_resident]",
            "[metric.time_cpu]",
            "[metric.time_system]",
            "[metric.time_user]"
        ],
        "the wall time leads, so charts and the summary show it"
    );
    assert!(
        toml.contains("[metric.memory_peak_resident]\njson = \"memory_peak_resident\"\nunit = \"B\"\nbetter = \"lower\"\ncount = true\n"),
        "{toml}"
    );
    let wall = values(&project, "hf2");
    assert_eq!(wall.len(), 10);
    assert_eq!(wall[0].1, [0.011980543000000001]);
    assert_eq!(wall[9].1, [0.024236495]);
    let cpu = metric_values(&project, "hf2", "time_cpu");
    assert_eq!((cpu[0].1[0], cpu[4].1[0]), (0.001718, 0.002461));
    let memory = metric_values(&project, "hf2", "memory_peak_resident");
    assert_eq!((memory[0].1[0], memory[9].1[0]), (3117056.0, 3248128.0));
    assert_eq!(manifest(&project, "hf2")["imported"]["version"], "2.0.0");
    let chapter = project.read("book/src/hf2/index.md");
    for heading in [
        "### time (s)",
        "### memory_peak_resident (B)",
        "### time_user (s)",
    ] {
        assert!(chapter.contains(heading), "{heading}\n{chapter}");
    }
    let opening = chapter.lines().nth(2).unwrap();
    assert!(
        opening.contains("(complete), imported from hyperfine 2.0.0 at 20")
            && opening.ends_with("; measured by hyperfine on a machine the files do not name."),
        "{opening}"
    );
    // The log of a run holds every metric on one line, as lab reads it back.
    let log = common::run_stdout(&project.session("hf2"), "r0001");
    assert_eq!(
        log,
        "{\"time\": 1.1980543000000001e-2, \"memory_peak_resident\": 3.117056e6, \"time_cpu\": 1.718e-3, \"time_system\": 0e0, \"time_user\": 1.718e-3}\n"
    );
}

#[test]
fn a_secondary_metric_only_some_benchmarks_have_is_optional_and_fails_no_run() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("jmh/jmh-field.json");
    project.lab_exits(
        &[
            "import",
            "jmh",
            &file,
            "--into",
            "locks",
            "--filter",
            "mode=thrpt",
        ],
        Exit::Ok,
    );
    let toml = project.read("experiments/locks/lab.toml");
    assert!(
        toml.contains("[metric.gc_alloc_rate]\njson = \"gc_alloc_rate\"\nunit = \"MB/sec\"\nbetter = \"lower\"\noptional = true\n"),
        "{toml}"
    );
    assert!(
        toml.contains("[metric.gc_time]\njson = \"gc_time\"\nunit = \"s\""),
        "{toml}"
    );
    assert!(!toml.contains("stack"), "{toml}");
    let rate = metric_values(&project, "locks", "gc_alloc_rate");
    assert_eq!(rate.len(), 1, "only the size=10 fork has -prof gc values");
    assert_eq!(rate[0].1, [812.5, 809.25, 815.75]);
    let summary = project.read("book/src/locks/index.md");
    assert!(
        summary.contains("every run reported every metric: none of 2 runs failed"),
        "{summary}"
    );
}

/// A target/criterion tree: benchmark folders at two depths, criterion's report/ folders, and
/// a base/ beside new/ (the run before, not imported unless named). Returns its path.
fn criterion_tree(project: &Project) -> String {
    let tree = project.path("target/criterion").display().to_string();
    for (from, to) in [
        ("analysis-run1", "analysis/first"),
        ("analysis-run2", "analysis/second"),
        ("criterion-0.2", "fib 20"),
        ("criterion-0.2", "report/fib 20"),
    ] {
        let to = project.path(&format!("target/criterion/{to}"));
        for kind in ["new", "base"] {
            std::fs::create_dir_all(to.join(kind)).unwrap();
            for file in ["sample.json", "benchmark.json"] {
                let source = PathBuf::from(fixture(&format!("criterion/{from}/new/{file}")));
                std::fs::copy(source, to.join(kind).join(file)).unwrap();
            }
        }
    }
    tree
}

#[test]
fn google_benchmark_counters_and_a_criterion_tree_import_as_metrics() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("gbench/gbench-counters.json");
    project.lab_exits(&["import", "gbench", &file, "--into", "fill"], Exit::Ok);
    let toml = project.read("experiments/fill/lab.toml");
    let tables: Vec<&str> = toml.lines().filter(|l| l.starts_with("[metric.")).collect();
    assert_eq!(
        tables,
        [
            "[metric.time]",
            "[metric.cpu_time]",
            "[metric.bytes_per_second]",
            "[metric.elements]",
            "[metric.items_per_second]",
            "[metric.sorts]"
        ]
    );
    assert!(toml.contains("[metric.items_per_second]\njson = \"items_per_second\"\nunit = \"/s\"\nbetter = \"higher\"\n"), "{toml}");
    let sorts = metric_values(&project, "fill", "sorts");
    assert_eq!((sorts[0].1[0], sorts.len()), (6903.0, 6));
    let tree = criterion_tree(&project);
    project.lab_exits(&["import", "criterion", &tree, "--into", "crit"], Exit::Ok);
    let files = manifest(&project, "crit")["imported"]["files"].clone();
    let paths: Vec<String> = files
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            f["path"]
                .as_str()
                .unwrap()
                .strip_prefix(&tree)
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(paths, ["/analysis/first", "/analysis/second", "/fib 20"]);
    let runs = csv_rows(&project.session("crit").join("runs.csv"));
    assert_eq!(
        runs.len(),
        3,
        "one run per new/ folder: base/ and report/ are left out"
    );
}

/// (version, first and last per-iteration seconds of `sum 1000`, of `parse/from_str/256`),
/// computed from each sample.json's times[i] / iters[i] ns.
const CRITERION_SERIES: [(&str, [f64; 2], [f64; 2]); 5] = [
    (
        "0.2.11",
        [4.655201680749047e-10, 4.005997069556909e-10],
        [1.6330287318302908e-07, 1.8525505891187358e-07],
    ),
    (
        "0.3.6",
        [9.36597245827039e-10, 9.107386491884598e-10],
        [2.465848648648649e-07, 2.6189730656370657e-07],
    ),
    (
        "0.4.0",
        [4.2366107133109695e-10, 4.4927982488911863e-10],
        [1.2841127108658794e-07, 1.22775384372216e-07],
    ),
    (
        "0.5.1",
        [4.312343109283191e-10, 4.274594652180766e-10],
        [1.4933255592070393e-07, 1.1884279479840277e-07],
    ),
    (
        "0.8.2",
        [3.507198997201441e-10, 6.683135135730442e-10],
        [1.3643433680169714e-07, 1.281562405293464e-07],
    ),
];

/// Whether `a` is `b` to 12 significant digits.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= b.abs() * 1e-12
}

/// The target/criterion tree criterion `version` wrote imports as two experiments, the
/// per-iteration seconds of `sum 1000` and `parse/from_str/256` as expected, with the
/// throughput criterion declared.
fn imports_with_throughput(version: &str, sum: [f64; 2], parse: [f64; 2]) {
    let project = Project::with_fixtures(&[]);
    let tree = fixture(&format!("criterion/versions/{version}"));
    let out = project.lab_exits(&["import", "criterion", &tree, "--into", "c"], Exit::Ok);
    // `parse/from_str` takes an input (criterion's value_str); the other two do not.
    for experiment in ["c-by-value", "c-plain"] {
        assert!(
            project
                .path(&format!("experiments/{experiment}/lab.toml"))
                .is_file(),
            "{version}: {}",
            stderr(&out)
        );
    }
    let plain = project.read("experiments/c-plain/lab.toml");
    assert!(
        plain.contains("label = \"sum 1000\"") && plain.contains("label = \"count/filter\""),
        "{plain}"
    );
    assert!(
        plain.contains("[metric.elements_per_second]\njson = \"elements_per_second\"\nunit = \"/s\"\nbetter = \"higher\"\noptional = true\n"),
        "{version}: only count/filter declares Elements(1000)\n{plain}"
    );
    let by_value = project.read("experiments/c-by-value/lab.toml");
    assert!(by_value.contains("[metric.bytes_per_second]"), "{by_value}");
    let times = values(&project, "c-plain");
    // Sorted by folder: count/filter, then sum 1000; one run of 10 samples each.
    assert_eq!(
        times.len(),
        2,
        "{version}: base/ and named baselines are not imported"
    );
    let sum_run = &times[1].1;
    assert_eq!(sum_run.len(), 10);
    assert!(
        close(sum_run[0], sum[0]) && close(sum_run[9], sum[1]),
        "{version}: {sum_run:?}"
    );
    let parse_runs = values(&project, "c-by-value");
    let big = &parse_runs[1].1;
    assert!(
        close(big[0], parse[0]) && close(big[9], parse[1]),
        "{version}: {big:?}"
    );
    let rates = metric_values(&project, "c-by-value", "bytes_per_second");
    assert!(
        close(rates[1].1[0], 256.0 / parse[0]),
        "{version}: {:?}",
        rates[1]
    );
}

#[test]
fn criterion_trees_of_every_release_series_import_with_their_throughput() {
    for (version, sum, parse) in CRITERION_SERIES {
        imports_with_throughput(version, sum, parse);
    }
}

/// The staging folders an import left in the project root.
fn staging_folders(project: &Project) -> Vec<String> {
    std::fs::read_dir(project.path(""))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".lab-import-"))
        .collect()
}

#[test]
fn an_import_killed_part_way_leaves_nothing_in_place_and_the_next_one_clears_it() {
    let project = Project::with_fixtures(&[]);
    // One command timed 20,000 times: an import long enough to be killed while it writes.
    let times: Vec<String> = (0..20_000)
        .map(|i| format!("{}", 0.01 + i as f64 * 1e-9))
        .collect();
    let big = project.path("big.json");
    std::fs::write(
        &big,
        format!(
            "{{\"results\": [{{\"command\": \"sleep 0.01\", \"times\": [{}]}}]}}",
            times.join(", ")
        ),
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["import", "hyperfine", "big.json", "--into", "big"])
        .current_dir(project.path(""))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let staged_rows = project.path(&format!(".lab-import-{}/data/big", child.id()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let writing = loop {
        let rows = std::fs::read_dir(&staged_rows)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| std::fs::read_to_string(e.ok()?.path().join("runs.csv")).ok())
            .map_or(0, |t| t.lines().count());
        if rows > 10 {
            break true;
        }
        if std::time::Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert!(writing, "the import was seen writing its staged session");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!project.path("experiments/big").exists());
    assert!(!project.path("data/big").exists());
    assert_eq!(
        staging_folders(&project).len(),
        1,
        "the killed import's staging folder"
    );
    let file = fixture("hyperfine/hyperfine.json");
    project.lab_exits(&["import", "hyperfine", &file, "--into", "small"], Exit::Ok);
    assert_eq!(staging_folders(&project), Vec::<String>::new());
    assert!(!project.path("experiments/big").exists());
    assert_eq!(project.sessions("small").len(), 1);
}

#[test]
fn an_experiment_outside_experiments_is_named_for_where_it_lands_not_where_it_was_staged() {
    let project = Project::with_fixtures(&[]);
    let file = fixture("hyperfine/hyperfine.json");
    for _ in 0..2 {
        project.lab_exits(
            &["import", "hyperfine", &file, "--into", "studies/sleeps"],
            Exit::Ok,
        );
    }
    let data: Vec<String> = std::fs::read_dir(project.path("data"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(data.len(), 1, "{data:?}");
    assert!(data[0].starts_with("sleeps-"), "{data:?}");
    let sessions = std::fs::read_dir(project.path("data").join(&data[0]))
        .unwrap()
        .count();
    assert_eq!(
        sessions, 2,
        "the second import found the first one's experiment"
    );
    project.lab_exits(&["report", "studies/sleeps", "-q"], Exit::Ok);
    assert!(
        project
            .path(&format!("book/src/{}/index.md", data[0]))
            .is_file()
    );
}
