//! Google Benchmark's `--benchmark_format=json` (or `--benchmark_out=FILE`) output: each
//! repetition of a benchmark is one [`Run`] holding one value, its `real_time` per iteration.
//!
//! Entries with `run_type: "aggregate"` (mean, median, stddev, cv, BigO, RMS) are summaries of the
//! repetitions and are skipped, never imported as values. Only `real_time` (wall clock) is read;
//! `cpu_time` and user counters are not imported. Benchmarks are grouped by `run_name` (falling
//! back to `name`), so arguments stay part of the name (`BM_Copy/64`): Google Benchmark does not
//! record them structurally. The `context` object's scalar fields become the context facts, its
//! `library_version` (written by 1.8 and later) the tool version.

use super::{
    Benchmark, Facts, Format, Imported, Run, Source, group_benchmarks, scalar_text, seconds_per,
};
use anyhow::Result;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const WHAT: &str = "Google Benchmark JSON output";
const EXPECTED: &str = "the file written by a Google Benchmark program run with --benchmark_format=json or --benchmark_out=FILE";

/// Parses one Google Benchmark JSON file; `origin` names the file in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let document = source.json(text)?;
    let context = document
        .get("context")
        .and_then(Value::as_object)
        .ok_or_else(|| source.not_format("no \"context\" object"))?;
    let entries = document
        .get("benchmarks")
        .and_then(Value::as_array)
        .ok_or_else(|| source.not_format("no \"benchmarks\" array"))?;
    let mut benchmarks = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        if let Some(benchmark) = repetition(&source, index, entry)? {
            benchmarks.push(benchmark);
        }
    }
    Ok(Imported {
        format: Format::Gbench,
        tool_version: context.get("library_version").and_then(scalar_text),
        context: context_facts(context),
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
    })
}

/// The context's scalar fields (host_name, num_cpus, mhz_per_cpu, …), without library_version.
fn context_facts(context: &Map<String, Value>) -> BTreeMap<String, String> {
    let mut facts = Facts::default();
    for (key, value) in context {
        if key == "library_version" {
            continue;
        }
        if let Some(text) = scalar_text(value) {
            facts.add(key, text);
        }
    }
    facts.into_context()
}

/// One repetition as a one-run benchmark; None for aggregates.
fn repetition(source: &Source, index: usize, entry: &Value) -> Result<Option<Benchmark>> {
    let name = entry_name(source, index, entry)?;
    match entry.get("run_type").and_then(Value::as_str) {
        Some("aggregate") => return Ok(None),
        Some("iteration") => {}
        other => {
            return Err(source.not_format(format!(
                "benchmark \"{name}\" has run_type {}, not \"iteration\" or \"aggregate\"",
                other.map_or("missing".to_string(), |t| format!("\"{t}\""))
            )));
        }
    }
    refuse_failed(source, name, entry)?;
    let real_time = real_time_seconds(source, name, entry)?;
    Ok(Some(Benchmark {
        name: name.to_string(),
        params: BTreeMap::new(),
        metric: "time".into(),
        unit: "s".into(),
        higher_is_better: false,
        runs: vec![Run::measured(vec![real_time])],
        summary_only: false,
    }))
}

/// `run_name`, or `name` for files that lack it.
fn entry_name<'v>(source: &Source, index: usize, entry: &'v Value) -> Result<&'v str> {
    entry
        .get("run_name")
        .or_else(|| entry.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| source.not_format(format!("benchmark entry {} has no \"name\"", index + 1)))
}

/// A repetition that failed or was skipped has no real measurement.
fn refuse_failed(source: &Source, name: &str, entry: &Value) -> Result<()> {
    let failed = entry.get("error_occurred").and_then(Value::as_bool) == Some(true)
        || entry.get("skipped").and_then(Value::as_bool) == Some(true);
    if failed {
        let message = entry
            .get("error_message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Err(source.bad(format!(
            "benchmark \"{name}\" failed or was skipped ({message}) (expected only successful repetitions; \
             fix or filter out the failing benchmark)"
        )));
    }
    Ok(())
}

fn real_time_seconds(source: &Source, name: &str, entry: &Value) -> Result<f64> {
    let unit = entry.get("time_unit").and_then(Value::as_str).unwrap_or("");
    let factor = seconds_per(unit).ok_or_else(|| {
        source.bad(format!(
            "benchmark \"{name}\": time_unit \"{unit}\" (expected \"ns\", \"us\", \"ms\" or \"s\")"
        ))
    })?;
    let real_time = entry
        .get("real_time")
        .ok_or_else(|| source.not_format(format!("benchmark \"{name}\" has no \"real_time\"")))?;
    Ok(source.value(name, "real_time", real_time)? * factor)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_close, fixture};
    use super::super::{Format, read};
    use super::*;

    const GBENCH: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/gbench/gbench.json"
    ));

    #[test]
    fn repetitions_are_runs_and_aggregates_are_skipped() {
        let imported = parse("gbench.json", GBENCH).unwrap();
        assert_eq!(imported.format, Format::Gbench);
        let names: Vec<&str> = imported
            .benchmarks
            .iter()
            .map(|b| b.name.as_str())
            .collect();
        assert_eq!(names, ["BM_Accumulate/64", "BM_Accumulate/512", "BM_Sort"]);
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
    fn a_failed_repetition_is_refused() {
        let text = r#"{"context": {}, "benchmarks": [{"name": "BM_X", "run_type": "iteration",
            "error_occurred": true, "error_message": "boom", "real_time": 0, "time_unit": "ns"}]}"#;
        let error = parse("g.json", text).unwrap_err().to_string();
        assert!(
            error.contains("\"BM_X\" failed or was skipped (boom)"),
            "{error}"
        );
    }
}
