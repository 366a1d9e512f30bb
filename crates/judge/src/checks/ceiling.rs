//! `ceiling`: a result must stay clear of a limit it cannot exceed (seed 000, trap 1: every fast
//! structure sat at 29 Mops/s, the throughput of `System.nanoTime()` it called each operation).
//! The ceiling is a number, or the median of a calibration cell with the same other
//! parameters. Per cell: fail when the whole 95% CI is at or above `fraction` × ceiling,
//! inconclusive when it straddles, pass when it is entirely below.
//!
//! Against a number, the interval is the cell's bootstrap CI of the median. Against a
//! calibration cell, it is the CI of the ratio cell / calibration, so the calibration's own
//! uncertainty counts too (Davison & Hinkley 1997 §5.2, as in `compare`).

use super::MIN_RUNS;
use super::rule::Rule;
use super::shape::{Check, Context, Decision, Declared, Description, Outcome, Side};
use crate::analysis::CellStats;
use lab_config::format::{percent, value};
use lab_config::{CellSelector, CheckKind, Comparison};
use lab_findings::checks::Verdict;
use lab_stats::Interval;

/// What the metric must stay below.
pub(super) enum Limit<'a> {
    Number(f64),
    Calibration(&'a CellSelector),
}

/// A declared `ceiling` check.
pub(super) struct Ceiling<'a> {
    pub metric: &'a str,
    pub limit: Limit<'a>,
    pub fraction: f64,
    pub unit: &'a str,
}

/// One cell set against its ceiling, as a ratio value / ceiling with its interval.
pub(super) struct Against<'a> {
    cell: &'a CellStats,
    ceiling: f64,
    ceiling_label: String,
    decision: Decision,
}

/// Every cell judged, those that could not be, the verdict and the cell that decided it.
pub(super) struct Clearance<'a> {
    judged: Vec<Against<'a>>,
    skipped: Vec<String>,
    verdict: Verdict,
    worst: usize,
    level: f64,
}

impl Outcome for Clearance<'_> {
    fn verdict(&self) -> Verdict {
        self.verdict
    }

    fn runs(&self) -> Vec<String> {
        self.judged
            .iter()
            .filter(|j| j.decision.verdict == self.verdict)
            .flat_map(|j| j.cell.run_ids.iter().map(ToString::to_string))
            .collect()
    }

    fn decisions(&self) -> Vec<&Decision> {
        self.judged.iter().map(|j| &j.decision).collect()
    }
}

/// The verdict of the whole check and the cell that decided it: the worst verdict any cell
/// reached, and among the cells with that verdict the one closest to (or furthest past) the
/// ceiling. A cell whose interval merely straddles never speaks for a failure.
fn decisive(outcomes: &[(Verdict, f64)]) -> Option<(Verdict, usize)> {
    let verdict = [Verdict::Fail, Verdict::Inconclusive, Verdict::Pass]
        .into_iter()
        .find(|v| outcomes.iter().any(|(o, _)| o == v))?;
    let index = outcomes
        .iter()
        .enumerate()
        .filter(|(_, (o, _))| *o == verdict)
        .max_by(|a, b| a.1.1.total_cmp(&b.1.1))?
        .0;
    Some((verdict, index))
}

impl<'a> Declared<'a> for Ceiling<'a> {
    fn of(cx: &Context<'a>) -> Option<Self> {
        let CheckKind::Ceiling {
            metric,
            limit,
            calibration,
            fraction,
        } = &cx.spec.kind
        else {
            return None;
        };
        let limit = match (limit, calibration) {
            (Some(l), _) => Limit::Number(*l),
            (None, Some(selector)) => Limit::Calibration(selector),
            (None, None) => return None,
        };
        Some(Ceiling {
            metric,
            limit,
            fraction: *fraction,
            unit: cx.unit(metric),
        })
    }
}

impl<'a> Check<'a> for Ceiling<'_> {
    type Outcome = Clearance<'a>;
    const KIND: &'static str = "ceiling";

    fn decide(&self, cx: &Context<'a>) -> Result<Clearance<'a>, String> {
        let mut judged = Vec::new();
        let mut skipped = Vec::new();
        for cell in cx
            .in_scope()
            .into_iter()
            .filter(|c| c.metric == self.metric)
        {
            match self.judge(cx, cell) {
                Some(Ok(j)) => judged.push(j),
                Some(Err(why)) => skipped.push(why),
                None => {}
            }
        }
        let outcomes: Vec<(Verdict, f64)> = judged
            .iter()
            .map(|j| (j.decision.verdict, j.decision.estimate))
            .collect();
        let Some((verdict, worst)) = decisive(&outcomes) else {
            let none = || "no cell to set against the ceiling".into();
            return Err(skipped.first().cloned().unwrap_or_else(none));
        };
        Ok(Clearance {
            judged,
            skipped,
            verdict,
            worst,
            level: cx.resampling.level,
        })
    }

    fn describe(&self, c: &Clearance) -> Description {
        let worst = &c.judged[c.worst];
        let needs = format!("under {} of the ceiling", percent(self.fraction));
        let (a, b) = (
            Side::cell(worst.cell),
            Side {
                label: &worst.ceiling_label,
                value: worst.ceiling,
            },
        );
        Description {
            evidence: self.evidence(c),
            reading: self.reading(worst, c.verdict),
            ratio: Some(worst.decision.chart(a, b, self.fraction, needs, c.level)),
        }
    }
}

impl Ceiling<'_> {
    /// `None` for a calibration cell itself or a cell without a matching calibration cell.
    fn judge<'a>(
        &self,
        cx: &Context<'a>,
        cell: &'a CellStats,
    ) -> Option<Result<Against<'a>, String>> {
        let rule = Rule::Compare(Comparison::Less, self.fraction);
        let against = |ceiling, ceiling_label, decision| Against {
            cell,
            ceiling,
            ceiling_label,
            decision,
        };
        match self.limit {
            Limit::Number(limit) => {
                let (Some(m), Some(ci)) =
                    (cell.median(), cell.median_ci.filter(|_| cell.n >= MIN_RUNS))
                else {
                    return Some(Err(cell.too_few_runs(MIN_RUNS)));
                };
                let interval = Interval {
                    lo: ci.lo / limit,
                    hi: ci.hi / limit,
                    ..ci
                };
                let mut decision = Decision::new(m / limit, interval, rule);
                decision.verdict = rule.decide_reading(&interval, None, cx.clocked(cell));
                cx.resolve_against(cell, limit, &mut decision);
                Some(Ok(against(limit, "limit".into(), decision)))
            }
            Limit::Calibration(selector) => {
                if cell.cell.is_named_by(selector) {
                    return None;
                }
                let calibration = cx.cells.iter().find(|c| {
                    c.metric == cell.metric
                        && c.cell.is_named_by(selector)
                        && same_other_params(selector, c, cell)
                })?;
                let label = format!("median of {}", calibration.label);
                let stream = cx.stream(Self::KIND, Some(&cell.label));
                let found = cx.ratio(cell, calibration, &stream, rule);
                let median = calibration.median().unwrap_or(f64::NAN);
                Some(found.map(|d| against(median, label, d)))
            }
        }
    }

    fn evidence(&self, c: &Clearance) -> String {
        let worst = &c.judged[c.worst];
        let count = |v: Verdict| c.judged.iter().filter(|j| j.decision.verdict == v).count();
        let iv = &worst.decision.interval;
        format!(
            "worst cell {} = {}, {} of the ceiling {} ({}) [{}, {}] ({} CI); the limit is {} of it; {} cells judged, {} failed, {} undecided{}",
            worst.cell.label,
            value(worst.cell.median().unwrap_or(f64::NAN), self.unit),
            percent(worst.decision.estimate),
            value(worst.ceiling, self.unit),
            worst.ceiling_label,
            percent(iv.lo),
            percent(iv.hi),
            lab_config::format::level(c.level),
            percent(self.fraction),
            c.judged.len(),
            count(Verdict::Fail),
            count(Verdict::Inconclusive),
            match c.skipped.first() {
                None => String::new(),
                Some(first) => format!("; {} not judged: {first}", c.skipped.len()),
            }
        )
    }

    fn reading(&self, worst: &Against, verdict: Verdict) -> String {
        let (cell, at) = (&worst.cell.label, percent(worst.decision.estimate));
        let fraction = percent(self.fraction);
        match verdict {
            Verdict::Pass => format!(
                "every cell stays under {fraction} of its ceiling; the closest, {cell}, is at {at}"
            ),
            Verdict::Fail => format!(
                "{cell} reaches {at} of {} ({}): it measures the ceiling, not the code",
                value(worst.ceiling, self.unit),
                worst.ceiling_label
            ),
            _ => format!(
                "{cell} is at {at} of its ceiling, and its interval straddles {fraction}: the data cannot decide"
            ),
        }
    }
}

/// The calibration cell shares every parameter the selector does not fix.
fn same_other_params(selector: &CellSelector, calibration: &CellStats, cell: &CellStats) -> bool {
    cell.cell
        .params
        .iter()
        .all(|(k, v)| selector.params.contains_key(k) || calibration.cell.params.get(k) == Some(v))
}

#[cfg(test)]
mod tests {
    use super::super::interval as iv;
    use super::*;

    #[test]
    fn fails_only_when_the_whole_interval_reaches_the_fraction() {
        let decide = |lo, hi| Rule::Compare(Comparison::Less, 0.8).decide(&iv(lo, hi));
        assert_eq!(decide(0.85, 0.99), Verdict::Fail);
        assert_eq!(decide(0.8, 0.9), Verdict::Fail);
        assert_eq!(decide(0.7, 0.85), Verdict::Inconclusive);
        assert_eq!(decide(0.1, 0.79), Verdict::Pass);
    }

    #[test]
    fn the_failing_cell_speaks_for_a_failure() {
        // threads=1 fails at 95% of the ceiling; threads=2 is higher (110%) but its interval
        // straddles the limit: the reading must name threads=1.
        let outcomes = [(Verdict::Fail, 0.95), (Verdict::Inconclusive, 1.104)];
        assert_eq!(decisive(&outcomes), Some((Verdict::Fail, 0)));
        let passing = [
            (Verdict::Pass, 0.3),
            (Verdict::Pass, 0.6),
            (Verdict::Pass, 0.5),
        ];
        assert_eq!(
            decisive(&passing),
            Some((Verdict::Pass, 1)),
            "the closest passing cell"
        );
        assert_eq!(decisive(&[]), None);
    }
}
