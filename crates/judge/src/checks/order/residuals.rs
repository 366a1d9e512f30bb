//! The five tests of the `order` check on the residuals of a session, and their Holm
//! adjustment: what each found, before any of it is put in words.

use super::{LEAD, MIN_CELL_RUNS, MIN_GROUP_RUNS, MIN_ORDER_RUNS, PARTS, Part, Residual};
use crate::analysis::RunView;
use lab_config::plan::CellKey;
use lab_stats::first_rank::{FirstRank, first_rank_test};
use lab_stats::{self as stats, KruskalWallis, LjungBox, MannKendall, SerialCorrelation};
use std::collections::BTreeMap;

/// Every test's result; `None` for a part that could not be tested.
pub(super) struct Tests {
    pub(super) n: usize,
    pub(super) trend: MannKendall,
    /// Theil–Sen slope of the residuals per run position.
    pub(super) slope: f64,
    pub(super) carry: Option<KruskalWallis>,
    pub(super) groups: BTreeMap<String, Vec<f64>>,
    pub(super) within: Option<SerialCorrelation>,
    pub(super) sequence: LjungBox,
    pub(super) first: Option<FirstRank>,
}

impl Tests {
    /// Raw p-values by part; NaN for a part not tested.
    pub(super) fn p_values(&self) -> [f64; PARTS] {
        [
            self.trend.p_value,
            self.carry.map_or(f64::NAN, |k| k.p_value),
            self.within.map_or(f64::NAN, |w| w.p_value),
            self.sequence.p_value,
            self.first.map_or(f64::NAN, |f| f.p_value),
        ]
    }

    /// The drift per 100 runs, as a fraction of the cell mean.
    pub(super) fn drift(&self) -> f64 {
        self.slope * 100.0
    }
}

/// The tests, Holm-adjusted together, and what each decided.
pub(super) struct Holm {
    pub(super) adjusted: [f64; PARTS],
    pub(super) significant: [bool; PARTS],
    /// Significant drift no larger than the declared limit does not fail.
    pub(super) max_drift: f64,
}

impl Holm {
    pub(super) fn new(tests: &Tests, alpha: f64, max_drift: f64) -> Self {
        let raw = tests.p_values();
        let holm = stats::holm(&raw);
        let adjusted: [f64; PARTS] = std::array::from_fn(|i| holm[i]);
        Holm {
            adjusted,
            significant: adjusted.map(|p| p < alpha),
            max_drift,
        }
    }

    pub(super) fn adjusted(&self, part: Part) -> f64 {
        self.adjusted[part as usize]
    }

    pub(super) fn tested(&self, part: Part) -> bool {
        !self.adjusted(part).is_nan()
    }

    /// Whether drift was found but is no larger than the declared limit.
    pub(super) fn small_drift(&self, tests: &Tests) -> bool {
        self.significant[Part::Trend as usize] && tests.drift().abs() <= self.max_drift
    }

    pub(super) fn fails(&self, part: Part, tests: &Tests) -> bool {
        self.significant[part as usize] && !(part == Part::Trend && self.small_drift(tests))
    }

    /// The failing parts, the strongest evidence (smallest adjusted p) first, ties in
    /// [`LEAD`] order; a failing first-of-cell test leads whatever its p: first runs that
    /// stand apart, all early in a session planned in blocks, also make the sequence correlate,
    /// and it is the finding that names the fix (warm-up runs).
    pub(super) fn failing(&self, tests: &Tests) -> Vec<Part> {
        let mut failing: Vec<Part> = LEAD.into_iter().filter(|&p| self.fails(p, tests)).collect();
        failing.sort_by(|a, b| {
            let first = |p: &Part| *p != Part::FirstOfCell;
            first(a)
                .cmp(&first(b))
                .then(self.adjusted(*a).total_cmp(&self.adjusted(*b)))
        });
        failing
    }

    pub(super) fn untested(&self) -> Vec<Part> {
        LEAD.into_iter().filter(|&p| !self.tested(p)).collect()
    }

    /// The smallest adjusted p-value of the tested parts other than a small drift.
    pub(super) fn smallest_other(&self, tests: &Tests) -> f64 {
        LEAD.into_iter()
            .filter(|&p| self.tested(p) && !(p == Part::Trend && self.small_drift(tests)))
            .map(|p| self.adjusted(p))
            .fold(1.0, f64::min)
    }
}

/// Every test on the residuals; `None` when the trend test cannot run.
pub(super) fn run_tests(runs: &[&RunView], residuals: &[Residual]) -> Option<Tests> {
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
        first: first_of_cells(residuals, &detrended),
    })
}

/// Residuals of every valid measured run whose cell has at least two such runs, in execution
/// order. A run with several values is represented by their median.
pub(super) fn residuals<'a>(
    runs: &[&'a RunView],
    metric: &str,
    skip: usize,
    scope: Option<&lab_config::CellScope>,
) -> Vec<Residual<'a>> {
    let values: Vec<(&RunView, f64)> = runs
        .iter()
        .copied()
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
    let (test, slope) = rayon::join(
        || stats::mann_kendall(&ys),
        || stats::theil_sen_slope(&xs, &ys).unwrap_or(0.0),
    );
    Some((test?, slope))
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
fn by_predecessor(runs: &[&RunView], residuals: &[Residual]) -> BTreeMap<String, Vec<f64>> {
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

/// Each cell's detrended residuals in execution order, tested for a first run apart from the
/// rest.
fn first_of_cells(residuals: &[Residual], detrended: &[f64]) -> Option<FirstRank> {
    let mut by_cell: BTreeMap<&CellKey, Vec<f64>> = BTreeMap::new();
    for (r, v) in residuals.iter().zip(detrended) {
        by_cell.entry(&r.run.cell).or_default().push(*v);
    }
    let cells: Vec<Vec<f64>> = by_cell.into_values().collect();
    first_rank_test(&cells)
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
