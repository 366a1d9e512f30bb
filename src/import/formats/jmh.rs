//! JMH's `-rf json` output: an array of results, one per benchmark, mode and parameter set. Each
//! fork is one [`Run`], its measurement iterations (`primaryMetric.rawData[fork]`) the values.
//!
//! Modes: `thrpt` keeps its unit (e.g. "ops/s") with metric "throughput", higher is better;
//! `avgt` and `ss` are times per operation, converted from the unit JMH states (e.g. "us/op") to
//! seconds with metric "time". `sample` mode records a histogram (`rawDataHistogram`), not
//! per-iteration values, and is refused. Secondary metrics (profilers, `gc.alloc.rate`, …) are
//! not imported. `jmhVersion` is the tool version; `jvm`, `jvmArgs`, `jdkVersion`, `vmName`,
//! `vmVersion` and `threads` are the context facts.
//!
//! A result without `rawData` (a trimmed file, or one written by a tool that imitates JMH's
//! format) holds only the summary: it is imported as a [`Benchmark`] with `summary_only: true`
//! whose single run holds one value, `primaryMetric.score`. That value is a mean over forks and
//! iterations, not a measurement; nothing else is made up for it.

use super::{
    Benchmark, Facts, Format, Imported, Run, Source, group_benchmarks, scalar_text, seconds_per,
};
use anyhow::Result;
use serde_json::Value;
use std::collections::BTreeMap;

const WHAT: &str = "JMH JSON results";
const EXPECTED: &str = "the file written by a JMH benchmark run with -rf json -rff FILE";

/// The per-benchmark fields kept as context facts.
const CONTEXT_FIELDS: &[&str] = &[
    "jvm",
    "jvmArgs",
    "jdkVersion",
    "vmName",
    "vmVersion",
    "threads",
];

/// Parses one JMH JSON results file; `origin` names the file in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let document = source.json(text)?;
    let results = document
        .as_array()
        .ok_or_else(|| source.not_format("the top level is not an array of results"))?;
    let mut versions = Facts::default();
    let mut facts = Facts::default();
    let mut benchmarks = Vec::new();
    for (index, result) in results.iter().enumerate() {
        benchmarks.push(benchmark(&source, index, result)?);
        if let Some(version) = result.get("jmhVersion").and_then(scalar_text) {
            versions.add("jmhVersion", version);
        }
        add_context_facts(&mut facts, result);
    }
    Ok(Imported {
        format: Format::Jmh,
        tool_version: versions.into_context().remove("jmhVersion"),
        context: facts.into_context(),
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
    })
}

fn add_context_facts(facts: &mut Facts, result: &Value) {
    for &field in CONTEXT_FIELDS {
        let text = match result.get(field) {
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .filter_map(scalar_text)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Some(value) => scalar_text(value),
            None => None,
        };
        if let Some(text) = text {
            facts.add(field, text);
        }
    }
}

fn benchmark(source: &Source, index: usize, result: &Value) -> Result<Benchmark> {
    let name = result
        .get("benchmark")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            source.not_format(format!("result {} has no \"benchmark\" name", index + 1))
        })?;
    let primary = result
        .get("primaryMetric")
        .filter(|metric| metric.is_object())
        .ok_or_else(|| {
            source.not_format(format!(
                "benchmark \"{name}\" has no \"primaryMetric\" object"
            ))
        })?;
    let mode = result.get("mode").and_then(Value::as_str).unwrap_or("");
    refuse_histograms(source, name, mode, primary)?;
    let score_unit = primary
        .get("scoreUnit")
        .and_then(Value::as_str)
        .unwrap_or("");
    let measure = Measure::of(source, name, mode, score_unit)?;
    let (runs, summary_only) = match primary.get("rawData") {
        Some(raw) => (fork_runs(source, name, raw, measure.factor)?, false),
        None => (summary_run(source, name, primary, measure.factor)?, true),
    };
    Ok(Benchmark {
        name: name.to_string(),
        params: params(source, name, result)?,
        metric: measure.metric.into(),
        unit: measure.unit,
        higher_is_better: measure.higher_is_better,
        runs,
        summary_only,
    })
}

fn refuse_histograms(source: &Source, name: &str, mode: &str, primary: &Value) -> Result<()> {
    if mode == "sample" || primary.get("rawDataHistogram").is_some() {
        return Err(source.bad(format!(
            "benchmark \"{name}\": sample mode is not supported: JMH records its results as a histogram \
             (rawDataHistogram), not one value per iteration (expected thrpt, avgt or ss mode; \
             rerun with -bm avgt)"
        )));
    }
    Ok(())
}

/// What a mode's values measure, in which unit, and how to convert the file's values to it.
struct Measure {
    metric: &'static str,
    unit: String,
    higher_is_better: bool,
    factor: f64,
}

impl Measure {
    fn of(source: &Source, name: &str, mode: &str, score_unit: &str) -> Result<Measure> {
        match mode {
            "thrpt" => Ok(Measure {
                metric: "throughput",
                unit: score_unit.to_string(),
                higher_is_better: true,
                factor: 1.0,
            }),
            "avgt" | "ss" => Ok(Measure {
                metric: "time",
                unit: "s".into(),
                higher_is_better: false,
                factor: seconds_per_op(source, name, score_unit)?,
            }),
            other => Err(source.not_format(format!(
                "benchmark \"{name}\" has mode \"{other}\" (JMH's modes are thrpt, avgt, sample and ss)"
            ))),
        }
    }
}

/// Seconds in one of a time-per-operation unit such as "us/op".
fn seconds_per_op(source: &Source, name: &str, score_unit: &str) -> Result<f64> {
    score_unit
        .strip_suffix("/op")
        .and_then(seconds_per)
        .ok_or_else(|| {
            source.bad(format!(
                "benchmark \"{name}\": scoreUnit \"{score_unit}\" (expected a time per operation: \
                 s/op, ms/op, us/op or ns/op)"
            ))
        })
}

/// One run per fork of `rawData`, its iterations the values.
fn fork_runs(source: &Source, name: &str, raw: &Value, factor: f64) -> Result<Vec<Run>> {
    let forks = raw.as_array().ok_or_else(|| {
        source.not_format(format!(
            "benchmark \"{name}\": rawData is not an array of forks"
        ))
    })?;
    forks
        .iter()
        .enumerate()
        .map(|(fork, iterations)| {
            let iterations = iterations.as_array().ok_or_else(|| {
                source.not_format(format!(
                    "benchmark \"{name}\": rawData fork {} is not an array of iterations",
                    fork + 1
                ))
            })?;
            let values = iterations
                .iter()
                .enumerate()
                .map(|(i, value)| {
                    let what = format!("fork {} iteration {}", fork + 1, i + 1);
                    Ok(source.value(name, &what, value)? * factor)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Run::measured(values))
        })
        .collect()
}

/// The score as the only value of the only run, for files without rawData.
fn summary_run(source: &Source, name: &str, primary: &Value, factor: f64) -> Result<Vec<Run>> {
    let score = primary.get("score").ok_or_else(|| {
        source.not_format(format!(
            "benchmark \"{name}\" has neither rawData nor a score in its primaryMetric"
        ))
    })?;
    let score = source.value(name, "score", score)? * factor;
    Ok(vec![Run::measured(vec![score])])
}

fn params(source: &Source, name: &str, result: &Value) -> Result<BTreeMap<String, String>> {
    super::text_params(source, name, result, "params")
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_close, fixture};
    use super::super::{Format, read};
    use super::*;

    const JMH: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/jmh/jmh.json"
    ));
    const SUMMARY_ONLY: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/jmh/jmh-summary-only.json"
    ));

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
    fn sample_mode_is_refused() {
        let text = r#"[{"jmhVersion": "1.37", "benchmark": "a.B.c", "mode": "sample",
            "primaryMetric": {"score": 1.0, "scoreUnit": "us/op",
            "rawDataHistogram": [[[[1.0, 3]]]]}}]"#;
        let error = parse("s.json", text).unwrap_err().to_string();
        assert!(
            error.starts_with("s.json: benchmark \"a.B.c\": sample mode is not supported"),
            "{error}"
        );
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
}
