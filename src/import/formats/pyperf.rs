//! pyperf's JSON (`pyperf timeit … -o FILE`, `pyperf command`, a `pyperf.Runner` script's `-o`,
//! or a suite built with `pyperf convert --add`): each of a benchmark's worker processes is one
//! [`Run`].
//!
//! A run's `values` are the measured values per loop (pyperf has already divided by the loop
//! count); its `warmups` are `[loops, value]` pairs, of which the value is kept as a warm-up
//! value. A run with `warmups` but no `values` is a calibration run and is marked `warmup`.
//! Metadata is the top-level `metadata` overlaid by each benchmark's own: `name` names the
//! benchmark, `unit` ("second" by default, as in pyperf) gives the unit, `perf_version` the tool
//! version; the remaining top-level metadata (cpu_model_name, hostname, python_version, …) are
//! the context facts. Gzip-compressed files (`.json.gz`, which pyperf writes when the output
//! name ends so) are decompressed by the reader.

use super::{Benchmark, Facts, Format, Imported, Run, Source, group_benchmarks, scalar_text};
use anyhow::Result;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const WHAT: &str = "pyperf JSON";
const EXPECTED: &str =
    "the file written by pyperf's -o FILE option, e.g. python3 -m pyperf timeit -o FILE";

/// Metadata that describes a benchmark rather than the machine; not context facts.
const BENCHMARK_METADATA: &[&str] = &[
    "name",
    "unit",
    "loops",
    "inner_loops",
    "perf_version",
    "description",
    "tags",
    "command",
];

/// Parses one pyperf JSON file (a single benchmark or a suite); `origin` names it in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let document = source.json(text)?;
    if document.get("version").and_then(Value::as_str).is_none() {
        return Err(source.not_format("no \"version\" string"));
    }
    let entries = document
        .get("benchmarks")
        .and_then(Value::as_array)
        .ok_or_else(|| source.not_format("no \"benchmarks\" array"))?;
    let common = metadata_of(&source, &document, "the file")?;
    let benchmarks = entries
        .iter()
        .enumerate()
        .map(|(index, entry)| benchmark(&source, &common, index, entry))
        .collect::<Result<Vec<_>>>()?;
    Ok(Imported {
        format: Format::Pyperf,
        tool_version: common.get("perf_version").and_then(scalar_text),
        context: context_facts(&common),
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
    })
}

/// `holder`'s `metadata` object (empty when absent).
fn metadata_of(source: &Source, holder: &Value, whose: &str) -> Result<Map<String, Value>> {
    match holder.get("metadata") {
        None => Ok(Map::new()),
        Some(Value::Object(metadata)) => Ok(metadata.clone()),
        Some(_) => Err(source.not_format(format!("the metadata of {whose} is not an object"))),
    }
}

fn context_facts(common: &Map<String, Value>) -> BTreeMap<String, String> {
    let mut facts = Facts::default();
    for (key, value) in common {
        if BENCHMARK_METADATA.contains(&key.as_str()) || key.starts_with("timeit_") {
            continue;
        }
        if let Some(text) = scalar_text(value) {
            facts.add(key, text);
        }
    }
    facts.into_context()
}

fn benchmark(
    source: &Source,
    common: &Map<String, Value>,
    index: usize,
    entry: &Value,
) -> Result<Benchmark> {
    let whose = format!("benchmark {}", index + 1);
    let mut metadata = common.clone();
    metadata.extend(metadata_of(source, entry, &whose)?);
    let name = metadata
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| source.not_format(format!("{whose} has no \"name\" in its metadata")))?;
    let (metric, unit) = metric_and_unit(source, name, &metadata)?;
    let runs = entry
        .get("runs")
        .and_then(Value::as_array)
        .ok_or_else(|| source.not_format(format!("benchmark \"{name}\" has no \"runs\" array")))?;
    let runs = runs
        .iter()
        .enumerate()
        .map(|(index, run_entry)| run(source, name, index, run_entry))
        .collect::<Result<Vec<_>>>()?;
    if runs.iter().all(|run| run.values.is_empty()) {
        return Err(source.bad(format!(
            "benchmark \"{name}\" has no run with values, only calibration \
             (expected at least one measured run)"
        )));
    }
    Ok(Benchmark {
        name: name.to_string(),
        params: BTreeMap::new(),
        metric: metric.into(),
        unit: unit.into(),
        higher_is_better: false,
        runs,
        summary_only: false,
    })
}

/// pyperf's units: "second" (the default), "byte" and "integer"; lower is better for all.
fn metric_and_unit(
    source: &Source,
    name: &str,
    metadata: &Map<String, Value>,
) -> Result<(&'static str, &'static str)> {
    match metadata
        .get("unit")
        .and_then(Value::as_str)
        .unwrap_or("second")
    {
        "second" => Ok(("time", "s")),
        "byte" => Ok(("size", "bytes")),
        "integer" => Ok(("count", "count")),
        other => Err(source.bad(format!(
            "benchmark \"{name}\": unit \"{other}\" (expected \"second\", \"byte\" or \"integer\")"
        ))),
    }
}

/// One worker process: its warm-up values and measured values; calibration when it has no values.
fn run(source: &Source, name: &str, index: usize, entry: &Value) -> Result<Run> {
    let label = format!("run {}", index + 1);
    let values = match entry.get("values") {
        None => Vec::new(),
        Some(values) => {
            let values = values.as_array().ok_or_else(|| {
                source.not_format(format!(
                    "benchmark \"{name}\": {label} \"values\" is not an array"
                ))
            })?;
            values
                .iter()
                .enumerate()
                .map(|(i, value)| source.value(name, &format!("{label} value {}", i + 1), value))
                .collect::<Result<Vec<_>>>()?
        }
    };
    let warmup_values = warmup_values(source, name, &label, entry)?;
    Ok(Run {
        warmup: values.is_empty(),
        warmup_values,
        values,
    })
}

/// The values of a run's `[loops, value]` warm-up pairs.
fn warmup_values(source: &Source, name: &str, label: &str, entry: &Value) -> Result<Vec<f64>> {
    let Some(warmups) = entry.get("warmups") else {
        return Ok(Vec::new());
    };
    let pairs = warmups.as_array().ok_or_else(|| {
        source.not_format(format!(
            "benchmark \"{name}\": {label} \"warmups\" is not an array"
        ))
    })?;
    pairs
        .iter()
        .enumerate()
        .map(|(i, pair)| {
            let what = format!("{label} warm-up {}", i + 1);
            match pair.as_array().map(Vec::as_slice) {
                Some([_loops, value]) => source.value(name, &what, value),
                _ => Err(source.not_format(format!(
                    "benchmark \"{name}\": {what} is {pair}, not a [loops, value] pair"
                ))),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_close, fixture};
    use super::super::{Format, read};
    use super::*;

    const SORTED: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/pyperf/pyperf.json"
    ));
    const SUITE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/pyperf/pyperf-suite.json"
    ));

    #[test]
    fn a_timeit_file_is_one_benchmark_with_a_calibration_run() {
        let imported = parse("pyperf.json", SORTED).unwrap();
        assert_eq!(imported.format, Format::Pyperf);
        assert_eq!(imported.tool_version.as_deref(), Some("2.11.0"));
        assert_eq!(imported.benchmarks.len(), 1);
        let timeit = &imported.benchmarks[0];
        assert_eq!(timeit.name, "timeit");
        assert_eq!(
            (timeit.metric.as_str(), timeit.unit.as_str()),
            ("time", "s")
        );
        assert_eq!(timeit.runs.len(), 11);
        let calibration = &timeit.runs[0];
        assert!(calibration.warmup && calibration.values.is_empty());
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
}
