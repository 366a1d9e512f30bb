//! Unit tests of `hyperfine`.

use super::super::test_support::{assert_close, fixture};
use super::super::{Format, read};
use super::*;

const PLAIN: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/import/hyperfine/hyperfine.json"
));
const SCAN: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/import/hyperfine/hyperfine-scan.json"
));

#[test]
fn a_run_that_failed_is_kept_as_a_failed_run() {
    let failing = PLAIN.replacen(
        "\"exit_codes\": [\n        0,\n        0,",
        "\"exit_codes\": [\n        0,\n        2,",
        1,
    );
    assert_ne!(
        failing, PLAIN,
        "the fixture's exit codes are where the test expects"
    );
    let imported = parse("hyperfine.json", &failing).unwrap();
    let exits: Vec<_> = imported.benchmarks[0]
        .runs
        .iter()
        .map(|r| r.exit.clone())
        .collect();
    assert_eq!(
        exits[..3],
        [
            Some(Exit::Code(0)),
            Some(Exit::Code(2)),
            Some(Exit::Code(0))
        ]
    );
    let killed = failing.replacen("        2,", "        null,", 1);
    let imported = parse("hyperfine.json", &killed).unwrap();
    assert!(matches!(
        imported.benchmarks[0].runs[1].exit,
        Some(Exit::SpawnFailed(_))
    ));
    let torn = failing.replacen("        2,", "", 1);
    let error = parse("hyperfine.json", &torn).unwrap_err().to_string();
    assert_eq!(
        error,
        "hyperfine.json: benchmark \"sleep 0.01\" has 10 times but 9 exit codes (expected one per run)"
    );
}

fn secondary_names(b: &Benchmark) -> Vec<&str> {
    b.secondary.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn schema_2_measurements_are_runs_with_every_metric() {
    let file = fixture("hyperfine/hyperfine-2.0-metrics.json");
    let imported = read(Format::Hyperfine, &[file]).unwrap();
    assert_eq!(imported.tool_version.as_deref(), Some("2.0.0"));
    assert_eq!(imported.context["os"], "Linux");
    assert_eq!(imported.context["architecture"], "x86_64");
    let [first, second] = imported.benchmarks.as_slice() else {
        panic!("{:?}", imported.benchmarks)
    };
    assert_eq!(
        (
            first.name.as_str(),
            first.metric.as_str(),
            first.unit.as_str()
        ),
        ("sleep 0.01", "time", "s")
    );
    assert_eq!(
        secondary_names(first),
        [
            "memory_peak_resident",
            "time_cpu",
            "time_system",
            "time_user"
        ]
    );
    let memory = &first.secondary[0];
    assert_eq!((memory.unit.as_str(), memory.count), ("B", true));
    assert_eq!(
        (first.secondary[1].unit.as_str(), first.secondary[1].count),
        ("s", false)
    );
    assert_eq!(first.runs.len(), 5);
    assert_close(first.runs[0].values[0], 0.011980543000000001);
    assert_close(first.runs[4].values[0], 0.01702675);
    assert_close(first.runs[0].secondary["time_cpu"][0], 0.001718);
    assert_close(first.runs[4].secondary["time_cpu"][0], 0.002461);
    assert_close(
        first.runs[0].secondary["memory_peak_resident"][0],
        3117056.0,
    );
    assert_eq!(first.runs[0].exit, Some(Exit::Code(0)));
    assert_close(second.runs[4].values[0], 0.024236495);
    assert_close(
        second.runs[4].secondary["memory_peak_resident"][0],
        3248128.0,
    );
}

#[test]
fn schema_2_parameters_and_exit_codes_are_read() {
    let scan = read(
        Format::Hyperfine,
        &[fixture("hyperfine/hyperfine-2.0-scan.json")],
    )
    .unwrap();
    let params: Vec<&str> = scan
        .benchmarks
        .iter()
        .map(|b| b.params["n"].as_str())
        .collect();
    assert_eq!(params, ["1", "2", "3"]);
    assert!(scan.benchmarks.iter().all(|b| b.runs.len() == 4));
    assert_close(scan.benchmarks[2].runs[3].values[0], 0.035797431000000005);
    let failing = read(
        Format::Hyperfine,
        &[fixture("hyperfine/hyperfine-2.0-failing.json")],
    )
    .unwrap();
    let exits: Vec<Option<Exit>> = failing.benchmarks[0]
        .runs
        .iter()
        .map(|r| r.exit.clone())
        .collect();
    let expected: Vec<Option<Exit>> = [0, 1, 0, 1, 0, 1]
        .into_iter()
        .map(|c| Some(Exit::Code(c)))
        .collect();
    assert_eq!(exits, expected);
}

#[test]
fn hyperfine_1_20_memory_is_a_metric_of_each_run() {
    let imported = read(
        Format::Hyperfine,
        &[fixture("hyperfine/hyperfine-1.20.json")],
    )
    .unwrap();
    assert_eq!(imported.tool_version, None);
    let first = &imported.benchmarks[0];
    assert_eq!(secondary_names(first), ["memory_peak_resident"]);
    assert_close(first.runs[0].values[0], 0.017096891);
    assert_close(first.runs[4].values[0], 0.012554059000000001);
    assert_close(
        first.runs[4].secondary["memory_peak_resident"][0],
        3063808.0,
    );
    let list = read(
        Format::Hyperfine,
        &[fixture("hyperfine/hyperfine-1.20-list.json")],
    )
    .unwrap();
    let params: Vec<&str> = list
        .benchmarks
        .iter()
        .map(|b| b.params["n"].as_str())
        .collect();
    assert_eq!(params, ["1", "2"]);
}

#[test]
fn versions_1_and_2_of_one_command_merge_into_one_benchmark() {
    let files = [
        fixture("hyperfine/hyperfine.json"),
        fixture("hyperfine/hyperfine-2.0-metrics.json"),
    ];
    let imported = read(Format::Hyperfine, &files).unwrap();
    let plain = &imported.benchmarks[0];
    assert_eq!((plain.name.as_str(), plain.runs.len()), ("sleep 0.01", 15));
    assert!(plain.runs[0].secondary.is_empty());
    assert_close(plain.runs[14].secondary["time_cpu"][0], 0.002461);
}

#[test]
fn an_unknown_schema_and_a_measurement_without_its_metric_are_refused() {
    let later = r#"{"schema_version": 3, "results": []}"#;
    assert_eq!(
        parse("h.json", later).unwrap_err().to_string(),
        "h.json: schema_version 3: lab reads hyperfine 1.x's exports and 2.0's schema 2 (expected a file written by one of those versions)"
    );
    let torn = r#"{"schema_version": 2, "results": [{"command": "true", "measurements": [{"time_cpu": {"value": 0.1, "unit": "second"}}]}]}"#;
    assert_eq!(
        parse("h.json", torn).unwrap_err().to_string(),
        "h.json: benchmark \"true\": measurement 1 has no \"time_wall_clock\" (expected every measurement to hold the primary metric)"
    );
    let bare = r#"{"schema_version": 2, "results": [{"command": "true", "measurements": [{"time_wall_clock": 0.1}]}]}"#;
    assert_eq!(
        parse("h.json", bare).unwrap_err().to_string(),
        "h.json: benchmark \"true\": measurement 1 time_wall_clock is 0.1 (expected {\"value\": NUMBER, \"unit\": UNIT})"
    );
}

#[test]
fn each_command_is_a_benchmark_and_each_time_a_run() {
    let imported = parse("hyperfine.json", PLAIN).unwrap();
    assert_eq!(imported.format, Format::Hyperfine);
    assert_eq!(imported.tool_version, None);
    assert_eq!(imported.benchmarks.len(), 2);
    let first = &imported.benchmarks[0];
    assert_eq!(first.name, "sleep 0.01");
    assert!(first.params.is_empty());
    assert_eq!((first.metric.as_str(), first.unit.as_str()), ("time", "s"));
    assert!(!first.higher_is_better && !first.summary_only);
    assert_eq!(first.runs.len(), 10);
    assert_close(first.runs[0].values[0], 0.01091137478);
    assert_close(first.runs[9].values[0], 0.01795702578);
    assert!(
        first
            .runs
            .iter()
            .all(|run| !run.warmup && run.warmup_values.is_empty())
    );
    let second = &imported.benchmarks[1];
    assert_eq!(second.name, "sleep 0.012");
    assert_close(second.runs[0].values[0], 0.016473243779999997);
    assert_close(second.runs[9].values[0], 0.01812373978);
}

#[test]
fn a_parameter_scan_keeps_its_parameters() {
    let imported = parse("hyperfine-scan.json", SCAN).unwrap();
    let names: Vec<&str> = imported
        .benchmarks
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(names, ["sleep 0.01", "sleep 0.02", "sleep 0.03"]);
    for (benchmark, n) in imported.benchmarks.iter().zip(["1", "2", "3"]) {
        assert_eq!(benchmark.params, BTreeMap::from([("n".into(), n.into())]));
        assert_eq!(benchmark.runs.len(), 5);
    }
    assert_close(
        imported.benchmarks[2].runs[0].values[0],
        0.033421080740000005,
    );
    assert_close(imported.benchmarks[2].runs[4].values[0], 0.03257858074);
}

#[test]
fn exports_of_the_same_command_merge_across_files() {
    let files = [
        fixture("hyperfine/hyperfine.json"),
        fixture("hyperfine/hyperfine-scan.json"),
        fixture("hyperfine/hyperfine-again.json"),
    ];
    let imported = read(Format::Hyperfine, &files).unwrap();
    // "sleep 0.01" without parameters (two files) and with n=1 (the scan) stay apart.
    assert_eq!(imported.benchmarks.len(), 5);
    let plain = &imported.benchmarks[0];
    assert_eq!(plain.name, "sleep 0.01");
    assert!(plain.params.is_empty());
    assert_eq!(plain.runs.len(), 15);
    assert_close(plain.runs[10].values[0], 0.010809589780000002);
    assert_close(plain.runs[14].values[0], 0.01793614278);
    assert_eq!(imported.benchmarks[2].params["n"], "1");
    assert_eq!(imported.benchmarks[2].runs.len(), 5);
}

#[test]
fn a_pyperf_file_is_refused_naming_the_file() {
    let pyperf = std::fs::read_to_string(fixture("pyperf/pyperf.json")).unwrap();
    let error = parse("pyperf.json", &pyperf).unwrap_err().to_string();
    assert_eq!(
        error,
        "pyperf.json: not hyperfine --export-json output: no \"results\" array \
             (expected the file written by hyperfine --export-json FILE)"
    );
}

#[test]
fn negative_and_nan_times_are_refused_with_the_command() {
    let negative = r#"{"results": [{"command": "sleep 1", "times": [0.1, -0.2]}]}"#;
    let error = parse("h.json", negative).unwrap_err().to_string();
    assert!(
        error.contains("benchmark \"sleep 1\": time 2 is negative"),
        "{error}"
    );
    let nan = r#"{"results": [{"command": "sleep 1", "times": ["NaN"]}]}"#;
    let error = parse("h.json", nan).unwrap_err().to_string();
    assert!(
        error.contains("benchmark \"sleep 1\": time 1 is NaN"),
        "{error}"
    );
}

#[test]
fn a_summary_without_times_is_refused() {
    let summary = r#"{"results": [{"command": "sleep 1", "mean": 1.0}]}"#;
    let error = parse("h.json", summary).unwrap_err().to_string();
    assert!(
        error.starts_with("h.json: benchmark \"sleep 1\" has no per-run"),
        "{error}"
    );
}

#[test]
fn invalid_json_is_refused_naming_the_file() {
    let error = parse("h.json", "{").unwrap_err().to_string();
    assert!(error.starts_with("h.json: not hyperfine --export-json output: invalid JSON"));
}
