//! The validated experiment: what every later stage trusts without re-checking.

pub use super::value::ParamValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// One parameter axis of the matrix, in declared value order.
#[derive(Debug, Clone, Serialize)]
pub struct Param {
    pub name: String,
    pub values: Vec<ParamValue>,
}

impl Param {
    /// True when every value is a number, so it can be an axis of a chart.
    pub fn is_numeric(&self) -> bool {
        self.values.iter().all(|v| v.as_f64().is_some())
    }
}

/// The order in which planned runs are executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Shuffled,
    Sequential,
}

/// How far the medians of runs with larger and smaller paddings may differ by default: ±2%,
/// a fifth of the 10% Mytkowicz et al. (ASPLOS 2009) saw the environment's size move results.
/// A fixed share rather than the cell's run-to-run spread: a noisy cell would otherwise widen
/// its own tolerance and hide an effect as large as its noise; with a fixed one its wide
/// interval straddles the band and says inconclusive.
pub const DEFAULT_LAYOUT_TOLERANCE: f64 = 0.02;

/// `layout = "randomized"`: each run's environment is padded by a length and its heap shifted
/// by an amount drawn from the seed (see the plan's `layout` module), and the runs are checked
/// for an effect of either.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Layout {
    /// How far the median of the runs with larger paddings may lie from that of the runs
    /// with smaller ones, as a fraction (0.02: within ±2%).
    pub tolerance: f64,
}

/// How a session's runs and builds are kept from the record, as lab.toml asks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Isolation {
    pub wanted: crate::isolation::Wanted,
    /// `lab.toml:LINE:COL` of the `isolation` key, when it is declared.
    pub declared_at: Option<String>,
}

/// The build step, run once per session before any measured run.
#[derive(Debug, Clone, Serialize)]
pub struct Build {
    pub argv: Vec<String>,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

/// A command to benchmark, with `{param}` placeholders inside argv elements.
#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    pub name: String,
    pub label: Option<String>,
    pub argv: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cpus: Option<Vec<usize>>,
    /// `lab.toml:LINE:COL` of `cpus`, when declared: a CPU the machine lacks is found when a
    /// session starts, and named there.
    #[serde(skip)]
    pub cpus_declared_at: Option<String>,
    /// Parameters restricted to a subset of their values for this variant.
    pub only: BTreeMap<String, Vec<ParamValue>>,
    /// Commands run around its runs, untimed: before each, after each, once per cell first.
    #[serde(skip_serializing_if = "Hooks::is_empty")]
    pub hooks: Hooks,
    /// Whether `run` and the hooks were refused when they showed shell syntax (`shell_check`).
    pub shell_check: bool,
    /// The file its runs read as standard input (`input`), as lab.toml names it; `None`:
    /// `/dev/null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<PathBuf>,
}

/// Untimed commands run around a variant's runs (hyperfine's `--prepare`, `--conclude` and
/// `--setup`, `--cleanup`), each an argv with placeholders.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Hooks {
    pub prepare: Option<Vec<String>>,
    pub conclude: Option<Vec<String>>,
    pub setup: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<Vec<String>>,
}

impl Hooks {
    /// True when the variant declares none.
    pub fn is_empty(&self) -> bool {
        self.prepare.is_none()
            && self.conclude.is_none()
            && self.setup.is_none()
            && self.cleanup.is_none()
    }
}

/// Whether a larger or smaller value of a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    /// "higher" or "lower", as lab.toml writes it.
    pub fn word(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }
}

/// Where a metric's values are read from in a run's standard output.
#[derive(Debug, Clone, Serialize)]
pub enum Extractor {
    /// The value of a key in every line that is a JSON object.
    Json(String),
    /// The first capture group of every match of a regular expression.
    Regex(String),
    /// Measured by lab itself for every run (wall, CPU time, memory): nothing to read.
    Builtin,
    /// A run's total of one metric divided by its total of another (`of` and `per`), e.g.
    /// context switches per operation: nothing to read, computed from the run's other values.
    Derived { of: String, per: String },
}

/// The built-in metrics that are counted rather than timed: peak memory, page faults, block
/// operations and the times a process gave up its CPU to wait do not depend on how busy the
/// machine was. Involuntary context switches do (a busier machine preempts more): they are
/// timings, discarded with the run's wall time when the machine was busy.
pub const COUNTED_BUILTINS: [&str; 7] = [
    "wait_s",
    "max_rss_mib",
    "voluntary_cs",
    "minor_faults",
    "major_faults",
    "block_in",
    "block_out",
];

/// The metrics lab measures for every run, with their units: usable like declared ones.
pub const BUILTIN_METRICS: [(&str, &str, &str); 12] = [
    (
        "wall_s",
        "s",
        "wall-clock time of the process, spawn to exit",
    ),
    ("user_s", "s", "CPU time in user mode"),
    ("sys_s", "s", "CPU time in the kernel"),
    ("cpu_s", "s", "user + system CPU time"),
    (
        "wait_s",
        "s",
        "time the run's own tasks waited for a CPU others had (the disturbance every verdict weighs)",
    ),
    ("max_rss_mib", "MiB", "peak resident memory"),
    (
        "voluntary_cs",
        "switches",
        "times the process gave up its CPU to wait (I/O, sleep, a lock)",
    ),
    (
        "involuntary_cs",
        "switches",
        "times the kernel took the CPU from the process (preemption)",
    ),
    (
        "minor_faults",
        "faults",
        "page faults served without I/O (a fresh or cached page)",
    ),
    ("major_faults", "faults", "page faults that waited for I/O"),
    (
        "block_in",
        "ops",
        "block input operations (reads from a disk)",
    ),
    (
        "block_out",
        "ops",
        "block output operations (writes to a disk)",
    ),
];

/// A value a run reports.
#[derive(Debug, Clone, Serialize)]
pub struct Metric {
    pub name: String,
    pub extractor: Extractor,
    pub unit: String,
    pub better: Better,
    /// Text metrics (checksums, echoed configurations) are compared, never averaged.
    pub text: bool,
    /// Counted, not timed (`count = true`): kept from runs whose timings are discarded.
    pub count: bool,
    /// Reported by some runs only (`optional = true`): a run without a value is not failed.
    pub optional: bool,
    pub warmup_iterations: usize,
}

impl Metric {
    /// Whether the metric's values depend on how busy the machine was: numbers that are not
    /// declared counts. Runs whose timings are discarded keep their other values.
    pub fn is_timing(&self) -> bool {
        !self.text && !self.count
    }

    /// True for the metrics lab measures itself ([`BUILTIN_METRICS`]).
    pub fn is_builtin(&self) -> bool {
        matches!(self.extractor, Extractor::Builtin)
    }

    /// True for a metric computed from two others per run (`of` and `per`).
    pub fn is_derived(&self) -> bool {
        matches!(self.extractor, Extractor::Derived { .. })
    }

    /// The two metrics a derived metric divides (`of` and `per`); `None` for any other.
    pub fn operands(&self) -> Option<(&str, &str)> {
        match &self.extractor {
            Extractor::Derived { of, per } => Some((of, per)),
            _ => None,
        }
    }

    /// True for the metrics read from what the run printed.
    pub fn is_printed(&self) -> bool {
        !self.is_builtin() && !self.is_derived()
    }

    /// How a run's waiting for a CPU others had moves this metric's values. Of the metrics
    /// lab measures, only the wall time grows with waiting (CPU time, memory and counts do
    /// not); a declared metric goes by its unit: a time grows, a rate per unit of time falls,
    /// anything else (counts, ratios, sizes) is untouched, and a metric with no unit goes by
    /// which way is better (a lower-is-better number is taken for a time).
    pub fn waiting(&self) -> Waiting {
        if self.text || self.count {
            return Waiting::Untouched;
        }
        if self.is_builtin() {
            return if self.name == "wall_s" {
                Waiting::Lengthens
            } else {
                Waiting::Untouched
            };
        }
        match unit_kind(&self.unit) {
            UnitKind::Time => Waiting::Lengthens,
            UnitKind::Rate => Waiting::Lowers,
            UnitKind::Other => Waiting::Untouched,
            UnitKind::None => match self.better {
                Better::Lower => Waiting::Lengthens,
                Better::Higher => Waiting::Lowers,
            },
        }
    }
}

/// How waiting for a CPU moves a metric's values: the one-sided disturbance the verdicts
/// weigh (a run slowed by at most the time it waited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// Counts, sizes, CPU time: what waiting does not change.
    Untouched,
    /// A time: at most the waited share of it is the disturbance.
    Lengthens,
    /// A rate per unit of time: the run did its work in a time at most that share longer.
    Lowers,
}

/// What a unit measures, as far as waiting goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnitKind {
    Time,
    Rate,
    Other,
    None,
}

/// Units of time as lab.toml writes them.
const TIME_UNITS: [&str; 16] = [
    "s", "sec", "secs", "second", "seconds", "ms", "msec", "us", "µs", "μs", "usec", "ns", "nsec",
    "min", "minutes", "h",
];

/// Whether `unit` is a time, a rate per unit of time ("Mops/s", "ops per second", "MHz"), or
/// something else.
fn unit_kind(unit: &str) -> UnitKind {
    let unit = unit.trim().to_lowercase();
    if unit.is_empty() {
        return UnitKind::None;
    }
    if TIME_UNITS.contains(&unit.as_str()) {
        return UnitKind::Time;
    }
    let per = unit
        .rsplit_once('/')
        .map(|(_, d)| d.trim().to_string())
        .or_else(|| unit.split_once(" per ").map(|(_, d)| d.trim().to_string()));
    let per_time = per.is_some_and(|d| TIME_UNITS.contains(&d.as_str()));
    if per_time || unit.ends_with("hz") {
        UnitKind::Rate
    } else {
        UnitKind::Other
    }
}

/// A set of parameter values naming one cell (with the variant).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellSelector {
    pub variant: Option<String>,
    pub params: BTreeMap<String, ParamValue>,
}

/// A comparison operator in a `compare` expectation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Comparison {
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
}

impl Comparison {
    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::Less => "<",
            Comparison::LessEqual => "≤",
            Comparison::Greater => ">",
            Comparison::GreaterEqual => "≥",
        }
    }
}

/// Whether a check judges the measurement itself or the author's hypothesis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckClass {
    Validity,
    Hypothesis,
}

/// What a declared check tests, with its validated arguments.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum CheckKind {
    /// Each run's duration (wall time or a metric in seconds) is `expect` ± `tolerance`.
    Duration {
        expect: String,
        tolerance: f64,
        metric: Option<String>,
    },
    /// `a <op> factor · b`, decided on the CI of the ratio a / b.
    Compare {
        metric: String,
        a: CellSelector,
        b: CellSelector,
        op: Comparison,
        factor: f64,
        /// An interval wholly within ± this share of `factor` is "at the threshold".
        margin: f64,
    },
    /// A metric stays below `fraction` of a ceiling (a number or a calibration cell).
    Ceiling {
        metric: String,
        limit: Option<f64>,
        calibration: Option<CellSelector>,
        fraction: f64,
    },
    /// Two cells agree within `margin`, decided on the CI of their ratio.
    Agree {
        metric: String,
        a: CellSelector,
        b: CellSelector,
        margin: f64,
    },
    /// A text metric is identical across variants (or equal to a reference variant's).
    Checksum {
        metric: String,
        reference: Option<String>,
    },
    /// Cells differing along a parameter are distinguishable.
    Distinct {
        metric: String,
        along: String,
        variant: Option<String>,
        margin: f64,
    },
    /// No trend larger than `max_drift` per 100 runs against execution position, no
    /// carry-over from the previous run and no serial dependence between runs.
    RunOrder {
        metric: String,
        alpha: f64,
        max_drift: f64,
    },
    /// Run-to-run spread under `max_cv` and no second mode.
    Stable {
        metric: String,
        max_cv: f64,
        /// Limits of the CV by variant, where they differ from `max_cv`.
        max_cv_by_variant: BTreeMap<String, f64>,
        /// Two modes closer than this (relative to the lower one) do not fail the check.
        mode_gap: f64,
        alpha: f64,
    },
    /// Every run reaches a steady state (Barrett et al. 2017) within its first `within`
    /// iterations of the metric.
    Steady { metric: String, within: usize },
    /// The metric grows along a parameter by at least `factor` from its first to last value.
    Scaling {
        metric: String,
        along: String,
        variant: Option<String>,
        factor: f64,
        /// An interval wholly within ± this share of `factor` is "at the threshold".
        margin: f64,
    },
    /// The metric moves with another across the cells: Spearman's ρ between the two over the
    /// runs, signed by `direction`, reaches `min_rho`.
    Mechanism {
        metric: String,
        with: String,
        direction: Direction,
        min_rho: f64,
    },
}

/// Which way a `mechanism` check expects two metrics to move together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Both rise together: ρ near +1.
    Same,
    /// One falls as the other rises: ρ near −1.
    Opposite,
}

impl Direction {
    /// "same" or "opposite", as lab.toml writes it.
    pub fn word(self) -> &'static str {
        match self {
            Direction::Same => "same",
            Direction::Opposite => "opposite",
        }
    }

    /// The correlation as this direction counts it: ρ for `same`, −ρ for `opposite`.
    pub fn signed(self, rho: f64) -> f64 {
        match self {
            Direction::Same => rho,
            Direction::Opposite => -rho,
        }
    }
}

impl CheckKind {
    /// The margin around its threshold within which a check's interval is "at the threshold",
    /// for the kinds that set a ratio against one threshold.
    pub fn threshold_margin(&self) -> Option<f64> {
        match self {
            CheckKind::Compare { margin, .. } | CheckKind::Scaling { margin, .. } => Some(*margin),
            _ => None,
        }
    }

    /// The metric the check judges, when it names one.
    pub fn metric(&self) -> Option<&str> {
        match self {
            CheckKind::Duration { metric, .. } => metric.as_deref(),
            CheckKind::Compare { metric, .. }
            | CheckKind::Ceiling { metric, .. }
            | CheckKind::Agree { metric, .. }
            | CheckKind::Checksum { metric, .. }
            | CheckKind::Distinct { metric, .. }
            | CheckKind::RunOrder { metric, .. }
            | CheckKind::Stable { metric, .. }
            | CheckKind::Steady { metric, .. }
            | CheckKind::Scaling { metric, .. }
            | CheckKind::Mechanism { metric, .. } => Some(metric),
        }
    }
}

/// A declared check.
#[derive(Debug, Clone, Serialize)]
pub struct CheckSpec {
    pub name: String,
    pub class: CheckClass,
    pub kind: CheckKind,
    /// The cells the check judges (`cells = {…}`); all when `None`.
    pub scope: Option<CellScope>,
}

/// The cells a check judges: every cell any of its sets holds (`cells = [{…}, {…}]`), or
/// those of its one set (`cells = {…}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellScope {
    pub sets: Vec<CellSet>,
}

/// A set of cells: the variants named (all when empty) crossed with the parameter values named
/// (all values of a parameter not named).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellSet {
    pub variants: Vec<String>,
    pub params: BTreeMap<String, Vec<ParamValue>>,
}

/// How a sampled session grows: up to `max` runs per cell, until `goal` is met.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sampling {
    pub max: u32,
    pub goal: Goal,
    /// How long the session's runs may take: no look starts that would carry them past it.
    pub budget: Option<std::time::Duration>,
}

/// When a sampled session stops adding runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Goal {
    /// Every hypothesis check passes or fails.
    Decided,
    /// Every cell's interval of the median of `metric` lies within ± `fraction` of it.
    HalfWidth { fraction: f64, metric: String },
    /// In a session across two revisions (`lab run --revs`): every cell's comparison of the
    /// head revision with the base is faster, slower or the same within ± `threshold`. Only
    /// the cells still inconclusive grow.
    RevisionsDecided { threshold: f64 },
}

/// A validated experiment, ready to plan.
#[derive(Debug, Clone, Serialize)]
pub struct Experiment {
    pub name: String,
    pub dir: PathBuf,
    pub file: PathBuf,
    /// SHA-256 of `lab.toml`, recorded in the manifest.
    pub source_hash: String,
    pub title: String,
    pub hypothesis: String,
    pub repetitions: u32,
    pub warmup_runs: u32,
    pub order: Order,
    pub seed: u64,
    pub timeout: Duration,
    /// The share of its wall time a run may wait for a CPU others had (or have its CPUs
    /// stolen) before its timings are discarded ("the machine was busy").
    pub max_busy: f64,
    /// The limit of the rule runs recorded before lab judged waiting (no `busy_limit` in
    /// runs.csv) were judged by: others' share of their CPUs' time, `max_busy` as declared or
    /// the 25% it defaulted to then.
    pub legacy_max_busy: f64,
    /// After a disturbed run, how long the next may wait for the machine to calm (`calm_wait`;
    /// zero never waits).
    pub calm_wait: std::time::Duration,
    /// How many bytes of each run's stdout and of its stderr the record keeps (`max_output`).
    pub max_output: u64,
    /// With `repetitions = { min, max }`: runs are added in looks until the goal is met, from
    /// `repetitions` (the min) up to `max` per cell. `None`: `repetitions` runs, fixed.
    pub sampling: Option<Sampling>,
    pub versions: Vec<Vec<String>>,
    pub build: Option<Build>,
    pub params: Vec<Param>,
    /// Every value each parameter takes in lab.toml under any profile: a notes reference to
    /// one of these is declared even when this session's profile did not run it.
    pub declared_values: BTreeMap<String, Vec<ParamValue>>,
    pub variants: Vec<Variant>,
    pub metrics: Vec<Metric>,
    pub checks: Vec<CheckSpec>,
    pub profile: Option<String>,
    /// Non-fatal findings, e.g. an argv element that looks like several arguments.
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// For a session across git revisions: the folder each value of the `rev` parameter runs
    /// in (the experiment's folder in that revision's worktree).
    #[serde(skip)]
    pub revision_dirs: BTreeMap<String, PathBuf>,
    /// For a session across revisions measured in duet (`--duet`): the CPUs of the two sides
    /// a pair of runs, one of each revision, executes on at the same time.
    #[serde(skip)]
    pub duet: Option<DuetSides>,
    /// The tool whose results the experiment holds (`lab import`); `None`: lab measures it.
    pub imported: Option<String>,
    pub isolation: Isolation,
    /// The folder runs start in when lab.toml names one (`workdir`), resolved against the
    /// experiment folder; `None`: the experiment folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workdir: Option<PathBuf>,
    /// Where runs start: the experiment folder joined with `workdir`.
    #[serde(skip)]
    pub run_root: PathBuf,
    /// A non-zero exit code does not make a run invalid (`ignore_failure = true`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ignore_failure: bool,
    /// Only these non-zero exit codes do not make a run invalid (`ignore_failure = [1, 2]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_exit_codes: Vec<i32>,
    /// How a run's start-up counts in its time (`start_up`).
    #[serde(skip_serializing_if = "StartUp::is_floor")]
    pub start_up: StartUp,
    /// Whether runs get a randomised environment size; `None`: the environment as it is.
    pub layout: Option<Layout>,
    /// perf counters read for every run (`[experiment] counters`), each a built-in metric.
    pub counters: Vec<crate::counter::Counter>,
    /// `lab.toml:LINE:COL` of the `counters` key, when it is declared.
    pub counters_declared_at: Option<String>,
    /// The automatic checks lab.toml turned off (`skip_checks`), by key.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skip_checks: Vec<String>,
}

impl Experiment {
    /// Whether lab.toml turned off the automatic check of this key.
    pub fn skips(&self, key: &str) -> bool {
        self.skip_checks.iter().any(|k| k == key)
    }
}

/// How a run's start-up counts in its time (`start_up` in lab.toml).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StartUp {
    /// Runs shorter than the timing floor are too short to time (the default).
    #[default]
    Floor,
    /// Runs are timed whole, start-up included, however short.
    Included,
    /// This command's start-up, measured at the session's start, is taken out of every run.
    Subtracted(Vec<String>),
}

impl StartUp {
    pub fn is_floor(&self) -> bool {
        *self == StartUp::Floor
    }
}

/// The two disjoint CPU sets of a duet: a pair's first run is pinned to the first, its
/// partner to the second.
pub type DuetSides = [Vec<usize>; 2];

/// The parameter a session across revisions adds: which revision a run measures.
pub const REV_PARAM: &str = "rev";

impl Experiment {
    /// The same experiment measured across `revisions` (in order, base first): a `rev`
    /// parameter with one value per revision, each running in `dirs[value]`, in shuffled
    /// blocks so that the revisions' runs interleave.
    pub fn across_revisions(
        mut self,
        revisions: &[String],
        dirs: BTreeMap<String, PathBuf>,
    ) -> Self {
        self.params.push(Param {
            name: REV_PARAM.to_string(),
            values: revisions.iter().cloned().map(ParamValue::Text).collect(),
        });
        self.declared_values.insert(
            REV_PARAM.to_string(),
            revisions.iter().cloned().map(ParamValue::Text).collect(),
        );
        self.order = Order::Shuffled;
        self.revision_dirs = dirs;
        self
    }

    /// The folder a run with these parameters runs in.
    pub fn run_dir(&self, params: &BTreeMap<String, ParamValue>) -> &std::path::Path {
        params
            .get(REV_PARAM)
            .and_then(|v| self.revision_dirs.get(&v.to_string()))
            .unwrap_or(&self.run_root)
    }

    /// The derived metrics (`of` / `per`), each after the ones it is derived from.
    pub fn derived_order(&self) -> Vec<String> {
        dependency_order(&self.metrics)
    }

    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    pub fn variant(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The metric charts and tables lead with: the first declared numeric one, else the
    /// process's wall time.
    pub fn primary_metric(&self) -> Option<&Metric> {
        self.metrics
            .iter()
            .find(|m| !m.text && !m.is_builtin())
            .or_else(|| self.metric("wall_s"))
    }

    /// The numeric metrics the analysis computes statistics for: every declared one, and the
    /// built-in ones that are primary or that a check names.
    pub fn analysed_metrics(&self) -> Vec<&Metric> {
        let primary = self.primary_metric().map(|m| m.name.as_str());
        self.metrics
            .iter()
            .filter(|m| !m.text)
            .filter(|m| {
                !m.is_builtin()
                    || Some(m.name.as_str()) == primary
                    || self
                        .checks
                        .iter()
                        .any(|c| c.kind.metric() == Some(m.name.as_str()))
            })
            .collect()
    }
}

/// The derived metrics, each after those it is derived from (the graph has no cycles).
pub(super) fn dependency_order(metrics: &[Metric]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    let derived: Vec<&Metric> = metrics.iter().filter(|m| m.is_derived()).collect();
    while order.len() < derived.len() {
        let before = order.len();
        for m in &derived {
            let Some((of, per)) = m.operands() else {
                continue;
            };
            let ready =
                |n: &str| order.iter().any(|o| o == n) || !derived.iter().any(|d| d.name == n);
            if !order.contains(&m.name) && ready(of) && ready(per) {
                order.push(m.name.clone());
            }
        }
        if order.len() == before {
            break;
        }
    }
    order
}
