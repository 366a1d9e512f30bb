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
//! "value". Its `throughput` is not imported: the values are times. criterion does not record its
//! own version or the machine, so there is no tool version and no context.

use super::{Benchmark, Format, Imported, Run, Source, read_text};
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
    let (name, params) = name_and_params(&id_source, &id_source.json(benchmark_text)?)?;
    let sample_source = Source {
        origin: sample_origin,
        what: SAMPLE_WHAT,
        expected: EXPECTED,
    };
    let values = per_iteration_seconds(&sample_source, &name, &sample_source.json(sample_text)?)?;
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
            runs: vec![Run::measured(values)],
            summary_only: false,
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
        "/tests/fixtures/import/criterion/analysis-run1/new/sample.json"
    ));
    const FIRST_ID: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/criterion/analysis-run1/new/benchmark.json"
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
