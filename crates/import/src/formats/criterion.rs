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
    let sample_path = sample_path(path)?;
    let benchmark_path = sample_path.with_file_name("benchmark.json");
    if !benchmark_path.is_file() {
        bail!(
            "{}: no benchmark.json next to it, so the benchmark has no name (expected {EXPECTED})",
            sample_path.display()
        );
    }
    parse(
        &sample_path.display().to_string(),
        &read_text(&sample_path)?,
        &benchmark_path.display().to_string(),
        &read_text(&benchmark_path)?,
    )
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

/// `group_id[/function_id]`, and `value_str` as the param "value".
fn name_and_params(source: &Source, id: &Value) -> Result<(String, BTreeMap<String, String>)> {
    let group = id
        .get("group_id")
        .and_then(Value::as_str)
        .ok_or_else(|| source.not_format("no \"group_id\" string"))?;
    let name = match id.get("function_id").and_then(Value::as_str) {
        Some(function) => format!("{group}/{function}"),
        None => group.to_string(),
    };
    let params = match id.get("value_str").and_then(Value::as_str) {
        Some(value) => BTreeMap::from([("value".to_string(), value.to_string())]),
        None => BTreeMap::new(),
    };
    Ok((name, params))
}

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
mod tests {
    use super::super::test_support::{assert_close, fixture};
    use super::super::{Format, read as read_all};
    use super::*;

    const NAME: &str = "analysis/5,000 cells × 20 runs, 10,000 resamples";
    const FIRST_SAMPLE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/import/criterion/analysis-run1/new/sample.json"
    ));
    const FIRST_ID: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/import/criterion/analysis-run1/new/benchmark.json"
    ));

    /// The values of the one run of the one benchmark, `name`, of one sample.json, checked: no
    /// params, times in seconds, and no tool version or context (criterion records neither).
    fn one_run<'i>(imported: &'i Imported, name: &str) -> &'i [f64] {
        assert_eq!(imported.tool_version, None);
        assert!(imported.context.is_empty());
        assert_eq!(imported.benchmarks.len(), 1);
        let benchmark = &imported.benchmarks[0];
        assert_eq!(benchmark.name, name);
        assert!(benchmark.params.is_empty());
        assert_eq!(
            (benchmark.metric.as_str(), benchmark.unit.as_str()),
            ("time", "s")
        );
        assert_eq!(benchmark.runs.len(), 1);
        &benchmark.runs[0].values
    }

    #[test]
    fn a_declared_throughput_is_a_rate_per_sample() {
        let bytes = FIRST_ID.replace("\"throughput\":null", "\"throughput\":{\"Bytes\":1000}");
        let imported = parse("sample.json", FIRST_SAMPLE, "benchmark.json", &bytes).unwrap();
        let benchmark = &imported.benchmarks[0];
        let metrics: Vec<(&str, &str, bool)> = benchmark
            .secondary
            .iter()
            .map(|s| (s.name.as_str(), s.unit.as_str(), s.higher_is_better))
            .collect();
        assert_eq!(metrics, [("bytes_per_second", "B/s", true)]);
        let run = &benchmark.runs[0];
        // 1,000 bytes an iteration; the first sample ran 1 iteration in 10,883,752,315 ns.
        assert_close(run.secondary["bytes_per_second"][0], 1000.0 / 10.883752315);
        assert_eq!(run.secondary["bytes_per_second"].len(), run.values.len());
        let both = FIRST_ID.replace(
            "\"throughput\":null",
            "\"throughput\":{\"ElementsAndBytes\":{\"elements\":10,\"bytes\":80}}",
        );
        let imported = parse("sample.json", FIRST_SAMPLE, "benchmark.json", &both).unwrap();
        let names: Vec<&str> = imported.benchmarks[0]
            .secondary
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, ["elements_per_second", "bytes_per_second"]);
        let odd = FIRST_ID.replace("\"throughput\":null", "\"throughput\":{\"Bits\":8}");
        let error = parse("sample.json", FIRST_SAMPLE, "benchmark.json", &odd).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "benchmark.json: benchmark \"{NAME}\": throughput Bits is 8 (expected Bytes, BytesDecimal, Elements or ElementsAndBytes with a count)"
            )
        );
    }

    #[test]
    fn a_folder_above_benchmark_folders_imports_each_of_them_sorted() {
        let tree = fixture("criterion");
        let folders = benchmark_folders(&tree).unwrap();
        let names: Vec<String> = folders
            .iter()
            .map(|f| f.strip_prefix(&tree).unwrap().display().to_string())
            .collect();
        assert!(
            names.starts_with(&[
                "analysis-run1".to_string(),
                "analysis-run2".to_string(),
                "criterion-0.2".to_string()
            ]),
            "{names:?}"
        );
        let empty = tempfile::tempdir().unwrap();
        let error = benchmark_folders(empty.path()).unwrap_err().to_string();
        assert!(error.contains("no benchmark folder below it"), "{error}");
    }

    #[test]
    fn one_sample_file_is_one_run_of_per_iteration_seconds() {
        let imported = parse("sample.json", FIRST_SAMPLE, "benchmark.json", FIRST_ID).unwrap();
        assert_eq!(imported.format, Format::Criterion);
        let values = one_run(&imported, NAME);
        assert_eq!(values.len(), 10);
        assert_close(values[0], 10883752315.0 / 1.0 * 1e-9);
        assert_close(values[9], 7441626834.0 / 1.0 * 1e-9);
    }

    #[test]
    fn a_folder_a_new_folder_and_either_file_all_read() {
        for path in [
            "criterion/analysis-run1",
            "criterion/analysis-run1/new",
            "criterion/analysis-run1/new/sample.json",
            "criterion/analysis-run1/new/benchmark.json",
        ] {
            let imported = read(&fixture(path)).unwrap();
            assert_eq!(imported.benchmarks[0].name, NAME, "{path}");
            assert_eq!(imported.benchmarks[0].runs[0].values.len(), 10, "{path}");
        }
    }

    #[test]
    fn two_cargo_bench_runs_are_two_runs_of_one_benchmark() {
        let files = [
            fixture("criterion/analysis-run1/new/sample.json"),
            fixture("criterion/analysis-run2"),
        ];
        let imported = read_all(Format::Criterion, &files).unwrap();
        assert_eq!(imported.benchmarks.len(), 1);
        let runs = &imported.benchmarks[0].runs;
        assert_eq!(runs.len(), 2);
        assert_close(runs[0].values[0], 10.883752315);
        assert_close(runs[1].values[0], 6.802708979);
        assert_close(runs[1].values[9], 13.308771035);
    }

    #[test]
    fn a_criterion_0_2_sample_pair_reads_like_the_later_object() {
        let imported = read(&fixture("criterion/criterion-0.2")).unwrap();
        let values = one_run(&imported, "fib 20");
        assert_eq!(values.len(), 10);
        assert_close(values[0], 494785.0 / 19.0 * 1e-9);
        assert_close(values[9], 4963104.0 / 190.0 * 1e-9);
    }

    #[test]
    fn an_array_that_is_not_a_pair_of_lists_is_refused() {
        for (sample, items) in [("[[1.0], [2.0], [3.0]]", 3), ("[1.0, 2.0]", 2)] {
            assert_eq!(
                parse("s.json", sample, "b.json", r#"{"group_id": "g"}"#)
                    .unwrap_err()
                    .to_string(),
                format!(
                    "s.json: not a criterion sample.json: an array of {items} items, not \
                     criterion 0.2's [[iters…], [times…]] pair of lists (expected {EXPECTED})"
                )
            );
        }
    }

    #[test]
    fn a_pair_of_unequal_lists_is_refused() {
        let error = parse(
            "s.json",
            "[[1.0, 2.0], [5.0]]",
            "b.json",
            r#"{"group_id": "g"}"#,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "s.json: benchmark \"g\": 2 iters but 1 times (expected one iteration count per \
             time, at least one sample)"
        );
    }

    #[test]
    fn times_are_divided_by_iterations() {
        let sample =
            r#"{"sampling_mode": "Linear", "iters": [2.0, 4.0], "times": [300.0, 1000.0]}"#;
        let id = r#"{"group_id": "g", "function_id": "f", "value_str": "64", "full_id": "g/f/64"}"#;
        let imported = parse("s.json", sample, "b.json", id).unwrap();
        let benchmark = &imported.benchmarks[0];
        assert_eq!(benchmark.name, "g/f");
        assert_eq!(
            benchmark.params,
            BTreeMap::from([("value".into(), "64".into())])
        );
        assert_close(benchmark.runs[0].values[0], 150e-9);
        assert_close(benchmark.runs[0].values[1], 250e-9);
    }

    #[test]
    fn a_negative_time_is_refused_with_the_benchmark() {
        let sample = r#"{"iters": [1.0], "times": [-5.0]}"#;
        let id = r#"{"group_id": "g", "function_id": null, "value_str": null}"#;
        let error = parse("s.json", sample, "b.json", id)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("s.json: benchmark \"g\": sample 1 time is negative"),
            "{error}"
        );
    }

    #[test]
    fn a_folder_without_results_is_refused() {
        let error = read(&fixture("criterion")).unwrap_err().to_string();
        assert!(
            error.contains("a folder without new/sample.json"),
            "{error}"
        );
    }

    #[test]
    fn a_hyperfine_file_is_refused_naming_the_file() {
        let hyperfine = std::fs::read_to_string(fixture("hyperfine/hyperfine.json")).unwrap();
        let error = parse("hyperfine.json", &hyperfine, "benchmark.json", FIRST_ID)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("hyperfine.json: not a criterion sample.json: no \"iters\" array"),
            "{error}"
        );
    }
}
