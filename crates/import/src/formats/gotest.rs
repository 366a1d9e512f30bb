//! Go's `go test -bench` text output, the format benchstat reads (the Go benchmark data
//! format, golang.org/design/14313-benchmark-format, and golang.org/x/perf/benchfmt).
//!
//! A result line is `BenchmarkNAME[-PROCS] ITERATIONS VALUE UNIT [VALUE UNIT]…`; each line is
//! one [`Run`] (with `-count N`, N lines of one benchmark are N runs) holding one value: its
//! `ns/op` (or `sec/op`), in seconds, the mean over the ITERATIONS the line ran, which is all
//! Go records. Every other pair is a secondary metric of the run: `B/op` and `allocs/op` (and
//! any unit ending `/op` that is not a time) are counts, `MB/s` and any `…/s` a rate (higher is
//! better), other units counts as written (`b.ReportMetric`). The `-PROCS` suffix becomes the
//! param `procs` (Go writes it only when GOMAXPROCS is not 1, so none is `procs` 1), so that
//! `-cpu 1,4` gives distinct benchmarks;
//! the rest of the name, sub-benchmarks and `key=value` parts included, is the name as written.
//! Where the file holds the results of several packages (`go test -bench . ./...` prints a
//! `pkg:` line before each package's results), each result's package becomes the param `pkg`,
//! as benchstat keeps them apart: benchmarks of one name in two packages are two benchmarks.
//! Configuration lines (`goos: linux`, `goarch`, `pkg`, `cpu`, and any `key: value`) are the
//! context; where they name more than one machine (two `cpu:` lines, say: logs concatenated),
//! the import says so, since their runs share cells. Other lines (`PASS`,
//! `ok …`, test output, build output) are not results and are skipped; a file with no result
//! line is refused.

use super::{Benchmark, Facts, Format, Imported, Run, Secondary, Source, group_benchmarks};
use anyhow::Result;
use std::collections::BTreeMap;

const WHAT: &str = "go test -bench output";
const EXPECTED: &str = "the text `go test -bench . [-count N] [-benchmem]` prints, saved as it \
    is for benchstat (go test -bench . > FILE)";

/// Parses one file of `go test -bench` output; `origin` names the file in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let mut facts = Facts::default();
    let mut benchmarks = Vec::new();
    let mut pkg: Option<&str> = None;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if let Some(benchmark) = result_line(&source, index + 1, line)? {
            benchmarks.push((pkg, benchmark));
        } else if let Some((key, value)) = config_line(line) {
            if key == "pkg" {
                pkg = Some(value);
            }
            facts.add(key, value.to_string());
        }
    }
    if benchmarks.is_empty() {
        return Err(source.not_format(
            "no result line (expected lines such as `BenchmarkSort-8  1000  1234 ns/op`)",
        ));
    }
    let mut notes: Vec<String> = machines_note(origin, &facts).into_iter().collect();
    notes.extend(packages_note(origin, &benchmarks));
    let benchmarks = with_packages(benchmarks);
    Ok(Imported {
        format: Format::GoTest,
        tool_version: None,
        context: facts.into_context(),
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
        notes,
    })
}

/// The packages of the result lines, in the order first seen, where there is more than one.
fn packages<'t>(benchmarks: &[(Option<&'t str>, Benchmark)]) -> Vec<&'t str> {
    let mut seen: Vec<&str> = Vec::new();
    for pkg in benchmarks.iter().filter_map(|(pkg, _)| *pkg) {
        if !seen.contains(&pkg) {
            seen.push(pkg);
        }
    }
    if seen.len() > 1 { seen } else { Vec::new() }
}

/// Where the file holds the results of several packages (`go test -bench . ./...`): that each
/// result keeps its package as the param `pkg`, so that benchmarks of one name in two packages
/// stay two benchmarks.
fn packages_note(origin: &str, benchmarks: &[(Option<&str>, Benchmark)]) -> Option<String> {
    let packages = packages(benchmarks);
    (!packages.is_empty()).then(|| {
        format!(
            "{origin} holds the results of {} packages ({}): each benchmark keeps its package as the param pkg, so that benchmarks of one name in two packages stay apart",
            packages.len(),
            packages.join(", ")
        )
    })
}

/// The benchmarks, each with its package as the param `pkg` where the file names more than one
/// package.
fn with_packages(benchmarks: Vec<(Option<&str>, Benchmark)>) -> Vec<Benchmark> {
    let several = !packages(&benchmarks).is_empty();
    benchmarks
        .into_iter()
        .map(|(pkg, mut benchmark)| {
            if let (true, Some(pkg)) = (several, pkg) {
                benchmark.params.insert("pkg".to_string(), pkg.to_string());
            }
            benchmark
        })
        .collect()
}

/// The configuration keys that tell one machine from another.
const MACHINE_KEYS: [&str; 3] = ["cpu", "goos", "goarch"];

/// Where the log's configuration lines name more than one machine: what they name, and how to
/// keep each machine's runs apart.
fn machines_note(origin: &str, facts: &Facts) -> Option<String> {
    let differing: Vec<String> = MACHINE_KEYS
        .iter()
        .filter(|key| facts.values(key).len() > 1)
        .map(|key| format!("{key}: {}", facts.values(key).join("; ")))
        .collect();
    (!differing.is_empty()).then(|| {
        format!(
            "{origin} holds results from more than one machine ({}), and their runs share cells: split the log where its configuration lines change and import each part with --machine LABEL",
            differing.join(", ")
        )
    })
}

/// A configuration line, `key: value`, whose key is lower case with no spaces (the format's
/// rule), as (key, value).
fn config_line(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    let keyish = !key.is_empty()
        && key.chars().next()?.is_ascii_lowercase()
        && !key
            .chars()
            .any(|c| c.is_whitespace() || c.is_ascii_uppercase());
    (keyish && (value.is_empty() || value.starts_with(' ')))
        .then(|| (key, value.trim()))
        .filter(|(_, v)| !v.is_empty())
}

/// A result line as a one-run benchmark; None for a line that is not one.
fn result_line(source: &Source, number: usize, line: &str) -> Result<Option<Benchmark>> {
    let Some(rest) = line.strip_prefix("Benchmark") else {
        return Ok(None);
    };
    if rest.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Ok(None);
    }
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 4 || !fields.len().is_multiple_of(2) || fields[1].parse::<u64>().is_err() {
        return Ok(None);
    }
    let (name, procs) = name_and_procs(fields[0]);
    let at = |what: &str| format!("line {number}: {what}");
    let mut time = None;
    let mut run = Run::measured(Vec::new());
    let mut secondary = Vec::new();
    for pair in fields[2..].chunks(2) {
        let value: f64 = pair[0].parse().map_err(|_| {
            source.bad(format!(
                "line {number}: benchmark \"{name}\": {:?} is not a number (expected VALUE UNIT pairs after the iteration count)",
                pair[0]
            ))
        })?;
        let unit = pair[1];
        let value = source.checked(name, &at(unit), value)?;
        match seconds_per_op(unit) {
            Some(factor) if time.is_none() => time = Some(value * factor),
            _ => {
                let (metric, unit, higher, count) = metric_of(unit);
                if !run.secondary.contains_key(&metric) {
                    run = run.with(&metric, vec![value]);
                    secondary.push(Secondary::new(&metric, &unit, higher, count));
                }
            }
        }
    }
    let Some(time) = time else {
        return Err(source.bad(format!(
            "line {number}: benchmark \"{name}\" has no ns/op (expected a time per operation on every result line)"
        )));
    };
    run.values = vec![time];
    let params = BTreeMap::from([("procs".to_string(), procs.unwrap_or(1).to_string())]);
    Ok(Some(Benchmark {
        name: name.to_string(),
        params,
        metric: "time".into(),
        unit: "s".into(),
        higher_is_better: false,
        runs: vec![run],
        summary_only: false,
        secondary,
    }))
}

/// The name without its `-PROCS` suffix, and the suffix.
fn name_and_procs(field: &str) -> (&str, Option<u32>) {
    match field.rsplit_once('-') {
        Some((name, procs)) if !name.is_empty() => match procs.parse::<u32>() {
            Ok(p) => (name, Some(p)),
            Err(_) => (field, None),
        },
        _ => (field, None),
    }
}

/// Seconds per one of a time-per-operation unit.
fn seconds_per_op(unit: &str) -> Option<f64> {
    let time = unit.strip_suffix("/op")?;
    match time {
        "sec" => Some(1.0),
        other => super::seconds_per(other),
    }
}

/// A secondary metric of `unit`: (name, unit, higher is better, counted): `MB/s` is
/// `mb_per_s` in `MB/s`, `B/op` `bytes_per_op`, `allocs/op` `allocs_per_op`, any other unit
/// its own name.
fn metric_of(unit: &str) -> (String, String, bool, bool) {
    let rate = unit.ends_with("/s");
    let name = match unit {
        "MB/s" => "mb_per_s".to_string(),
        "B/op" => "bytes_per_op".to_string(),
        "allocs/op" => "allocs_per_op".to_string(),
        other => other.to_string(),
    };
    (name, unit.to_string(), rate, !rate)
}

#[cfg(test)]
#[path = "gotest_tests.rs"]
mod tests;
