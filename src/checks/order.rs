//! `order`: results must not depend on when a run executed or on the runs before it (seed 003:
//! heap context, warm caches and drift made position a hidden variable). Each valid measured
//! run's value becomes a residual relative to its cell's mean (value / mean − 1), so all cells
//! pool. The mean, not the median: when carry-over splits a cell into two groups, the median
//! sits inside the larger group and hides the effect, while the mean stays between them.
//!
//! Four tests, Holm-adjusted together (Holm 1979) and failed below `alpha`:
//! - trend: Mann–Kendall (Mann 1945; Kendall 1975) on residuals in execution order, sized by
//!   the Theil–Sen slope (Sen 1968); it fails only when the drift is also larger than the
//!   declared `max_drift` per 100 runs, since a drift can be real and too small to matter;
//! - carry-over: Kruskal–Wallis (Kruskal & Wallis 1952) on residuals grouped by the variant of
//!   the run that executed immediately before (any cell, warm-ups included);
//! - within cells: the Wald–Wolfowitz (1943) serial-correlation test of each cell's residuals
//!   in execution order, each paired with the next run of the same cell, pooled over cells by
//!   summing their independent statistics. Pooling, rather than testing cells one by one and
//!   combining p-values, keeps the power of every pair when a cell has only a few runs: a run
//!   that leaves something behind for the next run of its own variant makes the cell
//!   alternate, which no other test sees;
//! - whole sequence: the Ljung–Box test at lag 1 (Ljung & Box 1978) on all residuals in
//!   execution order.
//!
//! Both serial tests see the residuals with the Theil–Sen trend taken out, so that a drift is
//! judged by its size alone. A test that cannot run leaves its part untested: the check is
//! then inconclusive, never a plain pass.

use super::verdict::{CheckResult, Verdict};
use crate::analysis::RunView;
use crate::config::{CheckSpec, Experiment};
use crate::format::{percent, significant};
use crate::plan::CellKey;
use crate::stats::{self, KruskalWallis, LjungBox, MannKendall, SerialCorrelation};
use std::collections::BTreeMap;

/// Fewest residuals for the trend test, and for the whole check.
pub const MIN_ORDER_RUNS: usize = 8;
/// Fewest residuals in a predecessor group for the carry-over test (which needs two groups).
pub const MIN_GROUP_RUNS: usize = 2;
/// Fewest runs a cell needs to take part in the within-cell test.
pub const MIN_CELL_RUNS: usize = stats::serial::MIN_SERIAL_GROUP;

/// A residual: the run and its relative deviation from its cell's mean.
#[derive(Clone, Copy)]
struct Residual<'a> {
    run: &'a RunView,
    value: f64,
}

/// The parts of the check, in the order the evidence lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Trend = 0,
    CarryOver = 1,
    WithinCells = 2,
    Sequence = 3,
}

/// The order in which a failing check's reading names parts whose evidence is equally strong:
/// the most specific first.
const LEAD: [Part; 4] = [
    Part::CarryOver,
    Part::WithinCells,
    Part::Sequence,
    Part::Trend,
];

impl Part {
    /// What the part found, in a few words, when it fails next to another.
    fn finding(self) -> &'static str {
        match self {
            Part::Trend => "drift",
            Part::CarryOver => "carry-over from the previous run",
            Part::WithinCells => "serial dependence within cells",
            Part::Sequence => "serial dependence in execution order",
        }
    }

    /// The part as named when it could not be tested, and what it needs.
    fn untested(self) -> (&'static str, String) {
        match self {
            Part::CarryOver => (
                "carry-over from the previous run's variant",
                format!("two predecessor variants with {MIN_GROUP_RUNS} runs each"),
            ),
            Part::WithinCells => (
                "serial dependence within cells",
                format!("{MIN_ORDER_RUNS} runs in cells of at least {MIN_CELL_RUNS} runs each"),
            ),
            // Never untested: without them the check is not run at all.
            Part::Trend | Part::Sequence => {
                ("execution order", format!("{MIN_ORDER_RUNS} valid runs"))
            }
        }
    }
}

/// Every test's result; `None` for a part that could not be tested.
struct Tests {
    n: usize,
    trend: MannKendall,
    /// Theil–Sen slope of the residuals per run position.
    slope: f64,
    carry: Option<KruskalWallis>,
    groups: BTreeMap<String, Vec<f64>>,
    within: Option<SerialCorrelation>,
    sequence: LjungBox,
}

impl Tests {
    /// Raw p-values by part; NaN for a part not tested.
    fn p_values(&self) -> [f64; 4] {
        [
            self.trend.p_value,
            self.carry.map_or(f64::NAN, |k| k.p_value),
            self.within.map_or(f64::NAN, |w| w.p_value),
            self.sequence.p_value,
        ]
    }

    /// The drift per 100 runs, as a fraction of the cell mean.
    fn drift(&self) -> f64 {
        self.slope * 100.0
    }
}

/// The tests, Holm-adjusted together, and what each decided.
struct Judged {
    adjusted: [f64; 4],
    significant: [bool; 4],
    /// Significant drift no larger than the declared limit does not fail.
    max_drift: f64,
}

impl Judged {
    fn new(tests: &Tests, alpha: f64, max_drift: f64) -> Self {
        let raw = tests.p_values();
        let holm = stats::holm(&raw);
        let adjusted = [holm[0], holm[1], holm[2], holm[3]];
        Judged {
            adjusted,
            significant: adjusted.map(|p| p < alpha),
            max_drift,
        }
    }

    fn adjusted(&self, part: Part) -> f64 {
        self.adjusted[part as usize]
    }

    fn tested(&self, part: Part) -> bool {
        !self.adjusted(part).is_nan()
    }

    /// Whether drift was found but is no larger than the declared limit.
    fn small_drift(&self, tests: &Tests) -> bool {
        self.significant[Part::Trend as usize] && tests.drift().abs() <= self.max_drift
    }

    fn fails(&self, part: Part, tests: &Tests) -> bool {
        self.significant[part as usize] && !(part == Part::Trend && self.small_drift(tests))
    }

    /// The failing parts, the strongest evidence (smallest adjusted p) first, ties in
    /// [`LEAD`] order.
    fn failing(&self, tests: &Tests) -> Vec<Part> {
        let mut failing: Vec<Part> = LEAD.into_iter().filter(|&p| self.fails(p, tests)).collect();
        failing.sort_by(|a, b| self.adjusted(*a).total_cmp(&self.adjusted(*b)));
        failing
    }

    fn untested(&self) -> Vec<Part> {
        LEAD.into_iter().filter(|&p| !self.tested(p)).collect()
    }

    /// The smallest adjusted p-value of the tested parts other than a small drift.
    fn smallest_other(&self, tests: &Tests) -> f64 {
        LEAD.into_iter()
            .filter(|&p| self.tested(p) && !(p == Part::Trend && self.small_drift(tests)))
            .map(|p| self.adjusted(p))
            .fold(1.0, f64::min)
    }
}

/// Judges the `order` check on `metric`: fails when a Holm-adjusted test falls below
/// `alpha` (the trend only when its drift also exceeds `max_drift` per 100 runs).
pub fn check(
    spec: &CheckSpec,
    exp: &Experiment,
    metric: &str,
    alpha: f64,
    max_drift: f64,
    runs: &[RunView],
) -> CheckResult {
    let base = CheckResult::new(&spec.name, "order", spec.class, Verdict::NotRun);
    let skip = exp.metric(metric).map_or(0, |m| m.warmup_iterations);
    // A scope chooses whose residuals are judged; predecessors still come from every run.
    let residuals = residuals(runs, metric, skip, spec.scope.as_ref());
    let Some(tests) = (residuals.len() >= MIN_ORDER_RUNS)
        .then(|| run_tests(runs, &residuals))
        .flatten()
    else {
        return base.reading(format!(
            "{} valid runs with a cell to compare against; the trend test needs {MIN_ORDER_RUNS}",
            residuals.len()
        ));
    };
    let judged = Judged::new(&tests, alpha, max_drift);
    let failing = judged.failing(&tests);
    let verdict = if !failing.is_empty() {
        Verdict::Fail
    } else if !judged.untested().is_empty() {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    };
    let deciding = if verdict == Verdict::Fail {
        deciding_cells(runs, &residuals, alpha, max_drift)
    } else {
        Vec::new()
    };
    let mut reading = match failing.split_first() {
        Some((lead, others)) => fail_reading(*lead, others, &tests, &judged),
        None => quiet_reading(&tests, &judged),
    };
    if !deciding.is_empty() {
        reading.push_str(&rests_on(exp, &deciding));
    }
    let runs = if verdict == Verdict::Fail {
        residuals
            .iter()
            .filter(|r| deciding.is_empty() || deciding.contains(&&r.run.cell))
            .map(|r| r.run.id.clone())
            .collect()
    } else {
        Vec::new()
    };
    CheckResult { verdict, ..base }
        .evidence(evidence(&tests, &judged))
        .reading(reading)
        .runs(runs)
}

/// Whether some test fails on these residuals.
fn fails_on(runs: &[RunView], residuals: &[Residual], alpha: f64, max_drift: f64) -> bool {
    (residuals.len() >= MIN_ORDER_RUNS)
        .then(|| run_tests(runs, residuals))
        .flatten()
        .is_some_and(|t| !Judged::new(&t, alpha, max_drift).failing(&t).is_empty())
}

/// The cells a failure rests on: those without whose runs (left out one cell at a time) no
/// test would fail. Empty when that is every judged cell, or none: the effect is shared, and
/// the check names every judged run.
fn deciding_cells<'a>(
    runs: &[RunView],
    residuals: &[Residual<'a>],
    alpha: f64,
    max_drift: f64,
) -> Vec<&'a CellKey> {
    let mut cells: Vec<&CellKey> = residuals.iter().map(|r| &r.run.cell).collect();
    cells.sort();
    cells.dedup();
    let judged = cells.len();
    let deciding: Vec<&CellKey> = cells
        .into_iter()
        .filter(|cell| {
            let rest: Vec<Residual> = residuals
                .iter()
                .filter(|r| r.run.cell != **cell)
                .copied()
                .collect();
            !fails_on(runs, &rest, alpha, max_drift)
        })
        .collect();
    if deciding.len() == judged {
        Vec::new()
    } else {
        deciding
    }
}

/// "; it rests on fast n=2: without its runs no test fails".
fn rests_on(exp: &Experiment, cells: &[&CellKey]) -> String {
    let labels: Vec<String> = cells
        .iter()
        .map(|c| crate::analysis::cell_label(exp, c))
        .collect();
    match labels.as_slice() {
        [one] => format!("; it rests on {one}: without its runs no test fails"),
        _ => format!(
            "; it rests on {}: without the runs of any one of them no test fails",
            labels.join(", ")
        ),
    }
}

/// Every test on the residuals; `None` when the trend test cannot run.
fn run_tests(runs: &[RunView], residuals: &[Residual]) -> Option<Tests> {
    let (trend, slope) = trend(residuals)?;
    let detrended = detrended(residuals, slope);
    let groups = by_predecessor(runs, residuals);
    Some(Tests {
        n: residuals.len(),
        trend,
        slope,
        carry: carry_over(&groups),
        groups,
        within: within_cells(residuals, &detrended),
        // All residuals equal (a deterministic metric): no evidence of any dependence.
        sequence: stats::ljung_box_lag1(&detrended).unwrap_or(LjungBox {
            r1: 0.0,
            q: 0.0,
            p_value: 1.0,
        }),
    })
}

/// Residuals of every valid measured run whose cell has at least two such runs, in execution
/// order. A run with several values is represented by their median.
fn residuals<'a>(
    runs: &'a [RunView],
    metric: &str,
    skip: usize,
    scope: Option<&crate::config::CellScope>,
) -> Vec<Residual<'a>> {
    let values: Vec<(&RunView, f64)> = runs
        .iter()
        .filter(|r| !r.warmup && r.is_valid())
        .filter(|r| scope.is_none_or(|s| r.cell.is_in(s)))
        .filter_map(|r| {
            Some(r.numbers(metric, skip))
                .filter(|v| !v.is_empty())
                .map(|v| (r, stats::median(&v)))
        })
        .collect();
    let mut by_cell: BTreeMap<&CellKey, Vec<f64>> = BTreeMap::new();
    for (r, v) in &values {
        by_cell.entry(&r.cell).or_default().push(*v);
    }
    let means: BTreeMap<_, f64> = by_cell
        .into_iter()
        .filter(|(_, v)| v.len() >= 2)
        .map(|(c, v)| (c, v.iter().sum::<f64>() / v.len() as f64))
        .collect();
    values
        .into_iter()
        .filter_map(|(run, v)| {
            means
                .get(&run.cell)
                .filter(|m| **m > 0.0)
                .map(|m| Residual {
                    run,
                    value: v / m - 1.0,
                })
        })
        .collect()
}

/// Mann–Kendall on residuals in execution order, with the Theil–Sen slope per run position.
fn trend(residuals: &[Residual]) -> Option<(MannKendall, f64)> {
    let ys: Vec<f64> = residuals.iter().map(|r| r.value).collect();
    let xs: Vec<f64> = residuals.iter().map(|r| r.run.position as f64).collect();
    Some((
        stats::mann_kendall(&ys)?,
        stats::theil_sen_slope(&xs, &ys).unwrap_or(0.0),
    ))
}

/// Residuals less the Theil–Sen trend (slope × position). The line's intercept is left out:
/// both serial tests centre what they are given.
fn detrended(residuals: &[Residual], slope: f64) -> Vec<f64> {
    residuals
        .iter()
        .map(|r| r.value - slope * r.run.position as f64)
        .collect()
}

/// Residuals grouped by the variant of the run one position earlier.
fn by_predecessor(runs: &[RunView], residuals: &[Residual]) -> BTreeMap<String, Vec<f64>> {
    let variant_at: BTreeMap<usize, &str> = runs
        .iter()
        .map(|r| (r.position, r.cell.variant.as_str()))
        .collect();
    let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in residuals {
        if let Some(v) = r
            .run
            .position
            .checked_sub(1)
            .and_then(|p| variant_at.get(&p))
        {
            groups.entry(v.to_string()).or_default().push(r.value);
        }
    }
    groups
}

/// Kruskal–Wallis over the predecessor groups with enough runs, when there are two or more.
fn carry_over(groups: &BTreeMap<String, Vec<f64>>) -> Option<KruskalWallis> {
    let usable: Vec<Vec<f64>> = groups
        .values()
        .filter(|g| g.len() >= MIN_GROUP_RUNS)
        .cloned()
        .collect();
    if usable.len() < 2 {
        return None;
    }
    // All residuals tied (a deterministic metric): no evidence of any difference.
    Some(stats::kruskal_wallis(&usable).unwrap_or(KruskalWallis {
        h: 0.0,
        df: usable.len() - 1,
        p_value: 1.0,
    }))
}

/// The pooled serial-correlation test of each cell's detrended residuals in execution order,
/// when the cells with at least [`MIN_CELL_RUNS`] runs hold [`MIN_ORDER_RUNS`] runs together.
fn within_cells(residuals: &[Residual], detrended: &[f64]) -> Option<SerialCorrelation> {
    let mut by_cell: BTreeMap<&CellKey, Vec<f64>> = BTreeMap::new();
    for (r, v) in residuals.iter().zip(detrended) {
        by_cell.entry(&r.run.cell).or_default().push(*v);
    }
    let cells: Vec<Vec<f64>> = by_cell
        .into_values()
        .filter(|c| c.len() >= MIN_CELL_RUNS)
        .collect();
    if cells.iter().map(Vec::len).sum::<usize>() < MIN_ORDER_RUNS {
        return None;
    }
    stats::wald_wolfowitz_serial(&cells)
}

fn evidence(tests: &Tests, judged: &Judged) -> String {
    let parts = [
        trend_evidence(tests, judged),
        carry_evidence(tests, judged),
        within_evidence(tests, judged),
        sequence_evidence(tests, judged),
    ];
    let medians: Vec<String> = tests
        .groups
        .iter()
        .map(|(v, g)| {
            format!(
                "after {v}: {} (n = {})",
                signed_percent(stats::median(g)),
                g.len()
            )
        })
        .collect();
    let tested = tests.p_values().iter().filter(|p| !p.is_nan()).count();
    format!(
        "{} runs, residual = value / cell mean − 1, Holm-adjusted over the {tested} tests that ran; {}; median residual {}",
        tests.n,
        parts.join("; "),
        medians.join(", ")
    )
}

/// "p = RAW (Holm-adjusted ADJUSTED)" for a part.
fn p_pair(raw: f64, judged: &Judged, part: Part) -> String {
    format!("{} (Holm-adjusted {})", p_is(raw), p(judged.adjusted(part)))
}

fn trend_evidence(tests: &Tests, judged: &Judged) -> String {
    format!(
        "trend: Mann–Kendall τ = {}, {}, Theil–Sen {} per 100 runs against a declared limit of {}",
        signed_to(tests.trend.tau, 3),
        p_pair(tests.trend.p_value, judged, Part::Trend),
        signed_percent(tests.drift()),
        limit(judged.max_drift)
    )
}

fn carry_evidence(tests: &Tests, judged: &Judged) -> String {
    match &tests.carry {
        Some(k) => format!(
            "carry-over: Kruskal–Wallis by the previous run's variant H = {:.2}, df = {}, {}",
            k.h,
            k.df,
            p_pair(k.p_value, judged, Part::CarryOver)
        ),
        None => not_tested(Part::CarryOver),
    }
}

fn within_evidence(tests: &Tests, judged: &Judged) -> String {
    match &tests.within {
        Some(w) => format!(
            "within cells: Wald–Wolfowitz serial correlation of detrended residuals, mean lag-1 r = {} over {} cell{} ({} runs), z = {}, {}",
            signed(w.r),
            w.groups,
            if w.groups == 1 { "" } else { "s" },
            w.n,
            signed(w.z),
            p_pair(w.p_value, judged, Part::WithinCells)
        ),
        None => not_tested(Part::WithinCells),
    }
}

fn sequence_evidence(tests: &Tests, judged: &Judged) -> String {
    let lb = &tests.sequence;
    format!(
        "whole sequence: Ljung–Box Q(1) = {:.2} on detrended residuals, lag-1 r = {}, {}",
        lb.q,
        signed(lb.r1),
        p_pair(lb.p_value, judged, Part::Sequence)
    )
}

fn not_tested(part: Part) -> String {
    let (what, needs) = part.untested();
    format!("{what} not tested: needs {needs}")
}

/// The reading of a failed check: what its lead part found, and the other failing parts.
fn fail_reading(lead: Part, others: &[Part], tests: &Tests, judged: &Judged) -> String {
    let adjusted = judged.adjusted(lead);
    let sentence = match lead {
        Part::CarryOver => carry_reading(&tests.groups, adjusted),
        Part::WithinCells => within_reading(tests.within.map_or(0.0, |w| w.r), adjusted),
        Part::Sequence => sequence_reading(tests.sequence.r1, adjusted),
        Part::Trend => format!(
            "values drift {} per 100 runs in execution order, more than the declared {} (Mann–Kendall, adjusted {})",
            signed_percent(tests.drift()),
            limit(judged.max_drift),
            p_is(adjusted)
        ),
    };
    if others.is_empty() {
        return sentence;
    }
    let also: Vec<&str> = others.iter().map(|p| p.finding()).collect();
    format!("{sentence}; also {}", also.join(", "))
}

fn carry_reading(groups: &BTreeMap<String, Vec<f64>>, adjusted: f64) -> String {
    let mut medians: Vec<(&String, f64)> =
        groups.iter().map(|(v, g)| (v, stats::median(g))).collect();
    medians.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (low, high) = (medians[0], medians[medians.len() - 1]);
    format!(
        "runs right after a `{}` run sat {} from their cell mean, right after `{}` {}: the previous run changes the result (adjusted {})",
        low.0,
        signed_percent(low.1),
        high.0,
        signed_percent(high.1),
        p_is(adjusted)
    )
}

fn within_reading(r: f64, adjusted: f64) -> String {
    let how = if r < 0.0 {
        "each run lands on the other side of its cell's mean from the previous run of its cell"
    } else {
        "each run lands on the same side of its cell's mean as the previous run of its cell"
    };
    format!(
        "serial dependence within cells: {how} (mean lag-1 r = {}, adjusted {})",
        signed(r),
        p_is(adjusted)
    )
}

fn sequence_reading(r1: f64, adjusted: f64) -> String {
    let how = if r1 < 0.0 {
        "each run lands on the other side of its cell's mean from the run executed before it"
    } else {
        "each run lands on the same side of its cell's mean as the run executed before it"
    };
    format!(
        "serial dependence in execution order: {how} (lag-1 r = {}, adjusted {})",
        signed(r1),
        p_is(adjusted)
    )
}

/// The reading when nothing failed: the untested parts first, then a small drift, else calm.
fn quiet_reading(tests: &Tests, judged: &Judged) -> String {
    let calm = format!(
        "no dependence on execution order (adjusted p ≥ {})",
        p(judged.smallest_other(tests))
    );
    let drift = judged.small_drift(tests).then(|| {
        format!(
            "drift detected ({} per 100 runs, adjusted {}) but smaller than the declared {} per 100 runs",
            signed_percent(tests.drift()),
            p_is(judged.adjusted(Part::Trend)),
            limit(judged.max_drift)
        )
    });
    let untested = judged.untested();
    if untested.is_empty() {
        return match drift {
            Some(drift) => format!("{drift}; otherwise {calm}"),
            None => format!(
                "{calm}: neither on position, nor on the previous run, nor between runs of a cell"
            ),
        };
    }
    let (what, needs): (Vec<&str>, Vec<String>) = untested.iter().map(|p| p.untested()).unzip();
    let found = match drift {
        Some(drift) => format!("{drift}, otherwise {calm}"),
        None => calm,
    };
    format!(
        "{} not tested (it needs {}); where tested, {found}",
        what.join(" and "),
        needs.join(" and ")
    )
}

/// A declared drift limit: `5%`, `2.5%`.
fn limit(max_drift: f64) -> String {
    format!("{}%", (max_drift * 100_000.0).round() / 1000.0)
}

/// `x` with an explicit sign (a true minus) and two decimals.
fn signed(x: f64) -> String {
    signed_to(x, 2)
}

fn signed_to(x: f64, decimals: usize) -> String {
    if x >= 0.0 {
        format!("+{x:.decimals$}")
    } else {
        format!("−{:.decimals$}", -x)
    }
}

fn signed_percent(x: f64) -> String {
    if x >= 0.0 {
        format!("+{}", percent(x))
    } else {
        format!("−{}", percent(-x))
    }
}

/// "p = 0.012", or "p < 0.0001".
fn p_is(x: f64) -> String {
    if x < 1e-4 {
        "p < 0.0001".into()
    } else {
        format!("p = {}", p(x))
    }
}

fn p(x: f64) -> String {
    if x < 1e-4 {
        "< 0.0001".into()
    } else {
        significant(x, 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validity::RunValues;
    use rand::Rng;
    use std::path::Path;

    fn experiment() -> Experiment {
        let src = r#"
[experiment]
title = "t"
hypothesis = "h"
[[variant]]
name = "a"
run = ["x"]
[[variant]]
name = "b"
run = ["y"]
[metric.v]
json = "v"
[[check]]
name = "no order effects"
kind = "order"
metric = "v"
"#;
        crate::config::parse(src, Path::new("lab.toml"), Path::new("x"), None).unwrap()
    }

    fn run(position: usize, variant: &str, value: f64) -> RunView {
        RunView {
            id: format!("r{position}"),
            position,
            cell: CellKey::new(variant, Default::default()),
            repetition: 0,
            warmup: false,
            wall_s: 0.3,
            exit: "exit 0".into(),
            stdout_sha256: String::new(),
            echoed_config: false,
            busy_share: None,
            repeats: None,
            overlapped: Vec::new(),
            problems: Vec::new(),
            failed_checks: Vec::new(),
            values: RunValues::of("v", vec![value.to_string()]),
        }
    }

    /// `blocks` shuffled blocks each holding every variant once (as lab plans them), the
    /// value of the k-th run of a variant given by `value(variant, k, position)`.
    fn session(
        variants: &[&str],
        blocks: usize,
        value: impl Fn(&str, usize, usize) -> f64,
    ) -> Vec<RunView> {
        let mut rng = stats::stream(7, "order-tests");
        let mut runs = Vec::new();
        for k in 0..blocks {
            let mut block = variants.to_vec();
            rand::seq::SliceRandom::shuffle(block.as_mut_slice(), &mut rng);
            for v in block {
                let position = runs.len() + 1;
                runs.push(run(position, v, value(v, k, position)));
            }
        }
        runs
    }

    /// Noise of ±`size` (uniform), seeded by the variant and the run.
    fn noise(variant: &str, k: usize, size: f64) -> f64 {
        let mut rng = stats::stream(k as u64, variant);
        1.0 + size * (2.0 * rng.r#gen::<f64>() - 1.0)
    }

    fn judge(runs: &[RunView], max_drift: f64) -> CheckResult {
        let exp = experiment();
        check(&exp.checks[0], &exp, "v", 0.05, max_drift, runs)
    }

    #[test]
    fn a_cell_that_alternates_fails_on_serial_dependence_within_cells() {
        // The issue's program: 29 / 58 / 27 / 57 Mops/s, twice as fast when the run of its own
        // variant before it left a file behind.
        let runs = session(&["a", "b"], 8, |v, k, _| {
            29.0 * noise(v, k, 0.03) * if k % 2 == 1 { 2.0 } else { 1.0 }
        });
        let result = judge(&runs, 0.05);
        assert_eq!(result.verdict, Verdict::Fail, "{}", result.evidence);
        assert!(
            result.reading.starts_with(
                "serial dependence within cells: each run lands on the other side of its cell's mean"
            ),
            "{}",
            result.reading
        );
        assert_eq!(result.runs.len(), 16);
        for part in ["trend:", "carry-over:", "within cells:", "whole sequence:"] {
            assert!(result.evidence.contains(part), "{}", result.evidence);
        }
    }

    #[test]
    fn a_failure_that_rests_on_one_cell_names_only_that_cell() {
        // `a` climbs 5% a run; `b` and `c` hold still. Without `a`, nothing depends on order.
        let runs = session(&["a", "b", "c"], 16, |v, k, _| {
            if v == "a" {
                30.0 * (1.0 + 0.05 * k as f64)
            } else {
                30.0
            }
        });
        let result = judge(&runs, 0.05);
        assert_eq!(result.verdict, Verdict::Fail, "{}", result.evidence);
        let of_a: Vec<String> = runs
            .iter()
            .filter(|r| r.cell.variant == "a")
            .map(|r| r.id.clone())
            .collect();
        assert_eq!(result.runs, of_a);
        assert!(
            result
                .reading
                .ends_with("; it rests on a: without its runs no test fails"),
            "{}",
            result.reading
        );
    }

    #[test]
    fn independent_runs_pass() {
        let runs = session(&["a", "b"], 12, |v, k, _| 30.0 * noise(v, k, 0.03));
        let result = judge(&runs, 0.05);
        assert_eq!(result.verdict, Verdict::Pass, "{}", result.evidence);
        assert!(
            result.reading.starts_with(
                "no dependence on execution order (adjusted p ≥ 0.56): neither on position"
            ),
            "{}",
            result.reading
        );
        assert!(result.runs.is_empty());
    }

    #[test]
    fn a_part_that_cannot_run_makes_the_check_inconclusive() {
        // One variant: every run follows a run of `a`, so there is no carry-over to compare.
        let runs = session(&["a"], 12, |v, k, _| 30.0 * noise(v, k, 0.03));
        let result = judge(&runs, 0.05);
        assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.evidence);
        assert!(
            result.reading.starts_with(
                "carry-over from the previous run's variant not tested (it needs two predecessor variants with 2 runs each); where tested, no dependence"
            ),
            "{}",
            result.reading
        );
        assert!(
            result
                .evidence
                .contains("carry-over from the previous run's variant not tested"),
            "{}",
            result.evidence
        );
    }

    #[test]
    fn cells_too_small_for_the_serial_test_leave_it_untested() {
        // Four cells of three runs: enough for the trend, too few per cell to pair runs.
        let runs = session(&["a", "b", "c", "d"], 3, |v, k, _| 30.0 * noise(v, k, 0.03));
        let result = judge(&runs, 0.05);
        assert_eq!(result.verdict, Verdict::Inconclusive, "{}", result.evidence);
        assert!(
            result.reading.starts_with(
                "serial dependence within cells not tested (it needs 8 runs in cells of at least 4 runs each)"
            ),
            "{}",
            result.reading
        );
    }

    #[test]
    fn too_few_runs_is_not_run() {
        let runs = session(&["a", "b"], 3, |v, k, _| 30.0 * noise(v, k, 0.03));
        let result = judge(&runs, 0.05);
        assert_eq!(result.verdict, Verdict::NotRun);
    }

    #[test]
    fn a_small_significant_drift_passes_and_says_so() {
        // +2% per 100 runs under ±0.2% noise: real, and under the declared 5%.
        let runs = session(&["a", "b"], 30, |v, k, position| {
            30.0 * noise(v, k, 0.002) * (1.0 + 0.0002 * position as f64)
        });
        let result = judge(&runs, 0.05);
        assert_eq!(result.verdict, Verdict::Pass, "{}", result.evidence);
        assert!(
            result
                .reading
                .starts_with("drift detected (+2.1% per 100 runs, adjusted p < 0.0001) but")
                && result.reading.contains(
                    "but smaller than the declared 5% per 100 runs; otherwise no dependence"
                ),
            "{}",
            result.reading
        );
        // Declared smaller, the same drift fails.
        let strict = judge(&runs, 0.01);
        assert_eq!(strict.verdict, Verdict::Fail);
        assert!(
            strict.reading.starts_with(
                "values drift +2.1% per 100 runs in execution order, more than the declared 1%"
            ),
            "{}",
            strict.reading
        );
    }

    #[test]
    fn a_large_drift_fails() {
        let runs = session(&["a", "b"], 30, |v, k, position| {
            30.0 * noise(v, k, 0.002) * (1.0 + 0.002 * position as f64)
        });
        let result = judge(&runs, 0.05);
        assert_eq!(result.verdict, Verdict::Fail, "{}", result.evidence);
        assert!(
            result.reading.starts_with("values drift +"),
            "{}",
            result.reading
        );
    }

    #[test]
    fn carry_over_from_the_previous_variant_still_fails_first() {
        let mut previous = String::new();
        let runs: Vec<RunView> = session(&["a", "b"], 10, |v, k, _| 30.0 * noise(v, k, 0.03))
            .into_iter()
            .map(|mut r| {
                if previous == "a" {
                    let v: f64 = r.values.numbers("v", 0)[0];
                    r.values.insert("v", vec![(v / 2.0).to_string()]);
                }
                previous = r.cell.variant.clone();
                r
            })
            .collect();
        let result = judge(&runs, 0.05);
        assert_eq!(result.verdict, Verdict::Fail, "{}", result.evidence);
        assert!(
            result
                .reading
                .starts_with("runs right after a `a` run sat −"),
            "{}",
            result.reading
        );
    }
}
