//! Unit tests of `gbench`.

use super::super::test_support::{assert_close, fixture};
use super::super::{Format, read};
use super::*;
use lab_store::Exit;

#[test]
fn cpu_time_and_counters_are_metrics_of_each_repetition() {
    let imported = read(Format::Gbench, &[fixture("gbench/gbench-counters.json")]).unwrap();
    assert_eq!(names(&imported), ["BM_Fill/256", "BM_Fill/4096"]);
    let small = &imported.benchmarks[0];
    let metrics: Vec<(&str, &str, bool, bool)> = small
        .secondary
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.unit.as_str(),
                s.higher_is_better,
                s.count,
            )
        })
        .collect();
    assert_eq!(
        metrics,
        [
            ("cpu_time", "s", false, false),
            ("bytes_per_second", "/s", true, false),
            ("elements", "", false, true),
            ("items_per_second", "/s", true, false),
            ("sorts", "", false, true),
        ]
    );
    assert_eq!(small.runs.len(), 3);
    assert_close(small.runs[0].values[0], 1780.191511094182e-9);
    assert_close(
        small.runs[0].secondary["cpu_time"][0],
        1773.5740982181665e-9,
    );
    assert_close(
        small.runs[0].secondary["items_per_second"][0],
        144341305.08400646,
    );
    assert_eq!(small.runs[0].secondary["sorts"], [6903.0]);
    let large = &imported.benchmarks[1];
    assert_close(large.runs[2].values[0], 45493.67321743417e-9);
    assert_close(
        large.runs[2].secondary["bytes_per_second"][0],
        359973350.43340033,
    );
    assert_eq!(large.runs[2].secondary["elements"], [4096.0]);
}

fn names(imported: &Imported) -> Vec<&str> {
    imported
        .benchmarks
        .iter()
        .map(|b| b.name.as_str())
        .collect()
}

const GBENCH: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/import/gbench/gbench.json"
));

#[test]
fn repetitions_are_runs_and_aggregates_are_skipped() {
    let imported = parse("gbench.json", GBENCH).unwrap();
    assert_eq!(imported.format, Format::Gbench);
    assert_eq!(
        names(&imported),
        ["BM_Accumulate/64", "BM_Accumulate/512", "BM_Sort"]
    );
    for benchmark in &imported.benchmarks {
        // 5 repetitions, not 9 entries (mean, median, stddev and cv are aggregates).
        assert_eq!(benchmark.runs.len(), 5, "{}", benchmark.name);
        assert!(
            benchmark
                .runs
                .iter()
                .all(|run| run.values.len() == 1 && !run.warmup)
        );
        assert_eq!(
            (benchmark.metric.as_str(), benchmark.unit.as_str()),
            ("time", "s")
        );
        assert!(benchmark.params.is_empty());
    }
    let accumulate = &imported.benchmarks[0];
    assert_close(accumulate.runs[0].values[0], 54.97323335673042 * 1e-9);
    assert_close(accumulate.runs[4].values[0], 56.38518933614958 * 1e-9);
    let sort = &imported.benchmarks[2];
    assert_close(sort.runs[0].values[0], 11.260687682332229 * 1e-6);
    assert_close(sort.runs[4].values[0], 6.25547608765571 * 1e-6);
}

#[test]
fn the_context_is_kept_as_facts() {
    let imported = parse("gbench.json", GBENCH).unwrap();
    assert_eq!(imported.tool_version, None); // 1.7 does not write library_version
    assert_eq!(imported.context["host_name"], "vm");
    assert_eq!(imported.context["num_cpus"], "2");
    assert_eq!(imported.context["mhz_per_cpu"], "2445");
    assert_eq!(imported.context["cpu_scaling_enabled"], "false");
    assert!(!imported.context.contains_key("caches"));
}

#[test]
fn a_file_from_before_run_type_skips_aggregates_by_their_name() {
    let text = std::fs::read_to_string(fixture("gbench/gbench-1.4.json")).unwrap();
    let imported = parse("gbench-1.4.json", &text).unwrap();
    assert_eq!(
        names(&imported),
        ["BM_Accumulate/64", "BM_Accumulate/512", "BM_Sort"]
    );
    for benchmark in &imported.benchmarks {
        // 3 repetitions, not 6 rows (the _mean, _median and _stddev rows are aggregates).
        assert_eq!(benchmark.runs.len(), 3, "{}", benchmark.name);
        assert!(benchmark.runs.iter().all(|run| run.values.len() == 1));
        assert_eq!(benchmark.unit, "s");
    }
    let accumulate = &imported.benchmarks[0].runs;
    assert_close(accumulate[0].values[0], 54.61829374e-9);
    assert_close(accumulate[2].values[0], 54.93376515e-9);
    let sort = &imported.benchmarks[2].runs;
    assert_close(sort[0].values[0], 7.118324914e-6);
    assert_close(sort[2].values[0], 7.090562147e-6);
    assert_eq!(imported.tool_version, None);
    assert_eq!(imported.context["date"], "2018-06-20 11:04:31");
    assert_eq!(imported.context["num_cpus"], "4");
    assert_eq!(imported.context["mhz_per_cpu"], "3400");
    assert_eq!(imported.context["library_build_type"], "release");
}

#[test]
fn without_run_type_an_aggregate_name_or_a_known_suffix_makes_an_aggregate() {
    let text = r#"{"context": {}, "benchmarks": [
            {"name": "BM_X", "real_time": 2.0, "time_unit": "ns"},
            {"name": "BM_X_geomean", "aggregate_name": "geomean", "real_time": 2.0, "time_unit": "ns"},
            {"name": "BM_X_cv", "real_time": 0.01, "time_unit": "ns"},
            {"name": "BM_X_BigO", "cpu_coefficient": 1.0, "real_coefficient": 1.0, "big_o": "N"},
            {"name": "BM_X_RMS", "rms": 0.1},
            {"name": "BM_X_fast", "real_time": 3.0, "time_unit": "ns"}]}"#;
    let imported = parse("g.json", text).unwrap();
    assert_eq!(names(&imported), ["BM_X", "BM_X_fast"]);
    assert_close(imported.benchmarks[0].runs[0].values[0], 2e-9);
}

#[test]
fn a_file_of_aggregates_only_is_refused_naming_them() {
    let text = std::fs::read_to_string(fixture("gbench/gbench-aggregates-only.json")).unwrap();
    let error = parse("gbench-aggregates-only.json", &text)
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "gbench-aggregates-only.json: 12 rows, all aggregates: mean, median, stddev, cv; lab \
             needs the per-repetition rows (expected a run without \
             --benchmark_report_aggregates_only; --benchmark_display_aggregates_only instead still \
             writes them to the --benchmark_out=FILE JSON)"
    );
}

#[test]
fn a_file_of_aggregates_only_from_before_run_type_is_refused_too() {
    let text = r#"{"context": {}, "benchmarks": [
            {"name": "BM_X_mean", "real_time": 2.0, "time_unit": "ns"},
            {"name": "BM_X_stddev", "real_time": 0.1, "time_unit": "ns"}]}"#;
    assert_eq!(
        parse("old.json", text).unwrap_err().to_string(),
        "old.json: 2 rows, all aggregates: mean, stddev; lab needs the per-repetition rows \
             (expected a run without --benchmark_report_aggregates_only; \
             --benchmark_display_aggregates_only instead still writes them to the \
             --benchmark_out=FILE JSON)"
    );
}

#[test]
fn the_out_file_of_a_display_aggregates_only_run_keeps_the_repetitions() {
    let text =
        std::fs::read_to_string(fixture("gbench/gbench-display-aggregates-only.json")).unwrap();
    let imported = parse("gbench-display-aggregates-only.json", &text).unwrap();
    assert_eq!(imported.benchmarks.len(), 3);
    assert!(imported.benchmarks.iter().all(|b| b.runs.len() == 3));
    let sort = &imported.benchmarks[2];
    assert_eq!(sort.name, "BM_Sort");
    assert_close(sort.runs[0].values[0], 14.1400313579875 * 1e-6);
    assert_close(sort.runs[2].values[0], 49.86998503145689 * 1e-6);
}

#[test]
fn an_unknown_run_type_is_refused() {
    let text = r#"{"context": {}, "benchmarks": [{"name": "BM_X", "run_type": "sample",
            "real_time": 1.0, "time_unit": "ns"}]}"#;
    assert_eq!(
        parse("g.json", text).unwrap_err().to_string(),
        format!(
            "g.json: not Google Benchmark JSON output: benchmark \"BM_X\" has run_type \
                 \"sample\", not \"iteration\" or \"aggregate\" (expected {EXPECTED})"
        )
    );
}

#[test]
fn the_library_version_is_the_tool_version() {
    let text = r#"{"context": {"library_version": "v1.8.3"}, "benchmarks": []}"#;
    let imported = parse("g.json", text).unwrap();
    assert_eq!(imported.tool_version.as_deref(), Some("v1.8.3"));
    assert!(!imported.context.contains_key("library_version"));
}

#[test]
fn two_files_of_the_same_benchmarks_merge() {
    let file = fixture("gbench/gbench.json");
    let imported = read(Format::Gbench, &[file.clone(), file]).unwrap();
    assert_eq!(imported.benchmarks.len(), 3);
    assert_eq!(imported.benchmarks[1].runs.len(), 10);
    assert_eq!(imported.context["host_name"], "vm");
}

#[test]
fn a_hyperfine_file_is_refused_naming_the_file() {
    let hyperfine = std::fs::read_to_string(fixture("hyperfine/hyperfine.json")).unwrap();
    let error = parse("hyperfine.json", &hyperfine).unwrap_err().to_string();
    assert!(
        error.starts_with("hyperfine.json: not Google Benchmark JSON output: no \"context\""),
        "{error}"
    );
}

#[test]
fn a_negative_time_is_refused_with_the_benchmark() {
    let text = r#"{"context": {}, "benchmarks": [{"name": "BM_X", "run_name": "BM_X",
            "run_type": "iteration", "real_time": -3.0, "time_unit": "ns"}]}"#;
    let error = parse("g.json", text).unwrap_err().to_string();
    assert!(
        error.starts_with("g.json: benchmark \"BM_X\": real_time is negative"),
        "{error}"
    );
}

#[test]
fn a_failed_or_skipped_repetition_is_a_failed_run_without_a_value() {
    let text = r#"{"context": {}, "benchmarks": [
        {"name": "BM_X", "run_type": "iteration", "error_occurred": true,
         "error_message": "boom", "real_time": 0, "time_unit": "ns"},
        {"name": "BM_Y", "run_type": "iteration", "skipped": true,
         "skip_message": "no GPU", "real_time": 0, "time_unit": "ns"},
        {"name": "BM_Z", "run_type": "iteration", "real_time": 5, "time_unit": "ns"}]}"#;
    let imported = parse("g.json", text).unwrap();
    let exits: Vec<Option<Exit>> = imported
        .benchmarks
        .iter()
        .map(|b| b.runs[0].exit.clone())
        .collect();
    assert_eq!(
        exits,
        [
            Some(Exit::SpawnFailed(
                "Google Benchmark: failed or skipped: boom".into()
            )),
            Some(Exit::SpawnFailed(
                "Google Benchmark: failed or skipped: no GPU".into()
            )),
            None
        ]
    );
    assert!(imported.benchmarks[0].runs[0].values.is_empty());
    assert_eq!(imported.benchmarks[2].runs[0].values, [5e-9]);
    assert!(imported.notes.is_empty());
}

#[test]
fn json_after_other_text_is_read_and_said_to_be() {
    let text = "+ make bench\ncc -O2 bench.c\n{\"context\": {}, \"benchmarks\": [\n  {\"name\": \"BM_Z\", \"real_time\": 5, \"time_unit\": \"ns\"}]}\n+ exit 0\n";
    let imported = parse("ci.log", text).unwrap();
    assert_eq!(imported.benchmarks[0].runs[0].values, [5e-9]);
    assert_eq!(
        imported.notes,
        [
            "ci.log: the JSON document begins on line 3; the 2 lines of other text before it are left out"
        ]
    );
    // No document that parses: the error of the whole text, with its line and column.
    let error = parse("ci.log", "+ make\n{\"context\": \n")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("invalid JSON (expected value at line 1 column 1)"),
        "{error}"
    );
}

#[test]
fn the_failed_runs_a_selection_keeps_are_noted_once_per_benchmark() {
    let file = fixture("gbench/gbench-failing.json");
    let origin = file.display().to_string();
    let all = super::super::read_each(
        Format::Gbench,
        std::slice::from_ref(&file),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(
        all[0].1.notes,
        [format!(
            "{origin}: 6 of 18 runs failed or were skipped and hold no value: BM_Avx512 ×3 \
             (Google Benchmark: failed or skipped: unsupported), BM_OpenDevice ×3 (Google \
             Benchmark: failed or skipped: cannot open /dev/nonexistent); imported as failed \
             runs, which the exit check reports, and the other runs are analysed"
        )]
    );
    let select = super::super::Selection::parse(&["BM_Sum".to_string()]).unwrap();
    let sums = super::super::read_each(Format::Gbench, &[file], &select).unwrap();
    assert!(sums[0].1.notes.is_empty());
    assert_eq!(sums[0].1.benchmarks.len(), 2);
}
