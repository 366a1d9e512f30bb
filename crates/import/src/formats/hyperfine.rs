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
    let document = source.json(text)?;
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
    let results = document
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| source.not_format("no \"results\" array"))?;
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
    Benchmark {
        name: name.to_string(),
        params,
        metric: "time".into(),
        unit: "s".into(),
        higher_is_better: false,
        runs,
        summary_only: false,
        secondary: Vec::new(),
    }
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
mod tests {
    use super::super::test_support::{assert_close, fixture};
    use super::super::{Format, read};
    use super::*;

    const PLAIN: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/import/hyperfine/hyperfine.json"
    ));
    const SCAN: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/import/hyperfine/hyperfine-scan.json"
    ));

    #[test]
    fn a_run_that_failed_is_kept_as_a_failed_run() {
        let failing = PLAIN.replacen(
            "\"exit_codes\": [\n        0,\n        0,",
            "\"exit_codes\": [\n        0,\n        2,",
            1,
        );
        assert_ne!(
            failing, PLAIN,
            "the fixture's exit codes are where the test expects"
        );
        let imported = parse("hyperfine.json", &failing).unwrap();
        let exits: Vec<_> = imported.benchmarks[0]
            .runs
            .iter()
            .map(|r| r.exit.clone())
            .collect();
        assert_eq!(
            exits[..3],
            [
                Some(Exit::Code(0)),
                Some(Exit::Code(2)),
                Some(Exit::Code(0))
            ]
        );
        let killed = failing.replacen("        2,", "        null,", 1);
        let imported = parse("hyperfine.json", &killed).unwrap();
        assert!(matches!(
            imported.benchmarks[0].runs[1].exit,
            Some(Exit::SpawnFailed(_))
        ));
        let torn = failing.replacen("        2,", "", 1);
        let error = parse("hyperfine.json", &torn).unwrap_err().to_string();
        assert_eq!(
            error,
            "hyperfine.json: benchmark \"sleep 0.01\" has 10 times but 9 exit codes (expected one per run)"
        );
    }

    fn secondary_names(b: &Benchmark) -> Vec<&str> {
        b.secondary.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn schema_2_measurements_are_runs_with_every_metric() {
        let file = fixture("hyperfine/hyperfine-2.0-metrics.json");
        let imported = read(Format::Hyperfine, &[file]).unwrap();
        assert_eq!(imported.tool_version.as_deref(), Some("2.0.0"));
        assert_eq!(imported.context["os"], "Linux");
        assert_eq!(imported.context["architecture"], "x86_64");
        let [first, second] = imported.benchmarks.as_slice() else {
            panic!("{:?}", imported.benchmarks)
        };
        assert_eq!(
            (
                first.name.as_str(),
                first.metric.as_str(),
                first.unit.as_str()
            ),
            ("sleep 0.01", "time", "s")
        );
        assert_eq!(
            secondary_names(first),
            [
                "memory_peak_resident",
                "time_cpu",
                "time_system",
                "time_user"
            ]
        );
        let memory = &first.secondary[0];
        assert_eq!((memory.unit.as_str(), memory.count), ("B", true));
        assert_eq!(
            (first.secondary[1].unit.as_str(), first.secondary[1].count),
            ("s", false)
        );
        assert_eq!(first.runs.len(), 5);
        assert_close(first.runs[0].values[0], 0.011980543000000001);
        assert_close(first.runs[4].values[0], 0.01702675);
        assert_close(first.runs[0].secondary["time_cpu"][0], 0.001718);
        assert_close(first.runs[4].secondary["time_cpu"][0], 0.002461);
        assert_close(
            first.runs[0].secondary["memory_peak_resident"][0],
            3117056.0,
        );
        assert_eq!(first.runs[0].exit, Some(Exit::Code(0)));
        assert_close(second.runs[4].values[0], 0.024236495);
        assert_close(
            second.runs[4].secondary["memory_peak_resident"][0],
            3248128.0,
        );
    }

    #[test]
    fn schema_2_parameters_and_exit_codes_are_read() {
        let scan = read(
            Format::Hyperfine,
            &[fixture("hyperfine/hyperfine-2.0-scan.json")],
        )
        .unwrap();
        let params: Vec<&str> = scan
            .benchmarks
            .iter()
            .map(|b| b.params["n"].as_str())
            .collect();
        assert_eq!(params, ["1", "2", "3"]);
        assert!(scan.benchmarks.iter().all(|b| b.runs.len() == 4));
        assert_close(scan.benchmarks[2].runs[3].values[0], 0.035797431000000005);
        let failing = read(
            Format::Hyperfine,
            &[fixture("hyperfine/hyperfine-2.0-failing.json")],
        )
        .unwrap();
        let exits: Vec<Option<Exit>> = failing.benchmarks[0]
            .runs
            .iter()
            .map(|r| r.exit.clone())
            .collect();
        let expected: Vec<Option<Exit>> = [0, 1, 0, 1, 0, 1]
            .into_iter()
            .map(|c| Some(Exit::Code(c)))
            .collect();
        assert_eq!(exits, expected);
    }

    #[test]
    fn hyperfine_1_20_memory_is_a_metric_of_each_run() {
        let imported = read(
            Format::Hyperfine,
            &[fixture("hyperfine/hyperfine-1.20.json")],
        )
        .unwrap();
        assert_eq!(imported.tool_version, None);
        let first = &imported.benchmarks[0];
        assert_eq!(secondary_names(first), ["memory_peak_resident"]);
        assert_close(first.runs[0].values[0], 0.017096891);
        assert_close(first.runs[4].values[0], 0.012554059000000001);
        assert_close(
            first.runs[4].secondary["memory_peak_resident"][0],
            3063808.0,
        );
        let list = read(
            Format::Hyperfine,
            &[fixture("hyperfine/hyperfine-1.20-list.json")],
        )
        .unwrap();
        let params: Vec<&str> = list
            .benchmarks
            .iter()
            .map(|b| b.params["n"].as_str())
            .collect();
        assert_eq!(params, ["1", "2"]);
    }

    #[test]
    fn versions_1_and_2_of_one_command_merge_into_one_benchmark() {
        let files = [
            fixture("hyperfine/hyperfine.json"),
            fixture("hyperfine/hyperfine-2.0-metrics.json"),
        ];
        let imported = read(Format::Hyperfine, &files).unwrap();
        let plain = &imported.benchmarks[0];
        assert_eq!((plain.name.as_str(), plain.runs.len()), ("sleep 0.01", 15));
        assert!(plain.runs[0].secondary.is_empty());
        assert_close(plain.runs[14].secondary["time_cpu"][0], 0.002461);
    }

    #[test]
    fn an_unknown_schema_and_a_measurement_without_its_metric_are_refused() {
        let later = r#"{"schema_version": 3, "results": []}"#;
        assert_eq!(
            parse("h.json", later).unwrap_err().to_string(),
            "h.json: schema_version 3: lab reads hyperfine 1.x's exports and 2.0's schema 2 (expected a file written by one of those versions)"
        );
        let torn = r#"{"schema_version": 2, "results": [{"command": "true", "measurements": [{"time_cpu": {"value": 0.1, "unit": "second"}}]}]}"#;
        assert_eq!(
            parse("h.json", torn).unwrap_err().to_string(),
            "h.json: benchmark \"true\": measurement 1 has no \"time_wall_clock\" (expected every measurement to hold the primary metric)"
        );
        let bare = r#"{"schema_version": 2, "results": [{"command": "true", "measurements": [{"time_wall_clock": 0.1}]}]}"#;
        assert_eq!(
            parse("h.json", bare).unwrap_err().to_string(),
            "h.json: benchmark \"true\": measurement 1 time_wall_clock is 0.1 (expected {\"value\": NUMBER, \"unit\": UNIT})"
        );
    }

    #[test]
    fn each_command_is_a_benchmark_and_each_time_a_run() {
        let imported = parse("hyperfine.json", PLAIN).unwrap();
        assert_eq!(imported.format, Format::Hyperfine);
        assert_eq!(imported.tool_version, None);
        assert_eq!(imported.benchmarks.len(), 2);
        let first = &imported.benchmarks[0];
        assert_eq!(first.name, "sleep 0.01");
        assert!(first.params.is_empty());
        assert_eq!((first.metric.as_str(), first.unit.as_str()), ("time", "s"));
        assert!(!first.higher_is_better && !first.summary_only);
        assert_eq!(first.runs.len(), 10);
        assert_close(first.runs[0].values[0], 0.01091137478);
        assert_close(first.runs[9].values[0], 0.01795702578);
        assert!(
            first
                .runs
                .iter()
                .all(|run| !run.warmup && run.warmup_values.is_empty())
        );
        let second = &imported.benchmarks[1];
        assert_eq!(second.name, "sleep 0.012");
        assert_close(second.runs[0].values[0], 0.016473243779999997);
        assert_close(second.runs[9].values[0], 0.01812373978);
    }

    #[test]
    fn a_parameter_scan_keeps_its_parameters() {
        let imported = parse("hyperfine-scan.json", SCAN).unwrap();
        let names: Vec<&str> = imported
            .benchmarks
            .iter()
            .map(|b| b.name.as_str())
            .collect();
        assert_eq!(names, ["sleep 0.01", "sleep 0.02", "sleep 0.03"]);
        for (benchmark, n) in imported.benchmarks.iter().zip(["1", "2", "3"]) {
            assert_eq!(benchmark.params, BTreeMap::from([("n".into(), n.into())]));
            assert_eq!(benchmark.runs.len(), 5);
        }
        assert_close(
            imported.benchmarks[2].runs[0].values[0],
            0.033421080740000005,
        );
        assert_close(imported.benchmarks[2].runs[4].values[0], 0.03257858074);
    }

    #[test]
    fn exports_of_the_same_command_merge_across_files() {
        let files = [
            fixture("hyperfine/hyperfine.json"),
            fixture("hyperfine/hyperfine-scan.json"),
            fixture("hyperfine/hyperfine-again.json"),
        ];
        let imported = read(Format::Hyperfine, &files).unwrap();
        // "sleep 0.01" without parameters (two files) and with n=1 (the scan) stay apart.
        assert_eq!(imported.benchmarks.len(), 5);
        let plain = &imported.benchmarks[0];
        assert_eq!(plain.name, "sleep 0.01");
        assert!(plain.params.is_empty());
        assert_eq!(plain.runs.len(), 15);
        assert_close(plain.runs[10].values[0], 0.010809589780000002);
        assert_close(plain.runs[14].values[0], 0.01793614278);
        assert_eq!(imported.benchmarks[2].params["n"], "1");
        assert_eq!(imported.benchmarks[2].runs.len(), 5);
    }

    #[test]
    fn a_pyperf_file_is_refused_naming_the_file() {
        let pyperf = std::fs::read_to_string(fixture("pyperf/pyperf.json")).unwrap();
        let error = parse("pyperf.json", &pyperf).unwrap_err().to_string();
        assert_eq!(
            error,
            "pyperf.json: not hyperfine --export-json output: no \"results\" array \
             (expected the file written by hyperfine --export-json FILE)"
        );
    }

    #[test]
    fn negative_and_nan_times_are_refused_with_the_command() {
        let negative = r#"{"results": [{"command": "sleep 1", "times": [0.1, -0.2]}]}"#;
        let error = parse("h.json", negative).unwrap_err().to_string();
        assert!(
            error.contains("benchmark \"sleep 1\": time 2 is negative"),
            "{error}"
        );
        let nan = r#"{"results": [{"command": "sleep 1", "times": ["NaN"]}]}"#;
        let error = parse("h.json", nan).unwrap_err().to_string();
        assert!(
            error.contains("benchmark \"sleep 1\": time 1 is NaN"),
            "{error}"
        );
    }

    #[test]
    fn a_summary_without_times_is_refused() {
        let summary = r#"{"results": [{"command": "sleep 1", "mean": 1.0}]}"#;
        let error = parse("h.json", summary).unwrap_err().to_string();
        assert!(
            error.starts_with("h.json: benchmark \"sleep 1\" has no per-run"),
            "{error}"
        );
    }

    #[test]
    fn invalid_json_is_refused_naming_the_file() {
        let error = parse("h.json", "{").unwrap_err().to_string();
        assert!(error.starts_with("h.json: not hyperfine --export-json output: invalid JSON"));
    }
}
