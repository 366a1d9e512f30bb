//! Unit tests of `pyperf`.

use super::super::test_support::{assert_close, fixture};
use super::super::{Format, read};
use super::*;

const SORTED: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/import/pyperf/pyperf.json"
));
const SUITE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/import/pyperf/pyperf-suite.json"
));

/// The one benchmark of a `timeit` file, checked: its tool version, name, unit, number of runs
/// and the calibration run first.
fn one_timeit<'i>(imported: &'i Imported, version: &str, runs: usize) -> &'i Benchmark {
    assert_eq!(imported.tool_version.as_deref(), Some(version));
    assert_eq!(imported.benchmarks.len(), 1);
    let timeit = &imported.benchmarks[0];
    assert_eq!(timeit.name, "timeit");
    assert_eq!(
        (timeit.metric.as_str(), timeit.unit.as_str()),
        ("time", "s")
    );
    assert_eq!(timeit.runs.len(), runs);
    assert!(timeit.runs[0].warmup && timeit.runs[0].values.is_empty());
    timeit
}

#[test]
fn a_timeit_file_is_one_benchmark_with_a_calibration_run() {
    let imported = parse("pyperf.json", SORTED).unwrap();
    assert_eq!(imported.format, Format::Pyperf);
    let timeit = one_timeit(&imported, "2.11.0", 11);
    let calibration = &timeit.runs[0];
    assert_eq!(calibration.warmup_values.len(), 20);
    assert_close(calibration.warmup_values[0], 6.491998647106811e-06);
    assert_close(calibration.warmup_values[19], 1.9850232238771692e-06);
    let first = &timeit.runs[1];
    assert!(!first.warmup);
    assert_eq!(first.values.len(), 2);
    assert_close(first.values[0], 2.226705657942807e-06);
    assert_close(first.values[1], 3.173594184863182e-06);
    assert_eq!(first.warmup_values.len(), 1);
    assert_close(first.warmup_values[0], 2.9110349731298335e-06);
    let last = &timeit.runs[10];
    assert_close(last.values[0], 2.2451219177377357e-06);
    assert_close(last.values[1], 1.7336976089465939e-06);
    assert!(
        timeit.runs[1..]
            .iter()
            .all(|run| !run.warmup && run.values.len() == 2)
    );
}

#[test]
fn machine_metadata_is_the_context() {
    let imported = parse("pyperf.json", SORTED).unwrap();
    assert_eq!(imported.context["cpu_model_name"], "AMD EPYC");
    assert_eq!(imported.context["hostname"], "vm");
    assert_eq!(imported.context["cpu_count"], "2");
    for describing in ["name", "unit", "loops", "perf_version", "timeit_stmt"] {
        assert!(!imported.context.contains_key(describing), "{describing}");
    }
}

#[test]
fn a_suite_holds_each_benchmark_with_its_own_name() {
    let imported = parse("pyperf-suite.json", SUITE).unwrap();
    let names: Vec<&str> = imported
        .benchmarks
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(names, ["timeit", "join"]);
    let join = &imported.benchmarks[1];
    assert_eq!(join.runs.len(), 11);
    assert!(join.runs[0].warmup);
    assert_close(join.runs[1].values[0], 1.579789703365364e-05);
    assert_close(join.runs[10].values[1], 6.927183715754737e-06);
    assert_eq!(imported.context["hostname"], "vm");
}

#[test]
fn files_of_the_same_benchmark_merge_and_others_stay_apart() {
    let files = [
        fixture("pyperf/pyperf.json"),
        fixture("pyperf/pyperf-join.json"),
        fixture("pyperf/pyperf-again.json"),
    ];
    let imported = read(Format::Pyperf, &files).unwrap();
    assert_eq!(imported.benchmarks.len(), 2);
    let timeit = &imported.benchmarks[0];
    assert_eq!(timeit.name, "timeit");
    assert_eq!(timeit.runs.len(), 22);
    assert!(timeit.runs[11].warmup);
    assert_close(timeit.runs[12].values[0], 2.9048534241349344e-06);
    assert_eq!(imported.benchmarks[1].name, "join");
    assert_eq!(imported.tool_version.as_deref(), Some("2.11.0"));
}

#[test]
fn a_perf_0_9_file_reads_samples_and_per_loop_warmups() {
    let imported = read(Format::Pyperf, &[fixture("pyperf/perf-0.9.json")]).unwrap();
    let timeit = one_timeit(&imported, "0.9.3", 7);
    let calibration = &timeit.runs[0];
    assert_eq!(calibration.warmup_values.len(), 17);
    // Raw warm-up times divided by their loops, as pyperf reads them: [1, 4.158e-06] and
    // [65536, 0.15138816].
    assert_close(calibration.warmup_values[0], 4.158e-06);
    assert_close(calibration.warmup_values[16], 0.15138816 / 65536.0);
    assert!(
        timeit.runs[1..]
            .iter()
            .all(|run| !run.warmup && run.values.len() == 3 && run.warmup_values.len() == 1)
    );
    let first = &timeit.runs[1];
    assert_close(first.values[0], 2.2204e-06);
    assert_close(first.warmup_values[0], 0.1619918848 / 65536.0);
    assert_close(timeit.runs[6].values[2], 2.2427e-06);
}

#[test]
fn a_perf_0_9_file_has_its_machine_metadata_as_the_context() {
    let imported = read(Format::Pyperf, &[fixture("pyperf/perf-0.9.json")]).unwrap();
    assert_eq!(imported.context["hostname"], "selma");
    assert_eq!(imported.context["cpu_count"], "4");
    assert_eq!(
        imported.context["cpu_model_name"],
        "Intel(R) Core(TM) i7-3520M CPU @ 2.90GHz"
    );
    assert_eq!(imported.context["python_version"], "3.5.2 (64-bit)");
    for describing in ["name", "loops", "perf_version", "timeit_stmt"] {
        assert!(!imported.context.contains_key(describing), "{describing}");
    }
}

#[test]
fn version_6_has_top_metadata_values_and_raw_warmups() {
    let text = r#"{"version": 6, "metadata": {"hostname": "h", "perf_version": "0.9.6"},
            "benchmarks": [{"metadata": {"name": "t", "inner_loops": 10, "loops": 4},
            "runs": [{"values": [1e-6], "warmups": [[4, 8e-5]]}]}]}"#;
    let imported = parse("p.json", text).unwrap();
    assert_eq!(imported.tool_version.as_deref(), Some("0.9.6"));
    assert_eq!(imported.context["hostname"], "h");
    let run = &imported.benchmarks[0].runs[0];
    assert_eq!(run.values, [1e-6]);
    assert_close(run.warmup_values[0], 8e-5 / (4.0 * 10.0));
}

#[test]
fn a_format_before_perf_0_7_4_is_refused() {
    let text = r#"{"version": 3, "benchmarks": []}"#;
    assert_eq!(
        parse("p.json", text).unwrap_err().to_string(),
        "p.json: JSON format version 3, which lab does not read (expected version 4, 5, 6 or \
             \"1.0\": a file written by perf 0.7.4 or later, or by pyperf)"
    );
}

#[test]
fn a_raw_warmup_of_no_loops_is_refused() {
    let text = r#"{"version": 5, "benchmarks": [{"common_metadata": {"name": "t"},
            "runs": [{"samples": [1e-6], "warmups": [[0, 1e-6]]}]}]}"#;
    assert_eq!(
        parse("p.json", text).unwrap_err().to_string(),
        "p.json: benchmark \"t\": run 1 warm-up 1 loops is 0 (expected a whole number of at \
             least 1)"
    );
}

#[test]
fn a_gbench_file_is_refused_naming_the_file() {
    let gbench = std::fs::read_to_string(fixture("gbench/gbench.json")).unwrap();
    let error = parse("gbench.json", &gbench).unwrap_err().to_string();
    assert_eq!(
        error,
        "gbench.json: not pyperf JSON: no \"version\" string (expected the file written by \
             pyperf's -o FILE option, e.g. python3 -m pyperf timeit -o FILE)"
    );
}

#[test]
fn a_nan_value_is_refused_with_the_benchmark() {
    let text = r#"{"version": "1.0", "metadata": {"name": "t"},
            "benchmarks": [{"runs": [{"values": [1e-6, "NaN"]}]}]}"#;
    let error = parse("p.json", text).unwrap_err().to_string();
    assert!(
        error.starts_with("p.json: benchmark \"t\": run 1 value 2 is NaN"),
        "{error}"
    );
}

#[test]
fn only_calibration_runs_are_refused() {
    let text = r#"{"version": "1.0", "metadata": {"name": "t"},
            "benchmarks": [{"runs": [{"warmups": [[1, 1e-6]]}]}]}"#;
    let error = parse("p.json", text).unwrap_err().to_string();
    assert!(
        error.contains("benchmark \"t\" has no run with values"),
        "{error}"
    );
}
