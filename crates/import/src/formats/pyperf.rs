//! pyperf's JSON (`pyperf timeit … -o FILE`, `pyperf command`, a `pyperf.Runner` script's `-o`,
//! or a suite built with `pyperf convert --add`), and that of its predecessor, the `perf` module
//! (0.7.4 to 0.9.9, 2016–2017): each of a benchmark's worker processes is one [`Run`].
//!
//! A run's `values` are the measured values per loop (pyperf has already divided by the loop
//! count); its `warmups` are `[loops, value]` pairs, of which the value is kept as a warm-up
//! value. A run with `warmups` but no `values` is a calibration run and is marked `warmup`.
//! Metadata is the top-level `metadata` overlaid by each benchmark's own: `name` names the
//! benchmark, `unit` ("second" by default, as in pyperf) gives the unit, `perf_version` the tool
//! version; the remaining top-level metadata (cpu_model_name, hostname, python_version, …) are
//! the context facts. Gzip-compressed files (`.json.gz`, which pyperf writes when the output
//! name ends so) are decompressed by the reader.
//!
//! Older files are read as pyperf itself reads them (its `_bench.py` keeps the format history):
//! format versions 4 and 5 (perf 0.7.4 to 0.9.5) keep a benchmark's metadata in
//! `common_metadata` and a run's values in `samples`, with nothing at the top, so their context
//! facts come from the benchmarks' metadata; version 6 (perf 0.9.6) has the current layout; and
//! before version "1.0" (pyperf 1.0) a warm-up pair holds the raw time of all its
//! `loops × inner_loops` iterations, divided here into the per-loop value later files hold.

use super::{
    Benchmark, Facts, Format, Imported, Run, Source, group_benchmarks, number, scalar_text,
};
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

/// Where one JSON format version keeps what lab reads.
struct Layout {
    /// The key of a benchmark's metadata.
    benchmark_metadata: &'static str,
    /// The key of a run's measured values.
    values: &'static str,
    /// The file's top-level `metadata` holds what its benchmarks share (version 6 and later).
    top_metadata: bool,
    /// Warm-up values are the raw time of all `loops × inner_loops` iterations (before "1.0").
    raw_warmups: bool,
}

/// The layout of the file's format `version`: a string ("1.0") since pyperf 1.0, a number before.
fn layout(source: &Source, document: &Value) -> Result<Layout> {
    let layout = |benchmark_metadata, values, top_metadata, raw_warmups| Layout {
        benchmark_metadata,
        values,
        top_metadata,
        raw_warmups,
    };
    match document.get("version") {
        Some(Value::String(_)) => Ok(layout("metadata", "values", true, false)),
        Some(Value::Number(version)) => match version.as_u64() {
            Some(4 | 5) => Ok(layout("common_metadata", "samples", false, true)),
            Some(6) => Ok(layout("metadata", "values", true, true)),
            _ => Err(source.bad(format!(
                "JSON format version {version}, which lab does not read (expected version 4, 5, 6 \
                 or \"1.0\": a file written by perf 0.7.4 or later, or by pyperf)"
            ))),
        },
        _ => Err(source.not_format("no \"version\" string")),
    }
}

/// Parses one pyperf JSON file (a single benchmark or a suite); `origin` names it in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let (document, log_note) = source.json_in_log(text, |v| v.get("benchmarks").is_some())?;
    let layout = layout(&source, &document)?;
    let entries = source.array(&document, "benchmarks")?;
    let common = metadata_of(&source, &document, "metadata", "the file")?;
    let mut described = Vec::new();
    if layout.top_metadata {
        described.push(common.clone());
    }
    let mut benchmarks = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let whose = format!("benchmark {}", index + 1);
        let mut metadata = common.clone();
        metadata.extend(metadata_of(
            &source,
            entry,
            layout.benchmark_metadata,
            &whose,
        )?);
        benchmarks.push(benchmark(&source, &layout, &metadata, &whose, entry)?);
        if !layout.top_metadata {
            described.push(metadata);
        }
    }
    let (tool_version, context) = version_and_context(&described);
    Ok(Imported {
        format: Format::Pyperf,
        tool_version,
        context,
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
        notes: log_note.into_iter().collect(),
    })
}

/// `holder`'s metadata object under `key` (empty when absent).
fn metadata_of(
    source: &Source,
    holder: &Value,
    key: &str,
    whose: &str,
) -> Result<Map<String, Value>> {
    match holder.get(key) {
        None => Ok(Map::new()),
        Some(Value::Object(metadata)) => Ok(metadata.clone()),
        Some(_) => Err(source.not_format(format!("the {key} of {whose} is not an object"))),
    }
}

/// The `perf_version` and the machine facts of the metadata that describe the file: its top-level
/// metadata, or each benchmark's in files that have none.
fn version_and_context(
    described: &[Map<String, Value>],
) -> (Option<String>, BTreeMap<String, String>) {
    let mut versions = Facts::default();
    let mut facts = Facts::default();
    for metadata in described {
        for (key, value) in metadata {
            let Some(text) = scalar_text(value) else {
                continue;
            };
            if key == "perf_version" {
                versions.add(key, text);
            } else if !BENCHMARK_METADATA.contains(&key.as_str()) && !key.starts_with("timeit_") {
                facts.add(key, text);
            }
        }
    }
    (
        versions.into_context().remove("perf_version"),
        facts.into_context(),
    )
}

fn benchmark(
    source: &Source,
    layout: &Layout,
    metadata: &Map<String, Value>,
    whose: &str,
    entry: &Value,
) -> Result<Benchmark> {
    let name = metadata
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| source.not_format(format!("{whose} has no \"name\" in its metadata")))?;
    let (metric, unit) = metric_and_unit(source, name, metadata)?;
    let runs = entry
        .get("runs")
        .and_then(Value::as_array)
        .ok_or_else(|| source.not_format(format!("benchmark \"{name}\" has no \"runs\" array")))?;
    let runs = runs
        .iter()
        .enumerate()
        .map(|(index, run_entry)| {
            let label = format!("run {}", index + 1);
            run(source, layout, metadata, name, &label, run_entry)
        })
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
        secondary: Vec::new(),
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
/// `metadata` is its benchmark's, which the run's own `metadata` overlays.
fn run(
    source: &Source,
    layout: &Layout,
    metadata: &Map<String, Value>,
    name: &str,
    label: &str,
    entry: &Value,
) -> Result<Run> {
    let values = match entry.get(layout.values) {
        None => Vec::new(),
        Some(values) => {
            let values = values.as_array().ok_or_else(|| {
                source.not_format(format!(
                    "benchmark \"{name}\": {label} \"{}\" is not an array",
                    layout.values
                ))
            })?;
            values
                .iter()
                .enumerate()
                .map(|(i, value)| source.value(name, &format!("{label} value {}", i + 1), value))
                .collect::<Result<Vec<_>>>()?
        }
    };
    let raw_inner_loops = if layout.raw_warmups {
        let mut own = metadata.clone();
        own.extend(metadata_of(source, entry, "metadata", label)?);
        Some(loop_count(
            source,
            name,
            &format!("{label} inner_loops"),
            own.get("inner_loops"),
        )?)
    } else {
        None
    };
    let warmup_values = warmup_values(source, name, label, entry, raw_inner_loops)?;
    Ok(Run {
        warmup: values.is_empty(),
        warmup_values,
        ..Run::measured(values)
    })
}

/// The values of a run's `[loops, value]` warm-up pairs, per loop: when `raw_inner_loops` is
/// given, a pair's value is the raw time of `loops × inner_loops` iterations and is divided by it.
fn warmup_values(
    source: &Source,
    name: &str,
    label: &str,
    entry: &Value,
    raw_inner_loops: Option<f64>,
) -> Result<Vec<f64>> {
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
            let Some([loops, value]) = pair.as_array().map(Vec::as_slice) else {
                return Err(source.not_format(format!(
                    "benchmark \"{name}\": {what} is {pair}, not a [loops, value] pair"
                )));
            };
            let value = source.value(name, &what, value)?;
            match raw_inner_loops {
                None => Ok(value),
                Some(inner_loops) => {
                    let loops = loop_count(source, name, &format!("{what} loops"), Some(loops))?;
                    Ok(value / (loops * inner_loops))
                }
            }
        })
        .collect()
}

/// A loop count: a whole number of at least 1; 1 when absent (pyperf's default).
fn loop_count(source: &Source, name: &str, what: &str, count: Option<&Value>) -> Result<f64> {
    let Some(count) = count else {
        return Ok(1.0);
    };
    match number(count) {
        Some(loops) if loops >= 1.0 && loops.fract() == 0.0 => Ok(loops),
        _ => Err(source.bad(format!(
            "benchmark \"{name}\": {what} is {count} (expected a whole number of at least 1)"
        ))),
    }
}

#[cfg(test)]
#[path = "pyperf_tests.rs"]
mod tests;
