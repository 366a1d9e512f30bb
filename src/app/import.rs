//! `lab import FORMAT FILE… --into EXP`: another harness's results as a lab session. Every raw
//! value is kept (each process, fork or repetition a run, its iterations as iteration values,
//! warm-up iterations as warm-up), each run's values are also written as its log, one JSON line
//! per iteration, so that `lab reanalyze` reads them like any run's output, and the manifest
//! names the tool and every file with its SHA-256. The usual analysis, checks and chapter
//! follow. A new experiment gets a lab.toml written from the files; an existing one must have
//! been imported from the same tool and name every benchmark as a variant.

use super::Layout;
use super::report::{ReportOptions, report};
use crate::config::{self, Experiment, ParamValue};
use crate::error::{Exit, LabError, Result};
use crate::import::formats::{self, Benchmark, Format, Imported};
use crate::import::lab_toml::{ExperimentToml, GeneratedToml, MetricToml, VariantToml, toml_value};
use crate::plan::{CellKey, Plan, PlannedRun};
use crate::store::{
    self, Host, ImportRecord, ImportedFile, Manifest, RunRow, SampleRow, Sealed, SessionWriter,
};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `lab import` was asked.
pub struct ImportOptions<'a> {
    pub format: Format,
    pub files: &'a [PathBuf],
    /// The experiment to add a session to (created when it does not exist).
    pub into: &'a Path,
    /// Keep only the benchmarks whose name contains this.
    pub filter: Option<&'a str>,
    pub quiet: bool,
    pub command_line: String,
}

/// `lab import`: writes the session and its chapter; the exit code follows the checks.
pub fn import(layout: &Layout, opts: &ImportOptions) -> Result<Exit> {
    let mut imported = formats::read(opts.format, opts.files).map_err(|e| {
        LabError::Usage(format!(
            "{e:#}\n  hint: `lab import {}` reads {}",
            format_word(opts.format),
            expected_files(opts.format)
        ))
    })?;
    if let Some(text) = opts.filter {
        imported.benchmarks.retain(|b| b.name.contains(text));
    }
    let metric = single_metric(&imported)?;
    let dir = experiment_folder(layout, opts, &imported, &metric)?;
    let exp = config::load(&dir, None)?;
    check_experiment(&exp, &imported)?;
    let session = write_session(layout, &exp, &imported, &metric, opts)?;
    if !opts.quiet {
        eprintln!(
            "imported {} runs of {} benchmark{} from {} into session {}",
            imported
                .benchmarks
                .iter()
                .map(|b| b.runs.len())
                .sum::<usize>(),
            imported.benchmarks.len(),
            if imported.benchmarks.len() == 1 {
                ""
            } else {
                "s"
            },
            opts.format.tool(),
            session.display()
        );
    }
    let name = session
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let outcomes = report(
        layout,
        &ReportOptions {
            only: std::slice::from_ref(&dir),
            session: Some(&name),
            quiet: opts.quiet,
        },
    )?;
    for o in &outcomes {
        print!("{}", super::summary::text(&o.summary));
    }
    Ok(Exit::failed_if(outcomes.iter().any(|o| o.summary.failed)))
}

fn format_word(format: Format) -> &'static str {
    match format {
        Format::Hyperfine => "hyperfine",
        Format::Jmh => "jmh",
        Format::Gbench => "gbench",
        Format::Pyperf => "pyperf",
        Format::Criterion => "criterion",
    }
}

fn expected_files(format: Format) -> &'static str {
    match format {
        Format::Hyperfine => "the JSON files of `hyperfine --export-json FILE`",
        Format::Jmh => "the JSON files of JMH's `-rf json -rff FILE`",
        Format::Gbench => "the output of `--benchmark_format=json` (or `--benchmark_out=FILE`)",
        Format::Pyperf => "the JSON files of pyperf's `-o FILE`",
        Format::Criterion => "criterion's target/criterion/NAME folders (or their new/sample.json)",
    }
}

/// The metric every benchmark measures, as (name, unit, higher is better): one experiment
/// holds one kind of value.
fn single_metric(imported: &Imported) -> Result<(String, String, bool)> {
    let Some(first) = imported.benchmarks.first() else {
        return Err(LabError::Usage(format!(
            "the files hold no {} benchmark to import (after --filter, if given)",
            imported.format.tool()
        )));
    };
    let key = |b: &Benchmark| (b.metric.clone(), b.unit.clone(), b.higher_is_better);
    if let Some(other) = imported.benchmarks.iter().find(|b| key(b) != key(first)) {
        return Err(LabError::Usage(format!(
            "the files mix {} in {} ({}) with {} in {} ({}): one experiment holds one kind of value\n  hint: import each kind into its own experiment, choosing benchmarks with --filter TEXT",
            first.metric, first.unit, first.name, other.metric, other.unit, other.name
        )));
    }
    Ok(key(first))
}

/// The experiment folder `--into` names: an existing one, or a new one with a lab.toml
/// written from the files.
fn experiment_folder(
    layout: &Layout,
    opts: &ImportOptions,
    imported: &Imported,
    metric: &(String, String, bool),
) -> Result<PathBuf> {
    if let Ok(dir) = layout.experiment_dir(opts.into) {
        return Ok(dir);
    }
    let inside = opts
        .into
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !inside {
        return Err(LabError::Usage(format!(
            "--into {}: a new experiment is a folder inside this project\n  hint: give its name (it becomes experiments/NAME) or a relative path without `..`",
            opts.into.display()
        )));
    }
    let single = opts.into.components().count() == 1;
    let dir = if single {
        layout.experiments().join(opts.into)
    } else {
        layout.root.join(opts.into)
    };
    let name = config::experiment_name(&dir);
    if let Some(why) = config::identifier_problem(&name) {
        return Err(LabError::Usage(format!(
            "--into {}: the experiment name {name:?} {why}\n  hint: use letters, digits, `_`, `-` and `.`",
            opts.into.display()
        )));
    }
    let text = generated_toml(&name, imported, metric, opts)?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot create {}: {e}", dir.display())))?;
    let file = dir.join(config::FILE_NAME);
    std::fs::write(&file, text)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write {}: {e}", file.display())))?;
    if !opts.quiet {
        eprintln!(
            "wrote {}: add the hypothesis and [[check]] tables, then `lab report {name}`",
            file.display()
        );
    }
    Ok(dir)
}

/// An imported experiment's variants must name the benchmarks being imported.
fn check_experiment(exp: &Experiment, imported: &Imported) -> Result<()> {
    let tool = imported.format.tool();
    if exp.imported.as_deref() != Some(tool) {
        return Err(LabError::Usage(format!(
            "{} holds {}: lab import adds {tool} results only to an experiment imported from {tool}\n  hint: import into a new experiment with --into NEW_NAME",
            exp.file.display(),
            exp.imported.as_deref().map_or_else(
                || "benchmarks lab runs itself".to_string(),
                |t| format!("results imported from {t}")
            )
        )));
    }
    let missing: Vec<&str> = imported
        .benchmarks
        .iter()
        .filter(|b| variant_of(exp, b).is_none())
        .map(|b| b.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(LabError::Usage(format!(
            "{} has no variant for the benchmark{} {}\n  hint: add a [[variant]] with that name or label, or import into a new experiment",
            exp.file.display(),
            if missing.len() == 1 { "" } else { "s" },
            missing
                .iter()
                .map(|m| format!("{m:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(())
}

/// The variant holding a benchmark: the one labelled with its name, or named like it.
fn variant_of<'a>(exp: &'a Experiment, b: &Benchmark) -> Option<&'a str> {
    exp.variants
        .iter()
        .find(|v| v.label.as_deref() == Some(b.name.as_str()) || v.name == b.name)
        .map(|v| v.name.as_str())
}

/// A lab.toml for the imported benchmarks: one variant per benchmark name (labelled with it),
/// the parameters the tool recorded, the one metric, no checks yet.
fn generated_toml(
    name: &str,
    imported: &Imported,
    (metric, unit, higher): &(String, String, bool),
    opts: &ImportOptions,
) -> Result<String> {
    let tool = imported.format.tool();
    let params = param_values(imported)?;
    let repetitions = imported
        .benchmarks
        .iter()
        .map(|b| b.runs.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let variant = variant_names(imported)
        .into_iter()
        .map(|(name, label)| {
            let restricted = restrictions(imported, &label, &params);
            let params = (!restricted.is_empty()).then_some(restricted);
            VariantToml {
                name,
                label,
                params,
            }
        })
        .collect();
    let file = GeneratedToml {
        experiment: ExperimentToml {
            title: format!("{name}: results from {tool}"),
            hypothesis: "State what these results should show, then add [[check]] tables to test it.",
            repetitions,
            imported: tool,
        },
        params: params
            .iter()
            .map(|(k, vs)| (k.clone(), vs.iter().map(toml_value).collect()))
            .collect(),
        variant,
        metric: BTreeMap::from([(
            metric.clone(),
            MetricToml {
                json: metric.clone(),
                unit: unit.clone(),
                better: if *higher { "higher" } else { "lower" },
                warmup_iterations: warmup_iterations(imported)?,
            },
        )]),
    };
    let body = toml::to_string(&file)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write the lab.toml: {e}")))?;
    Ok(format!(
        "# Results measured by {tool}{}, read by `{}`:\n# lab did not run these benchmarks; `lab import` adds sessions, `lab report {name}` renders them.\n\n{body}",
        imported
            .tool_version
            .as_deref()
            .map_or_else(String::new, |v| format!(" {v}")),
        crate::format::one_line(&opts.command_line),
    ))
}

/// A recorded parameter value, typed as lab.toml would type it.
fn typed(text: &str) -> ParamValue {
    if let Ok(i) = text.parse::<i64>() {
        return ParamValue::Int(i);
    }
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => ParamValue::Float(x),
        _ => ParamValue::Text(text.to_string()),
    }
}

/// (variant name, benchmark name) in file order: the name made a lab identifier, made unique.
fn variant_names(imported: &Imported) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for b in &imported.benchmarks {
        if out.iter().any(|(_, label)| *label == b.name) {
            continue;
        }
        let base = identifier(&b.name);
        let mut name = base.clone();
        let mut n = 2;
        while out.iter().any(|(v, _)| *v == name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        out.push((name, b.name.clone()));
    }
    out
}

/// Letters, digits, `_`, `-` and `.` kept; every other run of characters becomes one `-`.
fn identifier(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '.') {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches(|c| c == '-' || c == '.').to_string();
    let trimmed: String = trimmed.chars().take(64).collect();
    if trimmed.is_empty() || config::identifier_problem(&trimmed).is_some() {
        "benchmark".into()
    } else {
        trimmed
    }
}

/// Every parameter the tool recorded with its values in first-seen order; every benchmark
/// must record the same parameter names.
fn param_values(imported: &Imported) -> Result<BTreeMap<String, Vec<ParamValue>>> {
    let first: Vec<&String> = imported.benchmarks[0].params.keys().collect();
    if let Some(b) = imported
        .benchmarks
        .iter()
        .find(|b| b.params.keys().collect::<Vec<_>>() != first)
    {
        return Err(LabError::Usage(format!(
            "the benchmarks record different parameters ({} has {}, {} has {}): a lab experiment gives every benchmark the same parameters\n  hint: import them into separate experiments",
            imported.benchmarks[0].name,
            names_or_none(&first),
            b.name,
            names_or_none(&b.params.keys().collect::<Vec<_>>())
        )));
    }
    let mut out: BTreeMap<String, Vec<ParamValue>> = BTreeMap::new();
    for b in &imported.benchmarks {
        for (k, v) in &b.params {
            let values = out.entry(k.clone()).or_default();
            let value = typed(v);
            if !values.contains(&value) {
                values.push(value);
            }
        }
    }
    Ok(out)
}

fn names_or_none(names: &[&String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `k = [values]` for every parameter a benchmark takes only some values of.
fn restrictions(
    imported: &Imported,
    name: &str,
    params: &BTreeMap<String, Vec<ParamValue>>,
) -> toml::Table {
    let mut parts = toml::Table::new();
    for (key, all) in params {
        let mut own: Vec<ParamValue> = Vec::new();
        for b in imported.benchmarks.iter().filter(|b| b.name == name) {
            if let Some(v) = b.params.get(key).map(|v| typed(v))
                && !own.contains(&v)
            {
                own.push(v);
            }
        }
        if own.len() < all.len() {
            let own = own.iter().map(toml_value).collect();
            parts.insert(key.clone(), toml::Value::Array(own));
        }
    }
    parts
}

/// The warm-up iterations each measured run begins with: the same number in every run, or
/// none.
fn warmup_iterations(imported: &Imported) -> Result<Option<usize>> {
    let counts: Vec<usize> = imported
        .benchmarks
        .iter()
        .flat_map(|b| b.runs.iter().filter(|r| !r.warmup))
        .map(|r| r.warmup_values.len())
        .collect();
    match counts.first() {
        Some(&k) if counts.iter().all(|c| *c == k) => Ok((k > 0).then_some(k)),
        None => Ok(None),
        Some(_) => Err(LabError::Usage(
            "the runs begin with different numbers of warm-up values: lab drops the same number of warm-up iterations from every run\n  hint: import the files whose runs are alike together".into(),
        )),
    }
}

#[path = "import_session.rs"]
mod session_files;
use session_files::write_session;

#[cfg(test)]
#[path = "import_tests.rs"]
mod tests;
