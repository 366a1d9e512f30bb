use super::*;
use crate::formats::test_support::text;

#[test]
fn each_benchmark_is_one_run_of_its_rounds() {
    let file = "pytest-benchmark/pytest-benchmark-data.json";
    let imported = parse(file, &text(file)).unwrap();
    let document: Value = serde_json::from_str(&text(file)).unwrap();
    assert_eq!(imported.format, Format::PytestBenchmark);
    assert_eq!(imported.tool_version.as_deref(), Some("5.3.1"));
    assert_eq!(imported.context["hostname"], "vm");
    assert_eq!(
        imported.context["cpu_model_name"],
        "Intel(R) Xeon(R) Processor"
    );
    assert_eq!(imported.context["cpu_count"], "2");
    assert_eq!(imported.benchmarks.len(), 5);
    for (b, entry) in imported
        .benchmarks
        .iter()
        .zip(document["benchmarks"].as_array().unwrap())
    {
        let data: Vec<f64> = entry["stats"]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(b.runs.len(), 1);
        assert_eq!(b.runs[0].values, data, "{}", b.name);
    }
    let insertion = &imported.benchmarks[2];
    assert_eq!(insertion.name, "test_sorts.py::test_insertion");
    assert_eq!(insertion.params["n"], "100");
    assert_eq!(insertion.runs[0].values.len(), 7);
    assert_eq!(imported.benchmarks[4].name, "test_sorts.py::test_join");
    assert!(imported.benchmarks[4].params.is_empty());
}

#[test]
fn a_file_of_summaries_only_is_refused_with_that_reason() {
    let file = "pytest-benchmark/pytest-benchmark-summary.json";
    let err = parse(file, &text(file)).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{file}: 5 of 5 benchmarks (test_sorts.py::test_sorted[100], …) hold only summary \
             statistics, no per-round times: lab needs the rounds (expected a file written by \
             --benchmark-json FILE, which always holds stats.data, or by --benchmark-save with \
             --benchmark-save-data)"
        )
    );
}

#[test]
fn parametrize_ids_are_stripped_only_where_params_are_recorded() {
    assert_eq!(strip_ids("t.py::test_x[10-a]"), "t.py::test_x");
    assert_eq!(strip_ids("t.py::test_x"), "t.py::test_x");
    assert_eq!(strip_ids("[x]"), "[x]");
}
