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
        assert_eq!(
            data.len() as u64,
            entry["stats"]["rounds"].as_u64().unwrap()
        );
        let mean = data.iter().sum::<f64>() / data.len() as f64;
        let stated = entry["stats"]["mean"].as_f64().unwrap();
        assert!((mean - stated).abs() <= stated * 1e-9, "{mean} {stated}");
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

/// Real files of pytest-benchmark 2.5.0 to 5.2.3 saved without `--benchmark-save-data` (see
/// real/PROVENANCE.md): how many benchmarks each holds, and the first one's name.
const REAL_SUMMARIES: [(&str, usize, &str); 5] = [
    (
        "pytest-benchmark/real/pytest-benchmark-2.5.0-storage.json",
        1,
        "tests/test_normal.py::test_xfast_parametrized[0]",
    ),
    (
        "pytest-benchmark/real/pytest-benchmark-3.2.3-skiplist.json",
        72,
        "tests/benchmarks/test_benchmark_SkipList_floats.py::test_float_iar_begin[     512]",
    ),
    (
        "pytest-benchmark/real/pytest-benchmark-3.4.1-adkg.json",
        6,
        "benchmark/test_benchmark_amt_interpolation.py::test_amt_commit_and_proof_interpolation[1]",
    ),
    (
        "pytest-benchmark/real/pytest-benchmark-4.0.0-skiplist.json",
        20,
        "tests/benchmarks/test_benchmark_SkipList_rolling_median.py::test_rolling_median_by_window_length[       1]",
    ),
    (
        "pytest-benchmark/real/pytest-benchmark-5.2.3-skiplist.json",
        14,
        "tests/benchmarks/test_benchmark_SkipList_rolling_median_sh_mem.py::test_sh_mem_create_copy[262144-16]",
    ),
];

#[test]
fn every_real_file_saved_without_data_is_refused_as_summaries_only() {
    for (file, count, first) in REAL_SUMMARIES {
        let more = if count > 1 { ", …" } else { "" };
        assert_eq!(
            parse(file, &text(file)).unwrap_err().to_string(),
            format!(
                "{file}: {count} of {count} benchmarks ({first}{more}) hold only summary \
                 statistics, no per-round times: lab needs the rounds (expected a file written \
                 by --benchmark-json FILE, which always holds stats.data, or by --benchmark-save \
                 with --benchmark-save-data)"
            )
        );
    }
}

#[test]
fn a_real_file_whose_data_was_cut_short_by_hand_is_refused_at_the_first_text() {
    // Its repository kept 4 rounds of each benchmark and a note in place of the rest.
    let file = "pytest-benchmark/real/pytest-benchmark-3.2.2-trimmed-data.json";
    assert_eq!(
        parse(file, &text(file)).unwrap_err().to_string(),
        format!(
            "{file}: benchmark \"bench.py::test_fib_1\": round 5 is \"... omitted to keep this \
             file small\", not a number (expected a measured value)"
        )
    );
}
