//! Unit tests of `jmh`.

use super::super::test_support::{assert_close, fixture};
use super::super::{Format, read};
use super::*;

const JMH: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/import/jmh/jmh.json"
));
const SUMMARY_ONLY: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/import/jmh/jmh-summary-only.json"
));

#[test]
fn secondary_metrics_are_metrics_of_each_fork() {
    let imported = read(Format::Jmh, &[fixture("jmh/jmh-field.json")]).unwrap();
    let with_gc = &imported.benchmarks[0];
    assert_eq!(with_gc.params["size"], "10");
    let metrics: Vec<(&str, &str, bool)> = with_gc
        .secondary
        .iter()
        .map(|s| (s.name.as_str(), s.unit.as_str(), s.count))
        .collect();
    assert_eq!(
        metrics,
        [
            ("\u{b7}gc.alloc.rate", "MB/sec", false),
            ("\u{b7}gc.alloc.rate.norm", "B/op", true),
            ("\u{b7}gc.count", "counts", true),
            ("\u{b7}gc.time", "s", false),
        ],
        "the stack profiler's NaN entry is left out"
    );
    let run = &with_gc.runs[0];
    assert_eq!(
        run.secondary["\u{b7}gc.alloc.rate"],
        [812.5, 809.25, 815.75]
    );
    assert_eq!(run.secondary["\u{b7}gc.count"], [4.0, 3.0, 4.0]);
    assert_close(run.secondary["\u{b7}gc.time"][0], 0.006);
    assert_close(run.secondary["\u{b7}gc.time"][2], 0.007);
    assert!(imported.benchmarks[1].secondary.is_empty());
    assert!(imported.benchmarks[1].runs[0].secondary.is_empty());
}

#[test]
fn forks_are_runs_and_throughput_keeps_its_unit() {
    let imported = parse("jmh.json", JMH).unwrap();
    assert_eq!(imported.format, Format::Jmh);
    assert_eq!(imported.tool_version.as_deref(), Some("1.37"));
    assert_eq!(imported.benchmarks.len(), 2);
    let throughput = &imported.benchmarks[0];
    assert_eq!(throughput.name, "org.example.lab.SortBench.sortThroughput");
    assert_eq!(
        throughput.params,
        BTreeMap::from([("threads".into(), "2".into())])
    );
    assert_eq!(
        (throughput.metric.as_str(), throughput.unit.as_str()),
        ("throughput", "ops/s")
    );
    assert!(throughput.higher_is_better && !throughput.summary_only);
    assert_eq!(throughput.runs.len(), 3);
    assert!(
        throughput
            .runs
            .iter()
            .all(|run| run.values.len() == 5 && !run.warmup)
    );
    assert_close(throughput.runs[0].values[0], 1523411.2834);
    assert_close(throughput.runs[2].values[4], 1549987.3321);
}

#[test]
fn average_time_is_converted_to_seconds() {
    let imported = parse("jmh.json", JMH).unwrap();
    let latency = &imported.benchmarks[1];
    assert_eq!(latency.name, "org.example.lab.SortBench.sortLatency");
    assert!(latency.params.is_empty());
    assert_eq!(
        (latency.metric.as_str(), latency.unit.as_str()),
        ("time", "s")
    );
    assert!(!latency.higher_is_better);
    assert_eq!(latency.runs.len(), 2);
    assert_close(latency.runs[0].values[0], 12.3456e-6);
    assert_close(latency.runs[1].values[4], 12.6234e-6);
}

#[test]
fn the_jvm_is_the_context() {
    let imported = parse("jmh.json", JMH).unwrap();
    assert_eq!(
        imported.context["jvm"],
        "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
    );
    assert_eq!(imported.context["vmVersion"], "17.0.13+11-Debian-2deb12u1");
    assert_eq!(imported.context["jvmArgs"], "-Xms1g -Xmx1g");
    assert_eq!(imported.context["threads"], "1");
}

#[test]
fn without_raw_data_only_the_score_is_kept_and_marked() {
    let imported = parse("jmh-summary-only.json", SUMMARY_ONLY).unwrap();
    let latency = &imported.benchmarks[0];
    assert!(latency.summary_only);
    assert_eq!(latency.runs.len(), 1);
    assert_eq!(latency.runs[0].values.len(), 1);
    assert_close(latency.runs[0].values[0], 12.49328e-6);
}

#[test]
fn summary_and_raw_files_of_one_benchmark_do_not_merge() {
    let files = [
        fixture("jmh/jmh.json"),
        fixture("jmh/jmh-summary-only.json"),
    ];
    let error = read(Format::Jmh, &files).unwrap_err().to_string();
    assert!(
        error.contains("jmh-summary-only.json: benchmark"),
        "{error}"
    );
    assert!(error.contains("only a summary"), "{error}");
}

#[test]
fn forks_of_two_files_merge() {
    let file = fixture("jmh/jmh.json");
    let imported = read(Format::Jmh, &[file.clone(), file]).unwrap();
    assert_eq!(imported.benchmarks.len(), 2);
    assert_eq!(imported.benchmarks[0].runs.len(), 6);
}

#[test]
fn sample_mode_iterations_are_the_weighted_means_of_their_histograms() {
    let text = r#"[{"jmhVersion": "1.37", "benchmark": "a.B.c", "mode": "sample",
            "primaryMetric": {"score": 1.0, "scoreUnit": "us/op",
            "rawDataHistogram": [[[[1.0, 3], [2.0, 1]], [[4.0, 2]]], [[[8.0, 1]]]]}}]"#;
    let imported = parse("s.json", text).unwrap();
    let b = &imported.benchmarks[0];
    assert_eq!((b.metric.as_str(), b.unit.as_str()), ("sample_time", "s"));
    assert_eq!(b.runs.len(), 2);
    assert_close(b.runs[0].values[0], 1.25e-6);
    assert_close(b.runs[0].values[1], 4e-6);
    assert_close(b.runs[1].values[0], 8e-6);
    let empty = text.replace("[[8.0, 1]]", "[]");
    let error = parse("s.json", &empty).unwrap_err().to_string();
    assert_eq!(
        error,
        "s.json: benchmark \"a.B.c\": rawDataHistogram fork 2 iteration 1 holds no sample \
             (expected at least one [value, count] pair with a count above 0)"
    );
    let torn = text.replace("[4.0, 2]", "[4.0]");
    let error = parse("s.json", &torn).unwrap_err().to_string();
    assert!(error.contains("fork 1 iteration 2 holds [4.0]"), "{error}");
}

/// A file of `-bm all`: one result per mode of one benchmark.
const ALL_MODES: &str = r#"[
        {"benchmark": "a.B.c", "mode": "thrpt", "primaryMetric": {"scoreUnit": "ops/us", "rawData": [[2.0, 3.0]]}},
        {"benchmark": "a.B.c", "mode": "avgt", "primaryMetric": {"scoreUnit": "us/op", "rawData": [[0.5]]}},
        {"benchmark": "a.B.c", "mode": "sample", "primaryMetric": {"scoreUnit": "us/op", "rawDataHistogram": [[[[0.25, 4]]]]}},
        {"benchmark": "a.B.c", "mode": "ss", "primaryMetric": {"scoreUnit": "us/op", "rawData": [[40.0]]}}
    ]"#;

#[test]
fn every_mode_of_one_benchmark_is_its_own_metric() {
    let imported = parse("all.json", ALL_MODES).unwrap();
    let metrics: Vec<(&str, &str, usize)> = imported
        .benchmarks
        .iter()
        .map(|b| (b.metric.as_str(), b.unit.as_str(), b.runs[0].values.len()))
        .collect();
    assert_eq!(
        metrics,
        [
            ("throughput", "ops/us", 2),
            ("time", "s", 1),
            ("sample_time", "s", 1),
            ("single_shot_time", "s", 1)
        ]
    );
    assert_close(imported.benchmarks[3].runs[0].values[0], 40e-6);
}

#[test]
fn a_result_left_out_by_the_selection_cannot_refuse_the_file() {
    let broken = ALL_MODES.replace("[[40.0]]", "\"torn\"");
    assert!(parse("all.json", &broken).is_err());
    let select = Selection::parse(&["mode=avgt".to_string()]).unwrap();
    let imported = parse_selected("all.json", &broken, &select).unwrap();
    assert_eq!(imported.benchmarks.len(), 1);
    assert_eq!(imported.benchmarks[0].metric, "time");
    let select = Selection::parse(&["unit=ops/us".to_string()]).unwrap();
    let imported = parse_selected("all.json", &broken, &select).unwrap();
    assert_eq!(imported.benchmarks[0].metric, "throughput");
}

#[test]
fn a_nan_iteration_is_refused_with_the_benchmark() {
    let text = r#"[{"benchmark": "a.B.c", "mode": "avgt", "primaryMetric":
            {"score": 1.0, "scoreError": "NaN", "scoreUnit": "ns/op", "rawData": [[1.0, "NaN"]]}}]"#;
    let error = parse("n.json", text).unwrap_err().to_string();
    assert!(
        error.starts_with("n.json: benchmark \"a.B.c\": fork 1 iteration 2 is NaN"),
        "{error}"
    );
}

#[test]
fn a_pyperf_file_is_refused_naming_the_file() {
    let pyperf = std::fs::read_to_string(fixture("pyperf/pyperf.json")).unwrap();
    let error = parse("pyperf.json", &pyperf).unwrap_err().to_string();
    assert!(
        error.starts_with("pyperf.json: not JMH JSON results: the top level is not an array"),
        "{error}"
    );
}
