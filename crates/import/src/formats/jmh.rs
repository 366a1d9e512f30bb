//! JMH's `-rf json` output: an array of results, one per benchmark, mode and parameter set. Each
//! fork is one [`Run`], its measurement iterations (`primaryMetric.rawData[fork]`) the values.
//!
//! Modes: `thrpt` keeps its unit (e.g. "ops/s") with metric "throughput", higher is better;
//! `avgt` (metric "time"), `ss` ("single_shot_time") and `sample` ("sample_time") are times per
//! operation, converted from the unit JMH states (e.g. "us/op") to seconds, each mode its own
//! metric so that a file of `-bm all` keeps them apart. `sample` mode records each iteration
//! as a histogram (`rawDataHistogram`: `[value, count]` pairs); its iteration value is the
//! histogram's weighted mean, the time per operation JMH's own score averages, so medians and
//! intervals across iterations and forks hold, while quantiles of single operations (JMH's
//! p0.99 and so on) are not kept. Secondary metrics (`-prof gc`'s `·gc.alloc.rate` and
//! `·gc.count`, other profilers' readings, `@AuxCounters`) are imported as metrics of their own,
//! fork by fork from their `rawData`, times converted to seconds, other units kept as written;
//! an entry without `rawData` or with values that are not numbers is left out. `jmhVersion` is the tool version; `jvm`, `jvmArgs`, `jdkVersion`, `vmName`,
//! `vmVersion` and `threads` are the context facts.
//!
//! A result without `rawData` (a trimmed file, or one written by a tool that imitates JMH's
//! format) holds only the summary: it is imported as a [`Benchmark`] with `summary_only: true`
//! whose single run holds one value, `primaryMetric.score`. That value is a mean over forks and
//! iterations, not a measurement; nothing else is made up for it.

use super::{
    Benchmark, Facts, Format, Imported, Run, Secondary, Selection, Source, group_benchmarks,
    scalar_text, seconds_per,
};
use anyhow::Result;
use serde_json::Value;
use std::collections::BTreeMap;

const WHAT: &str = "JMH JSON results";
const EXPECTED: &str = "the file written by a JMH benchmark run with -rf json -rff FILE";

/// The per-benchmark fields kept as context facts.
const CONTEXT_FIELDS: &[&str] = &[
    "jvm",
    "jvmArgs",
    "jdkVersion",
    "vmName",
    "vmVersion",
    "threads",
];

/// Parses one JMH JSON results file; `origin` names the file in errors.
pub fn parse(origin: &str, text: &str) -> Result<Imported> {
    parse_selected(origin, text, &Selection::default())
}

/// [`parse`], keeping only the results `select` keeps: a result left out is read no further
/// than its name, mode and unit, so nothing in it can refuse the file.
pub fn parse_selected(origin: &str, text: &str, select: &Selection) -> Result<Imported> {
    let source = Source {
        origin,
        what: WHAT,
        expected: EXPECTED,
    };
    let (document, log_note) = source.json_in_log(text, |v| {
        v.as_array()
            .is_some_and(|a| a.iter().all(|r| r.get("benchmark").is_some()))
    })?;
    let results = document
        .as_array()
        .ok_or_else(|| source.not_format("the top level is not an array of results"))?;
    let mut versions = Facts::default();
    let mut facts = Facts::default();
    let mut benchmarks = Vec::new();
    let mut left_out = Vec::new();
    for (index, result) in results.iter().enumerate() {
        if !selected(select, result) {
            continue;
        }
        benchmarks.push(benchmark(&source, index, result, &mut left_out)?);
        if let Some(version) = result.get("jmhVersion").and_then(scalar_text) {
            versions.add("jmhVersion", version);
        }
        add_context_facts(&mut facts, result);
    }
    Ok(Imported {
        format: Format::Jmh,
        tool_version: versions.into_context().remove("jmhVersion"),
        context: facts.into_context(),
        benchmarks: group_benchmarks(origin, Vec::new(), benchmarks)?,
        notes: log_note
            .into_iter()
            .chain(left_out_note(origin, &left_out))
            .collect(),
    })
}

/// The one note naming every secondary metric left out for holding no value, with how many
/// benchmarks it was left out of.
fn left_out_note(origin: &str, left_out: &[String]) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for metric in left_out {
        match counts.iter_mut().find(|(m, _)| m == metric) {
            Some((_, n)) => *n += 1,
            None => counts.push((metric, 1)),
        }
    }
    if counts.is_empty() {
        return None;
    }
    let named: Vec<String> = counts
        .iter()
        .map(|(m, n)| format!("\"{m}\" ({n} benchmark{})", if *n == 1 { "" } else { "s" }))
        .collect();
    Some(format!(
        "{origin}: secondary metric{} {} left out: no numeric value recorded (a profiler's text \
         result, or NaN and no raw data)",
        if counts.len() == 1 { "" } else { "s" },
        named.join(", ")
    ))
}

fn add_context_facts(facts: &mut Facts, result: &Value) {
    for &field in CONTEXT_FIELDS {
        let text = match result.get(field) {
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .filter_map(scalar_text)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Some(value) => scalar_text(value),
            None => None,
        };
        if let Some(text) = text {
            facts.add(field, text);
        }
    }
}

/// Whether `select` keeps a result, by its name, mode and score unit as written.
fn selected(select: &Selection, result: &Value) -> bool {
    let text = |key: &str| result.get(key).and_then(Value::as_str).unwrap_or("");
    let unit = result
        .get("primaryMetric")
        .and_then(|m| m.get("scoreUnit"))
        .and_then(Value::as_str)
        .unwrap_or("");
    select.keeps(text("benchmark"), text("mode"), unit)
}

fn benchmark(
    source: &Source,
    index: usize,
    result: &Value,
    left_out: &mut Vec<String>,
) -> Result<Benchmark> {
    let name = result
        .get("benchmark")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            source.not_format(format!("result {} has no \"benchmark\" name", index + 1))
        })?;
    let primary = result
        .get("primaryMetric")
        .filter(|metric| metric.is_object())
        .ok_or_else(|| {
            source.not_format(format!(
                "benchmark \"{name}\" has no \"primaryMetric\" object"
            ))
        })?;
    let mode = result.get("mode").and_then(Value::as_str).unwrap_or("");
    let score_unit = primary
        .get("scoreUnit")
        .and_then(Value::as_str)
        .unwrap_or("");
    let measure = Measure::of(source, name, mode, score_unit)?;
    let (runs, summary_only) = match (primary.get("rawDataHistogram"), primary.get("rawData")) {
        (Some(histograms), _) if mode == "sample" => (
            histogram_runs(source, name, histograms, measure.factor)?,
            false,
        ),
        (_, Some(raw)) => (fork_runs(source, name, raw, measure.factor)?, false),
        _ => (summary_run(source, name, primary, measure.factor)?, true),
    };
    let (secondary, runs) = with_secondary_metrics(source, name, result, runs, left_out)?;
    Ok(Benchmark {
        name: name.to_string(),
        params: params(source, name, result)?,
        metric: measure.metric.into(),
        unit: measure.unit,
        higher_is_better: measure.higher_is_better,
        runs,
        summary_only,
        secondary,
    })
}

/// The forks' runs with the values of every numeric secondary metric that has `rawData`
/// (fork by fork, as far as both go), and those metrics. A profiler's entry whose values are
/// not numbers (`NaN` for a textual result such as `·stack`), that holds no `rawData`, or
/// whose `rawData` holds no value (`-prof perfasm`'s `·asm`: a NaN score and empty lists) is
/// left out, its name added to `left_out`.
fn with_secondary_metrics(
    source: &Source,
    name: &str,
    result: &Value,
    mut runs: Vec<Run>,
    left_out: &mut Vec<String>,
) -> Result<(Vec<Secondary>, Vec<Run>)> {
    let Some(metrics) = result.get("secondaryMetrics").and_then(Value::as_object) else {
        return Ok((Vec::new(), runs));
    };
    let mut kept = Vec::new();
    for (metric, entry) in metrics {
        let unit = entry.get("scoreUnit").and_then(Value::as_str).unwrap_or("");
        let (unit, factor) = match super::seconds_per(unit) {
            Some(factor) => ("s", factor),
            None => (unit, 1.0),
        };
        let values = entry
            .get("rawData")
            .and_then(Value::as_array)
            .and_then(|forks| secondary_values(forks, factor))
            .filter(|forks| forks.iter().any(|values| !values.is_empty()));
        let Some(values) = values else {
            left_out.push(metric.clone());
            continue;
        };
        let what = format!("secondary metric \"{metric}\"");
        for (fork, values) in values.iter().enumerate() {
            for (i, v) in values.iter().enumerate() {
                source.checked(
                    name,
                    &format!("{what} fork {} iteration {}", fork + 1, i + 1),
                    *v,
                )?;
            }
        }
        for (run, values) in runs.iter_mut().zip(values) {
            run.secondary.insert(metric.clone(), values);
        }
        kept.push(Secondary::new(
            metric,
            unit,
            higher_is_better(unit),
            is_count(unit),
        ));
    }
    Ok((kept, runs))
}

/// Each fork's values of a secondary metric, converted by `factor`; None unless every value is
/// a finite number.
fn secondary_values(forks: &[Value], factor: f64) -> Option<Vec<Vec<f64>>> {
    forks
        .iter()
        .map(|fork| {
            fork.as_array()?
                .iter()
                .map(|v| {
                    super::number(v)
                        .filter(|x| x.is_finite())
                        .map(|x| x * factor)
                })
                .collect()
        })
        .collect()
}

/// Whether a secondary metric of this unit is counted, not timed: amounts per operation
/// (`B/op`) and counts, not times or rates per unit of time (`MB/sec`, `ops/ms`).
fn is_count(unit: &str) -> bool {
    let per_time = unit
        .rsplit_once('/')
        .is_some_and(|(_, per)| per == "sec" || per == "min" || seconds_per(per).is_some());
    unit != "s" && !per_time
}

/// Whether more is better for a secondary metric of this unit: operations per unit of time
/// (an `@AuxCounters` throughput), not allocation rates, counts or times.
fn higher_is_better(unit: &str) -> bool {
    unit.starts_with("ops/")
}

/// What a mode's values measure, in which unit, and how to convert the file's values to it.
struct Measure {
    metric: &'static str,
    unit: String,
    higher_is_better: bool,
    factor: f64,
}

impl Measure {
    fn of(source: &Source, name: &str, mode: &str, score_unit: &str) -> Result<Measure> {
        match mode {
            "thrpt" => Ok(Measure {
                metric: "throughput",
                unit: score_unit.to_string(),
                higher_is_better: true,
                factor: 1.0,
            }),
            "avgt" | "ss" | "sample" => Ok(Measure {
                metric: match mode {
                    "avgt" => "time",
                    "ss" => "single_shot_time",
                    _ => "sample_time",
                },
                unit: "s".into(),
                higher_is_better: false,
                factor: seconds_per_op(source, name, score_unit)?,
            }),
            other => Err(source.not_format(format!(
                "benchmark \"{name}\" has mode \"{other}\" (JMH's modes are thrpt, avgt, sample and ss)"
            ))),
        }
    }
}

/// Seconds in one of a time-per-operation unit such as "us/op".
fn seconds_per_op(source: &Source, name: &str, score_unit: &str) -> Result<f64> {
    score_unit
        .strip_suffix("/op")
        .and_then(seconds_per)
        .ok_or_else(|| {
            source.bad(format!(
                "benchmark \"{name}\": scoreUnit \"{score_unit}\" (expected a time per operation: \
                 s/op, ms/op, us/op or ns/op)"
            ))
        })
}

/// One run per fork of `rawData`, its iterations the values.
fn fork_runs(source: &Source, name: &str, raw: &Value, factor: f64) -> Result<Vec<Run>> {
    let forks = raw.as_array().ok_or_else(|| {
        source.not_format(format!(
            "benchmark \"{name}\": rawData is not an array of forks"
        ))
    })?;
    forks
        .iter()
        .enumerate()
        .map(|(fork, iterations)| {
            let iterations = iterations.as_array().ok_or_else(|| {
                source.not_format(format!(
                    "benchmark \"{name}\": rawData fork {} is not an array of iterations",
                    fork + 1
                ))
            })?;
            let values = iterations
                .iter()
                .enumerate()
                .map(|(i, value)| {
                    let what = format!("fork {} iteration {}", fork + 1, i + 1);
                    Ok(source.value(name, &what, value)? * factor)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Run::measured(values))
        })
        .collect()
}

/// One run per fork of `rawDataHistogram`, each iteration's value the weighted mean of its
/// `[value, count]` pairs.
fn histogram_runs(source: &Source, name: &str, forks: &Value, factor: f64) -> Result<Vec<Run>> {
    let shape = |what: String| {
        source.not_format(format!(
            "benchmark \"{name}\": rawDataHistogram {what} (expected, per fork, per iteration, [value, count] pairs)"
        ))
    };
    let forks = forks
        .as_array()
        .ok_or_else(|| shape("is not an array".into()))?;
    let mut runs = Vec::with_capacity(forks.len());
    for (f, iterations) in forks.iter().enumerate() {
        let iterations = iterations
            .as_array()
            .ok_or_else(|| shape(format!("fork {} is not an array", f + 1)))?;
        let mut values = Vec::with_capacity(iterations.len());
        for (i, pairs) in iterations.iter().enumerate() {
            let what = format!("fork {} iteration {}", f + 1, i + 1);
            let pairs = pairs
                .as_array()
                .ok_or_else(|| shape(format!("{what} is not an array")))?;
            let (mut sum, mut count) = (0.0, 0.0);
            for pair in pairs {
                let [value, n] = pair.as_array().map(Vec::as_slice).unwrap_or_default() else {
                    return Err(shape(format!("{what} holds {pair}")));
                };
                let n = source.value(name, &format!("{what} count"), n)?;
                sum += source.value(name, &what, value)? * n;
                count += n;
            }
            if count == 0.0 {
                return Err(source.bad(format!(
                    "benchmark \"{name}\": rawDataHistogram {what} holds no sample (expected at least one [value, count] pair with a count above 0)"
                )));
            }
            values.push(source.checked(name, &what, sum / count * factor)?);
        }
        runs.push(Run::measured(values));
    }
    Ok(runs)
}

/// The score as the only value of the only run, for files without rawData.
fn summary_run(source: &Source, name: &str, primary: &Value, factor: f64) -> Result<Vec<Run>> {
    let score = primary.get("score").ok_or_else(|| {
        source.not_format(format!(
            "benchmark \"{name}\" has neither rawData nor a score in its primaryMetric"
        ))
    })?;
    let score = source.value(name, "score", score)? * factor;
    Ok(vec![Run::measured(vec![score])])
}

fn params(source: &Source, name: &str, result: &Value) -> Result<BTreeMap<String, String>> {
    super::text_params(source, name, result, "params")
}

#[cfg(test)]
#[path = "jmh_tests.rs"]
mod tests;
