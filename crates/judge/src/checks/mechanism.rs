//! `mechanism`: one metric moves with another across cells (throughput falls where voluntary
//! context switches per operation rise). Decided on the stratified bootstrap CI of Spearman's
//! ρ between the two over the runs of the cells, signed by the expected direction, against
//! `min_rho`.

use super::rule::Rule;
use super::shape::{Check, Context, Decision, Declared, Description, Outcome};
use super::words;
use crate::analysis::{Resampling, RunView};
use lab_config::format::correlation;
use lab_config::plan::CellKey;
use lab_config::{CheckKind, Comparison, Direction, Metric};
use lab_findings::checks::{CorrelationEvidence, Verdict};
use lab_stats::{self as stats, Interval};
use std::collections::BTreeMap;

/// Fewest runs with both values a correlation is judged on: below, even ρ = ±1 would rest
/// on a handful of points.
pub(super) const MIN_POINTS: usize = 6;

/// Fewest cells with runs: a relation across cells needs two at least.
pub(super) const MIN_CELLS: usize = 2;

/// A declared `mechanism` check: pass when the whole interval of the signed ρ is at least
/// `min_rho`, fail when it lies wholly below.
pub(super) struct Mechanism<'a> {
    pub metric: &'a str,
    pub with: &'a str,
    pub direction: Direction,
    pub min_rho: f64,
}

/// One run's point: its value of each metric (the median of its iterations).
type Point = (f64, f64);

/// The correlation found: ρ as measured, its interval, and the decision on the signed ρ.
pub(super) struct Related {
    rho: f64,
    interval: Interval,
    decision: Decision,
    points: usize,
    cells: usize,
    runs: Vec<String>,
}

impl Outcome for Related {
    fn verdict(&self) -> Verdict {
        self.decision.verdict
    }

    /// Every run of the correlation decided it.
    fn runs(&self) -> Vec<String> {
        self.runs.clone()
    }
}

impl<'a> Declared<'a> for Mechanism<'a> {
    fn of(cx: &Context<'a>) -> Option<Self> {
        let CheckKind::Mechanism {
            metric,
            with,
            direction,
            min_rho,
        } = &cx.spec.kind
        else {
            return None;
        };
        Some(Mechanism {
            metric,
            with,
            direction: *direction,
            min_rho: *min_rho,
        })
    }
}

impl<'a> Check<'a> for Mechanism<'_> {
    type Outcome = Related;
    const KIND: &'static str = "mechanism";

    fn decide(&self, cx: &Context<'a>) -> Result<Related, String> {
        let (strata, runs) = self.points(cx)?;
        self.correlate(&strata, runs, cx.resampling, &cx.stream(Self::KIND, None))
    }

    fn describe(&self, found: &Related) -> Description {
        let measured = words::correlation(found.rho, &found.interval, found.points, found.cells);
        let evidence = format!(
            "Spearman {measured}; needs ρ {} ({}: {})",
            self.needs(),
            self.direction.word(),
            self.relation(true)
        );
        Description {
            evidence,
            reading: self.reading(found),
            ratio: None,
        }
    }

    fn correlation(&self, found: &Related) -> Option<CorrelationEvidence> {
        Some(CorrelationEvidence {
            metric: self.metric.to_string(),
            with: self.with.to_string(),
            rho: found.rho,
            lo: found.interval.lo,
            hi: found.interval.hi,
            level: found.interval.level,
            points: found.points,
            cells: found.cells,
        })
    }
}

impl Mechanism<'_> {
    /// The rule on the signed ρ, whose interval is the measured one turned round for
    /// `opposite` (the signed ρ is then −ρ, so its bounds are −hi and −lo).
    fn decision(&self, rho: f64, interval: Interval) -> Decision {
        let signed = match self.direction {
            Direction::Same => interval,
            Direction::Opposite => Interval {
                lo: -interval.hi,
                hi: -interval.lo,
                level: interval.level,
            },
        };
        let rule = Rule::Compare(Comparison::GreaterEqual, self.min_rho);
        Decision::new(self.direction.signed(rho), signed, rule)
    }

    /// ρ over the points of `strata` (one per cell) with its interval from the random stream
    /// `stream`, judged; or why it cannot be: too few points or cells, or a metric that does
    /// not vary.
    fn correlate(
        &self,
        strata: &[Vec<Point>],
        runs: Vec<String>,
        r: Resampling,
        stream: &str,
    ) -> Result<Related, String> {
        let points: usize = strata.iter().map(Vec::len).sum();
        if points < MIN_POINTS || strata.len() < MIN_CELLS {
            return Err(format!(
                "{} in {} have both `{}` and `{}`; a correlation needs {MIN_POINTS} runs in \
                 {MIN_CELLS} cells or more",
                counted(points, "valid run"),
                counted(strata.len(), "cell"),
                self.metric,
                self.with
            ));
        }
        let (xs, ys): (Vec<f64>, Vec<f64>) = strata.iter().flatten().copied().unzip();
        let Some(rho) = stats::spearman::spearman(&xs, &ys) else {
            return Err(self.constant(&xs));
        };
        let mut rng = r.stream(stream);
        let interval = stats::spearman::spearman_ci(strata, r.resamples, r.level, &mut rng)
            .ok_or_else(|| {
                format!(
                    "the runs barely vary: resampled within their cells, `{}` or `{}` keeps \
                     taking one value",
                    self.metric, self.with
                )
            })?;
        Ok(Related {
            rho,
            interval,
            decision: self.decision(rho, interval),
            points,
            cells: strata.len(),
            runs,
        })
    }

    /// The points of every cell in scope that has any, in plan order, with their runs.
    fn points(&self, cx: &Context) -> Result<(Vec<Vec<Point>>, Vec<String>), String> {
        let (Some(x), Some(y)) = (cx.exp.metric(self.metric), cx.exp.metric(self.with)) else {
            return Err(format!(
                "`{}` or `{}` is not a metric",
                self.metric, self.with
            ));
        };
        let mut by_cell: BTreeMap<&CellKey, Vec<&RunView>> = BTreeMap::new();
        for run in cx.runs {
            by_cell.entry(&run.cell).or_default().push(run);
        }
        let mut strata = Vec::new();
        let mut runs = Vec::new();
        for cell in cx.in_scope().iter().filter(|c| c.metric == self.metric) {
            let judged: Vec<(&RunView, Point)> = by_cell
                .get(&cell.cell)
                .into_iter()
                .flatten()
                .filter_map(|run| point(run, x, y).map(|p| (*run, p)))
                .collect();
            if !judged.is_empty() {
                runs.extend(judged.iter().map(|(run, _)| run.id.clone()));
                strata.push(judged.into_iter().map(|(_, p)| p).collect());
            }
        }
        Ok((strata, runs))
    }

    /// Why ρ is undefined: one of the metrics takes a single value over the runs.
    fn constant(&self, xs: &[f64]) -> String {
        let flat = if xs.windows(2).all(|w| w[0] == w[1]) {
            self.metric
        } else {
            self.with
        };
        format!("`{flat}` takes one value over the runs: a rank correlation needs both to vary")
    }

    /// What the check asks of the measured ρ: "≥ 0.5" or "≤ -0.5".
    fn needs(&self) -> String {
        match self.direction {
            Direction::Same => format!("≥ {}", correlation(self.min_rho)),
            Direction::Opposite => format!("≤ {}", correlation(-self.min_rho)),
        }
    }

    /// "`mops` falls as `waits` rises" or "`mops` rises with `waits`"; negated: "`mops` does
    /// not fall as `waits` rises".
    fn relation(&self, holds: bool) -> String {
        let (x, y) = (self.metric, self.with);
        match (self.direction, holds) {
            (Direction::Same, true) => format!("`{x}` rises with `{y}`"),
            (Direction::Same, false) => format!("`{x}` does not rise with `{y}`"),
            (Direction::Opposite, true) => format!("`{x}` falls as `{y}` rises"),
            (Direction::Opposite, false) => format!("`{x}` does not fall as `{y}` rises"),
        }
    }

    fn reading(&self, found: &Related) -> String {
        let (rho, bounds) = (
            correlation(found.rho),
            words::correlation_bounds(&found.interval),
        );
        let (needs, cells) = (self.needs(), found.cells);
        match found.decision.verdict {
            Verdict::Pass => format!(
                "{} across {cells} cells: ρ = {rho} {bounds}, the whole interval {needs}",
                self.relation(true)
            ),
            Verdict::Fail => format!(
                "{} strongly enough: ρ = {rho} {bounds} across {cells} cells, the whole \
                 interval short of ρ {needs}",
                self.relation(false)
            ),
            _ => format!(
                "ρ = {rho}: the interval {bounds} reaches both sides of {}; the data cannot \
                 decide",
                needs.trim_start_matches(['≥', '≤', ' '])
            ),
        }
    }
}

/// "1 cell", "4 cells".
fn counted(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// A run's point, when it is a measured run whose values of both metrics count: the median
/// of each metric's iterations (after its warm-up iterations).
fn point(run: &RunView, x: &Metric, y: &Metric) -> Option<Point> {
    if run.warmup || !run.counts_for(x) || !run.counts_for(y) {
        return None;
    }
    let value = |m: &Metric| {
        let values = run.numbers(&m.name, m.warmup_iterations);
        (!values.is_empty()).then(|| stats::median(&values))
    };
    Some((value(x)?, value(y)?)).filter(|(a, b)| a.is_finite() && b.is_finite())
}

#[cfg(test)]
#[path = "mechanism_tests.rs"]
mod tests;
