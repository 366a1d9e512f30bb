//! Google Benchmark's `--benchmark_format=json` (or `--benchmark_out=FILE`) output: each
//! repetition of a benchmark is one [`Run`] holding one value, its `real_time` per iteration.
//!
//! Aggregate rows (mean, median, stddev, cv, BigO, RMS) are summaries of the repetitions and are
//! skipped, never imported as values. Since 1.5 they carry `run_type: "aggregate"`; the releases
//! before it (1.4.1 and older, 2018) mark them only by the suffix Google Benchmark appends to the
//! name (`BM_Sort_mean`, …), so for rows without `run_type` an `aggregate_name` or one of those
//! suffixes makes an aggregate. A file of aggregates alone (`--benchmark_report_aggregates_only`)
//! is refused: there is nothing raw to import. `real_time` (wall clock per iteration) is the
//! main metric; `cpu_time` (converted to seconds like it) and every counter (the numeric fields
//! Google Benchmark does not write itself: `state.counters`, `items_per_second`,
//! `bytes_per_second`) are secondary metrics, one value per repetition; a `*_per_second`
//! counter is a rate (higher is better, unit `/s`), any other a count. Benchmarks are grouped by `run_name` (falling back to
//! `name`), so arguments stay part of the name (`BM_Copy/64`): Google Benchmark does not record
//! them structurally. The `context` object's scalar fields become the context facts, its
//! `library_version` (written by 1.8 and later) the tool version.

use super::{
    Benchmark, Facts, Format, Imported, Run, Secondary, Source, group_benchmarks, scalar_text,
    seconds_per,
};
use anyhow::Result;
use lab_store::Exit;
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
    let (document, log_note) = source.json_in_log(text, |v| v.get("benchmarks").is_some())?;
    let context = document
        .get("context")
        .and_then(Value::as_object)
        .ok_or_else(|| source.not_format("no \"context\" object"))?;
    let entries = source.array(&document, "benchmarks")?;
    let mut benchmarks = Vec::new();
    let mut aggregates = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match row(&source, index, entry)? {
            Row::Iteration(benchmark) => benchmarks.push(benchmark),
            Row::Aggregate(kind) => aggregates.push(kind),
        }
    }
    if benchmarks.is_empty() && !aggregates.is_empty() {
        return Err(only_aggregates(&source, &aggregates));
    }
    let notes = log_note.into_iter().collect();
    Ok(Imported {
        format: Format::Gbench,
        tool_version: context.get("library_version").and_then(scalar_text),
        context: context_facts(context),
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
        notes,
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

/// The suffixes Google Benchmark appends to an aggregate's name: its statistics (`cv` since 1.6)
/// and, for `->Complexity()`, the fitted `BigO` and its `RMS`.
const AGGREGATE_SUFFIXES: &[&str] = &["mean", "median", "stddev", "cv", "BigO", "RMS"];

/// One entry of `benchmarks`.
enum Row<'v> {
    /// A repetition, as a one-run benchmark (one that failed or was skipped: a failed run
    /// holding no value, see [`failure`]).
    Iteration(Benchmark),
    /// A summary of the repetitions; the aggregate's kind ("mean", "stddev", …).
    Aggregate(&'v str),
}

fn row<'v>(source: &Source, index: usize, entry: &'v Value) -> Result<Row<'v>> {
    let name = entry_name(source, index, entry)?;
    let aggregate = match entry.get("run_type") {
        None => aggregate_kind(entry),
        Some(Value::String(run_type)) if run_type == "aggregate" => {
            Some(aggregate_kind(entry).unwrap_or("aggregate"))
        }
        Some(Value::String(run_type)) if run_type == "iteration" => None,
        Some(other) => {
            return Err(source.not_format(format!(
                "benchmark \"{name}\" has run_type {other}, not \"iteration\" or \"aggregate\""
            )));
        }
    };
    if let Some(kind) = aggregate {
        return Ok(Row::Aggregate(kind));
    }
    if let Some(why) = failure(entry) {
        let mut run = Run::measured(Vec::new());
        run.exit = Some(Exit::SpawnFailed(format!("Google Benchmark: {why}")));
        return Ok(Row::Iteration(one_run(name, run, Vec::new())));
    }
    let factor = seconds_per_unit(source, name, entry)?;
    let real_time = time_seconds(source, name, entry, "real_time", factor)?;
    let mut run = Run::measured(vec![real_time]);
    let mut secondary = Vec::new();
    if entry.get("cpu_time").is_some() {
        let cpu_time = time_seconds(source, name, entry, "cpu_time", factor)?;
        run = run.with("cpu_time", vec![cpu_time]);
        secondary.push(Secondary::new("cpu_time", "s", false, false));
    }
    for (counter, value) in counters(entry) {
        let value = source.value(name, &format!("counter {counter}"), value)?;
        run = run.with(counter, vec![value]);
        let rate = counter.ends_with("_per_second");
        secondary.push(Secondary::new(
            counter,
            if rate { "/s" } else { "" },
            rate,
            !rate,
        ));
    }
    Ok(Row::Iteration(one_run(name, run, secondary)))
}

/// A benchmark of one repetition.
fn one_run(name: &str, run: Run, secondary: Vec<Secondary>) -> Benchmark {
    Benchmark {
        name: name.to_string(),
        params: BTreeMap::new(),
        metric: "time".into(),
        unit: "s".into(),
        higher_is_better: false,
        runs: vec![run],
        summary_only: false,
        secondary,
    }
}

/// The fields of a repetition that Google Benchmark itself writes; every other number is a
/// counter (`state.counters`, `SetItemsProcessed`'s `items_per_second`, …).
const ROW_FIELDS: &[&str] = &[
    "name",
    "family_index",
    "per_family_instance_index",
    "run_name",
    "run_type",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
    "aggregate_name",
    "aggregate_unit",
    "error_occurred",
    "error_message",
    "skipped",
    "label",
    "big_o",
    "rms",
    "complexity_n",
];

/// A repetition's counters: its numeric fields that are not [`ROW_FIELDS`], in file order.
fn counters(entry: &Value) -> impl Iterator<Item = (&String, &Value)> {
    entry
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, value)| value.is_number() && !ROW_FIELDS.contains(&key.as_str()))
}

/// The row's `aggregate_name` (1.5 and later), else the aggregate suffix of its `name` (all that
/// marks an aggregate in 1.4 and older); None when it has neither.
fn aggregate_kind(entry: &Value) -> Option<&str> {
    if let Some(kind) = entry.get("aggregate_name").and_then(Value::as_str) {
        return Some(kind);
    }
    let (_, suffix) = entry
        .get("name")
        .and_then(Value::as_str)?
        .rsplit_once('_')?;
    AGGREGATE_SUFFIXES
        .iter()
        .copied()
        .find(|&known| known == suffix)
}

/// The refusal of a file holding only aggregate rows, naming their kinds in file order.
fn only_aggregates(source: &Source, aggregates: &[&str]) -> anyhow::Error {
    let mut kinds: Vec<&str> = Vec::new();
    for kind in aggregates {
        if !kinds.contains(kind) {
            kinds.push(kind);
        }
    }
    source.bad(format!(
        "{} rows, all aggregates: {}; lab needs the per-repetition rows (expected a run without \
         --benchmark_report_aggregates_only; --benchmark_display_aggregates_only instead still \
         writes them to the --benchmark_out=FILE JSON)",
        aggregates.len(),
        kinds.join(", ")
    ))
}

/// `run_name`, or `name` for files that lack it.
fn entry_name<'v>(source: &Source, index: usize, entry: &'v Value) -> Result<&'v str> {
    entry
        .get("run_name")
        .or_else(|| entry.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| source.not_format(format!("benchmark entry {} has no \"name\"", index + 1)))
}

/// Why a repetition has no real measurement, if it has none: it failed or was skipped
/// (`error_occurred` with `error_message`, as `state.SkipWithError` writes it in every
/// release; `skipped` with `skip_message` from `state.SkipWithMessage`, 1.8 and later).
fn failure(entry: &Value) -> Option<String> {
    let flagged = |key: &str| match entry.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty() && s != "false",
        _ => false,
    };
    if !flagged("error_occurred") && !flagged("skipped") {
        return None;
    }
    let message = ["error_message", "skip_message"]
        .iter()
        .find_map(|key| entry.get(*key).and_then(Value::as_str))
        .unwrap_or("no message");
    Some(format!("failed or skipped: {message}"))
}

/// Seconds in one of the repetition's `time_unit`.
fn seconds_per_unit(source: &Source, name: &str, entry: &Value) -> Result<f64> {
    let unit = entry.get("time_unit").and_then(Value::as_str).unwrap_or("");
    seconds_per(unit).ok_or_else(|| {
        source.bad(format!(
            "benchmark \"{name}\": time_unit \"{unit}\" (expected \"ns\", \"us\", \"ms\" or \"s\")"
        ))
    })
}

/// The time `key` (`real_time`, `cpu_time`) of a repetition, in seconds.
fn time_seconds(source: &Source, name: &str, entry: &Value, key: &str, factor: f64) -> Result<f64> {
    let time = entry
        .get(key)
        .ok_or_else(|| source.not_format(format!("benchmark \"{name}\" has no \"{key}\"")))?;
    Ok(source.value(name, key, time)? * factor)
}

#[cfg(test)]
#[path = "gbench_tests.rs"]
mod tests;
