//! The neutral shape other harnesses' results are read into, and the dispatcher that picks a parser.
//!
//! Every parser keeps what the file measured and nothing more: raw values only (a summary
//! statistic never becomes a value, except JMH's documented summary-only case), times in seconds,
//! one [`Run`] per process, fork or repetition. Bad input is an error that names the file, what is
//! wrong with it, and what was expected.

pub mod asv;
pub mod benchmarkdotnet;
pub mod catch2;
pub mod criterion;
pub mod gbench;
pub mod gotest;
pub mod hyperfine;
pub mod jmh;
pub mod nanobench;
pub mod pyperf;
pub mod pytest_benchmark;

use anyhow::{Result, anyhow, bail};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};

/// The formats `lab import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Hyperfine,
    Jmh,
    Gbench,
    Pyperf,
    Criterion,
    /// pytest-benchmark's JSON.
    #[value(name = "pytest-benchmark")]
    PytestBenchmark,
    /// `go test -bench` text.
    #[value(name = "go")]
    GoTest,
    /// asv's (airspeed velocity) result files.
    Asv,
    /// BenchmarkDotNet's full JSON export (`*-report-full.json`).
    #[value(name = "benchmarkdotnet")]
    BenchmarkDotNet,
    /// nanobench's JSON (`templates::json()`).
    Nanobench,
    /// Catch2's XML report (`-r xml`): recognised, and refused as summaries only.
    Catch2,
}

impl Format {
    /// The tool's own name, for messages.
    pub fn tool(self) -> &'static str {
        match self {
            Format::Hyperfine => "hyperfine",
            Format::Jmh => "JMH",
            Format::Gbench => "Google Benchmark",
            Format::Pyperf => "pyperf",
            Format::Criterion => "criterion",
            Format::PytestBenchmark => "pytest-benchmark",
            Format::GoTest => "go test",
            Format::Asv => "asv",
            Format::BenchmarkDotNet => "BenchmarkDotNet",
            Format::Nanobench => "nanobench",
            Format::Catch2 => "Catch2",
        }
    }
}

/// What one tool's file(s) held.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub format: Format,
    /// The tool's version when the file records it (pyperf, JMH's jmhVersion, Google Benchmark's
    /// library_version/ context), else None. Files that disagree give their distinct versions
    /// joined by `" | "`, in file order.
    pub tool_version: Option<String>,
    /// Machine/context facts the file records (e.g. Google Benchmark's context.host_name,
    /// num_cpus, mhz_per_cpu; pyperf metadata cpu_model_name, hostname; JMH jvm, vmVersion,
    /// threads). Sorted keys. Where benchmarks or files disagree on a fact, its value is their
    /// distinct values joined by `" | "`, in file order.
    pub context: BTreeMap<String, String>,
    pub benchmarks: Vec<Benchmark>,
    /// What the reader did that a person should know of, one sentence each naming the file
    /// (benchmarks imported as failed runs, text skipped before the JSON document, metrics left
    /// out): said once, never an error.
    pub notes: Vec<String>,
}

/// One benchmark: one lab variant (and its parameter values).
#[derive(Debug, Clone, PartialEq)]
pub struct Benchmark {
    /// The tool's name for it, as written (hyperfine: the `command`; JMH: `benchmark`; gbench:
    /// `run_name` or `name`; pyperf: metadata `name`; criterion: benchmark.json
    /// `group_id`/`function_id`, see [`criterion`]).
    pub name: String,
    /// Parameters the tool records structurally (hyperfine `parameters`, JMH `params`, criterion
    /// `value_str` as "value"), values as text. Sorted.
    pub params: BTreeMap<String, String>,
    /// What the values measure: "time" for times, "throughput" for JMH thrpt, etc.
    pub metric: String,
    /// Unit of every value below, as the tool states it, normalised: times always converted to
    /// seconds ("s"); JMH throughput keeps its unit (e.g. "ops/s", "ops/ms").
    pub unit: String,
    pub higher_is_better: bool,
    /// One per process/fork/repetition, in file order.
    pub runs: Vec<Run>,
    /// True when the file held only a summary, no raw values (see [`jmh`]).
    pub summary_only: bool,
    /// Further metrics the tool recorded beside the main one (JMH's secondary metrics,
    /// hyperfine's CPU times and memory, Google Benchmark's `cpu_time` and counters, criterion's
    /// throughput), in the order first met; each run holds its values under the metric's name.
    pub secondary: Vec<Secondary>,
}

impl Benchmark {
    /// A benchmark whose values are times in seconds, lower better, with no other metric.
    pub fn time(name: String, params: BTreeMap<String, String>, runs: Vec<Run>) -> Benchmark {
        Benchmark {
            name,
            params,
            metric: "time".into(),
            unit: "s".into(),
            higher_is_better: false,
            runs,
            summary_only: false,
            secondary: Vec::new(),
        }
    }
}

/// A metric a benchmark records beside its main one.
#[derive(Debug, Clone, PartialEq)]
pub struct Secondary {
    /// The tool's name for it, as written (e.g. `·gc.alloc.rate`, `memory_usage_byte`).
    pub name: String,
    /// Unit of its values, normalised like the main metric's (times in seconds).
    pub unit: String,
    pub higher_is_better: bool,
    /// Counted, not timed (bytes allocated, a counter): kept from runs whose timings are
    /// discarded.
    pub count: bool,
}

impl Secondary {
    pub fn new(name: &str, unit: &str, higher_is_better: bool, count: bool) -> Secondary {
        Secondary {
            name: name.to_string(),
            unit: unit.to_string(),
            higher_is_better,
            count,
        }
    }
}

/// One run: a process (hyperfine run, JMH fork, pyperf run, Google Benchmark repetition,
/// criterion file).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The whole run was a warm-up / calibration run (pyperf's calibration runs with no values).
    pub warmup: bool,
    /// Warm-up iteration values recorded before the measured ones (pyperf `warmups`), same unit.
    pub warmup_values: Vec<f64>,
    /// Measured values, one per iteration, in order.
    pub values: Vec<f64>,
    /// How the process ended, where the file records it (hyperfine's `exit_codes`).
    pub exit: Option<lab_store::Exit>,
    /// The values of each of the benchmark's [`Secondary`] metrics in this run, by the
    /// metric's name: one per iteration, or one for the whole run.
    pub secondary: BTreeMap<String, Vec<f64>>,
}

impl Run {
    /// A measured run holding these values and no warm-ups.
    pub fn measured(values: Vec<f64>) -> Run {
        Run {
            warmup: false,
            warmup_values: Vec::new(),
            values,
            exit: None,
            secondary: BTreeMap::new(),
        }
    }

    /// This run with `values` of the secondary metric `name` added.
    pub fn with(mut self, name: &str, values: Vec<f64>) -> Run {
        self.secondary.insert(name.to_string(), values);
        self
    }
}

/// Which benchmarks to import: each `--filter` given must hold. `mode=MODE` keeps the results
/// of that mode (JMH's thrpt, avgt, sample, ss), `unit=UNIT` those of that unit (JMH's
/// `scoreUnit` as written, such as `ops/ms` or `us/op`; for other tools the unit lab keeps,
/// `s` for times), `name=TEXT` or plain TEXT those whose name contains TEXT.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    names: Vec<String>,
    modes: Vec<String>,
    units: Vec<String>,
}

impl Selection {
    /// The selection `--filter` values ask for; an unknown `KEY=` is refused.
    pub fn parse(filters: &[String]) -> Result<Selection> {
        let mut select = Selection::default();
        for filter in filters {
            match filter.split_once('=') {
                Some(("mode", mode)) => select.modes.push(mode.to_string()),
                Some(("unit", unit)) => select.units.push(unit.to_string()),
                Some(("name", name)) => select.names.push(name.to_string()),
                Some((key, _))
                    if !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase()) =>
                {
                    bail!(
                        "--filter {filter}: unknown key {key:?} (expected name=TEXT, mode=MODE, unit=UNIT, or TEXT to match names)"
                    )
                }
                _ => select.names.push(filter.clone()),
            }
        }
        Ok(select)
    }

    /// Why this selection cannot apply to `format`'s files, if it cannot.
    pub fn problem_for(&self, format: Format) -> Option<String> {
        (format != Format::Jmh && !self.modes.is_empty()).then(|| {
            format!(
                "--filter mode={}: only JMH results have modes; {} files are selected by name=TEXT or unit=UNIT",
                self.modes[0],
                format.tool()
            )
        })
    }

    /// Whether a benchmark of this name, mode (empty where the tool has none) and unit is kept.
    pub fn keeps(&self, name: &str, mode: &str, unit: &str) -> bool {
        self.names.iter().all(|n| name.contains(n.as_str()))
            && self.modes.iter().all(|m| m == mode)
            && self.units.iter().all(|u| u == unit)
    }

    /// Whether a benchmark read by a tool without modes is kept, by its name and the unit lab
    /// keeps.
    fn keeps_read(&self, b: &Benchmark) -> bool {
        self.keeps(&b.name, "", &b.unit)
    }
}

/// Each file read on its own, keeping only what `select` keeps: JMH results are left out
/// before they are read past their name, mode and unit; other tools' benchmarks once read.
pub fn read_each(
    format: Format,
    files: &[PathBuf],
    select: &Selection,
) -> Result<Vec<(PathBuf, Imported)>> {
    if files.is_empty() {
        bail!(
            "no {} result files given (expected at least one file to import)",
            format.tool()
        );
    }
    let files: Vec<(PathBuf, Option<&Path>)> = match format {
        Format::Criterion => {
            let mut folders = Vec::new();
            for file in files {
                let tree = Some(file.as_path()).filter(|f| f.is_dir());
                for folder in criterion::benchmark_folders(file)? {
                    folders.push((folder, tree));
                }
            }
            folders
        }
        Format::Asv => {
            let mut results = Vec::new();
            for file in files {
                results.extend(asv::result_files(file)?.into_iter().map(|f| (f, None)));
            }
            results
        }
        _ => files.iter().map(|f| (f.clone(), None)).collect(),
    };
    files
        .iter()
        .map(|(file, tree)| {
            let mut imported = match format {
                Format::Jmh => {
                    jmh::parse_selected(&file.display().to_string(), &read_text(file)?, select)?
                }
                Format::Criterion => criterion::read_in(file, *tree)?,
                _ => read_one(format, file)?,
            };
            if format != Format::Jmh {
                imported.benchmarks.retain(|b| select.keeps_read(b));
            }
            imported.notes.extend(failed_note(
                &file.display().to_string(),
                &imported.benchmarks,
            ));
            Ok((file.clone(), imported))
        })
        .collect()
}

/// The note on the runs that failed without a value (a benchmark the tool reports failed or
/// skipped), if any: how many of all runs, and each such benchmark with its message and count.
fn failed_note(origin: &str, benchmarks: &[Benchmark]) -> Option<String> {
    let runs = benchmarks
        .iter()
        .flat_map(|b| b.runs.iter().map(move |r| (b, r)));
    let mut failed: Vec<(&str, &str, usize)> = Vec::new();
    for (b, run) in runs.clone() {
        let Some(lab_store::Exit::SpawnFailed(why)) = &run.exit else {
            continue;
        };
        if !run.values.is_empty() {
            continue;
        }
        match failed.iter_mut().find(|(n, w, _)| *n == b.name && w == why) {
            Some((_, _, count)) => *count += 1,
            None => failed.push((&b.name, why, 1)),
        }
    }
    if failed.is_empty() {
        return None;
    }
    let total: usize = failed.iter().map(|(_, _, n)| n).sum();
    let named: Vec<String> = failed
        .iter()
        .map(|(name, why, n)| format!("{name} ×{n} ({why})"))
        .collect();
    Some(format!(
        "{origin}: {total} of {} runs failed or were skipped and hold no value: {}; imported as \
         failed runs, which the exit check reports, and the other runs are analysed",
        runs.count(),
        named.join(", ")
    ))
}

/// The files' results merged as [`read`] merges them.
pub fn merged(format: Format, files: &[(PathBuf, Imported)]) -> Result<Imported> {
    let mut all = empty(format);
    for (file, imported) in files {
        merge_into(&mut all, imported.clone(), &file.display().to_string())?;
    }
    Ok(all)
}

/// The context facts that tell one machine or build from another: the host, its CPU, the
/// interpreter or virtual machine and its options. Facts that change from run to run on one
/// machine (date, load) are not among them.
const MACHINE_FACTS: &[&str] = &[
    "host_name",
    "hostname",
    "cpu_model_name",
    "num_cpus",
    "cpu_count",
    "mhz_per_cpu",
    "platform",
    "library_build_type",
    "python_implementation",
    "python_version",
    "python_executable",
    "python_compiler",
    "jvm",
    "jvmArgs",
    "jdkVersion",
    "vmName",
    "vmVersion",
    "machine",
    "system",
    "os",
    "arch",
    "ram",
    "env_name",
    "runtime",
    "goos",
    "goarch",
    "cpu",
];

/// What a file's context says about the machine and build it ran on (see [`MACHINE_FACTS`]).
pub fn machine_of(imported: &Imported) -> BTreeMap<String, String> {
    MACHINE_FACTS
        .iter()
        .filter_map(|k| imported.context.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect()
}

/// Reads every file (all of one format) into one Imported; benchmarks of the same name, params
/// and metric across files are merged (their runs appended in file order) — e.g. several
/// criterion sample.json of repeated `cargo bench` invocations, or several hyperfine exports.
pub fn read(format: Format, files: &[PathBuf]) -> Result<Imported> {
    merged(format, &read_each(format, files, &Selection::default())?)
}

/// Same as [`read`] for in-memory text (used by tests); `origin` names the file in errors.
///
/// Criterion's results are two files (`new/sample.json` and `new/benchmark.json`), so
/// `Format::Criterion` is refused here: use [`read`] with the path, or [`criterion::parse`]
/// with both texts.
pub fn parse(format: Format, origin: &str, text: &str) -> Result<Imported> {
    match format {
        Format::Hyperfine => hyperfine::parse(origin, text),
        Format::Jmh => jmh::parse(origin, text),
        Format::Gbench => gbench::parse(origin, text),
        Format::Pyperf => pyperf::parse(origin, text),
        Format::PytestBenchmark => pytest_benchmark::parse(origin, text),
        Format::GoTest => gotest::parse(origin, text),
        Format::Asv => asv::parse(origin, text),
        Format::BenchmarkDotNet => benchmarkdotnet::parse(origin, text),
        Format::Nanobench => nanobench::parse(origin, text),
        Format::Catch2 => catch2::parse(origin, text),
        Format::Criterion => bail!(
            "{origin}: criterion results are two files, new/sample.json and new/benchmark.json \
             (expected the path of a criterion benchmark folder or its new/sample.json, read from disk)"
        ),
    }
}

fn read_one(format: Format, path: &Path) -> Result<Imported> {
    match format {
        Format::Criterion => criterion::read(path),
        Format::Asv => asv::read(path),
        _ => parse(format, &path.display().to_string(), &read_text(path)?),
    }
}

/// The most a gzip-compressed result file may decompress to. Real result files are far smaller;
/// the cap keeps a corrupt or hostile file (a "gzip bomb") from exhausting memory.
const MAX_DECOMPRESSED_BYTES: u64 = 512 * 1024 * 1024;

/// A result file's text; gzip-compressed files (pyperf's `.json.gz`, or any file gzipped to keep)
/// are decompressed, recognised by their magic bytes rather than by name. Binary files are refused.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let bytes = read_regular(path).map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
    let bytes = if is_gzip(&bytes) {
        gunzip(path, &bytes, MAX_DECOMPRESSED_BYTES)?
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|_| {
        anyhow!(
            "{}: not UTF-8 text (expected a JSON result file)",
            path.display()
        )
    })
}

/// The bytes of the regular file `path`, opened beneath its folder with no link followed
/// (see [`lab_store::regular::open_beneath`]): a FIFO is refused, never waited on, and a link
/// (criterion's sample.json pointing elsewhere) is never followed.
fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (dir, name) = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) if !dir.as_os_str().is_empty() => (dir, Path::new(name)),
        (_, Some(name)) => (Path::new("."), Path::new(name)),
        _ => (Path::new("."), path),
    };
    let mut bytes = Vec::new();
    lab_store::regular::open_beneath(dir, name)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The gzip magic number (RFC 1952, section 2.3.1).
fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The decompressed bytes of a gzip file (every member, as gunzip does), at most `limit` of them.
fn gunzip(path: &Path, compressed: &[u8], limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(compressed)
        .take(limit + 1)
        .read_to_end(&mut text)
        .map_err(|e| {
            anyhow!(
                "{}: gzip-compressed but cannot be decompressed: {e} (expected a whole, \
                 uncorrupted .gz file; check it with gzip -t)",
                path.display()
            )
        })?;
    if text.len() as u64 > limit {
        bail!(
            "{}: gzip-compressed and decompresses to more than {} (expected a result file \
             smaller than that; a real one is, so check what the file holds with zcat | head)",
            path.display(),
            lab_config::format::memory(limit as f64)
        );
    }
    Ok(text)
}

fn empty(format: Format) -> Imported {
    Imported {
        format,
        tool_version: None,
        context: BTreeMap::new(),
        benchmarks: Vec::new(),
        notes: Vec::new(),
    }
}

/// Adds one file's results to what earlier files gave.
fn merge_into(merged: &mut Imported, more: Imported, origin: &str) -> Result<()> {
    let mut facts = Facts::default();
    facts.add_all(&merged.context);
    facts.add_all(&more.context);
    merged.context = facts.into_context();
    merged.tool_version = merge_versions(merged.tool_version.take(), more.tool_version);
    for note in more.notes {
        if !merged.notes.contains(&note) {
            merged.notes.push(note);
        }
    }
    merged.benchmarks = group_benchmarks(
        origin,
        std::mem::take(&mut merged.benchmarks),
        more.benchmarks,
    )?;
    Ok(())
}

fn merge_versions(earlier: Option<String>, later: Option<String>) -> Option<String> {
    let mut facts = Facts::default();
    for version in earlier.iter().chain(later.iter()) {
        facts.add_joined("version", version);
    }
    facts.into_context().remove("version")
}

/// Appends `more` to `earlier`, merging benchmarks of the same name, params and metric (their
/// runs appended in order). `origin` names the file `more` came from, for errors.
pub(crate) fn group_benchmarks(
    origin: &str,
    earlier: Vec<Benchmark>,
    more: Vec<Benchmark>,
) -> Result<Vec<Benchmark>> {
    let mut grouped = earlier;
    for benchmark in more {
        match grouped.iter_mut().find(|b| same_benchmark(b, &benchmark)) {
            Some(existing) => append_runs(origin, existing, benchmark)?,
            None => grouped.push(benchmark),
        }
    }
    Ok(grouped)
}

fn same_benchmark(a: &Benchmark, b: &Benchmark) -> bool {
    a.name == b.name && a.params == b.params && a.metric == b.metric
}

fn append_runs(origin: &str, existing: &mut Benchmark, more: Benchmark) -> Result<()> {
    if existing.unit != more.unit {
        bail!(
            "{origin}: benchmark \"{}\"{} is in {} here but in {} before (expected one unit per benchmark; \
             rerun with the same unit settings)",
            more.name,
            params_text(&more.params),
            more.unit,
            existing.unit
        );
    }
    if existing.summary_only != more.summary_only {
        bail!(
            "{origin}: benchmark \"{}\"{} has raw values in one file and only a summary in another \
             (expected every file to hold raw values, or none)",
            more.name,
            params_text(&more.params)
        );
    }
    for metric in more.secondary {
        if !existing.secondary.iter().any(|s| s.name == metric.name) {
            existing.secondary.push(metric);
        }
    }
    existing.runs.extend(more.runs);
    Ok(())
}

/// `" (n=1, m=2)"` for messages, or nothing when there are no params.
pub(crate) fn params_text(params: &BTreeMap<String, String>) -> String {
    if params.is_empty() {
        return String::new();
    }
    let pairs: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(" ({})", pairs.join(", "))
}

/// Context facts being gathered: every distinct value of a key, in the order first seen.
#[derive(Default)]
pub(crate) struct Facts(BTreeMap<String, Vec<String>>);

impl Facts {
    /// Records `value` for `key` unless that key already has it.
    pub(crate) fn add(&mut self, key: &str, value: String) {
        let values = self.0.entry(key.to_string()).or_default();
        if !values.contains(&value) {
            values.push(value);
        }
    }

    /// The values recorded for `key`, in the order first seen.
    pub(crate) fn values(&self, key: &str) -> &[String] {
        self.0.get(key).map_or(&[], Vec::as_slice)
    }

    /// Whether no value is recorded for `key` yet.
    pub(crate) fn lacks(&self, key: &str) -> bool {
        !self.0.contains_key(key)
    }

    /// Records a value that may itself be several values joined by `" | "`.
    fn add_joined(&mut self, key: &str, value: &str) {
        for part in value.split(" | ") {
            self.add(key, part.to_string());
        }
    }

    fn add_all(&mut self, context: &BTreeMap<String, String>) {
        for (key, value) in context {
            self.add_joined(key, value);
        }
    }

    /// One value per key; disagreeing values joined by `" | "`.
    pub(crate) fn into_context(self) -> BTreeMap<String, String> {
        self.0
            .into_iter()
            .map(|(key, values)| (key, values.join(" | ")))
            .collect()
    }
}

/// The file being parsed, and what format it was expected to be, for error messages.
pub(crate) struct Source<'a> {
    /// The file's name as given.
    pub origin: &'a str,
    /// What the file should be, e.g. "hyperfine --export-json output".
    pub what: &'static str,
    /// Where such a file comes from, e.g. "the file written by hyperfine --export-json FILE".
    pub expected: &'static str,
}

impl Source<'_> {
    /// The file is not this format at all.
    pub(crate) fn not_format(&self, why: impl Display) -> anyhow::Error {
        anyhow!(
            "{}: not {}: {why} (expected {})",
            self.origin,
            self.what,
            self.expected
        )
    }

    /// The file is this format, but something in it is unusable.
    pub(crate) fn bad(&self, why: impl Display) -> anyhow::Error {
        anyhow!("{}: {why}", self.origin)
    }

    /// The `key` array of the document, which every file of the format has.
    pub(crate) fn array<'v>(&self, document: &'v Value, key: &str) -> Result<&'v Vec<Value>> {
        document
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| self.not_format(format!("no \"{key}\" array")))
    }

    /// The text as JSON.
    pub(crate) fn json(&self, text: &str) -> Result<Value> {
        serde_json::from_str(text).map_err(|e| self.not_format(format!("invalid JSON ({e})")))
    }

    /// The text as JSON, or the JSON document a log holds after other text (build output
    /// before a program's JSON, as CI jobs save them): the first document beginning at the
    /// start of a line that parses whole and that `wanted` accepts. The note says which line
    /// it began on. Where there is none, the error is that of the whole text (file:line:col).
    pub(crate) fn json_in_log(
        &self,
        text: &str,
        wanted: impl Fn(&Value) -> bool,
    ) -> Result<(Value, Option<String>)> {
        let whole = match serde_json::from_str(text) {
            Ok(value) => return Ok((value, None)),
            Err(e) => e,
        };
        match embedded_document(text, wanted) {
            Some((line, value)) => Ok((
                value,
                Some(format!(
                    "{}: the JSON document begins on line {line}; the {} line{} of other text before it {} left out",
                    self.origin,
                    line - 1,
                    if line == 2 { "" } else { "s" },
                    if line == 2 { "is" } else { "are" },
                )),
            )),
            None => Err(self.not_format(format!("invalid JSON ({whole})"))),
        }
    }

    /// A measured value of `benchmark` as a finite, non-negative number; `what` says which one
    /// (e.g. "run 2 value 3").
    pub(crate) fn value(&self, benchmark: &str, what: &str, value: &Value) -> Result<f64> {
        let number = number(value).ok_or_else(|| {
            self.bad(format!(
                "benchmark \"{benchmark}\": {what} is {value}, not a number (expected a measured value)"
            ))
        })?;
        self.checked(benchmark, what, number)
    }

    /// `number` unless it is NaN, infinite or negative.
    pub(crate) fn checked(&self, benchmark: &str, what: &str, number: f64) -> Result<f64> {
        let problem = if number.is_nan() {
            "NaN".to_string()
        } else if number.is_infinite() {
            "infinite".to_string()
        } else if number < 0.0 {
            format!("negative ({number})")
        } else {
            return Ok(number);
        };
        Err(self.bad(format!(
            "benchmark \"{benchmark}\": {what} is {problem} (expected a finite, non-negative measurement)"
        )))
    }
}

/// The most line starts [`embedded_document`] tries, so that a long log of stray braces
/// cannot make reading it slow.
const MAX_DOCUMENT_STARTS: usize = 200;

/// The first JSON document (object or array) that begins at the start of a line after the
/// first, parses whole (text after it is ignored) and that `wanted` accepts, with the line
/// it begins on (1-based).
fn embedded_document(text: &str, wanted: impl Fn(&Value) -> bool) -> Option<(usize, Value)> {
    let mut offset = 0;
    let mut starts = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let here = offset;
        offset += line.len();
        if index == 0 || !(line.starts_with('{') || line.starts_with('[')) {
            continue;
        }
        starts += 1;
        if starts > MAX_DOCUMENT_STARTS {
            return None;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[here..]).into_iter::<Value>();
        if let Some(Ok(value)) = stream.next()
            && wanted(&value)
        {
            return Some((index + 1, value));
        }
    }
    None
}

/// A JSON number, or one of the strings "NaN", "Infinity", "-Infinity" that some tools (JMH)
/// write for non-finite numbers — so that those are refused as such, not as "not a number".
pub(crate) fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" | "+Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// The `key` object of a result (hyperfine `parameters`, JMH `params`) as text parameters,
/// each value as written or inside `{"value": …}` (hyperfine 2.0); none when the result has no
/// such key.
pub(crate) fn text_params(
    source: &Source,
    name: &str,
    result: &Value,
    key: &str,
) -> Result<BTreeMap<String, String>> {
    let Some(found) = result.get(key) else {
        return Ok(BTreeMap::new());
    };
    let object = found.as_object().ok_or_else(|| {
        source.bad(format!(
            "benchmark \"{name}\": \"{key}\" is not an object (expected {{\"NAME\": \"VALUE\"}})"
        ))
    })?;
    object
        .iter()
        .map(|(param, value)| {
            // hyperfine 2.0 wraps each value: {"NAME": {"value": "VALUE"}}.
            let text = scalar_text(value.get("value").unwrap_or(value)).ok_or_else(|| {
                source.bad(format!(
                    "benchmark \"{name}\": {key} {param} is {value} (expected a text or number value)"
                ))
            })?;
            Ok((param.clone(), text))
        })
        .collect()
}

/// A JSON string, number or boolean as text; None for null, arrays and objects.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// How many seconds one of `unit` is, for the time units tools write ("ns", "us", "ms", "s").
pub(crate) fn seconds_per(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1e-9),
        "us" | "µs" | "μs" => Some(1e-6),
        "ms" => Some(1e-3),
        "s" => Some(1.0),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Helpers shared by the parsers' tests.

    /// The path of a committed fixture under tests/fixtures/import/.
    pub(crate) fn fixture(relative: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/import")
            .join(relative)
    }

    /// The text of a committed fixture under tests/fixtures/import/.
    pub(crate) fn text(relative: &str) -> String {
        std::fs::read_to_string(fixture(relative)).unwrap()
    }

    /// Equal to within floating-point rounding of a unit conversion.
    pub(crate) fn assert_close(actual: f64, expected: f64) {
        let tolerance = expected.abs() * 1e-12;
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} is not {expected}"
        );
    }
}

#[cfg(test)]
mod tests;
