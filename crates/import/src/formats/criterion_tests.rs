//! Unit tests of `criterion`.

use super::super::test_support::{assert_close, fixture};
use super::super::{Format, read as read_all};
use super::*;

const NAME: &str = "analysis/5,000 cells × 20 runs, 10,000 resamples";
const FIRST_SAMPLE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/import/criterion/analysis-run1/new/sample.json"
));
const FIRST_ID: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/import/criterion/analysis-run1/new/benchmark.json"
));

/// The values of the one run of the one benchmark, `name`, of one sample.json, checked: no
/// params, times in seconds, and no tool version or context (criterion records neither).
fn one_run<'i>(imported: &'i Imported, name: &str) -> &'i [f64] {
    assert_eq!(imported.tool_version, None);
    assert!(imported.context.is_empty());
    assert_eq!(imported.benchmarks.len(), 1);
    let benchmark = &imported.benchmarks[0];
    assert_eq!(benchmark.name, name);
    assert!(benchmark.params.is_empty());
    assert_eq!(
        (benchmark.metric.as_str(), benchmark.unit.as_str()),
        ("time", "s")
    );
    assert_eq!(benchmark.runs.len(), 1);
    &benchmark.runs[0].values
}

#[test]
fn a_declared_throughput_is_a_rate_per_sample() {
    let bytes = FIRST_ID.replace("\"throughput\":null", "\"throughput\":{\"Bytes\":1000}");
    let imported = parse("sample.json", FIRST_SAMPLE, "benchmark.json", &bytes).unwrap();
    let benchmark = &imported.benchmarks[0];
    let metrics: Vec<(&str, &str, bool)> = benchmark
        .secondary
        .iter()
        .map(|s| (s.name.as_str(), s.unit.as_str(), s.higher_is_better))
        .collect();
    assert_eq!(metrics, [("bytes_per_second", "B/s", true)]);
    let run = &benchmark.runs[0];
    // 1,000 bytes an iteration; the first sample ran 1 iteration in 10,883,752,315 ns.
    assert_close(run.secondary["bytes_per_second"][0], 1000.0 / 10.883752315);
    assert_eq!(run.secondary["bytes_per_second"].len(), run.values.len());
    let both = FIRST_ID.replace(
        "\"throughput\":null",
        "\"throughput\":{\"ElementsAndBytes\":{\"elements\":10,\"bytes\":80}}",
    );
    let imported = parse("sample.json", FIRST_SAMPLE, "benchmark.json", &both).unwrap();
    let names: Vec<&str> = imported.benchmarks[0]
        .secondary
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["elements_per_second", "bytes_per_second"]);
    let odd = FIRST_ID.replace("\"throughput\":null", "\"throughput\":{\"Bits\":8}");
    let error = parse("sample.json", FIRST_SAMPLE, "benchmark.json", &odd).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "benchmark.json: benchmark \"{NAME}\": throughput Bits is 8 (expected Bytes, BytesDecimal, Elements or ElementsAndBytes with a count)"
        )
    );
}

#[test]
fn a_folder_above_benchmark_folders_imports_each_of_them_sorted() {
    let tree = fixture("criterion");
    let folders = benchmark_folders(&tree).unwrap();
    let names: Vec<String> = folders
        .iter()
        .map(|f| f.strip_prefix(&tree).unwrap().display().to_string())
        .collect();
    assert!(
        names.starts_with(&[
            "analysis-run1".to_string(),
            "analysis-run2".to_string(),
            "criterion-0.2".to_string()
        ]),
        "{names:?}"
    );
    let empty = tempfile::tempdir().unwrap();
    let error = benchmark_folders(empty.path()).unwrap_err().to_string();
    assert!(error.contains("no benchmark folder below it"), "{error}");
}

#[test]
fn one_sample_file_is_one_run_of_per_iteration_seconds() {
    let imported = parse("sample.json", FIRST_SAMPLE, "benchmark.json", FIRST_ID).unwrap();
    assert_eq!(imported.format, Format::Criterion);
    let values = one_run(&imported, NAME);
    assert_eq!(values.len(), 10);
    assert_close(values[0], 10883752315.0 / 1.0 * 1e-9);
    assert_close(values[9], 7441626834.0 / 1.0 * 1e-9);
}

#[test]
fn a_folder_a_new_folder_and_either_file_all_read() {
    for path in [
        "criterion/analysis-run1",
        "criterion/analysis-run1/new",
        "criterion/analysis-run1/new/sample.json",
        "criterion/analysis-run1/new/benchmark.json",
    ] {
        let imported = read(&fixture(path)).unwrap();
        assert_eq!(imported.benchmarks[0].name, NAME, "{path}");
        assert_eq!(imported.benchmarks[0].runs[0].values.len(), 10, "{path}");
    }
}

#[test]
fn two_cargo_bench_runs_are_two_runs_of_one_benchmark() {
    let files = [
        fixture("criterion/analysis-run1/new/sample.json"),
        fixture("criterion/analysis-run2"),
    ];
    let imported = read_all(Format::Criterion, &files).unwrap();
    assert_eq!(imported.benchmarks.len(), 1);
    let runs = &imported.benchmarks[0].runs;
    assert_eq!(runs.len(), 2);
    assert_close(runs[0].values[0], 10.883752315);
    assert_close(runs[1].values[0], 6.802708979);
    assert_close(runs[1].values[9], 13.308771035);
}

#[test]
fn a_criterion_0_2_sample_pair_reads_like_the_later_object() {
    let imported = read(&fixture("criterion/criterion-0.2")).unwrap();
    let values = one_run(&imported, "fib 20");
    assert_eq!(values.len(), 10);
    assert_close(values[0], 494785.0 / 19.0 * 1e-9);
    assert_close(values[9], 4963104.0 / 190.0 * 1e-9);
}

#[test]
fn an_array_that_is_not_a_pair_of_lists_is_refused() {
    for (sample, items) in [("[[1.0], [2.0], [3.0]]", 3), ("[1.0, 2.0]", 2)] {
        assert_eq!(
            parse("s.json", sample, "b.json", r#"{"group_id": "g"}"#)
                .unwrap_err()
                .to_string(),
            format!(
                "s.json: not a criterion sample.json: an array of {items} items, not \
                     criterion 0.2's [[iters…], [times…]] pair of lists (expected {EXPECTED})"
            )
        );
    }
}

#[test]
fn a_pair_of_unequal_lists_is_refused() {
    let error = parse(
        "s.json",
        "[[1.0, 2.0], [5.0]]",
        "b.json",
        r#"{"group_id": "g"}"#,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "s.json: benchmark \"g\": 2 iters but 1 times (expected one iteration count per \
             time, at least one sample)"
    );
}

#[test]
fn times_are_divided_by_iterations() {
    let sample = r#"{"sampling_mode": "Linear", "iters": [2.0, 4.0], "times": [300.0, 1000.0]}"#;
    let id = r#"{"group_id": "g", "function_id": "f", "value_str": "64", "full_id": "g/f/64"}"#;
    let imported = parse("s.json", sample, "b.json", id).unwrap();
    let benchmark = &imported.benchmarks[0];
    assert_eq!(benchmark.name, "g/f");
    assert_eq!(
        benchmark.params,
        BTreeMap::from([("value".into(), "64".into())])
    );
    assert_close(benchmark.runs[0].values[0], 150e-9);
    assert_close(benchmark.runs[0].values[1], 250e-9);
}

#[test]
fn a_negative_time_is_refused_with_the_benchmark() {
    let sample = r#"{"iters": [1.0], "times": [-5.0]}"#;
    let id = r#"{"group_id": "g", "function_id": null, "value_str": null}"#;
    let error = parse("s.json", sample, "b.json", id)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("s.json: benchmark \"g\": sample 1 time is negative"),
        "{error}"
    );
}

#[test]
fn a_folder_without_results_is_refused() {
    let error = read(&fixture("criterion")).unwrap_err().to_string();
    assert!(
        error.contains("a folder without new/sample.json"),
        "{error}"
    );
}

#[test]
fn a_hyperfine_file_is_refused_naming_the_file() {
    let hyperfine = std::fs::read_to_string(fixture("hyperfine/hyperfine.json")).unwrap();
    let error = parse("hyperfine.json", &hyperfine, "benchmark.json", FIRST_ID)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("hyperfine.json: not a criterion sample.json: no \"iters\" array"),
        "{error}"
    );
}
