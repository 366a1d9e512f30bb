//! criterion's saved measurements (0.2 and later, e.g. 0.5 and 0.8): a benchmark's
//! `new/sample.json` with its sibling `new/benchmark.json`. One sample.json is one [`Run`] (it
//! came from one `cargo bench` process), each sample one value.
//!
//! sample.json holds `iters` and `times`: sample i ran `iters[i]` iterations in `times[i]`
//! nanoseconds in all, so its value is `times[i] / iters[i]` ns, converted to seconds. criterion
//! 0.2 saved the same two lists as a pair, `[[iters…], [times…]]`, read alike. criterion's
//! warm-up is not saved. benchmark.json names the benchmark: `group_id`, then `/function_id` when
//! there is one (so `c.bench_function("f", …)` is "f" and a group's function is "group/function");
//! `value_str` (the input of `BenchmarkId::new(…, input)` or `from_parameter`) becomes the param
//! "value". Its `throughput` (`Bytes`, `BytesDecimal`, `Elements`, `ElementsAndBytes`) adds
//! `bytes_per_second` or `elements_per_second` as secondary metrics: the declared amount per
//! iteration over each sample's time per iteration. criterion does not record its
//! own version or the machine, so there is no tool version and no context.
//!
//! A whole `target/criterion` tree (or any folder above benchmark folders) imports every
//! benchmark in it from its `new/` folder: the last `cargo bench`. `base/` and `--save-baseline
//! NAME` folders are saved baselines (copies of a run: by default `base/` is a copy of `new/`,
//! a named one may hold a run of other code), so they are imported only when given by name
//! (`…/GROUP/FUNCTION/base`), never pooled with `new/`; `change/` holds criterion's own
//! comparison, a summary, and is not read.

use super::{Benchmark, Format, Imported, Run, Secondary, Source, read_text};
use anyhow::{Result, anyhow, bail};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SAMPLE_WHAT: &str = "a criterion sample.json";
const BENCHMARK_WHAT: &str = "a criterion benchmark.json";
const EXPECTED: &str = "the new/sample.json and new/benchmark.json criterion writes under \
    target/criterion/<benchmark>/ for each benchmark of `cargo bench`";

/// Reads one criterion benchmark: `path` is its folder (holding `new/`), its `new/` folder, or
/// the `sample.json` or `benchmark.json` in it.
pub fn read(path: &Path) -> Result<Imported> {
    read_in(path, None)
}

/// [`read`] for a benchmark folder found below `tree`, the folder given (see
/// [`benchmark_folders`]), which a benchmark without benchmark.json is named below.
pub fn read_in(path: &Path, tree: Option<&Path>) -> Result<Imported> {
    let sample_path = sample_path(path)?;
    let benchmark_path = sample_path.with_file_name("benchmark.json");
    if !benchmark_path.is_file() {
        return read_unnamed(&sample_path, tree);
    }
    parse(
        &sample_path.display().to_string(),
        &read_text(&sample_path)?,
        &benchmark_path.display().to_string(),
        &read_text(&benchmark_path)?,
    )
}

/// A benchmark whose folder holds no benchmark.json (criterion 0.2 releases of 2018 wrote
/// none): its name is its folder's path below `target/criterion` (criterion made the folders
/// from the benchmark's id), or below the tree it was found in, or the folder's own name.
fn read_unnamed(sample_path: &Path, tree: Option<&Path>) -> Result<Imported> {
    let origin = sample_path.display().to_string();
    let name = folder_name(sample_path, tree).ok_or_else(|| {
        anyhow!("{origin}: no benchmark.json next to it and no folder to name the benchmark by (expected {EXPECTED})")
    })?;
    let id = serde_json::json!({ "group_id": name });
    let mut imported = parse(&origin, &read_text(sample_path)?, &origin, &id.to_string())?;
    imported.notes.push(
        "criterion benchmark folders without benchmark.json (criterion 0.2, 2018) are named by \
         their folder path below target/criterion"
            .to_string(),
    );
    Ok(imported)
}

/// The benchmark folder of a sample.json (above `new/` or `base/`) as a path below the
/// nearest folder named `criterion` (within `tree` when it was found in one), else below
/// `tree`, else its own name.
fn folder_name(sample_path: &Path, tree: Option<&Path>) -> Option<String> {
    let data = sample_path.parent()?;
    let folder = match data.file_name()?.to_str()? {
        "new" | "base" => data.parent()?,
        _ => data,
    };
    let parts = |path: &Path| -> Vec<String> {
        path.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect()
    };
    let all = parts(folder);
    let floor = tree
        .filter(|t| folder.starts_with(t) && folder != *t)
        .map_or(0, |t| parts(t).len());
    let start = match all.iter().rposition(|p| p == "criterion") {
        Some(i) if i + 1 >= floor.max(1) && i + 1 < all.len() => i + 1,
        _ if floor > 0 => floor,
        _ => all.len().checked_sub(1)?,
    };
    Some(all[start..].join("/"))
}

/// How deep below a given folder benchmark folders are looked for: `target/criterion` nests
/// group, function and input (three levels) below itself.
const MAX_DEPTH: usize = 6;

/// The most benchmark folders one tree may hold.
const MAX_BENCHMARKS: usize = 10_000;

/// The benchmarks `path` stands for: itself when it is one (a file, a folder holding
/// `new/sample.json` or `sample.json`), else every folder below it that holds
/// `new/sample.json`, as criterion's `target/criterion` tree does, sorted by path. `report/`
/// folders and symbolic links are not entered; `base/` and named baselines are earlier runs,
/// imported only when named.
pub fn benchmark_folders(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir()
        || path.join("new/sample.json").is_file()
        || path.join("sample.json").is_file()
    {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut found = Vec::new();
    walk(path, 0, &mut found)?;
    if found.is_empty() {
        bail!(
            "{}: a folder without new/sample.json, and no benchmark folder below it (expected a \
             criterion benchmark folder such as target/criterion/GROUP/FUNCTION, the \
             target/criterion folder itself, or {EXPECTED})",
            path.display()
        );
    }
    found.sort();
    Ok(found)
}

fn walk(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) -> Result<()> {
    if dir.join("new/sample.json").is_file() {
        found.push(dir.to_path_buf());
        if found.len() > MAX_BENCHMARKS {
            bail!(
                "{}: more than {MAX_BENCHMARKS} benchmark folders (expected a criterion tree; give its benchmark folders in parts)",
                dir.display()
            );
        }
        return Ok(());
    }
    if depth == MAX_DEPTH {
        return Ok(());
    }
    let entries =
        std::fs::read_dir(dir).map_err(|e| anyhow!("{}: cannot list: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| anyhow!("{}: cannot list: {e}", dir.display()))?;
        let is_folder = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_folder && entry.file_name() != "report" {
            walk(&entry.path(), depth + 1, found)?;
        }
    }
    Ok(())
}

/// The sample.json that `path` stands for.
fn sample_path(path: &Path) -> Result<PathBuf> {
    if path.is_dir() {
        return [
            path.join("new").join("sample.json"),
            path.join("sample.json"),
        ]
        .into_iter()
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            anyhow!(
                "{}: a folder without new/sample.json (expected a criterion benchmark folder \
                     such as target/criterion/GROUP/FUNCTION, or {EXPECTED})",
                path.display()
            )
        });
    }
    if path
        .file_name()
        .is_some_and(|name| name == "benchmark.json")
    {
        return Ok(path.with_file_name("sample.json"));
    }
    Ok(path.to_path_buf())
}

/// Parses one benchmark's sample.json and benchmark.json texts; the origins name them in errors.
pub fn parse(
    sample_origin: &str,
    sample_text: &str,
    benchmark_origin: &str,
    benchmark_text: &str,
) -> Result<Imported> {
    let id_source = Source {
        origin: benchmark_origin,
        what: BENCHMARK_WHAT,
        expected: EXPECTED,
    };
    let id = id_source.json(benchmark_text)?;
    let (name, params) = name_and_params(&id_source, &id)?;
    let notes = duplicate_number(&id)
        .map(|_| DUPLICATE_NOTE.to_string())
        .into_iter()
        .collect();
    let rates = throughput(&id_source, &name, &id)?;
    let sample_source = Source {
        origin: sample_origin,
        what: SAMPLE_WHAT,
        expected: EXPECTED,
    };
    let values = per_iteration_seconds(&sample_source, &name, &sample_source.json(sample_text)?)?;
    let mut run = Run::measured(values.clone());
    let mut secondary = Vec::new();
    for (metric, unit, amount) in rates {
        let rates = values
            .iter()
            .map(|t| sample_source.checked(&name, metric, amount / t))
            .collect::<Result<Vec<_>>>()?;
        run = run.with(metric, rates);
        secondary.push(Secondary::new(metric, unit, true, false));
    }
    Ok(Imported {
        format: Format::Criterion,
        tool_version: None,
        context: BTreeMap::new(),
        notes,
        benchmarks: vec![Benchmark {
            name,
            params,
            metric: "time".into(),
            unit: "s".into(),
            higher_is_better: false,
            runs: vec![run],
            summary_only: false,
            secondary,
        }],
    })
}

/// `group_id[/function_id]`, and `value_str` as the param "value". A benchmark whose id another
/// of the run already had (criterion 0.3 and later keep such ids, `bench_with_input` without a
/// parameter, and only make their folders and titles unique) keeps the `" #N"` criterion added
/// to its `title`, so that distinct benchmarks never share a name.
fn name_and_params(source: &Source, id: &Value) -> Result<(String, BTreeMap<String, String>)> {
    let group = id
        .get("group_id")
        .and_then(Value::as_str)
        .ok_or_else(|| source.not_format("no \"group_id\" string"))?;
    let mut name = match id.get("function_id").and_then(Value::as_str) {
        Some(function) => format!("{group}/{function}"),
        None => group.to_string(),
    };
    if let Some(number) = duplicate_number(id) {
        name = format!("{name} #{number}");
    }
    let params = match id.get("value_str").and_then(Value::as_str) {
        Some(value) => BTreeMap::from([("value".to_string(), value.to_string())]),
        None => BTreeMap::new(),
    };
    Ok((name, params))
}

/// The `N` of a title criterion made unique as `"FULL_ID #N"` (its `ensure_title_unique`).
fn duplicate_number(id: &Value) -> Option<u64> {
    let full = id.get("full_id").and_then(Value::as_str)?;
    let title = id.get("title").and_then(Value::as_str)?;
    let number = title.strip_prefix(full)?.strip_prefix(" #")?;
    number.parse().ok().filter(|n| *n >= 2)
}

/// The note for benchmarks told apart by their titles.
pub(crate) const DUPLICATE_NOTE: &str = "criterion saved several benchmarks under one id \
    (bench_with_input with no parameter): each keeps the \" #N\" criterion added to its title and \
    folder, so they stay distinct variants (give them a parameter, BenchmarkId::new(NAME, INPUT), \
    to name them)";

/// The rates benchmark.json's `throughput` declares, as (metric, unit, amount per iteration):
/// `{"Bytes": N}` and `{"BytesDecimal": N}` are bytes a second, `{"Elements": N}` elements a
/// second, `{"ElementsAndBytes": {"elements": N, "bytes": M}}` both; `null` or none, no rate.
fn throughput(
    source: &Source,
    name: &str,
    id: &Value,
) -> Result<Vec<(&'static str, &'static str, f64)>> {
    const BYTES: (&str, &str) = ("bytes_per_second", "B/s");
    const ELEMENTS: (&str, &str) = ("elements_per_second", "/s");
    let Some(Value::Object(declared)) = id.get("throughput") else {
        return Ok(Vec::new());
    };
    let mut rates = Vec::new();
    for (kind, amount) in declared {
        let amounts: Vec<((&str, &str), &Value)> = match (kind.as_str(), amount) {
            ("Bytes" | "BytesDecimal", n) => vec![(BYTES, n)],
            ("Elements", n) => vec![(ELEMENTS, n)],
            ("ElementsAndBytes", Value::Object(both)) => [("elements", ELEMENTS), ("bytes", BYTES)]
                .into_iter()
                .filter_map(|(key, rate)| both.get(key).map(|n| (rate, n)))
                .collect(),
            _ => {
                return Err(source.bad(format!(
                    "benchmark \"{name}\": throughput {kind} is {amount} (expected Bytes, BytesDecimal, Elements or ElementsAndBytes with a count)"
                )));
            }
        };
        for ((metric, unit), n) in amounts {
            let n = source.value(name, &format!("throughput {kind}"), n)?;
            rates.push((metric, unit, n));
        }
    }
    Ok(rates)
}

/// `times[i] / iters[i]` nanoseconds, in seconds.
fn per_iteration_seconds(source: &Source, name: &str, sample: &Value) -> Result<Vec<f64>> {
    let (iters, times) = iters_and_times(source, sample)?;
    if iters.len() != times.len() || iters.is_empty() {
        return Err(source.bad(format!(
            "benchmark \"{name}\": {} iters but {} times (expected one iteration count per time, \
             at least one sample)",
            iters.len(),
            times.len()
        )));
    }
    iters
        .iter()
        .zip(times)
        .enumerate()
        .map(|(i, (iters, total))| {
            let what = format!("sample {}", i + 1);
            let iters = source.value(name, &format!("{what} iteration count"), iters)?;
            let total = source.value(name, &format!("{what} time"), total)?;
            if iters == 0.0 {
                return Err(source.bad(format!(
                    "benchmark \"{name}\": {what} ran 0 iterations (expected at least one)"
                )));
            }
            source.checked(name, &what, total / iters * 1e-9)
        })
        .collect()
}

/// The iteration counts and times of a sample.json: the object `{"iters": […], "times": […]}`
/// of later criterion, or the pair `[[iters…], [times…]]` criterion 0.2 saved (a serialized
/// tuple of the two lists).
fn iters_and_times<'v>(
    source: &Source,
    sample: &'v Value,
) -> Result<(&'v Vec<Value>, &'v Vec<Value>)> {
    let Value::Array(pair) = sample else {
        return Ok((
            number_list(source, sample, "iters")?,
            number_list(source, sample, "times")?,
        ));
    };
    match pair.as_slice() {
        [Value::Array(iters), Value::Array(times)] => Ok((iters, times)),
        _ => Err(source.not_format(format!(
            "an array of {} items, not criterion 0.2's [[iters…], [times…]] pair of lists",
            pair.len()
        ))),
    }
}

fn number_list<'v>(source: &Source, sample: &'v Value, field: &str) -> Result<&'v Vec<Value>> {
    sample
        .get(field)
        .and_then(Value::as_array)
        .ok_or_else(|| source.not_format(format!("no \"{field}\" array")))
}

#[cfg(test)]
#[path = "criterion_tests.rs"]
mod tests;
