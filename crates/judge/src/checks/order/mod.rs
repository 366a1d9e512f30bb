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
//!   execution order;
//! - first of cell: whether each cell's first timed run stands apart from its later ones (a
//!   cache still cold, a file not yet read), van Elteren's stratified rank test of one run per
//!   cell (see [`stats::first_rank`]): a trend over the whole session cannot show two slow runs
//!   among twelve, their place in their cells can.
//!
//! The serial tests and the first-of-cell test see the residuals with the Theil–Sen trend taken out, so that a drift is
//! judged by its size alone. A test that cannot run leaves its part untested: the check is
//! then inconclusive, never a plain pass.

mod residuals;
#[cfg(test)]
mod tests;
mod words;

use super::shape::{Check, Context, Declared, Description, Outcome};
use crate::analysis::RunView;
use lab_config::plan::CellKey;
use lab_config::{CheckKind, Experiment};
use lab_findings::checks::{CheckFigure, Verdict};
use lab_stats as stats;
use residuals::{Holm, Tests, residuals, run_tests};

/// Fewest residuals for the trend test, and for the whole check.
pub(super) const MIN_ORDER_RUNS: usize = 8;
/// Fewest residuals in a predecessor group for the carry-over test (which needs two groups).
pub(super) const MIN_GROUP_RUNS: usize = 2;
/// Fewest runs a cell needs to take part in the within-cell test.
pub(super) const MIN_CELL_RUNS: usize = stats::serial::MIN_SERIAL_GROUP;

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
    FirstOfCell = 4,
}

/// How many parts the check tests.
const PARTS: usize = 5;

/// The order in which a failing check's reading names parts whose evidence is equally strong:
/// the most specific first.
const LEAD: [Part; PARTS] = [
    Part::FirstOfCell,
    Part::CarryOver,
    Part::WithinCells,
    Part::Sequence,
    Part::Trend,
];

impl Part {
    /// The part's name in a figure's id.
    fn key(self) -> &'static str {
        match self {
            Part::Trend => "trend",
            Part::CarryOver => "carry-over",
            Part::WithinCells => "within-cells",
            Part::Sequence => "sequence",
            Part::FirstOfCell => "first-of-cell",
        }
    }

    /// The name of the part's test statistic in a figure's id.
    fn statistic(self) -> &'static str {
        match self {
            Part::Trend => "tau",
            Part::CarryOver => "h",
            Part::WithinCells => "z",
            Part::Sequence => "q",
            Part::FirstOfCell => "excess",
        }
    }

    /// What the part found, in a few words, when it fails next to another.
    fn finding(self) -> &'static str {
        match self {
            Part::Trend => "drift",
            Part::CarryOver => "carry-over from the previous run",
            Part::WithinCells => "serial dependence within cells",
            Part::Sequence => "serial dependence in execution order",
            Part::FirstOfCell => "first runs of cells apart from the rest",
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
            Part::FirstOfCell => (
                "the first run of each cell",
                format!(
                    "cells of at least {} runs",
                    stats::first_rank::MIN_CELL_RUNS
                ),
            ),
            // Never untested: without them the check is not run at all.
            Part::Trend | Part::Sequence => {
                ("execution order", format!("{MIN_ORDER_RUNS} valid runs"))
            }
        }
    }
}

/// A declared `order` check: fails when a Holm-adjusted test falls below `alpha` (the trend
/// only when its drift also exceeds `max_drift` per 100 runs).
pub(super) struct Order<'a> {
    pub metric: &'a str,
    pub alpha: f64,
    pub max_drift: f64,
}

/// What the tests found, and the runs and cells a failure rests on.
pub(super) struct Found {
    tests: Tests,
    holm: Holm,
    verdict: Verdict,
    /// The failing parts, the strongest evidence first.
    failing: Vec<Part>,
    /// The labels of the cells a failure rests on; empty when it is shared by all.
    rests_on: Vec<String>,
    runs: Vec<String>,
}

impl Outcome for Found {
    fn verdict(&self) -> Verdict {
        self.verdict
    }

    fn runs(&self) -> Vec<String> {
        self.runs.clone()
    }
}

impl<'a> Declared<'a> for Order<'a> {
    fn of(cx: &Context<'a>) -> Option<Self> {
        let CheckKind::RunOrder {
            metric,
            alpha,
            max_drift,
        } = &cx.spec.kind
        else {
            return None;
        };
        Some(Order {
            metric,
            alpha: *alpha,
            max_drift: *max_drift,
        })
    }
}

impl<'a> Check<'a> for Order<'_> {
    type Outcome = Found;
    const KIND: &'static str = "order";

    fn decide(&self, cx: &Context<'a>) -> Result<Found, String> {
        let skip = cx.warmup(self.metric);
        // A scope chooses whose residuals are judged; predecessors still come from every run.
        let residuals = residuals(cx.runs, self.metric, skip, cx.spec.scope.as_ref());
        let Some(tests) = (residuals.len() >= MIN_ORDER_RUNS)
            .then(|| run_tests(cx.runs, &residuals))
            .flatten()
        else {
            return Err(format!(
                "{} valid runs with a cell to compare against; the trend test needs {MIN_ORDER_RUNS}",
                residuals.len()
            ));
        };
        let holm = Holm::new(&tests, self.alpha, self.max_drift);
        let failing = holm.failing(&tests);
        let verdict = if !failing.is_empty() {
            Verdict::Fail
        } else if !holm.untested().is_empty() {
            Verdict::Inconclusive
        } else {
            Verdict::Pass
        };
        let deciding = match verdict {
            Verdict::Fail => self.deciding_cells(cx.runs, &residuals),
            _ => Vec::new(),
        };
        let runs = match verdict {
            Verdict::Fail => residuals
                .iter()
                .filter(|r| deciding.is_empty() || deciding.contains(&&r.run.cell))
                .map(|r| r.run.id.clone())
                .collect(),
            _ => Vec::new(),
        };
        Ok(Found {
            rests_on: labels(cx.exp, &deciding),
            tests,
            holm,
            verdict,
            failing,
            runs,
        })
    }

    fn describe(&self, f: &Found) -> Description {
        let mut reading = match f.failing.split_first() {
            Some((lead, others)) => words::fail_reading(*lead, others, &f.tests, &f.holm),
            None => words::quiet_reading(&f.tests, &f.holm),
        };
        reading.push_str(&rests_on(&f.rests_on));
        Description {
            evidence: words::evidence(&f.tests, &f.holm),
            reading,
            ratio: None,
        }
    }

    fn figures(&self, f: &Found) -> Vec<CheckFigure> {
        let read = format!(
            "the {} valid, non-warm-up runs of {} in execution order, each as its value / its cell's mean − 1",
            f.tests.n, self.metric
        );
        words::figures(&f.tests, &f.holm, &read, self.alpha)
    }
}

impl Order<'_> {
    /// Whether some test fails on these residuals.
    fn fails_on(&self, runs: &[&RunView], residuals: &[Residual]) -> bool {
        (residuals.len() >= MIN_ORDER_RUNS)
            .then(|| run_tests(runs, residuals))
            .flatten()
            .is_some_and(|t| {
                !Holm::new(&t, self.alpha, self.max_drift)
                    .failing(&t)
                    .is_empty()
            })
    }

    /// The cells a failure rests on: those without whose runs (left out one cell at a time)
    /// no test would fail. Empty when that is every judged cell, or none: the effect is
    /// shared, and the check names every judged run.
    fn deciding_cells<'r>(
        &self,
        runs: &[&RunView],
        residuals: &[Residual<'r>],
    ) -> Vec<&'r CellKey> {
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
                !self.fails_on(runs, &rest)
            })
            .collect();
        if deciding.len() == judged {
            Vec::new()
        } else {
            deciding
        }
    }
}

fn labels(exp: &Experiment, cells: &[&CellKey]) -> Vec<String> {
    cells
        .iter()
        .map(|c| crate::analysis::cell_label(exp, c))
        .collect()
}

/// "; it rests on fast n=2: without its runs no test fails"; empty for no cell.
fn rests_on(labels: &[String]) -> String {
    match labels {
        [] => String::new(),
        [one] => format!("; it rests on {one}: without its runs no test fails"),
        _ => format!(
            "; it rests on {}: without the runs of any one of them no test fails",
            labels.join(", ")
        ),
    }
}
