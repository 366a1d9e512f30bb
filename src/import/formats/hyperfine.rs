//! hyperfine's `--export-json` output: each timed execution of a command is one [`Run`] holding
//! its wall-clock time.
//!
//! The file holds `results`, one per command, each with `command`, `times` (seconds, one per
//! run, warm-up runs not included), `parameters` (for `--parameter-scan`/`--parameter-list`) and
//! summary statistics, which are not imported. `exit_codes` gives each run's exit: a run that
//! failed (kept by `--ignore-failure`) is imported as a failed run, which the exit check
//! judges and the analysis leaves out; `null` (a command ended by a signal) is a failure too.

use super::{Benchmark, Format, Imported, Run, Source, group_benchmarks};
use crate::store::Exit;
use anyhow::Result;
use serde_json::Value;
use std::collections::BTreeMap;

const WHAT: &str = "hyperfine --export-json output";
const EXPECTED: &str = "the file written by hyperfine --export-json FILE";

/// Parses one hyperfine export; `origin` names the file in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let document = source.json(text)?;
    let results = document
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| source.not_format("no \"results\" array"))?;
    let benchmarks = results
        .iter()
        .enumerate()
        .map(|(index, result)| benchmark(&source, index, result))
        .collect::<Result<Vec<_>>>()?;
    Ok(Imported {
        format: Format::Hyperfine,
        tool_version: None,
        context: BTreeMap::new(),
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
    })
}

fn benchmark(source: &Source, index: usize, result: &Value) -> Result<Benchmark> {
    let name = result
        .get("command")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            source.not_format(format!("result {} has no \"command\" string", index + 1))
        })?;
    Ok(Benchmark {
        name: name.to_string(),
        params: parameters(source, name, result)?,
        metric: "time".into(),
        unit: "s".into(),
        higher_is_better: false,
        runs: runs(source, name, result)?,
        summary_only: false,
    })
}

/// One run per entry of `times`, each holding that run's time and, where `exit_codes` is
/// written, how it ended.
fn runs(source: &Source, name: &str, result: &Value) -> Result<Vec<Run>> {
    let exits = exits(source, name, result)?;
    let times = result
        .get("times")
        .and_then(Value::as_array)
        .filter(|times| !times.is_empty())
        .ok_or_else(|| {
            source.bad(format!(
                "benchmark \"{name}\" has no per-run \"times\", only a summary \
                 (expected the \"times\" list current hyperfine versions write)"
            ))
        })?;
    if let Some(exits) = &exits
        && exits.len() != times.len()
    {
        return Err(source.bad(format!(
            "benchmark \"{name}\" has {} times but {} exit codes (expected one exit code per run)",
            times.len(),
            exits.len()
        )));
    }
    times
        .iter()
        .enumerate()
        .map(|(index, time)| {
            let seconds = source.value(name, &format!("time {}", index + 1), time)?;
            Ok(Run {
                exit: exits.as_ref().map(|e| e[index].clone()),
                ..Run::measured(vec![seconds])
            })
        })
        .collect()
}

/// Each run's exit from `exit_codes`, when the file has them: a number is the exit code,
/// `null` a command ended by a signal hyperfine does not name.
fn exits(source: &Source, name: &str, result: &Value) -> Result<Option<Vec<Exit>>> {
    let Some(codes) = result.get("exit_codes") else {
        return Ok(None);
    };
    let codes = codes.as_array().ok_or_else(|| {
        source.bad(format!(
            "benchmark \"{name}\": \"exit_codes\" is not an array (expected one exit code per run)"
        ))
    })?;
    codes
        .iter()
        .enumerate()
        .map(|(index, code)| match code {
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
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

fn parameters(source: &Source, name: &str, result: &Value) -> Result<BTreeMap<String, String>> {
    super::text_params(source, name, result, "parameters")
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_close, fixture};
    use super::super::{Format, read};
    use super::*;

    const PLAIN: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/hyperfine/hyperfine.json"
    ));
    const SCAN: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/hyperfine/hyperfine-scan.json"
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
            "hyperfine.json: benchmark \"sleep 0.01\" has 10 times but 9 exit codes (expected one exit code per run)"
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
