//! nanobench's JSON output (`Bench::render(ankerl::nanobench::templates::json(), out)`): each
//! benchmark of the file is one [`Run`] whose values are its epochs.
//!
//! The template (`templates::json()` in nanobench's `src/include/nanobench.h`) writes an object
//! whose `"results"` list holds one entry per benchmark the `Bench` ran: its `"title"` (the
//! table's), `"name"`, `"unit"` (what one operation is, `op` unless set) and `"batch"` (how
//! many units one iteration handles), settings such as `"epochs"` and `"complexityN"`, summaries
//! (`"median(elapsed)"`, `"medianAbsolutePercentError(elapsed)"`…) and `"measurements"`, one
//! entry per epoch. `Result::add` stores each epoch's `elapsed` and counters already divided by
//! the epoch's `iterations`, so an epoch's `elapsed` is seconds per iteration; a counter the
//! machine could not read is written as 0.
//!
//! The values are each epoch's `elapsed / batch`: seconds per unit, as nanobench's own table
//! prints them (`ns/element`). One process ran every epoch, so a benchmark is one run. The
//! counters nanobench read (instructions, CPU cycles, branch instructions, branch misses, page
//! faults, context switches) become secondary metrics per unit, where any epoch of the
//! benchmark holds a non-zero count, in units such as `instructions/op`. The summaries are left out: lab computes its own.
//!
//! The name is `title/name` (the title alone where the name is empty). A unit other than
//! nanobench's default `op` becomes the param `unit`, and a `complexityN` above zero the
//! param `complexityN`. nanobench records neither the machine nor its own version.
//!
//! The other templates hold no epochs: `templates::csv()` and `templates::htmlBoxplot()` are
//! not JSON, and `templates::pyperf()` is pyperf's format (`lab import pyperf` reads it). Such
//! files, and JSON of a custom template without `"measurements"`, are refused, naming
//! `templates::json()`.

use super::{Benchmark, Format, Imported, Run, Secondary, Source, group_benchmarks, number};
use anyhow::Result;
use serde_json::Value;
use std::collections::BTreeMap;

const WHAT: &str = "nanobench JSON output";
const EXPECTED: &str = "the file written by Bench::render(ankerl::nanobench::templates::json(), \
    out), whose \"results\" hold each benchmark's \"measurements\"";

/// The counters nanobench writes per epoch (per iteration), in the template's order.
const COUNTERS: [&str; 6] = [
    "instructions",
    "cpucycles",
    "branchinstructions",
    "branchmisses",
    "pagefaults",
    "contextswitches",
];

/// Parses one nanobench JSON file; `origin` names the file in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let document = source.json(text).map_err(|_| not_json(&source))?;
    if document.get("benchmarks").is_some() && document.get("metadata").is_some() {
        return Err(source.not_format(
            "this is the output of templates::pyperf(), pyperf's format: read it with \
             `lab import pyperf`, or render templates::json() for nanobench's own",
        ));
    }
    let results = source.array(&document, "results")?;
    let mut benchmarks = Vec::new();
    for (index, result) in results.iter().enumerate() {
        benchmarks.push(benchmark(&source, index, result)?);
    }
    Ok(Imported {
        format: Format::Nanobench,
        tool_version: None,
        context: BTreeMap::new(),
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
        notes: Vec::new(),
    })
}

/// The refusal of a file that is not JSON: nanobench's csv or htmlBoxplot template, most likely.
fn not_json(source: &Source) -> anyhow::Error {
    source.not_format(
        "not JSON: nanobench's templates::csv() and templates::htmlBoxplot() hold no epochs \
         (render templates::json() instead)",
    )
}

/// One entry of `"results"`: a benchmark of one run, its epochs the values.
fn benchmark(source: &Source, index: usize, result: &Value) -> Result<Benchmark> {
    let text = |key: &str| result.get(key).and_then(Value::as_str).unwrap_or("");
    let name = match (text("title"), text("name")) {
        ("", "") => {
            return Err(
                source.not_format(format!("result {} has no \"title\" or \"name\"", index + 1))
            );
        }
        (title, "") => title.to_string(),
        ("", name) => name.to_string(),
        (title, name) => format!("{title}/{name}"),
    };
    let Some(epochs) = result.get("measurements").and_then(Value::as_array) else {
        return Err(source.bad(format!(
            "benchmark \"{name}\" holds no \"measurements\", only nanobench's summaries: lab \
             needs each epoch (expected the output of templates::json(), which writes them)"
        )));
    };
    if epochs.is_empty() {
        return Err(source.bad(format!(
            "benchmark \"{name}\": \"measurements\" is empty (expected one entry per epoch)"
        )));
    }
    let batch = batch(source, &name, result)?;
    let values = per_unit(source, &name, epochs, "elapsed", batch)?;
    let mut run = Run::measured(values);
    let mut secondary = Vec::new();
    for counter in COUNTERS {
        let counts = per_unit(source, &name, epochs, counter, batch)?;
        if counts.iter().any(|&c| c > 0.0) {
            let per = format!("{counter}/{}", unit(result));
            secondary.push(Secondary::new(counter, &per, false, true));
            run = run.with(counter, counts);
        }
    }
    let mut benchmark = Benchmark::time(name, params(result), vec![run]);
    benchmark.secondary = secondary;
    Ok(benchmark)
}

/// Each epoch's `key` (per iteration) divided by the batch: per unit. A counter an epoch does
/// not hold is 0, as nanobench writes one it could not read.
fn per_unit(
    source: &Source,
    name: &str,
    epochs: &[Value],
    key: &str,
    batch: f64,
) -> Result<Vec<f64>> {
    epochs
        .iter()
        .enumerate()
        .map(|(i, epoch)| match epoch.get(key) {
            None if key != "elapsed" => Ok(0.0),
            value => {
                let what = format!("epoch {} \"{key}\"", i + 1);
                let value = value.unwrap_or(&Value::Null);
                Ok(source.value(name, &what, value)? / batch)
            }
        })
        .collect()
}

/// What one unit is: `"unit"` as written, nanobench's default `op` where there is none.
fn unit(result: &Value) -> &str {
    result
        .get("unit")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
        .unwrap_or("op")
}

/// How many units one iteration handles: `"batch"`, 1 where there is none.
fn batch(source: &Source, name: &str, result: &Value) -> Result<f64> {
    let Some(batch) = result.get("batch") else {
        return Ok(1.0);
    };
    match number(batch) {
        Some(b) if b > 0.0 && b.is_finite() => Ok(b),
        _ => Err(source.bad(format!(
            "benchmark \"{name}\": \"batch\" is {batch} (expected a positive number of units per iteration)"
        ))),
    }
}

/// The unit, where it is not `op`, and a `complexityN` above zero, as params.
fn params(result: &Value) -> BTreeMap<String, String> {
    let mut params = BTreeMap::new();
    if unit(result) != "op" {
        params.insert("unit".to_string(), unit(result).to_string());
    }
    if let Some(n) = result.get("complexityN").and_then(Value::as_f64)
        && n > 0.0
    {
        params.insert("complexityN".to_string(), n.to_string());
    }
    params
}

#[cfg(test)]
#[path = "nanobench_tests.rs"]
mod tests;
