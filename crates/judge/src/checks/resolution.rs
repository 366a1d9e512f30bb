//! The automatic resolution check: no time (or rate per unit of time) moves in steps coarse
//! beside its values, and no decision on one is finer than its step.
//!
//! A clock that ticks every q reads a duration as the difference of two floored readings: every
//! value is a whole multiple of q, off the true duration by up to one q either way. As noise, a
//! uniform quantiser adds q²/12 to the variance (Sheppard's correction, 1898; Widrow & Kollár,
//! *Quantization Noise*, 2008, ch. 4), a coefficient of variation of (q / median)/√12. At
//! [`SHARE`] = 5% of the median that is 1.4%, as large as the run-to-run noise of a quiet
//! machine (the trap programs' 1–2%): from there the clock, not the program, sets the spread
//! the intervals are built on, and the check fails. Under 1% it adds 0.3%, which vanishes in
//! quadrature beside that noise; integer counts (a quantum of 1 in thousands or millions) sit
//! far below.
//!
//! **The quantum** ([`quantum`]) of a metric's values is their approximate greatest common
//! step: Euclid's algorithm on the differences of consecutive distinct values, with the
//! remainder taken to the nearest multiple (so a value printed with rounding cannot derail it)
//! and stopped once a remainder falls within [`TOLERANCE`] of the largest value (float rounding
//! of a printed decimal is 1e-16 of it, and Euclid's steps add a little each); every value
//! must then lie on the lattice. Values drawn from a continuous distribution run Euclid down
//! to the tolerance, and a step under [`LATTICE`] tolerances is none; values printed to a
//! fixed number of digits lie on the printing's step (a millionth of a millisecond), far
//! under [`SHARE`]. The values pooled are those of the metric in one variant (one program,
//! one clock), over every cell. A quantum counts as evidence when three or more distinct
//! values lie on it.
//!
//! Values that land on a handful of points show no step when the clock never moved: five runs
//! ([`FEW_RUNS`]) with at most two distinct values ([`FEW_VALUES`]) happen to a continuous time
//! only when the clock (or the printing) rounds it. Such a cell moves in steps of the gap
//! between its two values (for a rate, ops over a whole number of ticks, the only step that
//! holds near it), or with one value, of its metric's quantum where one is known, else of an
//! unknown size where the variant printed no more than two values anywhere (where its other
//! cells vary on no lattice, the clock is fine and the repeated value is the program's). A
//! known step under [`SHARE`] is fine: the values are honest to it.
//!
//! The metrics judged are the clock's readings that something decides on: the primary metric
//! and those a declared check reads. A coarse metric nothing reads (JMH's `gc.time`, in whole
//! milliseconds) decides nothing, and failing the session for it would distrust the verdicts
//! on its cells.
//!
//! A ratio (or a median against a number) on a cell that moves in steps is decided again on its
//! interval widened by one step of each cell at each end ([`widen`]), since each median may be
//! off by that much; a verdict the widened interval does not reach is inconclusive and says
//! the step. A spread (`stable`) is bounded the same way ([`cv_bounds`]).

use crate::analysis::{Analysis, CellStats};
use lab_config::format::{percent, value};
use lab_config::{CheckClass, Experiment, Waiting};
use lab_findings::checks::{CheckResult, Verdict};
use lab_stats::Interval;

/// The check's name, as the report lists it.
pub const RESOLUTION: &str = "no time moves in steps coarse beside its median";

/// A step at least this share of a cell's median makes it coarse.
pub const SHARE: f64 = 0.05;
/// A cell of at least this many runs ...
pub const FEW_RUNS: usize = 5;
/// ... with at most this many distinct values moves in steps, whatever their size.
pub const FEW_VALUES: usize = 2;
/// Two values within this share of the largest magnitude are one value: float rounding.
pub const TOLERANCE: f64 = 1e-12;
/// A quantum is a lattice only when it is at least this many tolerances.
pub const LATTICE: f64 = 1000.0;

/// How a cell's values move: in steps of `q` (`None`: of a size its values cannot show, all
/// being one value), at a `median`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub q: Option<f64>,
    pub median: f64,
}

impl Step {
    /// The step as a share of the median; infinite where its size is unknown.
    pub fn share(&self) -> f64 {
        self.q.map_or(f64::INFINITY, |q| q / self.median.abs())
    }
}

/// The distinct finite values, sorted, values within `tol` of each other taken as one.
fn distinct(values: &[f64], tol: f64) -> Vec<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup_by(|b, a| (*b - *a).abs() <= tol);
    sorted
}

/// The float-rounding tolerance of `values`: [`TOLERANCE`] of their largest magnitude.
fn tolerance(values: &[f64]) -> f64 {
    let largest = values
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    (TOLERANCE * largest).max(f64::MIN_POSITIVE)
}

/// The greatest common step of `a` and `b` to within `tol`: Euclid's algorithm on the
/// nearest-integer remainder.
fn common_step(a: f64, b: f64, tol: f64) -> f64 {
    let (mut a, mut b) = (a.max(b), a.min(b));
    for _ in 0..200 {
        if b <= tol {
            break;
        }
        let r = (a - (a / b).round() * b).abs();
        (a, b) = (b, r);
    }
    a
}

/// The quantum of `values`: the largest q of which every difference of two distinct values is
/// a whole multiple (within [`TOLERANCE`]); `None` under two distinct values or where no
/// lattice of [`LATTICE`] tolerances or more holds them.
pub fn quantum(values: &[f64]) -> Option<f64> {
    let tol = tolerance(values);
    let sorted = distinct(values, tol);
    let q = sorted
        .windows(2)
        .map(|w| w[1] - w[0])
        .reduce(|g, d| common_step(g, d, tol))?;
    let off = |v: f64| {
        let k = (v - sorted[0]) / q;
        (k - k.round()).abs() * q
    };
    (q >= LATTICE * tol && sorted.iter().all(|v| off(*v) <= tol)).then_some(q)
}

/// How many distinct values `values` hold.
pub fn distinct_count(values: &[f64]) -> usize {
    distinct(values, tolerance(values)).len()
}

/// What the values of a metric in one variant show of its clock: their quantum and how many
/// distinct values they hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lattice {
    pub q: Option<f64>,
    pub distinct: usize,
}

impl Lattice {
    pub fn of(values: &[f64]) -> Self {
        Lattice {
            q: quantum(values),
            distinct: distinct_count(values),
        }
    }
}

/// The step of a cell of `runs` runs holding `values`, its metric's values in its variant
/// showing `pooled`; `None` where the cell moves finely enough (see the module).
pub fn cell_step(values: &[f64], runs: usize, pooled: Lattice) -> Option<Step> {
    let median = lab_stats::summary::median(values);
    if !median.is_finite() || median == 0.0 {
        return None;
    }
    let own = distinct(values, tolerance(values));
    let few = runs >= FEW_RUNS && own.len() <= FEW_VALUES;
    let q = match own[..] {
        [lo, hi] if few => Some(hi - lo),
        _ => pooled.q.filter(|_| few || pooled.distinct >= 3),
    };
    let coarse = match q {
        Some(q) => q >= SHARE * median.abs(),
        // One value over many runs, and its variant's other values show no finer steps.
        None => few && pooled.distinct <= FEW_VALUES,
    };
    coarse.then_some(Step { q, median })
}

/// Whether `metric` is a clock's reading, whose resolution is judged: a number declared in a
/// unit of time or of a rate per unit of time (not a count, a text, a size, or a number
/// without a unit, which may be exact).
pub fn clocked(exp: &Experiment, metric: &str) -> bool {
    exp.metric(metric)
        .is_some_and(|m| !m.unit.trim().is_empty() && m.waiting() != Waiting::Untouched)
}

/// Every value of `cell`'s metric in its variant, over all `cells`.
fn pooled<'c>(cells: impl IntoIterator<Item = &'c CellStats>, cell: &CellStats) -> Vec<f64> {
    cells
        .into_iter()
        .filter(|c| c.metric == cell.metric && c.cell.variant == cell.cell.variant)
        .flat_map(CellStats::pooled)
        .collect()
}

/// The step `cell` moves in, among `cells`; `None` where it moves finely or its metric is
/// not one a clock reads.
pub fn step_of(exp: &Experiment, cells: &[CellStats], cell: &CellStats) -> Option<Step> {
    if !clocked(exp, &cell.metric) || exp.skips(lab_config::skip::RESOLUTION) {
        return None;
    }
    cell_step(
        &cell.pooled(),
        cell.runs.len(),
        Lattice::of(&pooled(cells, cell)),
    )
}

/// The quantum of `cell`'s metric in its variant, 0 where none is known: the step a cell
/// that moves finely is widened by beside one that does not.
pub fn fine_step(cells: &[CellStats], cell: &CellStats) -> f64 {
    quantum(&pooled(cells, cell)).unwrap_or(0.0)
}

/// A verdict withheld because a cell moves in steps: what to say, and the interval widened
/// by the steps that did not reach it.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub reading: String,
    pub widened: Interval,
}

/// An interval of a median over `scale` widened by one step `q` at each end; unbounded for an
/// unknown step.
pub fn widen_by(interval: &Interval, q: Option<f64>, scale: f64) -> Interval {
    match q {
        Some(q) => Interval {
            lo: interval.lo - q / scale,
            hi: interval.hi + q / scale,
            level: interval.level,
        },
        None => Interval {
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
            level: interval.level,
        },
    }
}

/// The interval of a ratio a/b (b's median at `b_value`) widened by what steps of `qa` in a
/// and `qb` in b can hide: each median may be off by up to one step; unbounded where a step
/// is unknown or b's step reaches its median.
pub fn widen(interval: &Interval, b_value: f64, qa: Option<f64>, qb: Option<f64>) -> Interval {
    let unbounded = Interval {
        lo: 0.0,
        hi: f64::INFINITY,
        level: interval.level,
    };
    let (Some(qa), Some(qb)) = (qa, qb) else {
        return unbounded;
    };
    if b_value <= qb || b_value.is_nan() {
        return unbounded;
    }
    Interval {
        lo: ((interval.lo * b_value - qa) / (b_value + qb)).max(0.0),
        hi: (interval.hi * b_value + qa) / (b_value - qb),
        level: interval.level,
    }
}

/// The bounds on the coefficient of variation of the true values behind `values`, each read
/// up to `q` off: the standard deviation moves by at most q·√(n/(n−1)) (the triangle
/// inequality on the deviations) and the mean by at most q; `(0, ∞)` for an unknown step.
pub fn cv_bounds(values: &[f64], q: Option<f64>) -> (f64, f64) {
    let n = values.len() as f64;
    let (Some(q), true) = (q, n >= 2.0) else {
        return (0.0, f64::INFINITY);
    };
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let moved = q * (n / (n - 1.0)).sqrt();
    let lo = ((sd - moved).max(0.0)) / (mean + q);
    let hi = if mean > q {
        (sd + moved) / (mean - q)
    } else {
        f64::INFINITY
    };
    (lo, hi)
}

/// A step in its metric's unit: a time with its prefix (`1.00 ms`, `100 µs`), anything else
/// with three significant digits (`0.000100 Mops/s`, not `100 µ Mops/s`).
pub fn step_value(q: f64, unit: &str) -> String {
    if lab_config::units::seconds_per(unit).is_some() {
        value(q, unit)
    } else {
        format!("{} {unit}", lab_config::format::significant(q, 3))
            .trim_end()
            .to_string()
    }
}

/// What to do about a clock coarser than the difference asked about.
const WHY: &str = "the program's clock is coarser than the difference asked about; time with a finer clock (clock_gettime), print more digits or give each run more work";

/// "`ms` moves in steps of 10.0 ms, 50.0% of its median", of the cell `of` where named.
fn moves(metric: &str, unit: &str, step: &Step, of: Option<&str>) -> String {
    match step.q {
        Some(q) => format!(
            "`{metric}` moves in steps of {}, {} of its median{}",
            step_value(q, unit),
            percent(q / step.median.abs()),
            of.map_or(String::new(), |c| format!(" in `{c}`"))
        ),
        None => format!(
            "`{metric}` printed {} in every run{}, in steps it cannot show",
            value(step.median, unit),
            of.map_or(String::new(), |c| format!(" of `{c}`"))
        ),
    }
}

/// "`ms` moves in steps of 10.0 ms, 50.0% of its median: the program's clock is coarser than
/// the difference asked about; …".
pub fn reading(metric: &str, unit: &str, step: &Step) -> String {
    format!("{}: {WHY}", moves(metric, unit, step, None))
}

/// The metrics judged: those a clock reads among the primary metric and the metrics the
/// declared checks read.
pub fn judged_metrics(exp: &Experiment) -> Vec<&str> {
    let read = exp.checks.iter().filter_map(|c| c.kind.metric());
    let mut names: Vec<&str> = exp
        .primary_metric()
        .map(|m| m.name.as_str())
        .into_iter()
        .chain(read)
        .collect();
    names.sort_unstable();
    names.dedup();
    names.retain(|m| clocked(exp, m));
    names
}

/// The check's result; `None` when no metric is judged ([`judged_metrics`]): its report does
/// not list the check.
pub fn resolution_result(exp: &Experiment, analysis: &Analysis) -> Option<CheckResult> {
    let metrics = judged_metrics(exp);
    if metrics.is_empty() {
        return None;
    }
    let judged: Vec<&CellStats> = analysis
        .cells
        .iter()
        .filter(|c| !c.runs.is_empty() && metrics.contains(&c.metric.as_str()))
        .collect();
    if judged.is_empty() {
        let mut result = CheckResult::new(
            RESOLUTION,
            "automatic",
            CheckClass::Validity,
            Verdict::NotRun,
        )
        .reading(format!("no valid run printed `{}`", metrics.join("`, `")));
        result.automatic = true;
        return Some(result);
    }
    let coarse: Vec<(&CellStats, Step)> = judged
        .iter()
        .filter_map(|c| Some((*c, step_of(exp, &analysis.cells, c)?)))
        .collect();
    Some(decided(exp, &judged, &coarse))
}

/// Fails when some cell moves in coarse steps, naming the coarsest; passes otherwise.
pub fn decided(
    exp: &Experiment,
    judged: &[&CellStats],
    coarse: &[(&CellStats, Step)],
) -> CheckResult {
    let unit = |c: &CellStats| exp.metric(&c.metric).map_or("", |m| m.unit.as_str());
    let worst = coarse
        .iter()
        .max_by(|a, b| a.1.share().total_cmp(&b.1.share()));
    let (verdict, reading) = match worst {
        None => (
            Verdict::Pass,
            format!(
                "every time moves in steps under {} of its median, and no cell of {FEW_RUNS} runs or more printed {FEW_VALUES} values or fewer",
                percent(SHARE)
            ),
        ),
        Some((cell, step)) => (
            Verdict::Fail,
            failing_reading(cell, step, unit(cell), coarse.len()),
        ),
    };
    let evidence = format!(
        "{} of {} cells move in steps of {} of their median or more (or repeat {FEW_VALUES} values or fewer over {FEW_RUNS} runs or more){}",
        coarse.len(),
        judged.len(),
        percent(SHARE),
        coarsest(exp, judged)
    );
    let mut result = CheckResult::new(RESOLUTION, "automatic", CheckClass::Validity, verdict)
        .evidence(evidence)
        .reading(reading)
        .runs(
            coarse
                .iter()
                .flat_map(|(c, _)| c.run_ids.iter().map(ToString::to_string))
                .collect(),
        );
    result.automatic = true;
    result
}

/// The reading of the coarsest cell, named, and how many more cells move in steps.
fn failing_reading(cell: &CellStats, step: &Step, unit: &str, cells: usize) -> String {
    let more = match cells - 1 {
        0 => String::new(),
        1 => ", and 1 more cell".to_string(),
        k => format!(", and {k} more cells"),
    };
    let moves = moves(&cell.metric, unit, step, Some(&cell.label));
    format!("{moves}{more}: {WHY}")
}

/// "; the coarsest quantum: `ms` 1.00 ms (33.3% of the median of `spin work_ms=3`)", or
/// that no metric's values lie on a lattice.
fn coarsest(exp: &Experiment, judged: &[&CellStats]) -> String {
    let mut quanta: std::collections::BTreeMap<(&str, &str), Option<f64>> = Default::default();
    let mut best: Option<(f64, f64, &CellStats)> = None;
    for cell in judged {
        let key = (cell.metric.as_str(), cell.cell.variant.as_str());
        let q = *quanta
            .entry(key)
            .or_insert_with(|| quantum(&pooled(judged.iter().copied(), cell)));
        let (Some(q), Some(median)) = (q, cell.median()) else {
            continue;
        };
        let share = q / median.abs();
        if best.is_none_or(|(s, _, _)| share > s) {
            best = Some((share, q, cell));
        }
    }
    match best {
        None => "; no metric's values lie on a lattice".to_string(),
        Some((share, q, cell)) => format!(
            "; the coarsest quantum: `{}` {} ({} of the median of `{}`)",
            cell.metric,
            step_value(q, exp.metric(&cell.metric).map_or("", |m| m.unit.as_str())),
            percent(share),
            cell.label
        ),
    }
}

#[cfg(test)]
#[path = "resolution_tests.rs"]
mod tests;
