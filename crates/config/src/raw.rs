//! The serde mirror of `lab.toml`: every table denies unknown keys, values keep their spans.
//! The JSON Schema of lab.toml (`lab schema`, lab.schema.json) is derived from these types, so
//! the doc comments here are the reference of every key. The same types write lab.toml
//! (`lab import`, `lab bench`): an absent key is left out, and named tables keep the order
//! they were declared in.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

/// A `lab.toml` that did not deserialize: the TOML error and, when serde got as far as a key,
/// the path of keys and array positions it was reading.
#[derive(Debug)]
pub struct RawError {
    pub error: toml::de::Error,
    pub path: Option<serde_path_to_error::Path>,
}

/// Parses `source` into its serde mirror, tracking the key path serde is at.
pub fn from_toml(source: &str) -> Result<RawFile, RawError> {
    let document =
        toml::Deserializer::parse(source).map_err(|error| RawError { error, path: None })?;
    serde_path_to_error::deserialize(document).map_err(|e| RawError {
        path: Some(e.path().clone()),
        error: e.into_inner(),
    })
}

/// The lab.toml text of `file`.
pub fn to_toml(file: &RawFile) -> Result<String, toml::ser::Error> {
    toml::to_string(file)
}

/// A value lab writes itself: it comes from no place in a source, so its span is empty.
pub fn spanless<T>(value: T) -> Spanned<T> {
    Spanned::new(0..0, value)
}

/// Named tables to write in the order given: each one's span is its position, the order that
/// [`declared_order`] reads back.
pub fn in_order<T>(tables: impl IntoIterator<Item = (String, T)>) -> BTreeMap<String, Spanned<T>> {
    tables
        .into_iter()
        .enumerate()
        .map(|(i, (name, table))| (name, Spanned::new(i..i, table)))
        .collect()
}

/// Names in the order they appear in the file (a map holds them sorted; their spans say where
/// each was declared). Tables at one place keep their names' order.
pub(crate) fn declared_order<T>(map: &BTreeMap<String, Spanned<T>>) -> Vec<String> {
    by_declaration(map)
        .into_iter()
        .map(|(k, _)| k.clone())
        .collect()
}

fn by_declaration<T>(map: &BTreeMap<String, Spanned<T>>) -> Vec<(&String, &Spanned<T>)> {
    let mut tables: Vec<(&String, &Spanned<T>)> = map.iter().collect();
    tables.sort_by_key(|(_, v)| v.span().start);
    tables
}

/// Writes named tables in their declared order: the first metric is the one charts and tables
/// lead with, and parameters vary in the order they were declared.
fn in_declared_order<S: serde::Serializer, T: Serialize>(
    map: &BTreeMap<String, Spanned<T>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(by_declaration(map))
}

/// A whole `lab.toml` as written, before validation.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    pub experiment: RawExperiment,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<RawBuild>,
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        serialize_with = "in_declared_order"
    )]
    #[schemars(with = "BTreeMap<String, Vec<RawParamValue>>")]
    pub params: BTreeMap<String, Spanned<Vec<RawParamValue>>>,
    #[serde(default, rename = "variant", skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<RawVariant>,
    #[serde(
        default,
        rename = "metric",
        skip_serializing_if = "BTreeMap::is_empty",
        serialize_with = "in_declared_order"
    )]
    #[schemars(with = "BTreeMap<String, RawMetric>")]
    pub metrics: BTreeMap<String, Spanned<RawMetric>>,
    #[serde(
        default,
        rename = "profile",
        skip_serializing_if = "BTreeMap::is_empty",
        serialize_with = "in_declared_order"
    )]
    #[schemars(with = "BTreeMap<String, RawProfile>")]
    pub profiles: BTreeMap<String, Spanned<RawProfile>>,
    #[serde(default, rename = "check", skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<RawCheck>")]
    pub checks: Vec<Spanned<RawCheck>>,
}

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    pub title: String,
    pub hypothesis: String,
    /// Runs per cell: a number, or `{ min = 5, max = 40 }` to add runs until `stop` is met.
    #[schemars(with = "Option<RawRepetitions>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<Spanned<RawRepetitions>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_runs: Option<u32>,
    /// With `repetitions = { min, max }`: when to stop adding runs. `"decided"` (the default)
    /// stops once every hypothesis check passes or fails; `{ half_width = "2%" }` once every
    /// cell's interval of the median is within ±2% of it (of the primary metric, or `metric`).
    #[schemars(with = "Option<RawStop>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Spanned<RawStop>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<RawOrder>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Per run: the run's whole process group is killed after this long ("30s", "250ms",
    /// "2m", or a number of seconds). Default 600 s.
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Spanned<RawNumberOrText>>,
    /// The largest plan lab accepts (default [`crate::MAX_RUNS`]).
    #[schemars(with = "Option<u64>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_runs: Option<Spanned<u64>>,
    /// A run that waited for a CPU others had (or had its CPUs stolen by a hypervisor) for
    /// more than this share of its wall time counts as disturbed: drawn apart in the charts,
    /// and the next run waits for the machine to calm ("10%" by default; "100%" turns the
    /// guard off). Every run's timing is kept; each verdict weighs what the waiting could
    /// have changed.
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_busy: Option<Spanned<RawNumberOrText>>,
    /// No longer used: lab keeps every run's timing and weighs its disturbance instead of
    /// running it again. Read so that older files still parse.
    #[schemars(with = "Option<u32>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requeue: Option<Spanned<u32>>,
    /// After a disturbed run, how long the next may wait for the machine to calm ("2s" by
    /// default; "0s" never waits). A wait that did not help is not repeated.
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calm_wait: Option<Spanned<RawNumberOrText>>,
    /// How much of each run's stdout and of its stderr the record keeps ("64MiB" by default;
    /// a number is bytes): a run that prints more is cut there, and a last line of its log
    /// says how much it wrote.
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output: Option<Spanned<RawNumberOrText>>,
    /// How long a sampled session's runs may take ("10m", "90s"): no look starts that its
    /// runs' expected time would carry past it. No limit but `repetitions.max` when absent.
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Spanned<RawNumberOrText>>,
    /// Commands whose output is recorded in the manifest, e.g. `[["java", "-version"]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // The schema keeps the default of a key the writer leaves out when it has it.
    #[schemars(!skip_serializing_if)]
    #[schemars(with = "Vec<Vec<String>>")]
    pub versions: Vec<Spanned<Vec<String>>>,
    /// The tool whose results this experiment holds (written by `lab import`): its variants
    /// need no `run`, and `lab run` refuses it; `lab import` adds sessions instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported: Option<String>,
    /// How runs and builds are kept from the record: `"auto"` (the default: every protection
    /// the machine allows, recorded in the manifest), `"strict"` (refuse to run without a
    /// read-only mount namespace and a session cgroup) or `"none"`.
    #[schemars(with = "Option<RawIsolation>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Spanned<RawIsolation>>,
    /// The folder runs start in, relative to the experiment folder (or absolute): by
    /// default the experiment folder itself. `lab bench` writes it so that commands typed
    /// in a folder run there.
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workdir: Option<Spanned<String>>,
    /// A run that exits with a non-zero code still counts as a measurement (hyperfine's
    /// `--ignore-failure`); a run killed by a signal, timed out or never started does not.
    /// `true`: every non-zero exit code; a list (`[1, 2]`): only these codes.
    #[serde(default, skip_serializing_if = "RawIgnoreFailure::is_default")]
    pub ignore_failure: RawIgnoreFailure,
    /// `"included"`: a run's time is the whole process's, starting it included, and runs
    /// shorter than the session's timing floor are kept, each answer saying how much of them
    /// is start-up (hyperfine's way with `-N`). A command (`["sh", "-c", ""]`): its start-up
    /// is measured at the session's start and taken out of every run's wall time, its
    /// uncertainty carried into every interval (hyperfine's way with a shell). By default
    /// runs shorter than the floor are too short to time.
    #[schemars(with = "Option<RawStartUp>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_up: Option<Spanned<RawStartUp>>,
    /// `"randomized"`: each run's environment gets `LAB_LAYOUT_PAD`, 0 to 4,095 bytes long, its
    /// length drawn per run from the seed and recorded; the size of the environment moves the
    /// initial stack of every program, and with it the memory layout (Mytkowicz et al. 2009).
    /// Each run's heap is shifted too, by 0 to 4,080 bytes in steps of 16 drawn and recorded
    /// alike (`LAB_HEAP_SHIFT`, applied by a preloaded allocator shim to dynamically linked
    /// programs), as STABILIZER does (Curtsinger & Berger 2013). The check "the primary metric
    /// does not depend on the memory layout" is then added. `"fixed"` (the default) leaves the
    /// environment and the heap as they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<RawLayout>,
    /// With `layout = "randomized"`: how far the runs with the larger half of paddings may
    /// differ from those with the smaller half, and the runs at one heap position within a
    /// cache line from the others, in the median of the primary metric ("2%" by default).
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout_tolerance: Option<Spanned<RawNumberOrText>>,
    /// perf counters read for every run (`perf_event_open`), by perf's names: "task-clock",
    /// "context-switches", "cpu-migrations", "page-faults", "instructions", "cycles",
    /// "cache-references", "cache-misses", "branch-misses", "branches"; and
    /// "callgrind-instructions", counted by running every run under valgrind's callgrind (no
    /// PMU needed; runs take 20–100× longer). Each is a built-in metric (`task_clock_s`,
    /// `context_switches`, `callgrind_instructions`…).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(!skip_serializing_if)]
    #[schemars(with = "Vec<String>")]
    pub counters: Vec<Spanned<String>>,
    /// Automatic checks turned off, by key: "impossible-times", "cold-state", "parallel",
    /// "resolution", "periodicity", "layout". The report lists each as not run, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(!skip_serializing_if)]
    #[schemars(with = "Vec<String>")]
    pub skip_checks: Vec<Spanned<String>>,
}

/// `start_up`: `"included"`, or the command whose start-up is taken out of every run.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(untagged)]
pub enum RawStartUp {
    Word(String),
    Subtracted(Vec<String>),
}

/// `ignore_failure`: every non-zero exit code, or only the codes listed.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(untagged)]
pub enum RawIgnoreFailure {
    All(bool),
    Codes(Vec<i32>),
}

impl RawIgnoreFailure {
    /// `false`, as an absent key reads.
    pub fn is_default(&self) -> bool {
        *self == RawIgnoreFailure::All(false)
    }

    /// The codes listed; none for `true` or `false`.
    pub fn codes(&self) -> Vec<i32> {
        match self {
            RawIgnoreFailure::Codes(codes) => codes.clone(),
            RawIgnoreFailure::All(_) => Vec::new(),
        }
    }
}

impl Default for RawIgnoreFailure {
    fn default() -> Self {
        RawIgnoreFailure::All(false)
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RawLayout {
    Fixed,
    Randomized,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RawIsolation {
    Auto,
    Strict,
    None,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RawOrder {
    Shuffled,
    Sequential,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawBuild {
    #[schemars(with = "Vec<String>")]
    pub run: Spanned<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(!skip_serializing_if)]
    pub inputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(!skip_serializing_if)]
    pub outputs: Vec<String>,
}

/// A parameter value: an integer, a float or a string.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawParamValue {
    Int(i64),
    Float(f64),
    Text(String),
}

impl From<&crate::ParamValue> for RawParamValue {
    fn from(value: &crate::ParamValue) -> Self {
        match value {
            crate::ParamValue::Int(i) => RawParamValue::Int(*i),
            crate::ParamValue::Float(x) => RawParamValue::Float(*x),
            crate::ParamValue::Text(t) => RawParamValue::Text(t.clone()),
        }
    }
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The command, one argument per element, `{param}` placeholders inside them. Required
    /// unless the experiment is `imported`.
    #[schemars(with = "Option<Vec<String>>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<Spanned<Vec<String>>>,
    /// Variables set for its runs on top of lab's environment: names without `=` or NUL,
    /// values without NUL.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(!skip_serializing_if)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub env: BTreeMap<Spanned<String>, Spanned<String>>,
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Spanned<String>>,
    /// Restricts some parameters to a subset of their values for this variant.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(with = "BTreeMap<String, Vec<RawParamValue>>")]
    pub params: BTreeMap<String, Spanned<Vec<RawParamValue>>>,
    /// A command run, untimed, before each of this variant's runs (e.g. to clear a cache);
    /// placeholders as in `run`. A failing one stops the session.
    #[schemars(with = "Option<Vec<String>>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prepare: Option<Spanned<Vec<String>>>,
    /// A command run, untimed, after each of this variant's runs.
    #[schemars(with = "Option<Vec<String>>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conclude: Option<Spanned<Vec<String>>>,
    /// A command run once per cell of this variant before the session's first run.
    #[schemars(with = "Option<Vec<String>>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup: Option<Spanned<Vec<String>>>,
    /// A command run once per cell of this variant after the session's last run
    /// (hyperfine's `--cleanup`).
    #[schemars(with = "Option<Vec<String>>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<Spanned<Vec<String>>>,
    /// A file its runs read as standard input (hyperfine's `--input`), relative to the
    /// folder runs start in; by default they read nothing (`/dev/null`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Refuse `run` and the hooks when their words show shell syntax that no shell will read
    /// (a `|`, `&&`, `;` or redirection as a word; `cd`, `export` or `NAME=value` first):
    /// lab runs commands without a shell. `false` runs the words as they are. Default true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell_check: Option<bool>,
}

impl RawVariant {
    /// A variant of this name, every other key absent.
    pub fn named(name: String) -> Self {
        RawVariant {
            name: spanless(name),
            label: None,
            run: None,
            env: BTreeMap::new(),
            cpus: None,
            params: BTreeMap::new(),
            prepare: None,
            conclude: None,
            setup: None,
            cleanup: None,
            input: None,
            shell_check: None,
        }
    }
}

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMetric {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json: Option<String>,
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regex: Option<Spanned<String>>,
    /// With `per`: a metric computed per run as the run's total of `of` divided by its total
    /// of `per` (e.g. `of = "voluntary_cs"`, `per = "ops"`: context switches per operation).
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub of: Option<Spanned<String>>,
    /// The metric `of` is divided by; a run whose total of it is zero or missing has no value.
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub better: Option<RawBetter>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub text: bool,
    /// A value the run counted rather than timed (operations done, bytes allocated, a
    /// checksum as a number): it does not depend on how busy the machine was, so it is kept
    /// from runs whose timings are discarded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub count: bool,
    /// A value only some runs report (a profiler's reading, a counter some benchmarks have):
    /// a run that prints none is not failed for it, and is left out of its statistics.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub optional: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_iterations: Option<u32>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RawBetter {
    Higher,
    Lower,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    #[schemars(with = "Option<RawRepetitions>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<Spanned<RawRepetitions>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_runs: Option<u32>,
    /// Per run: the run's whole process group is killed after this long ("30s", "250ms",
    /// "2m", or a number of seconds). Default 600 s.
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Spanned<RawNumberOrText>>,
    /// The profile's own time budget for a sampled session's runs (see `experiment.budget`).
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Spanned<RawNumberOrText>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(with = "BTreeMap<String, Vec<RawParamValue>>")]
    pub params: BTreeMap<String, Spanned<Vec<RawParamValue>>>,
}

/// One `[[check]]`; which keys are allowed depends on `kind` and is validated later.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCheck {
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    #[schemars(with = "String")]
    pub kind: Spanned<String>,
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<Spanned<String>>,
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<Spanned<String>>,
    #[schemars(with = "Option<RawExpect>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<Spanned<RawExpect>>,
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<Spanned<RawNumberOrText>>,
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub margin: Option<Spanned<RawNumberOrText>>,
    #[schemars(with = "Option<BTreeMap<String, serde_json::Value>>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<Spanned<BTreeMap<String, toml::Value>>>,
    #[schemars(with = "Option<BTreeMap<String, serde_json::Value>>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<Spanned<BTreeMap<String, toml::Value>>>,
    #[schemars(with = "Option<f64>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Spanned<f64>>,
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction: Option<Spanned<RawNumberOrText>>,
    #[schemars(with = "Option<BTreeMap<String, serde_json::Value>>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Spanned<BTreeMap<String, toml::Value>>>,
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub along: Option<Spanned<String>>,
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<Spanned<String>>,
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<Spanned<String>>,
    /// One limit for every cell, or a table of limits by variant with an optional `default`.
    #[schemars(with = "Option<RawMaxCv>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cv: Option<Spanned<RawMaxCv>>,
    /// How far apart (relative) two modes must be before a second mode fails `stable`.
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode_gap: Option<Spanned<RawNumberOrText>>,
    /// The cells a check judges: `variant` and parameter values, each a value or a list
    /// (`{ variant = ["fair", "nonfair"], threads = [1, 2] }`), or a list of such tables, which
    /// selects every cell any of them selects (`[{ variant = "fair" }, { threads = 1 }]`).
    #[schemars(with = "Option<RawCells>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells: Option<Spanned<RawCells>>,
    #[schemars(with = "Option<RawNumberOrText>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_drift: Option<Spanned<RawNumberOrText>>,
    #[schemars(with = "Option<f64>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub factor: Option<Spanned<f64>>,
    #[schemars(with = "Option<f64>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<Spanned<f64>>,
    /// `steady`: every run reaches a steady state within its first this many iterations
    /// (a whole number, at least 1; default 50).
    // Read as any number, so that `2.5` or `0` get an error that says what is wanted.
    #[schemars(with = "Option<std::num::NonZeroU32>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within: Option<Spanned<f64>>,
    /// `mechanism`: the metric that `metric` moves with (declared or built-in, e.g. `wall_s`).
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub with: Option<Spanned<String>>,
    /// `mechanism`: `"same"` (both rise together) or `"opposite"` (one falls as the other rises).
    #[schemars(with = "Option<String>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<Spanned<String>>,
    /// `mechanism`: the rank correlation the relation must reach, in (0, 1] (default 0.5).
    #[schemars(with = "Option<f64>")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_rho: Option<Spanned<f64>>,
}

impl RawCheck {
    /// A check of this name and kind, every other key absent.
    pub fn new(name: String, kind: &str) -> Self {
        RawCheck {
            name: spanless(name),
            kind: spanless(kind.to_string()),
            class: None,
            metric: None,
            expect: None,
            tolerance: None,
            margin: None,
            a: None,
            b: None,
            limit: None,
            fraction: None,
            calibration: None,
            along: None,
            variant: None,
            reference: None,
            max_cv: None,
            mode_gap: None,
            cells: None,
            max_drift: None,
            factor: None,
            alpha: None,
            within: None,
            with: None,
            direction: None,
            min_rho: None,
        }
    }
}

/// `cells`: one table of values (each a value or a list), or a list of such tables.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(
    untagged,
    expecting = "cells as a table, e.g. { variant = \"fair\" }, or a list of tables"
)]
pub enum RawCells {
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    One(BTreeMap<String, toml::Value>),
    #[schemars(with = "Vec<BTreeMap<String, serde_json::Value>>")]
    Any(Vec<BTreeMap<String, toml::Value>>),
}

/// `max_cv`: one limit (`"25%"`, 0.25) or limits by variant (`{ fair = "120%", default = "25%" }`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawMaxCv {
    One(RawNumberOrText),
    ByVariant(BTreeMap<String, RawNumberOrText>),
}

/// `expect` is an expression (`"a < 0.5 * b"`), a template (`"{seconds}"`) or a number.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawExpect {
    Number(f64),
    Text(String),
}

/// A value written as a number or as text: fractions (`0.1` or `"10%"`) and durations (`30`
/// seconds or `"30s"`, `"250ms"`, `"2m"`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawNumberOrText {
    Number(f64),
    Text(String),
}

impl RawNumberOrText {
    /// The value as the text parsers read it; a number is a plain decimal.
    pub fn text(&self) -> String {
        match self {
            RawNumberOrText::Number(n) => n.to_string(),
            RawNumberOrText::Text(t) => t.clone(),
        }
    }
}

/// `repetitions`: a fixed number of runs per cell, or a range sampled until the data decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawRepetitions {
    Fixed(u32),
    Range {
        /// Runs per cell before the first look.
        min: u32,
        /// Runs per cell lab may reach when the goal is not met sooner.
        max: u32,
    },
}

impl<'de> Deserialize<'de> for RawRepetitions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RepetitionsVisitor)
    }
}

/// Reads a number or a `{ min, max }` table with serde's own type errors, so that a quoted
/// number reads "a number, not a string" like every other key.
struct RepetitionsVisitor;

impl<'de> serde::de::Visitor<'de> for RepetitionsVisitor {
    type Value = RawRepetitions;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a whole number of runs per cell, or { min = 5, max = 40 }")
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        u32::try_from(v)
            .map(RawRepetitions::Fixed)
            .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        u64::try_from(v)
            .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            .and_then(|v| self.visit_u64(v))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Range {
            min: u32,
            max: u32,
        }
        let r = Range::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        Ok(RawRepetitions::Range {
            min: r.min,
            max: r.max,
        })
    }
}

/// `stop`: the goal of a sampled session.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawStop {
    /// `"decided"`.
    Goal(String),
    /// `{ half_width = "2%" }`, optionally with `metric = "NAME"`.
    Precision {
        half_width: RawNumberOrText,
        #[serde(skip_serializing_if = "Option::is_none")]
        metric: Option<String>,
    },
}

impl<'de> Deserialize<'de> for RawStop {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StopVisitor)
    }
}

/// Reads `"decided"` or a `{ half_width, metric }` table that denies other keys.
struct StopVisitor;

impl<'de> serde::de::Visitor<'de> for StopVisitor {
    type Value = RawStop;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("\"decided\" or { half_width = \"2%\" }")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(RawStop::Goal(v.to_string()))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Precision {
            half_width: RawNumberOrText,
            metric: Option<String>,
        }
        let p = Precision::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        Ok(RawStop::Precision {
            half_width: p.half_width,
            metric: p.metric,
        })
    }
}

#[cfg(test)]
#[path = "raw_tests.rs"]
mod tests;
