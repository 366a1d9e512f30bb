//! hyperfine's `--export-json` output: each timed execution of a command is one [`Run`] holding
//! its wall-clock time, with its CPU times, peak memory and counters as secondary metrics where
//! the file has them per run.
//!
//! Two layouts exist. hyperfine 1.x writes, per command, `command`, `times` (seconds, one per
//! run, warm-up runs not included), `exit_codes` and, from 1.19 on, `memory_usage_byte` (peak
//! resident memory per run), `parameters` as `{"NAME": "VALUE"}`, and summary statistics (its
//! `user` and `system` are means, not per run, so they are not imported). hyperfine 2.0 writes
//! `"schema_version": 2`, a `primary_metric`, and per command `measurements`: one object per
//! run holding every `--metrics` value as `{"value", "unit"}` in base units (`second`, `byte`,
//! `count`) and its `exit_code`, with `parameters` as `{"NAME": {"value": "VALUE"}}`. The wall
//! time is the metric "time" in both, so files of either version import into one experiment;
//! the other values keep 2.0's names (`time_cpu`, `time_user`, `time_system`,
//! `memory_peak_resident`, `instructions`, …; 1.x's `memory_usage_byte` is
//! `memory_peak_resident`). A run that failed (kept by `--ignore-failure`) is imported as a
//! failed run, which the exit check judges and the analysis leaves out; a `null` exit code (a
//! command ended by a signal) is a failure too.

use super::{Benchmark, Format, Imported, Run, Secondary, Source, group_benchmarks};
use anyhow::Result;
use lab_store::Exit;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const WHAT: &str = "hyperfine --export-json output";
const EXPECTED: &str = "the file written by hyperfine --export-json FILE";

/// hyperfine 2.0's name for the wall-clock time, which lab calls "time".
const WALL_CLOCK: &str = "time_wall_clock";

/// hyperfine 2.0's name for peak resident memory, 1.x's `memory_usage_byte`.
const PEAK_MEMORY: &str = "memory_peak_resident";

/// Parses one hyperfine export; `origin` names the file in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let (document, log_note) = source.json_in_log(text, |v| v.get("results").is_some())?;
    let schema = document.get("schema_version");
    let version_two = match schema {
        None => false,
        Some(v) if v.as_u64() == Some(2) => true,
        Some(other) => {
            return Err(source.bad(format!(
                "schema_version {other}: lab reads hyperfine 1.x's exports and 2.0's schema 2 \
                 (expected a file written by one of those versions)"
            )));
        }
    };
    let results = source.array(&document, "results")?;
    let primary = document
        .get("primary_metric")
        .and_then(Value::as_str)
        .unwrap_or(WALL_CLOCK);
    let benchmarks = results
        .iter()
        .enumerate()
        .map(|(index, result)| match version_two {
            true => benchmark_v2(&source, index, result, primary),
            false => benchmark_v1(&source, index, result),
        })
        .collect::<Result<Vec<_>>>()?;
    let metadata = document.get("metadata");
    let field = |path: &[&str]| {
        path.iter()
            .try_fold(metadata?, |v, key| v.get(*key))
            .and_then(super::scalar_text)
    };
    let context = [
        ("os", ["platform", "os"]),
        ("architecture", ["platform", "architecture"]),
    ]
    .into_iter()
    .filter_map(|(key, path)| field(&path).map(|v| (key.to_string(), v)))
    .collect();
    Ok(Imported {
        format: Format::Hyperfine,
        tool_version: field(&["hyperfine_version"]),
        context,
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
        notes: log_note.into_iter().collect(),
    })
}

fn command<'a>(source: &Source, index: usize, result: &'a Value) -> Result<&'a str> {
    result
        .get("command")
        .and_then(Value::as_str)
        .ok_or_else(|| source.not_format(format!("result {} has no \"command\" string", index + 1)))
}

/// A wall-time benchmark of `name`: the main metric of both layouts.
fn wall_time(name: &str, params: BTreeMap<String, String>, runs: Vec<Run>) -> Benchmark {
    Benchmark::time(name.to_string(), params, runs)
}

fn benchmark_v1(source: &Source, index: usize, result: &Value) -> Result<Benchmark> {
    let name = command(source, index, result)?;
    let params = super::text_params(source, name, result, "parameters")?;
    let mut benchmark = wall_time(name, params, runs_v1(source, name, result)?);
    if result.get("memory_usage_byte").is_some() {
        benchmark
            .secondary
            .push(Secondary::new(PEAK_MEMORY, "B", false, true));
    }
    Ok(benchmark)
}

/// One run per entry of `times`, each holding that run's time, its peak memory where
/// `memory_usage_byte` is written and, where `exit_codes` is written, how it ended.
fn runs_v1(source: &Source, name: &str, result: &Value) -> Result<Vec<Run>> {
    let times = per_run_list(
        source,
        name,
        result,
        "times",
        "current hyperfine versions write",
    )?;
    let per_run = |key: &str, what: &str| -> Result<Option<&Vec<Value>>> {
        let Some(list) = result.get(key) else {
            return Ok(None);
        };
        match list.as_array() {
            Some(list) if list.len() == times.len() => Ok(Some(list)),
            Some(list) => Err(source.bad(format!(
                "benchmark \"{name}\" has {} times but {} {what} (expected one per run)",
                times.len(),
                list.len()
            ))),
            None => Err(source.bad(format!(
                "benchmark \"{name}\": \"{key}\" is not an array (expected one per run)"
            ))),
        }
    };
    let exits = per_run("exit_codes", "exit codes")?;
    let memory = per_run("memory_usage_byte", "memory readings")?;
    times
        .iter()
        .enumerate()
        .map(|(index, time)| {
            let seconds = source.value(name, &format!("time {}", index + 1), time)?;
            let mut run = Run::measured(vec![seconds]);
            if let Some(exits) = exits {
                run.exit = Some(exit(source, name, index, &exits[index])?);
            }
            if let Some(memory) = memory {
                let what = format!("memory_usage_byte {}", index + 1);
                let bytes = source.value(name, &what, &memory[index])?;
                run = run.with(PEAK_MEMORY, vec![bytes]);
            }
            Ok(run)
        })
        .collect()
}

/// The result's list `key` of one entry per run, refused when missing or empty: a file that
/// holds only a summary.
fn per_run_list<'v>(
    source: &Source,
    name: &str,
    result: &'v Value,
    key: &str,
    written_by: &str,
) -> Result<&'v Vec<Value>> {
    result
        .get(key)
        .and_then(Value::as_array)
        .filter(|list| !list.is_empty())
        .ok_or_else(|| {
            source.bad(format!(
                "benchmark \"{name}\" has no per-run \"{key}\", only a summary \
                 (expected the \"{key}\" list {written_by})"
            ))
        })
}

/// How a run ended from its exit code: a number is the exit code, `null` a command ended by
/// a signal hyperfine does not name.
fn exit(source: &Source, name: &str, index: usize, code: &Value) -> Result<Exit> {
    match code {
        Value::Null => Ok(Exit::SpawnFailed(
            "hyperfine recorded no exit code: the command was ended by a signal".into(),
        )),
        _ => code
            .as_i64()
            .and_then(|c| i32::try_from(c).ok())
            .map(Exit::Code)
            .ok_or_else(|| {
                source.bad(format!(
                    "benchmark \"{name}\": exit code {} is {code} (expected an integer or null)",
                    index + 1
                ))
            }),
    }
}

/// A result of schema 2: one run per measurement, the primary metric its value, every other
/// metric a secondary one.
fn benchmark_v2(source: &Source, index: usize, result: &Value, primary: &str) -> Result<Benchmark> {
    let name = command(source, index, result)?;
    let measurements = per_run_list(source, name, result, "measurements", "hyperfine 2.0 writes")?;
    let params = super::text_params(source, name, result, "parameters")?;
    let mut secondary: Vec<Secondary> = Vec::new();
    let mut runs = Vec::with_capacity(measurements.len());
    let mut main_unit = None;
    for (i, measurement) in measurements.iter().enumerate() {
        let what = format!("measurement {}", i + 1);
        let fields = measurement
            .as_object()
            .ok_or_else(|| source.bad(format!("benchmark \"{name}\": {what} is not an object")))?;
        let (unit, value) = metric_value(source, name, &what, fields, primary)?;
        main_unit.get_or_insert(unit);
        let mut run = Run::measured(vec![value]);
        if let Some(code) = fields.get("exit_code") {
            run.exit = Some(exit(source, name, i, code)?);
        }
        for key in fields.keys().filter(|k| *k != primary && *k != "exit_code") {
            let (unit, value) = metric_value(source, name, &what, fields, key)?;
            if !secondary.iter().any(|s| s.name == *key) {
                let timed = unit == "s";
                secondary.push(Secondary::new(key, &unit, false, !timed));
            }
            run = run.with(key, vec![value]);
        }
        runs.push(run);
    }
    let main_unit = main_unit.unwrap_or_default();
    let mut benchmark = wall_time(name, params, runs);
    if primary != WALL_CLOCK {
        benchmark.metric = primary.to_string();
    }
    benchmark.unit = main_unit;
    benchmark.secondary = secondary;
    Ok(benchmark)
}

/// The unit (lab's spelling) and value of metric `key` in one measurement.
fn metric_value(
    source: &Source,
    name: &str,
    what: &str,
    fields: &Map<String, Value>,
    key: &str,
) -> Result<(String, f64)> {
    let found = fields.get(key).ok_or_else(|| {
        source.bad(format!(
            "benchmark \"{name}\": {what} has no \"{key}\" (expected every measurement to hold the primary metric)"
        ))
    })?;
    let value = found.get("value").ok_or_else(|| {
        source.bad(format!(
            "benchmark \"{name}\": {what} {key} is {found} (expected {{\"value\": NUMBER, \"unit\": UNIT}})"
        ))
    })?;
    let value = source.value(name, &format!("{what} {key}"), value)?;
    let unit = match found.get("unit").and_then(Value::as_str).unwrap_or("") {
        "second" => "s",
        "byte" => "B",
        "count" => "",
        other => other,
    };
    Ok((unit.to_string(), value))
}

#[cfg(test)]
#[path = "hyperfine_tests.rs"]
mod tests;
