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
use super::compare::ratio_of;
use super::verdict::{CheckResult, RatioEvidence, Verdict};
use crate::analysis::{CellStats, Resampling};
use crate::config::{CellSelector, CheckSpec};
use crate::format::{percent, value};

/// What the metric must stay below.
pub enum Ceiling<'a> {
    Limit(f64),
    Calibration(&'a CellSelector),
}

/// One cell set against its ceiling, as a ratio value / ceiling with its interval.
struct Judged<'a> {
    cell: &'a CellStats,
    ceiling: f64,
    ceiling_label: String,
    ratio: f64,
    lo: f64,
    hi: f64,
    verdict: Verdict,
}

/// Fail when the whole interval of value / ceiling reaches the fraction.
pub fn decide(fraction: f64, lo: f64, hi: f64) -> Verdict {
    if lo >= fraction {
        Verdict::Fail
    } else if hi >= fraction {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
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

pub fn check(
    spec: &CheckSpec,
    metric: &str,
    ceiling: &Ceiling,
    fraction: f64,
    (judged_cells, cells): (&[&CellStats], &[CellStats]),
    r: Resampling,
    unit: &str,
) -> CheckResult {
    let base = CheckResult::new(&spec.name, "ceiling", spec.class, Verdict::NotRun);
    let mut judged = Vec::new();
    let mut skipped = Vec::new();
    for cell in judged_cells.iter().copied().filter(|c| c.metric == metric) {
        match judge(spec, cell, ceiling, fraction, cells, r) {
            Some(Ok(j)) => judged.push(j),
            Some(Err(why)) => skipped.push(why),
            None => {}
        }
    }
    let outcomes: Vec<(Verdict, f64)> = judged.iter().map(|j| (j.verdict, j.ratio)).collect();
    let Some((verdict, index)) = decisive(&outcomes) else {
        return base.reading(
            skipped
                .first()
                .cloned()
                .unwrap_or_else(|| "no cell to set against the ceiling".into()),
        );
    };
    let worst = &judged[index];
    let median = worst.cell.median().unwrap_or(f64::NAN);
    let evidence = format!(
        "worst cell {} = {}, {} of the ceiling {} ({}) [{}, {}] ({} CI); the limit is {} of it; {} cells judged, {} failed, {} undecided{}",
        worst.cell.label,
        value(median, unit),
        percent(worst.ratio),
        value(worst.ceiling, unit),
        worst.ceiling_label,
        percent(worst.lo),
        percent(worst.hi),
        crate::format::level(r.level),
        percent(fraction),
        judged.len(),
        judged.iter().filter(|j| j.verdict == Verdict::Fail).count(),
        judged
            .iter()
            .filter(|j| j.verdict == Verdict::Inconclusive)
            .count(),
        if skipped.is_empty() {
            String::new()
        } else {
            format!("; {} not judged: {}", skipped.len(), skipped[0])
        }
    );
    let reading = match verdict {
        Verdict::Pass => format!(
            "every cell stays under {} of its ceiling; the closest, {}, is at {}",
            percent(fraction),
            worst.cell.label,
            percent(worst.ratio)
        ),
        Verdict::Fail => format!(
            "{} reaches {} of {} ({}): it measures the ceiling, not the code",
            worst.cell.label,
            percent(worst.ratio),
            value(worst.ceiling, unit),
            worst.ceiling_label
        ),
        _ => format!(
            "{} is at {} of its ceiling, and its interval straddles {}: the data cannot decide",
            worst.cell.label,
            percent(worst.ratio),
            percent(fraction)
        ),
    };
    let mut result = CheckResult { verdict, ..base }
        .evidence(evidence)
        .reading(reading);
    result.runs = judged
        .iter()
        .filter(|j| j.verdict == verdict)
        .flat_map(|j| j.cell.run_ids.iter().cloned())
        .collect();
    result.ratio = Some(RatioEvidence {
        a: worst.cell.label.clone(),
        b: worst.ceiling_label.clone(),
        a_value: median,
        b_value: worst.ceiling,
        ratio: worst.ratio,
        lo: worst.lo,
        hi: worst.hi,
        threshold: fraction,
        needs: format!("under {} of the ceiling", percent(fraction)),
        level: r.level,
    });
    result
}

/// `None` for a calibration cell itself or a cell without a matching calibration cell.
fn judge<'a>(
    spec: &CheckSpec,
    cell: &'a CellStats,
    ceiling: &Ceiling,
    fraction: f64,
    cells: &'a [CellStats],
    r: Resampling,
) -> Option<Result<Judged<'a>, String>> {
    let judged = |ceiling: f64, ceiling_label: String, ratio: f64, lo: f64, hi: f64| Judged {
        cell,
        ceiling,
        ceiling_label,
        ratio,
        lo,
        hi,
        verdict: decide(fraction, lo, hi),
    };
    match ceiling {
        Ceiling::Limit(limit) => {
            let (Some(m), Some(ci)) =
                (cell.median(), cell.median_ci.filter(|_| cell.n >= MIN_RUNS))
            else {
                return Some(Err(format!(
                    "{} has {} valid runs; {MIN_RUNS} are needed",
                    cell.label, cell.n
                )));
            };
            Some(Ok(judged(
                *limit,
                "limit".into(),
                m / limit,
                ci.lo / limit,
                ci.hi / limit,
            )))
        }
        Ceiling::Calibration(selector) => {
            if cell.cell.is_named_by(selector) {
                return None;
            }
            let calibration = cells.iter().find(|c| {
                c.metric == cell.metric
                    && c.cell.is_named_by(selector)
                    && same_other_params(selector, c, cell)
            })?;
            let label = format!("median of {}", calibration.label);
            let found = ratio_of(
                cell,
                calibration,
                r,
                &format!("ceiling/{}/{}", spec.name, cell.label),
            );
            Some(found.map(|(x, ci)| {
                judged(
                    calibration.median().unwrap_or(f64::NAN),
                    label,
                    x,
                    ci.lo,
                    ci.hi,
                )
            }))
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
    use super::*;

    #[test]
    fn fails_only_when_the_whole_interval_reaches_the_fraction() {
        assert_eq!(decide(0.8, 0.85, 0.99), Verdict::Fail);
        assert_eq!(decide(0.8, 0.8, 0.9), Verdict::Fail);
        assert_eq!(decide(0.8, 0.7, 0.85), Verdict::Inconclusive);
        assert_eq!(decide(0.8, 0.1, 0.79), Verdict::Pass);
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
