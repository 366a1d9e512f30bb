//! BenchmarkDotNet's full JSON export (`*-report-full.json` and `*-report-full-compressed.json`,
//! written by `[JsonExporter]`, `[JsonExporterAttribute.Full]` or `--exporters json`): each
//! process launch of each benchmark is one [`Run`] whose values are its measured iterations.
//!
//! A benchmark's `Measurements` list every iteration BenchmarkDotNet ran, each with its
//! `IterationMode` (`Overhead`: an empty method, or `Workload`), `IterationStage` (`Jitting`,
//! `Pilot`, `Warmup`, `Actual`, and `Result`, which BenchmarkDotNet derives), `LaunchIndex`
//! (the process, from 1), `Operations` and `Nanoseconds` for all of them; before 0.11 there was
//! no stage, and `MainTarget` was the measured workload. Format:
//! BenchmarkDotNet's `src/BenchmarkDotNet/Exporters/Json/JsonExporterBase.cs`,
//! `Reports/Measurement.cs`, `Engines/IterationMode.cs` and `Engines/IterationStage.cs`.
//!
//! The values are the `Workload`/`Actual` iterations, each `Nanoseconds / Operations` in
//! seconds: what was measured. The `Result` iterations behind BenchmarkDotNet's own
//! `Statistics` are not measurements: `Engines/RunResults.cs` (`GetWorkloadResultMeasurements`)
//! makes them from the `Actual` ones by dropping those its Tukey fences call outliers and
//! subtracting the median `Overhead`/`Actual` iteration, both decisions of its own analysis, which
//! lab makes in its own way. The other stages (jitting, pilot, warm-up) are left out: they are
//! not measurements of the benchmark's steady state, and BenchmarkDotNet's warm-up stops when
//! it sees fit, so launches differ in their number of warm-up iterations.
//!
//! A benchmark without `Workload`/`Actual` iterations and without `Statistics` failed or did
//! not run (BenchmarkDotNet keeps it with a null `Statistics`): it is one failed run. A benchmark
//! with `Statistics` but no `Measurements` was exported without them (`excludeMeasurements`,
//! the brief flavour `*-report-brief.json`): such a file is refused with that reason, as Google
//! Benchmark's aggregates-only file is. A benchmark with `Statistics` and `Measurements` of
//! other stages only (jitting and pilot, say) but no `Actual` iteration was cut short after
//! BenchmarkDotNet wrote it (projects trim committed test data so): it is refused naming the
//! stages it keeps.
//!
//! The name is `Type.Method` (`Type` holds enclosing classes and generic arguments as
//! BenchmarkDotNet prints them); where a file holds several jobs, the job's id (from
//! `DisplayInfo`, `Type.Method: JOB(…) [params]`) follows in brackets, so each job is a variant
//! of its own. `Parameters` (`A=1&B=x`) become params. `HostEnvironmentInfo` gives the
//! context: the processor, core counts, OS, runtime, architecture and the chronometer's
//! frequency; `BenchmarkDotNetVersion` is the tool's version.

use super::{Benchmark, Facts, Format, Imported, Run, Source, group_benchmarks, scalar_text};
use anyhow::Result;
use lab_store::Exit;
use serde_json::Value;
use std::collections::BTreeMap;

const WHAT: &str = "a BenchmarkDotNet JSON export";
const EXPECTED: &str = "the *-report-full.json file BenchmarkDotNet's full JSON exporter writes \
    under BenchmarkDotNet.Artifacts/results/ ([JsonExporterAttribute.Full] or --exporters json)";

/// Parses one BenchmarkDotNet JSON export; `origin` names the file in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (document, log_note) = source.json_in_log(text, |v| {
        v.get("Benchmarks").is_some() && v.get("HostEnvironmentInfo").is_some()
    })?;
    let entries = source.array(&document, "Benchmarks")?;
    let host = document
        .get("HostEnvironmentInfo")
        .filter(|h| h.is_object())
        .ok_or_else(|| source.not_format("no \"HostEnvironmentInfo\" object"))?;
    let several_jobs = distinct_jobs(entries) > 1;
    let mut benchmarks = Vec::new();
    let mut summaries = Vec::new();
    let mut cut = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let name = benchmark_name(&source, index, entry, several_jobs)?;
        match benchmark(&source, name, entry)? {
            Read::Measured(b) => benchmarks.push(b),
            Read::SummaryOnly(name) => summaries.push(name),
            Read::CutShort(name, stages) => cut.push((name, stages)),
        }
    }
    if !cut.is_empty() {
        return Err(cut_short(&source, &cut, entries.len()));
    }
    if !summaries.is_empty() {
        return Err(summaries_only(&source, &summaries, entries.len()));
    }
    Ok(Imported {
        format: Format::BenchmarkDotNet,
        tool_version: host.get("BenchmarkDotNetVersion").and_then(scalar_text),
        context: context(host),
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
        notes: log_note.into_iter().collect(),
    })
}

/// One entry of `Benchmarks`, read.
enum Read {
    Measured(Benchmark),
    /// Its name: the entry holds statistics but no measurements.
    SummaryOnly(String),
    /// Its name and the stages its measurements are of: the entry holds statistics and
    /// measurements, but none of the measured iterations the statistics were made from.
    CutShort(String, String),
}

/// The refusal of a file whose benchmarks hold statistics and measurements of other stages,
/// but not the measured iterations: a file cut short after BenchmarkDotNet wrote it.
fn cut_short(source: &Source, cut: &[(String, String)], all: usize) -> anyhow::Error {
    let (name, stages) = &cut[0];
    source.bad(format!(
        "{} of {all} benchmarks ({name}{}) hold statistics but none of the measured iterations \
         (Workload/Actual) they were made from: \"{name}\" keeps only {stages}. The file's \
         measurements were cut short after BenchmarkDotNet wrote it: lab needs every measured \
         iteration (expected the full JSON export, *-report-full.json, as BenchmarkDotNet \
         writes it)",
        cut.len(),
        if cut.len() > 1 { ", …" } else { "" }
    ))
}

/// The stages of `measurements` with how many iterations each holds, in order first seen:
/// `Overhead/Jitting ×2, Workload/Pilot ×16`.
fn stages(measurements: &[Value]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for m in measurements {
        let field = |key: &str| m.get(key).and_then(Value::as_str).unwrap_or("?");
        let stage = format!("{}/{}", field("IterationMode"), field("IterationStage"));
        match counts.iter_mut().find(|(s, _)| *s == stage) {
            Some((_, n)) => *n += 1,
            None => counts.push((stage, 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(s, n)| format!("{s} ×{n}")).collect();
    parts.join(", ")
}

/// The refusal of a file whose benchmarks hold only summaries.
fn summaries_only(source: &Source, names: &[String], all: usize) -> anyhow::Error {
    source.bad(format!(
        "{} of {all} benchmarks ({}{}) hold only BenchmarkDotNet's statistics, no measurements: \
         lab needs the iterations (expected the full JSON export, *-report-full.json, of \
         [JsonExporterAttribute.Full] or --exporters json; the brief flavour and \
         excludeMeasurements: true leave the measurements out)",
        names.len(),
        names[0],
        if names.len() > 1 { ", …" } else { "" }
    ))
}

/// How many distinct jobs the file's benchmarks ran under.
fn distinct_jobs(entries: &[Value]) -> usize {
    let mut jobs: Vec<&str> = entries.iter().filter_map(job_of).collect();
    jobs.sort_unstable();
    jobs.dedup();
    jobs.len()
}

/// The job's id in `DisplayInfo` (`Type.Method: JOB(characteristics) [params]`): the text
/// after the first `": "`, up to its characteristics or parameters.
fn job_of(entry: &Value) -> Option<&str> {
    let display = entry.get("DisplayInfo")?.as_str()?;
    let (_, job) = display.split_once(": ")?;
    let end = job.find(['(', '[']).unwrap_or(job.len());
    Some(job[..end].trim()).filter(|j| !j.is_empty())
}

/// `Type.Method`, with the job in brackets where the file holds several.
fn benchmark_name(
    source: &Source,
    index: usize,
    entry: &Value,
    several_jobs: bool,
) -> Result<String> {
    let field = |key: &str| entry.get(key).and_then(Value::as_str);
    let (Some(kind), Some(method)) = (field("Type"), field("Method")) else {
        return Err(source.not_format(format!(
            "benchmark {} has no \"Type\" and \"Method\"",
            index + 1
        )));
    };
    let name = format!("{kind}.{method}");
    Ok(match job_of(entry).filter(|_| several_jobs) {
        Some(job) => format!("{name} [{job}]"),
        None => name,
    })
}

/// One benchmark: a run per launch, one failed run, or only a summary.
fn benchmark(source: &Source, name: String, entry: &Value) -> Result<Read> {
    let stats = entry.get("Statistics").filter(|s| !s.is_null());
    let Some(measurements) = entry.get("Measurements") else {
        if stats.is_some() {
            return Ok(Read::SummaryOnly(name));
        }
        return Ok(Read::Measured(shaped(
            source,
            &name,
            entry,
            vec![failed()],
        )?));
    };
    let measurements = measurements.as_array().ok_or_else(|| {
        source.bad(format!(
            "benchmark \"{name}\": \"Measurements\" is {measurements}, not a list (expected the iterations)"
        ))
    })?;
    let launches = launches(source, &name, measurements)?;
    let runs = if !launches.is_empty() {
        launches
    } else if stats.is_some() && !measurements.is_empty() {
        return Ok(Read::CutShort(name, stages(measurements)));
    } else if stats.is_some() {
        return Ok(Read::SummaryOnly(name));
    } else {
        vec![failed()]
    };
    Ok(Read::Measured(shaped(source, &name, entry, runs)?))
}

/// A run of a benchmark that failed or did not run.
fn failed() -> Run {
    let mut run = Run::measured(Vec::new());
    run.exit = Some(Exit::SpawnFailed(
        "BenchmarkDotNet: no measurements (the benchmark failed or did not run)".into(),
    ));
    run
}

fn shaped(source: &Source, name: &str, entry: &Value, runs: Vec<Run>) -> Result<Benchmark> {
    Ok(Benchmark::time(
        name.to_string(),
        params(source, name, entry)?,
        runs,
    ))
}

/// The workload's `Actual` iterations grouped by `LaunchIndex`, launches in ascending order,
/// each per operation in seconds.
fn launches(source: &Source, name: &str, measurements: &[Value]) -> Result<Vec<Run>> {
    let mut by_launch: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    for (index, m) in measurements.iter().enumerate() {
        if !is_workload_actual(m) {
            continue;
        }
        let launch = m.get("LaunchIndex").and_then(Value::as_i64).unwrap_or(1);
        let value = per_operation(source, name, index, m)?;
        by_launch.entry(launch).or_default().push(value);
    }
    Ok(by_launch.into_values().map(Run::measured).collect())
}

/// Whether a measurement is one of the workload's measured iterations: `Workload`/`Actual`,
/// or `MainTarget` in the files of BenchmarkDotNet before 0.11, which had no `IterationStage`
/// (their `Engines/IterationMode.cs`: `Pilot`, `IdleWarmup`, `IdleTarget`, `MainWarmup`,
/// `MainTarget`, `Result`).
fn is_workload_actual(m: &Value) -> bool {
    let field = |key: &str| m.get(key).and_then(Value::as_str);
    matches!(
        (field("IterationMode"), field("IterationStage")),
        (Some("Workload"), Some("Actual")) | (Some("MainTarget"), None)
    )
}

/// A measurement's time per operation in seconds: `Nanoseconds / Operations * 1e-9`.
fn per_operation(source: &Source, name: &str, index: usize, m: &Value) -> Result<f64> {
    let what = format!("measurement {}", index + 1);
    let nanos = source.value(name, &format!("{what} Nanoseconds"), &m["Nanoseconds"])?;
    let operations = source.value(name, &format!("{what} Operations"), &m["Operations"])?;
    if operations == 0.0 {
        return Err(source.bad(format!(
            "benchmark \"{name}\": {what} has 0 Operations (expected at least one operation per iteration)"
        )));
    }
    Ok(nanos / operations * 1e-9)
}

/// `Parameters` (`A=1&B=x`, as BenchmarkDotNet's `ParameterInstances.PrintInfo` writes them)
/// as params; an empty string is none.
fn params(source: &Source, name: &str, entry: &Value) -> Result<BTreeMap<String, String>> {
    let text = match entry.get("Parameters") {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::String(text)) => text,
        Some(other) => {
            return Err(source.bad(format!(
                "benchmark \"{name}\": \"Parameters\" is {other} (expected text such as \"N=10&Mode=x\")"
            )));
        }
    };
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) => Ok((key.to_string(), value.to_string())),
            None => Err(source.bad(format!(
                "benchmark \"{name}\": parameter {pair:?} has no '=' (expected NAME=VALUE pairs joined by '&')"
            ))),
        })
        .collect()
}

/// `HostEnvironmentInfo` under lab's names (see [`super::MACHINE_FACTS`]), its other scalar
/// fields as written, and the chronometer's frequency in Hz.
fn context(host: &Value) -> BTreeMap<String, String> {
    const RENAMED: &[(&str, &str)] = &[
        ("ProcessorName", "cpu_model_name"),
        ("LogicalCoreCount", "num_cpus"),
        ("OsVersion", "os"),
        ("Architecture", "arch"),
        ("RuntimeVersion", "runtime"),
    ];
    let mut facts = Facts::default();
    let Some(object) = host.as_object() else {
        return BTreeMap::new();
    };
    for (key, value) in object {
        // Versions before 0.10 wrote lazily computed facts as {"IsValueCreated":…,"Value":…}.
        let value = value.get("Value").unwrap_or(value);
        let Some(text) = scalar_text(value).filter(|t| !t.is_empty()) else {
            continue;
        };
        let key = RENAMED
            .iter()
            .find(|(from, _)| from == key)
            .map_or(key.as_str(), |(_, to)| to);
        facts.add(key, text);
    }
    let hertz = host
        .get("ChronometerFrequency")
        .and_then(|f| f.get("Hertz"));
    if let Some(hertz) = hertz.and_then(scalar_text) {
        facts.add("chronometer_hz", hertz);
    }
    facts.into_context()
}

#[cfg(test)]
#[path = "benchmarkdotnet_tests.rs"]
mod tests;
