//! `lab import FORMAT FILE… --into EXP`: another harness's results as a lab session. Every raw
//! value is kept (each process, fork or repetition a run, its iterations as iteration values,
//! warm-up iterations as warm-up), each run's values are also written as its log, one JSON line
//! per iteration, so that `lab reanalyze` reads them like any run's output, and the manifest
//! names the tool and every file with its SHA-256. The usual analysis, checks and chapter
//! follow. A new experiment gets a lab.toml written from the files; an existing one must have
//! been imported from the same tool and name every benchmark as a variant.

use super::report::{ReportOptions, report};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_config::plan::{CellKey, Plan, PlannedRun};
use lab_config::raw::{
    self, RawBetter, RawExperiment, RawFile, RawMetric, RawParamValue, RawRepetitions, RawVariant,
    spanless,
};
use lab_config::{self as config, Experiment, ParamValue};
use lab_import::formats::{self, Benchmark, Format, Imported};
use lab_store::{
    self as store, Host, ImportRecord, ImportedFile, Manifest, RunRow, SampleRow, Sealed,
    SessionWriter,
};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// What `lab import` was asked.
pub struct ImportOptions<'a> {
    pub format: Format,
    pub files: &'a [PathBuf],
    /// The experiment to add a session to (created when it does not exist).
    pub into: &'a Path,
    /// `--filter` values: which benchmarks to import (see [`formats::Selection`]).
    pub filters: &'a [String],
    /// `--machine`: every file comes from this one machine or build.
    pub machine: Option<&'a str>,
    pub quiet: bool,
    pub command_line: String,
}

/// `lab import`: writes one experiment per kind of benchmark the files hold and, in each,
/// one session per machine the files come from; then their chapters. The exit code follows
/// the checks. Everything is written in a staging folder first and renamed into place once
/// all of it is whole, so a failure (or a kill) leaves nothing behind in experiments/ or data/.
pub fn import(layout: &Layout, opts: &ImportOptions) -> Result<Exit> {
    let machines = read_machines(opts)?;
    let pooled: Vec<(PathBuf, Imported)> = machines
        .iter()
        .map(|m| (PathBuf::from(&m.label), m.imported.clone()))
        .collect();
    let all = formats::merged(opts.format, &pooled).map_err(|e| usage(opts, e))?;
    for note in &all.notes {
        eprintln!("note: {note}");
    }
    if machines.len() > 1 && !opts.quiet {
        let labels: Vec<&str> = machines.iter().map(|m| m.label.as_str()).collect();
        eprintln!(
            "note: the files come from {} machines or builds ({}): one session each, never pooled\n  hint: --machine LABEL says they are one",
            machines.len(),
            labels.join(", ")
        );
    }
    let names = variant_names(&all);
    let parts = split(all);
    let mut staging = Staging::new(layout)?;
    let mut written = Vec::new();
    for (tag, part) in &parts {
        let into = into_for(opts.into, tag.as_deref());
        let metrics = metrics_of(part);
        let shares: Vec<Machine> = machines.iter().filter_map(|m| m.share_of(part)).collect();
        let new = NewExperiment {
            imported: part,
            metrics: &metrics,
            names: &names,
            repetitions: most_runs(&shares),
        };
        let (dir, real_dir, name) = experiment_folder(layout, &into, opts, &new, &mut staging)?;
        let mut exp = config::load(&dir, None)?;
        // Named where it will be, not where it is staged (the name of a folder outside
        // experiments/ holds a hash of its path).
        exp.name = name.unwrap_or(exp.name);
        check_experiment(&exp, part)?;
        for share in shares {
            let staged = write_session(&staging.layout, &exp, &share, &metrics, opts)?;
            let session = staging.session(staged, layout.data_dir(&exp.name));
            written.push((real_dir.clone(), session, share));
        }
    }
    let placed = staging.commit()?;
    let written: Vec<(PathBuf, PathBuf, Machine)> = written
        .into_iter()
        .map(|(dir, session, share)| (dir, placed[session].clone(), share))
        .collect();
    let mut failed = false;
    for (dir, session, share) in &written {
        failed |= report_import(layout, opts, dir, session, &share.imported)?;
    }
    Ok(Exit::failed_if(failed))
}

/// The files of one machine or build, what they hold, and the label that tells it apart.
pub(super) struct Machine {
    pub label: String,
    pub files: Vec<PathBuf>,
    pub imported: Imported,
}

impl Machine {
    /// This machine's benchmarks of the kind of `part`, if it has any.
    fn share_of(&self, part: &Imported) -> Option<Machine> {
        let kind = kind_key(&part.benchmarks[0]);
        let benchmarks: Vec<Benchmark> = self
            .imported
            .benchmarks
            .iter()
            .filter(|b| kind_key(b) == kind)
            .cloned()
            .collect();
        (!benchmarks.is_empty()).then(|| Machine {
            label: self.label.clone(),
            files: self.files.clone(),
            imported: Imported {
                benchmarks,
                ..self.imported.clone()
            },
        })
    }
}

/// The most runs one benchmark has on one machine (at least 1): the repetitions of a
/// generated lab.toml.
fn most_runs(shares: &[Machine]) -> usize {
    shares
        .iter()
        .flat_map(|m| m.imported.benchmarks.iter().map(|b| b.runs.len()))
        .max()
        .unwrap_or(1)
        .max(1)
}

/// A file error as a usage error, with what the format's files are.
fn usage(opts: &ImportOptions, e: anyhow::Error) -> LabError {
    LabError::Usage(format!(
        "{e:#}\n  hint: `lab import {}` reads {}",
        format_word(opts.format),
        expected_files(opts.format)
    ))
}

/// The files read, keeping what `--filter` selects, grouped by the machine or build they
/// come from (their context facts, or the one `--machine` names), in an order that does not
/// depend on the order the files were given in; an error when nothing is left.
fn read_machines(opts: &ImportOptions) -> Result<Vec<Machine>> {
    let select = formats::Selection::parse(opts.filters).map_err(|e| usage(opts, e))?;
    if let Some(problem) = select.problem_for(opts.format) {
        return Err(LabError::Usage(problem));
    }
    let files = formats::read_each(opts.format, opts.files, &select).map_err(|e| usage(opts, e))?;
    if files.iter().all(|(_, i)| i.benchmarks.is_empty()) {
        return Err(LabError::Usage(format!(
            "the files hold no {} benchmark to import{}",
            opts.format.tool(),
            if opts.filters.is_empty() {
                String::new()
            } else {
                format!(" that --filter {} selects", opts.filters.join(" --filter "))
            }
        )));
    }
    let mut groups: BTreeMap<BTreeMap<String, String>, Vec<(PathBuf, Imported)>> = BTreeMap::new();
    for (file, imported) in files {
        let key = match opts.machine {
            Some(_) => BTreeMap::new(),
            None => formats::machine_of(&imported),
        };
        groups.entry(key).or_default().push((file, imported));
    }
    if opts.machine.is_none()
        && let Some(anonymous) = groups.get(&BTreeMap::new())
    {
        for doubt in lab_import::machines::doubts(anonymous) {
            eprintln!("warning: {doubt}");
        }
    }
    let labels = machine_labels(&groups.keys().collect::<Vec<_>>(), opts.machine);
    groups
        .into_values()
        .zip(labels)
        .map(|(files, label)| {
            let imported = formats::merged(opts.format, &files).map_err(|e| usage(opts, e))?;
            Ok(Machine {
                label,
                files: files.into_iter().map(|(f, _)| f).collect(),
                imported,
            })
        })
        .collect()
}

/// A label per machine: `--machine`'s, else the host names where they tell the machines
/// apart, else `machine-1`, `machine-2`, … in the order of their facts.
fn machine_labels(machines: &[&BTreeMap<String, String>], given: Option<&str>) -> Vec<String> {
    if let Some(label) = given {
        return vec![label.to_string()];
    }
    let hosts: Vec<Option<&String>> = machines
        .iter()
        .map(|m| m.get("host_name").or_else(|| m.get("hostname")))
        .collect();
    let distinct = hosts.iter().all(Option::is_some) && unique(hosts.iter()).len() == hosts.len();
    if distinct || machines.len() == 1 {
        return hosts
            .into_iter()
            .map(|h| h.cloned().unwrap_or_else(|| "not recorded".to_string()))
            .collect();
    }
    (1..=machines.len())
        .map(|i| format!("machine-{i}"))
        .collect()
}

/// Prints what was imported into `session` and reports its chapter; whether a check failed.
fn report_import(
    layout: &Layout,
    opts: &ImportOptions,
    dir: &Path,
    session: &Path,
    part: &Imported,
) -> Result<bool> {
    if !opts.quiet {
        let runs: usize = part.benchmarks.iter().map(|b| b.runs.len()).sum();
        let count = part.benchmarks.len();
        eprintln!(
            "imported {runs} run{} of {count} benchmark{} from {} into session {}",
            if runs == 1 { "" } else { "s" },
            if count == 1 { "" } else { "s" },
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
            only: std::slice::from_ref(&dir.to_path_buf()),
            session: Some(&name),
            quiet: opts.quiet,
            summary: if opts.quiet {
                crate::chapter::summary::Wanted::Verdict
            } else {
                crate::chapter::summary::Wanted::Printed
            },
        },
    )?;
    if !opts.quiet {
        for o in &outcomes {
            print!("{}", crate::chapter::summary::text(&o.summary));
        }
    }
    Ok(outcomes.iter().any(|o| o.summary.failed))
}

/// The benchmarks split by kind: one part per metric, unit and set of parameter names, in
/// the order first met, each with the tag that names its experiment (none when the files
/// hold one kind only).
fn split(imported: Imported) -> Vec<(Option<String>, Imported)> {
    let mut parts: Vec<((Kind, Vec<String>), Imported)> = Vec::new();
    let Imported {
        format,
        tool_version,
        context,
        benchmarks,
        notes: _,
    } = imported;
    for b in benchmarks {
        let key = kind_key(&b);
        match parts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, part)) => part.benchmarks.push(b),
            None => parts.push((
                key,
                Imported {
                    format,
                    tool_version: tool_version.clone(),
                    context: context.clone(),
                    benchmarks: vec![b],
                    notes: Vec::new(),
                },
            )),
        }
    }
    if parts.len() == 1 {
        return parts.into_iter().map(|(_, p)| (None, p)).collect();
    }
    let kinds: Vec<&Kind> = unique(parts.iter().map(|((k, _), _)| k));
    let param_sets: Vec<&Vec<String>> = unique(parts.iter().map(|((_, p), _)| p));
    let metric_names: Vec<&String> = unique(kinds.iter().map(|k| &k.0));
    let tags: Vec<String> = parts
        .iter()
        .map(|((kind, params), _)| {
            let mut tag = Vec::new();
            if kinds.len() > 1 {
                tag.push(if metric_names.len() == kinds.len() {
                    kind.0.clone()
                } else {
                    format!("{}-{}", kind.0, kind.1)
                });
            }
            if param_sets.len() > 1 {
                tag.push(if params.is_empty() {
                    "plain".to_string()
                } else {
                    format!("by-{}", params.join("-"))
                });
            }
            lab_import::names::short_names(&[&tag.join("-")]).remove(0)
        })
        .collect();
    tags.into_iter()
        .zip(parts)
        .map(|(tag, (_, part))| (Some(tag), part))
        .collect()
}

/// A kind of value: metric, unit, and whether higher is better.
type Kind = (String, String, bool);

/// What puts a benchmark into an experiment of its own: its kind of value and the names of
/// its parameters.
fn kind_key(b: &Benchmark) -> (Kind, Vec<String>) {
    let kind = (b.metric.clone(), b.unit.clone(), b.higher_is_better);
    (kind, b.params.keys().cloned().collect())
}

/// The distinct items, in the order first met.
fn unique<'a, T: PartialEq + 'a>(items: impl Iterator<Item = &'a T>) -> Vec<&'a T> {
    let mut out: Vec<&T> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// `--into` with `-TAG` added to its last component, for a part of a mixed file.
fn into_for(into: &Path, tag: Option<&str>) -> PathBuf {
    match (tag, into.file_name()) {
        (Some(tag), Some(last)) => into.with_file_name(format!("{}-{tag}", last.to_string_lossy())),
        _ => into.to_path_buf(),
    }
}

/// Where an import writes before anything is in place: a hidden folder in the project root
/// that mirrors `experiments/` and `data/`. [`Staging::commit`] renames each new experiment
/// folder and each session folder into place; the folder itself is removed whatever happens.
struct Staging {
    /// The staging folder as a project layout.
    layout: Layout,
    /// Staged folders and where they go, experiments first, in the order they were made.
    moves: Vec<(PathBuf, PathBuf)>,
}

/// The prefix of a staging folder's name, followed by the importing process's id.
const STAGING_PREFIX: &str = ".lab-import-";

impl Staging {
    /// A fresh staging folder, after removing those that imports no longer running left.
    fn new(real: &Layout) -> Result<Staging> {
        remove_abandoned_staging(&real.root, STAGING_PREFIX);
        let root = real
            .root
            .join(format!("{STAGING_PREFIX}{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).map_err(|e| {
            LabError::Other(anyhow::anyhow!("cannot create {}: {e}", root.display()))
        })?;
        Ok(Staging {
            layout: Layout::new(root),
            moves: Vec::new(),
        })
    }

    /// Where a new experiment at `real` (relative to the project root) is staged.
    fn experiment(&mut self, relative: &Path, real: PathBuf) -> PathBuf {
        let staged = self.layout.root.join(relative);
        self.moves.push((staged.clone(), real));
        staged
    }

    /// Notes a staged session folder that goes into `data_dir`; its index for
    /// [`Staging::commit`]'s answer.
    fn session(&mut self, staged: PathBuf, data_dir: PathBuf) -> usize {
        let name = staged.file_name().map(PathBuf::from).unwrap_or_default();
        self.moves.push((staged, data_dir.join(name)));
        self.moves.len() - 1
    }

    /// Renames every staged folder into place: all of them, or (undoing the renames done)
    /// none. A session whose name another session took meanwhile gets the next free name.
    /// Returns where each folder went, in the order noted.
    fn commit(&mut self) -> Result<Vec<PathBuf>> {
        let mut done: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut made_parents: Vec<PathBuf> = Vec::new();
        let moves = std::mem::take(&mut self.moves);
        let mut placed = Vec::with_capacity(moves.len());
        for (staged, wanted) in moves {
            let target = free_name(&wanted, staged.join(store::MANIFEST).is_file());
            let moved = place(&staged, &target, &mut made_parents);
            if let Err(e) = moved {
                for (staged, target) in done.iter().rev() {
                    let _ = std::fs::rename(target, staged);
                }
                for parent in made_parents.iter().rev() {
                    let _ = std::fs::remove_dir(parent);
                }
                return Err(e);
            }
            done.push((staged, target.clone()));
            placed.push(target);
        }
        Ok(placed)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.layout.root);
    }
}

/// `wanted`, or for a session folder (`numbered`) whose name is taken, `wanted-2`, `-3`, ….
fn free_name(wanted: &Path, numbered: bool) -> PathBuf {
    if !numbered || !wanted.exists() {
        return wanted.to_path_buf();
    }
    let name = wanted
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    (2..)
        .map(|n| wanted.with_file_name(format!("{name}-{n}")))
        .find(|candidate| !candidate.exists())
        .unwrap_or_else(|| wanted.to_path_buf())
}

/// Renames `staged` to `target`, creating the folders above it (noted in `made`); refuses to
/// replace anything there.
fn place(staged: &Path, target: &Path, made: &mut Vec<PathBuf>) -> Result<()> {
    let fail =
        |why: String| LabError::Other(anyhow::anyhow!("cannot move the import into place: {why}"));
    if target.exists() {
        return Err(fail(format!(
            "{} appeared while importing; nothing was changed",
            target.display()
        )));
    }
    let mut missing: Vec<PathBuf> = target
        .ancestors()
        .skip(1)
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    for dir in missing {
        std::fs::create_dir(&dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
        made.push(dir);
    }
    std::fs::rename(staged, target)
        .map_err(|e| fail(format!("{} to {}: {e}", staged.display(), target.display())))
}

/// Removes the staging folders under `root` named `PREFIX` + a process id whose process is
/// gone (an import or a bundle's receipt killed part way), and the one of this process's id
/// that an earlier process of the same id left.
pub(super) fn remove_abandoned_staging(root: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(prefix)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let running = Path::new("/proc").join(pid.to_string()).exists();
        if !running || pid == std::process::id() {
            let _ = lab_store::remove_planted(&entry.path());
        }
    }
}

fn format_word(format: Format) -> &'static str {
    match format {
        Format::Hyperfine => "hyperfine",
        Format::Jmh => "jmh",
        Format::Gbench => "gbench",
        Format::Pyperf => "pyperf",
        Format::Criterion => "criterion",
        Format::PytestBenchmark => "pytest-benchmark",
        Format::GoTest => "go",
        Format::Asv => "asv",
        Format::BenchmarkDotNet => "benchmarkdotnet",
        Format::Nanobench => "nanobench",
        Format::Catch2 => "catch2",
    }
}

fn expected_files(format: Format) -> &'static str {
    match format {
        Format::Hyperfine => "the JSON files of `hyperfine --export-json FILE`",
        Format::Jmh => "the JSON files of JMH's `-rf json -rff FILE`",
        Format::Gbench => "the output of `--benchmark_format=json` (or `--benchmark_out=FILE`)",
        Format::Pyperf => "the JSON files of pyperf's `-o FILE`",
        Format::Criterion => {
            "criterion's target/criterion folder, its benchmark folders, or their new/sample.json"
        }
        Format::PytestBenchmark => {
            "the JSON files of `pytest --benchmark-json FILE` (or of `--benchmark-save NAME --benchmark-save-data`)"
        }
        Format::GoTest => "the text output of `go test -bench . [-count N] [-benchmem]`",
        Format::Asv => {
            "asv's result files (results/MACHINE/COMMIT-ENV.json) of `asv run --record-samples`, or its results folder"
        }
        Format::BenchmarkDotNet => {
            "BenchmarkDotNet's full JSON exports (BenchmarkDotNet.Artifacts/results/*-report-full.json of `--exporters json`)"
        }
        Format::Nanobench => {
            "nanobench's JSON output (what Bench::render writes with ankerl::nanobench::templates::json())"
        }
        Format::Catch2 => {
            "Catch2's XML report (`-r xml`) only to say why it cannot import it: it holds each benchmark's mean, not its samples"
        }
    }
}

/// A metric of an import: its lab name, which the logs use as their JSON key, and where the
/// runs' values come from.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ImportedMetric {
    pub name: String,
    /// The secondary metric's name as the tool writes it; None for the main metric.
    pub source: Option<String>,
    pub unit: String,
    pub higher_is_better: bool,
    pub count: bool,
    /// Some benchmarks or runs of the part have no value of it.
    pub optional: bool,
}

impl ImportedMetric {
    /// This metric's values in `run`: the main metric's warm-up and measured values, or a
    /// secondary metric's.
    pub(super) fn values(&self, run: &formats::Run) -> Vec<f64> {
        match &self.source {
            None => run
                .warmup_values
                .iter()
                .chain(&run.values)
                .copied()
                .collect(),
            Some(name) => run.secondary.get(name).cloned().unwrap_or_default(),
        }
    }
}

/// The metrics of a part: the main one every benchmark measures, then every secondary metric
/// in the order first met, each named by a valid identifier that no other metric (nor a
/// built-in one) has, and optional where some measured run has no value of it.
fn metrics_of(part: &Imported) -> Vec<ImportedMetric> {
    let first = &part.benchmarks[0];
    let mut metrics = vec![ImportedMetric {
        name: first.metric.clone(),
        source: None,
        unit: first.unit.clone(),
        higher_is_better: first.higher_is_better,
        count: false,
        optional: false,
    }];
    for b in &part.benchmarks {
        for s in &b.secondary {
            if metrics
                .iter()
                .any(|m| m.source.as_deref() == Some(s.name.as_str()))
            {
                continue;
            }
            let taken: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
            let name = metric_identifier(&s.name, &taken);
            let measured = || {
                part.benchmarks
                    .iter()
                    .flat_map(|b| b.runs.iter().filter(|r| !r.warmup))
            };
            let optional = measured().any(|r| r.secondary.get(&s.name).is_none_or(Vec::is_empty));
            metrics.push(ImportedMetric {
                name,
                source: Some(s.name.clone()),
                unit: s.unit.clone(),
                higher_is_better: s.higher_is_better,
                count: s.count,
                optional,
            });
        }
    }
    metrics
}

/// A valid metric identifier for a tool's metric name: letters and digits kept, every run of
/// other characters one `_` (`·gc.alloc.rate` is `gc_alloc_rate`: a JSON key without dots),
/// at most 64 characters, and `_2`, `_3`, … added where it would be a name in `taken` or a
/// built-in metric's.
fn metric_identifier(tool_name: &str, taken: &[&str]) -> String {
    let mut id = String::new();
    for c in tool_name.chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c);
        } else if !id.is_empty() && !id.ends_with('_') {
            id.push('_');
        }
    }
    let mut id: String = id.trim_end_matches('_').chars().take(60).collect();
    if id.is_empty() {
        id = "metric".into();
    }
    let used = |name: &str| {
        taken.contains(&name) || config::BUILTIN_METRICS.iter().any(|(b, _, _)| *b == name)
    };
    if !used(&id) {
        return id;
    }
    (2..)
        .map(|n| format!("{id}_{n}"))
        .find(|candidate| !used(candidate))
        .unwrap_or(id)
}

/// What a new experiment's lab.toml is written from: the benchmarks of one kind, their
/// metric, and the variant name of every benchmark of the import (made across all kinds, so
/// that a name reads the same in each experiment).
struct NewExperiment<'a> {
    imported: &'a Imported,
    /// The main metric first.
    metrics: &'a [ImportedMetric],
    names: &'a BTreeMap<String, String>,
    /// The most runs of one benchmark in one session.
    repetitions: usize,
}

/// The experiment folder `into` names, as (where to read it now, where it is for good, and
/// for a new one its name): an existing one (both the same), or a new one with a lab.toml
/// written from the files, staged.
fn experiment_folder(
    layout: &Layout,
    into: &Path,
    opts: &ImportOptions,
    new: &NewExperiment,
    staging: &mut Staging,
) -> Result<(PathBuf, PathBuf, Option<String>)> {
    if let Ok(dir) = layout.experiment_dir(into) {
        return Ok((dir.clone(), dir, None));
    }
    let inside = into
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !inside {
        return Err(LabError::Usage(format!(
            "--into {}: a new experiment is a folder inside this project\n  hint: give its name (it becomes experiments/NAME) or a relative path without `..`",
            into.display()
        )));
    }
    let relative = if into.components().count() == 1 {
        Path::new("experiments").join(into)
    } else {
        into.to_path_buf()
    };
    let real = layout.root.join(&relative);
    // The path the folder will have once in place, as canonical as its existing part.
    let root = layout
        .root
        .canonicalize()
        .unwrap_or_else(|_| layout.root.clone());
    let name = config::experiment_name(&root.join(&relative));
    if let Some(why) = config::identifier_problem(&name) {
        return Err(LabError::Usage(format!(
            "--into {}: the experiment name {name:?} {why}\n  hint: use letters, digits, `_`, `-` and `.`",
            into.display()
        )));
    }
    let text = generated_toml(&name, new, opts)?;
    if real.exists() {
        return Err(LabError::Usage(format!(
            "--into {}: {} exists but holds no {}\n  hint: import into a new experiment name, or remove the folder",
            into.display(),
            real.display(),
            config::FILE_NAME
        )));
    }
    let dir = staging.experiment(&relative, real.clone());
    std::fs::create_dir_all(&dir)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot create {}: {e}", dir.display())))?;
    let file = dir.join(config::FILE_NAME);
    std::fs::write(&file, text)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write {}: {e}", file.display())))?;
    if !opts.quiet {
        eprintln!(
            "wrote {}: add the hypothesis and [[check]] tables, then `lab report {name}`",
            crate::layout::tidy(&real.join(config::FILE_NAME)).display()
        );
    }
    Ok((dir, real, Some(name)))
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
fn generated_toml(name: &str, new: &NewExperiment, opts: &ImportOptions) -> Result<String> {
    let imported = new.imported;
    let tool = imported.format.tool();
    let params = param_values(imported);
    let repetitions = counted(new.repetitions, "runs")?;
    let variants = unique(imported.benchmarks.iter().map(|b| &b.name))
        .into_iter()
        .map(|label| RawVariant {
            label: Some(label.clone()),
            params: restrictions(imported, label, &params),
            ..RawVariant::named(new.names.get(label).cloned().unwrap_or_default())
        })
        .collect();
    let file = RawFile {
        experiment: RawExperiment {
            title: format!("{name}: results from {tool}"),
            hypothesis:
                "State what these results should show, then add [[check]] tables to test it.".into(),
            repetitions: Some(spanless(RawRepetitions::Fixed(repetitions))),
            imported: Some(tool.to_string()),
            ..RawExperiment::default()
        },
        params: raw::in_order(params.iter().map(|(k, vs)| (k.clone(), raw_values(vs)))),
        variants,
        metrics: metric_tables(new.metrics, warmup_iterations(imported)?),
        ..RawFile::default()
    };
    let body = raw::to_toml(&file)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write the lab.toml: {e}")))?;
    Ok(format!(
        "# Results measured by {tool}{}, read by `{}`:\n# lab did not run these benchmarks; `lab import` adds sessions, `lab report {name}` renders them.\n\n{body}",
        imported
            .tool_version
            .as_deref()
            .map_or_else(String::new, |v| format!(" {v}")),
        lab_config::format::one_line(&opts.command_line),
    ))
}

/// A number of runs or iterations as lab.toml counts them.
fn counted(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| {
        LabError::Usage(format!(
            "{n} {what} per benchmark: more than lab.toml counts"
        ))
    })
}

fn raw_values(values: &[ParamValue]) -> Vec<RawParamValue> {
    values.iter().map(RawParamValue::from).collect()
}

/// The `[metric.NAME]` tables, the main metric first: its warm-up iterations are the runs'
/// warm-up values; secondary metrics have none.
fn metric_tables(
    metrics: &[ImportedMetric],
    warmup: Option<u32>,
) -> BTreeMap<String, Spanned<RawMetric>> {
    raw::in_order(metrics.iter().map(|m| {
        let table = RawMetric {
            json: Some(m.name.clone()),
            unit: Some(m.unit.clone()),
            better: Some(if m.higher_is_better {
                RawBetter::Higher
            } else {
                RawBetter::Lower
            }),
            count: m.count,
            optional: m.optional,
            warmup_iterations: warmup.filter(|_| m.source.is_none()),
            ..RawMetric::default()
        };
        (m.name.clone(), table)
    }))
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

/// The variant name of each benchmark name: short, unique identifiers (see
/// [`lab_import::names`]).
fn variant_names(imported: &Imported) -> BTreeMap<String, String> {
    let full: Vec<&str> = unique(imported.benchmarks.iter().map(|b| &b.name))
        .into_iter()
        .map(String::as_str)
        .collect();
    full.iter()
        .map(|f| f.to_string())
        .zip(lab_import::names::short_names(&full))
        .collect()
}

/// Every parameter the tool recorded with its values in first-seen order (a part of an import
/// holds benchmarks of one set of parameter names).
fn param_values(imported: &Imported) -> BTreeMap<String, Vec<ParamValue>> {
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
    out
}

/// `k = [values]` for every parameter a benchmark takes only some values of.
fn restrictions(
    imported: &Imported,
    name: &str,
    params: &BTreeMap<String, Vec<ParamValue>>,
) -> BTreeMap<String, Spanned<Vec<RawParamValue>>> {
    let mut parts = BTreeMap::new();
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
            parts.insert(key.clone(), spanless(raw_values(&own)));
        }
    }
    parts
}

/// The warm-up iterations each measured run begins with: the same number in every run, or
/// none.
fn warmup_iterations(imported: &Imported) -> Result<Option<u32>> {
    let counts: Vec<usize> = imported
        .benchmarks
        .iter()
        .flat_map(|b| b.runs.iter().filter(|r| !r.warmup))
        .map(|r| r.warmup_values.len())
        .collect();
    match counts.first() {
        Some(&k) if counts.iter().all(|c| *c == k) => {
            (k > 0).then(|| counted(k, "warm-up iterations")).transpose()
        }
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
