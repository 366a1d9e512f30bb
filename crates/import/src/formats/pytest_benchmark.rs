//! pytest-benchmark's JSON (`--benchmark-json FILE`, or the files `--benchmark-save NAME`
//! writes under `.benchmarks/MACHINE/`): one file is one pytest process, so each benchmark in
//! it is one [`Run`] whose values are its rounds, each the round's time per iteration in
//! seconds (`stats.data`; pytest-benchmark divides each round's time by its `iterations`).
//!
//! `--benchmark-json` always writes `stats.data`; `--benchmark-save` writes it only with
//! `--benchmark-save-data`, and without it a file holds only its summary (`min`, `mean`,
//! `stddev`, …): such a file is refused with that reason, as Google Benchmark's aggregates-only
//! file is. The name is `fullname` (`tests/test_x.py::test_sort`) without the
//! `[…]` its parametrize ids add, which become `params` (`{"n": 100}`, values as text; a
//! value that is not a string, number or boolean as its JSON). `machine_info` gives the
//! context: `node` as the host name, `cpu.brand_raw` (py-cpuinfo) as the CPU, `cpu.count`,
//! the Python implementation and version, and the system. The top-level `version` is the
//! tool's. Format: pytest-benchmark's documentation, "Usage" (`--benchmark-json`,
//! `--benchmark-save-data`), and its `pytest_benchmark/stats.py` (`Stats.as_dict`).

use super::{Benchmark, Facts, Format, Imported, Run, Source, group_benchmarks, scalar_text};
use anyhow::Result;
use serde_json::Value;
use std::collections::BTreeMap;

const WHAT: &str = "pytest-benchmark JSON";
const EXPECTED: &str = "the file written by pytest --benchmark-json FILE (or by --benchmark-save \
    NAME --benchmark-save-data)";

/// Parses one pytest-benchmark JSON file; `origin` names the file in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let (document, log_note) = source.json_in_log(text, |v| {
        v.get("benchmarks").is_some() && v.get("machine_info").is_some()
    })?;
    let entries = source.array(&document, "benchmarks")?;
    if document.get("machine_info").is_none() {
        return Err(source.not_format("no \"machine_info\" object"));
    }
    let mut benchmarks = Vec::new();
    let mut summaries = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match benchmark(&source, index, entry)? {
            Some(b) => benchmarks.push(b),
            None => summaries.push(entry_name(&source, index, entry)?),
        }
    }
    if !summaries.is_empty() {
        return Err(summaries_only(&source, &summaries, entries.len()));
    }
    Ok(Imported {
        format: Format::PytestBenchmark,
        tool_version: document.get("version").and_then(scalar_text),
        context: context(&document),
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
        notes: log_note.into_iter().collect(),
    })
}

/// The refusal of a file whose benchmarks hold only summaries.
fn summaries_only(source: &Source, names: &[String], all: usize) -> anyhow::Error {
    source.bad(format!(
        "{} of {all} benchmarks ({}{}) hold only summary statistics, no per-round times: lab needs \
         the rounds (expected a file written by --benchmark-json FILE, which always holds stats.data, \
         or by --benchmark-save with --benchmark-save-data)",
        names.len(),
        names[0],
        if names.len() > 1 { ", …" } else { "" }
    ))
}

fn entry_name(source: &Source, index: usize, entry: &Value) -> Result<String> {
    entry
        .get("fullname")
        .or_else(|| entry.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| source.not_format(format!("benchmark {} has no \"fullname\"", index + 1)))
}

/// One benchmark as a one-run benchmark, or None when it holds no `stats.data`.
fn benchmark(source: &Source, index: usize, entry: &Value) -> Result<Option<Benchmark>> {
    let full = entry_name(source, index, entry)?;
    let stats = entry
        .get("stats")
        .filter(|s| s.is_object())
        .ok_or_else(|| {
            source.not_format(format!("benchmark \"{full}\" has no \"stats\" object"))
        })?;
    let Some(data) = stats.get("data") else {
        return Ok(None);
    };
    let data = data.as_array().ok_or_else(|| {
        source.bad(format!(
            "benchmark \"{full}\": stats.data is {data}, not a list (expected the per-round times)"
        ))
    })?;
    let values = data
        .iter()
        .enumerate()
        .map(|(i, v)| source.value(&full, &format!("round {}", i + 1), v))
        .collect::<Result<Vec<f64>>>()?;
    let params = params(entry);
    let name = if params.is_empty() {
        full
    } else {
        strip_ids(&full).to_string()
    };
    Ok(Some(Benchmark::time(
        name,
        params,
        vec![Run::measured(values)],
    )))
}

/// `fullname` without the `[ids]` pytest's parametrize appends.
fn strip_ids(full: &str) -> &str {
    match full
        .strip_suffix(']')
        .and_then(|f| f.rfind('[').map(|i| &full[..i]))
    {
        Some(stripped) if !stripped.is_empty() => stripped,
        _ => full,
    }
}

/// The `params` object as text values; non-scalar values as their JSON.
fn params(entry: &Value) -> BTreeMap<String, String> {
    let Some(object) = entry.get("params").and_then(Value::as_object) else {
        return BTreeMap::new();
    };
    object
        .iter()
        .map(|(k, v)| (k.clone(), scalar_text(v).unwrap_or_else(|| v.to_string())))
        .collect()
}

/// `machine_info`'s facts under lab's names (see [`super::MACHINE_FACTS`]), and its other
/// scalar fields as written.
fn context(document: &Value) -> BTreeMap<String, String> {
    let mut facts = Facts::default();
    let info = document.get("machine_info");
    if let Some(object) = info.and_then(Value::as_object) {
        for (key, value) in object {
            if let Some(text) = scalar_text(value).filter(|t| !t.is_empty()) {
                let key = if key == "node" { "hostname" } else { key };
                facts.add(key, text);
            }
        }
    }
    let cpu = info.and_then(|i| i.get("cpu"));
    let brand = cpu.and_then(|c| c.get("brand_raw").or_else(|| c.get("brand")));
    if let Some(brand) = brand.and_then(scalar_text) {
        facts.add("cpu_model_name", brand);
    }
    if let Some(count) = cpu.and_then(|c| c.get("count")).and_then(scalar_text) {
        facts.add("cpu_count", count);
    }
    if let Some(when) = document.get("datetime").and_then(scalar_text) {
        facts.add("datetime", when);
    }
    facts.into_context()
}

#[cfg(test)]
#[path = "pytest_benchmark_tests.rs"]
mod tests;
