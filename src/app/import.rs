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
use crate::error::{EXIT_CHECK_FAILED, EXIT_OK, LabError, Result};
use crate::import::formats::{self, Benchmark, Format, Imported};
use crate::import::lab_toml::{ExperimentToml, GeneratedToml, MetricToml, VariantToml, toml_value};
use crate::plan::{CellKey, Plan, PlannedRun};
use crate::store::{
    self, Exit, Host, ImportRecord, ImportedFile, Manifest, RunRow, SampleRow, Sealed,
    SessionWriter,
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
pub fn import(layout: &Layout, opts: &ImportOptions) -> Result<i32> {
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
    Ok(if outcomes.iter().any(|o| o.summary.failed) {
        EXIT_CHECK_FAILED
    } else {
        EXIT_OK
    })
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

/// Writes the session: plan, manifest, one run row per imported run with its values as samples
/// and as a JSON-lines log. Returns its folder.
fn write_session(
    layout: &Layout,
    exp: &Experiment,
    imported: &Imported,
    (metric, _, _): &(String, String, bool),
    opts: &ImportOptions,
) -> Result<PathBuf> {
    let plan = plan_of(exp, imported);
    let started = store::now_unix_ms();
    let manifest = manifest(exp, imported, opts, plan.runs.len(), started)?;
    let dir = store::new_session_dir(&layout.data_dir(&exp.name), started);
    let sealed = Sealed::read(&exp.dir)?;
    let names = exp.params.iter().map(|p| p.name.clone()).collect();
    let mut session = SessionWriter::create(dir, &manifest, &plan, names, &sealed)?;
    let runs = imported.benchmarks.iter().flat_map(|b| b.runs.iter());
    for (planned, run) in plan.runs.iter().zip(runs) {
        let values: Vec<f64> = run
            .warmup_values
            .iter()
            .chain(&run.values)
            .copied()
            .collect();
        let log: String = values
            .iter()
            .map(|v| format!("{{\"{}\": {v:e}}}\n", json_key(metric)))
            .collect();
        let (stdout, stderr) = session.log_paths(planned);
        write_file(&stdout, &log)?;
        write_file(&stderr, "")?;
        let samples: Vec<SampleRow> = values
            .iter()
            .enumerate()
            .map(|(i, v)| SampleRow {
                run_id: planned.id.clone(),
                metric: metric.clone(),
                iteration: i,
                value: format!("{v:e}"),
            })
            .collect();
        let row = run_row(planned, &manifest.started_utc, &log);
        session.append(planned, &row, &samples)?;
    }
    let mut finished = manifest;
    finished.end(true);
    session.finish(&finished)?;
    Ok(session.dir.clone())
}

/// A metric name as a JSON key in the log (escaped as JSON would).
fn json_key(metric: &str) -> String {
    let quoted = serde_json::to_string(metric).unwrap_or_default();
    quoted.trim_matches('"').to_string()
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write {}: {e}", path.display())))
}

/// One planned run per imported run, in file order, numbered within its cell.
fn plan_of(exp: &Experiment, imported: &Imported) -> Plan {
    let mut per_cell: BTreeMap<(CellKey, bool), u32> = BTreeMap::new();
    let mut runs = Vec::new();
    for b in &imported.benchmarks {
        let variant = variant_of(exp, b).unwrap_or_default().to_string();
        let cell = CellKey::new(
            variant,
            std::sync::Arc::new(
                b.params
                    .iter()
                    .map(|(k, v)| (k.clone(), typed(v)))
                    .collect(),
            ),
        );
        for run in &b.runs {
            let repetition = per_cell.entry((cell.clone(), run.warmup)).or_insert(0);
            *repetition += 1;
            let position = runs.len() + 1;
            runs.push(PlannedRun {
                id: format!("r{position:04}"),
                position,
                cell: cell.clone(),
                repetition: *repetition,
                warmup: run.warmup,
                argv: Vec::new(),
                repeats: None,
                look: 1,
            });
        }
    }
    Plan {
        order: crate::config::Order::Sequential,
        seed: exp.seed,
        runs,
    }
}

/// A run row for an imported run: what lab did not measure is left at zero or empty.
fn run_row(run: &PlannedRun, started_utc: &str, log: &str) -> RunRow {
    // Nothing lab measured: the fields of a run that never started, but an ordinary exit.
    let no_measurement = crate::exec::Measurement {
        exit: Exit::Code(0),
        ..crate::exec::Measurement::spawn_failed(String::new(), 0)
    };
    RunRow {
        start_utc: started_utc.to_string(),
        ..crate::exec::run_row(run, &no_measurement, format!("{:x}", Sha256::digest(log)))
    }
}

/// The session's record: the tool, its files and what they say about the machine.
fn manifest(
    exp: &Experiment,
    imported: &Imported,
    opts: &ImportOptions,
    planned_runs: usize,
    started: u64,
) -> Result<Manifest> {
    let files = opts
        .files
        .iter()
        .map(|f| {
            let bytes = read_for_hash(f)?;
            Ok(ImportedFile {
                path: f.display().to_string(),
                sha256: format!("{:x}", Sha256::digest(&bytes)),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Manifest {
        profile: None,
        order: "imported".into(),
        load_before: String::new(),
        imported: Some(ImportRecord {
            tool: imported.format.tool().to_string(),
            version: imported.tool_version.clone(),
            files,
            context: imported.context.clone(),
            summary_only: imported.benchmarks.iter().any(|b| b.summary_only),
        }),
        ..Manifest::new(
            exp,
            &opts.command_line,
            planned_runs,
            recorded_host(&imported.context),
            started,
        )
    })
}

/// The bytes of an imported file, or of a criterion folder's sample.json, for its hash.
fn read_for_hash(path: &Path) -> Result<Vec<u8>> {
    let file = if path.is_dir() {
        [path.join("new/sample.json"), path.join("sample.json")]
            .into_iter()
            .find(|p| p.is_file())
            .unwrap_or_else(|| path.to_path_buf())
    } else {
        path.to_path_buf()
    };
    std::fs::read(&file)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot read {}: {e}", file.display())))
}

/// The machine as the tool's files describe it (never this machine: lab did not measure).
fn recorded_host(context: &BTreeMap<String, String>) -> Host {
    let find = |keys: &[&str]| keys.iter().find_map(|k| context.get(*k).cloned());
    Host {
        name: find(&["host_name", "hostname"]).unwrap_or_else(|| "not recorded".into()),
        cpu_model: find(&["cpu_model_name", "cpu_model"]),
        logical_cpus: find(&["num_cpus", "cpu_count"])
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
        allowed_cpus: find(&["cpu_affinity"]),
        governor: None,
        turbo: None,
        kernel: find(&["platform"]),
        memory_total: None,
    }
}

#[cfg(test)]
#[path = "import_tests.rs"]
mod tests;
