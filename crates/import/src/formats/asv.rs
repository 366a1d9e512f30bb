//! asv's (airspeed velocity) result files, `results/MACHINE/COMMIT-ENV.json`, read with the
//! `machine.json` beside them and the `benchmarks.json` of the results folder where they are
//! there: each parameter combination of each benchmark is one [`Run`].
//!
//! Format version 2 (asv 0.5 and later) keeps per benchmark a row read through the file's
//! `result_columns`: `result` (one summary value per parameter combination, or null when all
//! failed), `params` (the lists of each parameter's values, as Python reprs: `'sorted'`, `100`;
//! the combinations are their Cartesian product, first parameter slowest), and, only when the
//! run had `--record-samples`, `samples`: per combination the raw timings in seconds, each the
//! mean of `stats_number` iterations. Version 1 (asv before 0.5) keeps per benchmark the
//! value itself or an object of the same `result`, `params` and `samples`. Format: asv's
//! `asv/results.py` (`Results.save`, `Results.load`, `update_to_2`).
//!
//! asv gathers its processes' samples into one list and does not record where one process's
//! end, so a combination's samples are one run. Time benchmarks without samples hold only
//! asv's summary (a median): such a file is refused with that reason, as Google Benchmark's
//! aggregates-only file is. `track_*`, `mem_*` and `peakmem_*` benchmarks measure once, so
//! their `result` is the raw value, one run of one value; `benchmarks.json` gives each
//! benchmark's type, unit and parameter names (without it the type comes from the name's
//! prefix and the parameters are `param1`, `param2`, … as asv names unnamed ones). A result of
//! null (the benchmark failed) or NaN (skipped, asv's `n/a`) is a failed run. The commit
//! becomes the parameter `commit` (its first 8 characters, as asv's file names write it); the
//! file's `params` (machine, cpu, os, arch, ram, num_cpu, requirement versions), then
//! machine.json, give the context, with `env_name` and the whole `commit_hash`. asv writes
//! Python's bare `NaN` and `Infinity`, which are read as numbers here.

use super::{Benchmark, Facts, Format, Imported, Run, Source, number, read_text, scalar_text};
use anyhow::Result;
use files::quote_non_finite;
pub use files::{Described, result_files};
use lab_store::Exit;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

#[path = "asv_files.rs"]
mod files;

const WHAT: &str = "an asv result file";
const EXPECTED: &str = "a results/MACHINE/COMMIT-ENV.json file written by `asv run`, \
    or the results folder that holds them";

/// Reads one result file with the machine.json beside it and the benchmarks.json above it,
/// where they are there.
pub fn read(path: &Path) -> Result<Imported> {
    let described = files::described_beside(path)?;
    parse_with(&path.display().to_string(), &read_text(path)?, &described)
}

/// Parses one result file with nothing beside it; `origin` names it in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    parse_with(origin, text, &Described::default())
}

/// Parses one result file with what asv wrote beside it.
pub fn parse_with(origin: &str, text: &str, described: &Described) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let document = source.json(&quote_non_finite(text))?;
    let entries = entries_of(&source, &document)?;
    let commit = document
        .get("commit_hash")
        .and_then(Value::as_str)
        .ok_or_else(|| source.not_format("no \"commit_hash\""))?;
    let mut benchmarks = Vec::new();
    let mut summaries = Vec::new();
    let mut notes = Vec::new();
    for (name, entry) in &entries {
        let kind = match Kind::of(name, described.benchmarks.get(name)) {
            Ok(kind) => kind,
            Err(why) => {
                notes.push(format!("{origin}: {why}: left out"));
                continue;
            }
        };
        let read = benchmark(&source, name, entry, commit, described, kind)?;
        if read.summary_only {
            summaries.push(name.as_str());
        } else {
            benchmarks.extend(read.benchmarks);
        }
    }
    if !summaries.is_empty() {
        return Err(summaries_only(&source, &summaries, entries.len()));
    }
    Ok(Imported {
        format: Format::Asv,
        tool_version: None,
        context: context(&document, &described.machine),
        benchmarks,
        notes,
    })
}

/// The refusal of a file whose time benchmarks hold only asv's summary.
fn summaries_only(source: &Source, names: &[&str], all: usize) -> anyhow::Error {
    source.bad(format!(
        "{} of {all} benchmarks ({}{}) hold only asv's summary result, no samples: lab needs the \
         samples (expected a file written by `asv run --record-samples`, which keeps them)",
        names.len(),
        names[0],
        if names.len() > 1 { ", …" } else { "" }
    ))
}

/// One benchmark's stored columns, whatever the format version.
struct Entry {
    /// Per combination, or None where every combination failed.
    result: Option<Vec<Value>>,
    params: Vec<Vec<String>>,
    /// Per combination, or None where none was recorded.
    samples: Option<Vec<Value>>,
}

/// Every benchmark of the file by name, in the file's order.
fn entries_of(source: &Source, document: &Value) -> Result<Vec<(String, Entry)>> {
    let results = document
        .get("results")
        .and_then(Value::as_object)
        .ok_or_else(|| source.not_format("no \"results\" object"))?;
    let version = document.get("version").and_then(Value::as_u64);
    let columns = match version {
        Some(2) => Some(columns_of(source, document)?),
        Some(1) => None,
        _ => {
            return Err(source.bad(format!(
                "result format version {}, which lab does not read (expected 1 or 2, as asv 0.2 \
                 and later write)",
                document.get("version").unwrap_or(&Value::Null)
            )));
        }
    };
    results
        .iter()
        .map(|(name, row)| {
            let fields = match &columns {
                Some(columns) => row_fields(source, name, columns, row)?,
                None => version_1_fields(row),
            };
            Ok((name.clone(), entry(source, name, &fields)?))
        })
        .collect()
}

fn columns_of(source: &Source, document: &Value) -> Result<Vec<String>> {
    let columns = document
        .get("result_columns")
        .and_then(Value::as_array)
        .ok_or_else(|| source.not_format("no \"result_columns\" list"))?;
    columns
        .iter()
        .map(|c| {
            c.as_str()
                .map(str::to_string)
                .ok_or_else(|| source.not_format(format!("result column {c} is not a name")))
        })
        .collect()
}

/// A version 2 row as its columns' values (asv leaves trailing empty columns out).
fn row_fields(
    source: &Source,
    name: &str,
    columns: &[String],
    row: &Value,
) -> Result<Map<String, Value>> {
    let row = row.as_array().ok_or_else(|| {
        source.not_format(format!(
            "benchmark \"{name}\" is {row}, not a row of values"
        ))
    })?;
    Ok(columns.iter().cloned().zip(row.iter().cloned()).collect())
}

/// A version 1 value: the result itself, or an object of `result`, `params` and `samples`.
fn version_1_fields(value: &Value) -> Map<String, Value> {
    match value {
        Value::Object(fields) => fields.clone(),
        result => Map::from_iter([("result".to_string(), result.clone())]),
    }
}

fn entry(source: &Source, name: &str, fields: &Map<String, Value>) -> Result<Entry> {
    let list = |key: &str| match fields.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(items.clone()),
        Some(single) => Some(vec![single.clone()]),
    };
    let params = list("params").unwrap_or_default();
    let params = params
        .iter()
        .map(|values| {
            let texts = values
                .as_array()
                .map(|v| v.iter().map(scalar_text).collect());
            texts.flatten().ok_or_else(|| {
                source.bad(format!(
                    "benchmark \"{name}\": params holds {values} (expected a list of each \
                     parameter's values)"
                ))
            })
        })
        .collect::<Result<Vec<Vec<String>>>>()?;
    Ok(Entry {
        result: list("result"),
        params,
        samples: list("samples"),
    })
}

/// A benchmark's runs, one per parameter combination, or that it holds only summaries.
struct Read {
    benchmarks: Vec<Benchmark>,
    summary_only: bool,
}

fn benchmark(
    source: &Source,
    name: &str,
    entry: &Entry,
    commit: &str,
    described: &Described,
    kind: Kind,
) -> Result<Read> {
    let declared = described.benchmarks.get(name);
    let combinations = combinations(&entry.params, &param_names(declared, entry.params.len()));
    let pick = |values: &Option<Vec<Value>>, what: &str, j: usize| -> Result<Value> {
        match values {
            None => Ok(Value::Null),
            Some(v) if v.len() == combinations.len() => Ok(v[j].clone()),
            Some(v) => Err(source.bad(format!(
                "benchmark \"{name}\": {what} holds {} values for {} parameter combinations \
                 (expected one per combination)",
                v.len(),
                combinations.len()
            ))),
        }
    };
    let mut read = Read {
        benchmarks: Vec::new(),
        summary_only: false,
    };
    for (j, params) in combinations.iter().enumerate() {
        let result = pick(&entry.result, "result", j)?;
        let samples = pick(&entry.samples, "samples", j)?;
        let label = format!("{name}{}", super::params_text(params));
        let Some(run) = run(source, &label, &kind, &result, &samples)? else {
            read.summary_only = true;
            continue;
        };
        let mut params = params.clone();
        params.insert("commit".into(), commit.chars().take(8).collect());
        read.benchmarks.push(kind.benchmark(name, params, run));
    }
    Ok(read)
}

/// One combination's run: its samples, or a measure-once benchmark's result; a failed run
/// where asv recorded none; None where a time benchmark holds only its summary.
fn run(
    source: &Source,
    label: &str,
    kind: &Kind,
    result: &Value,
    samples: &Value,
) -> Result<Option<Run>> {
    if let Some(why) = failure(result) {
        let mut run = Run::measured(Vec::new());
        run.exit = Some(Exit::SpawnFailed(format!("asv: {why}")));
        return Ok(Some(run));
    }
    let values = match samples {
        Value::Array(samples) => samples
            .iter()
            .enumerate()
            .map(|(i, v)| source.value(label, &format!("sample {}", i + 1), v))
            .collect::<Result<Vec<f64>>>()?,
        _ if kind.timed => return Ok(None),
        _ => vec![source.value(label, "result", result)?],
    };
    Ok(Some(Run::measured(values)))
}

/// Why asv recorded no value: null is a failure, NaN a skip (asv shows both as such).
fn failure(result: &Value) -> Option<&'static str> {
    match result {
        Value::Null => Some("failed"),
        value if number(value).is_some_and(f64::is_nan) => Some("skipped (n/a)"),
        _ => None,
    }
}

/// What a benchmark measures, from benchmarks.json or its name's prefix.
struct Kind {
    metric: &'static str,
    unit: String,
    /// Timed repeatedly (samples expected), not measured once.
    timed: bool,
}

impl Kind {
    /// The kind of benchmark `name` is, or why lab cannot tell.
    fn of(name: &str, declared: Option<&Value>) -> std::result::Result<Kind, String> {
        let text = |key: &str| declared.and_then(|d| d.get(key)).and_then(Value::as_str);
        let last = name.rsplit('.').next().unwrap_or(name);
        let prefixed = [
            ("timeraw_", "time"),
            ("time_", "time"),
            ("peakmem_", "peakmemory"),
            ("mem_", "memory"),
            ("track_", "track"),
        ]
        .into_iter()
        .find(|(prefix, _)| last.starts_with(prefix))
        .map(|(_, kind)| kind);
        let kind = |metric, unit: &str, timed| Kind {
            metric,
            unit: unit.to_string(),
            timed,
        };
        match text("type").or(prefixed) {
            Some("time") => Ok(kind("time", "s", true)),
            Some("memory") => Ok(kind("size", "bytes", false)),
            Some("peakmemory") => Ok(kind("peak_memory", "bytes", false)),
            Some("track") => Ok(kind("value", text("unit").unwrap_or("unit"), false)),
            other => Err(format!(
                "benchmark \"{name}\": {} (expected time_, timeraw_, mem_, peakmem_ or track_ \
                 benchmarks; keep asv's benchmarks.json in the results folder, above the \
                 machine folders, to say a custom benchmark's type)",
                match other {
                    Some(kind) => format!("of type \"{kind}\""),
                    None => "of no type lab can tell from its name".to_string(),
                }
            )),
        }
    }

    fn benchmark(&self, name: &str, params: BTreeMap<String, String>, run: Run) -> Benchmark {
        Benchmark {
            name: name.to_string(),
            params,
            metric: self.metric.to_string(),
            unit: self.unit.clone(),
            higher_is_better: false,
            runs: vec![run],
            summary_only: false,
            secondary: Vec::new(),
        }
    }
}

/// benchmarks.json's `param_names` where they fit, else asv's own `param1`, `param2`, ….
fn param_names(declared: Option<&Value>, count: usize) -> Vec<String> {
    let named: Option<Vec<String>> = declared
        .and_then(|d| d.get("param_names"))
        .and_then(Value::as_array)
        .and_then(|names| {
            names
                .iter()
                .map(|n| n.as_str().map(str::to_string))
                .collect()
        });
    match named {
        Some(names) if names.len() == count => names,
        _ => (1..=count).map(|i| format!("param{i}")).collect(),
    }
}

/// Every combination of the parameters' values, first parameter slowest (Python's
/// `itertools.product`, as asv orders its results); one empty combination without parameters.
fn combinations(values: &[Vec<String>], names: &[String]) -> Vec<BTreeMap<String, String>> {
    let mut all = vec![BTreeMap::new()];
    for (name, choices) in names.iter().zip(values) {
        all = all
            .into_iter()
            .flat_map(|combination| {
                choices.iter().map(move |choice| {
                    let mut next = combination.clone();
                    next.insert(name.clone(), unquoted(choice).to_string());
                    next
                })
            })
            .collect();
    }
    all
}

/// A parameter value without the quotes of its Python repr (`'sorted'` is `sorted`).
fn unquoted(repr: &str) -> &str {
    ['\'', '"']
        .into_iter()
        .find_map(|q| repr.strip_prefix(q).and_then(|r| r.strip_suffix(q)))
        .unwrap_or(repr)
}

/// The file's `params` (and machine.json where the file lacks a fact) under lab's names for
/// the facts they share, with the environment and the commit.
fn context(document: &Value, machine: &Map<String, Value>) -> BTreeMap<String, String> {
    let mut facts = Facts::default();
    let params = document.get("params").and_then(Value::as_object);
    for (key, value) in params.into_iter().flatten().chain(machine) {
        let Some(text) = scalar_text(value).filter(|t| !t.is_empty()) else {
            continue;
        };
        let key = match key.as_str() {
            "version" => continue,
            "machine" => "hostname",
            "cpu" => "cpu_model_name",
            "num_cpu" => "cpu_count",
            other => other,
        };
        if facts.lacks(key) {
            facts.add(key, text);
        }
    }
    for key in ["env_name", "commit_hash"] {
        if let Some(text) = document.get(key).and_then(scalar_text) {
            facts.add(key, text);
        }
    }
    facts.into_context()
}

#[cfg(test)]
#[path = "asv_tests.rs"]
mod tests;
