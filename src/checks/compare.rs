//! `compare`: a hypothesis `a OP factor · b` about two cells, decided on the bootstrap CI of
//! the ratio of their medians: pass if the whole interval satisfies it, fail if the whole
//! interval contradicts it, inconclusive when it straddles the threshold.

use super::MIN_RUNS;
use super::verdict::{CheckResult, RatioEvidence, Verdict};
use crate::analysis::{CellStats, Resampling, find_cell};
use crate::config::{CellSelector, CheckSpec, Comparison};
use crate::format::{level, ratio, value};
use crate::stats::{self, Interval, Statistic};

/// Decides `ratio OP threshold` from the ratio's interval.
pub fn decide(op: Comparison, threshold: f64, interval: &Interval) -> Verdict {
    let (lo, hi) = (interval.lo, interval.hi);
    let (holds, contradicted) = match op {
        Comparison::Less => (hi < threshold, lo >= threshold),
        Comparison::LessEqual => (hi <= threshold, lo > threshold),
        Comparison::Greater => (lo > threshold, hi <= threshold),
        Comparison::GreaterEqual => (lo >= threshold, hi < threshold),
    };
    match (holds, contradicted) {
        (true, _) => Verdict::Pass,
        (_, true) => Verdict::Fail,
        _ => Verdict::Inconclusive,
    }
}

/// The ratio of two cells' medians with its CI, or why it cannot be computed.
pub fn ratio_of(
    a: &CellStats,
    b: &CellStats,
    r: Resampling,
    label: &str,
) -> Result<(f64, Interval), String> {
    for cell in [a, b] {
        if cell.n < MIN_RUNS {
            return Err(format!(
                "{} has {} valid runs; {MIN_RUNS} are needed",
                cell.label, cell.n
            ));
        }
    }
    let mut rng = stats::stream(r.seed, label);
    stats::ratio_ci(
        &a.runs,
        &b.runs,
        Statistic::Median,
        r.resamples,
        r.level,
        &mut rng,
    )
    .map(|e| (e.ratio, e.interval))
    .ok_or_else(|| "the ratio is undefined (a median is zero or negative)".to_string())
}

#[allow(clippy::too_many_arguments)]
pub fn check(
    spec: &CheckSpec,
    metric: &str,
    a: &CellSelector,
    b: &CellSelector,
    op: Comparison,
    factor: f64,
    cells: &[CellStats],
    r: Resampling,
    unit: &str,
) -> CheckResult {
    let base = CheckResult::new(&spec.name, "compare", spec.class, Verdict::NotRun);
    let (Some(ca), Some(cb)) = (find_cell(cells, a, metric), find_cell(cells, b, metric)) else {
        return base.reading("a named cell has no runs in this session");
    };
    let (r_hat, ci) = match ratio_of(ca, cb, r, &format!("compare/{}", spec.name)) {
        Ok(x) => x,
        Err(why) => return base.reading(why),
    };
    let verdict = decide(op, factor, &ci);
    let (ma, mb) = (
        ca.median().unwrap_or(f64::NAN),
        cb.median().unwrap_or(f64::NAN),
    );
    let evidence = format!(
        "a = {} = {}, b = {} = {}; a/b = {} [{}, {}] ({} CI); needs a/b {} {}",
        ca.label,
        value(ma, unit),
        cb.label,
        value(mb, unit),
        ratio(r_hat),
        ratio(ci.lo),
        ratio(ci.hi),
        level(r.level),
        op.symbol(),
        ratio(factor)
    );
    let reading = match verdict {
        Verdict::Pass => format!(
            "{} is {}× {}, and the whole interval is {} {}",
            ca.label,
            ratio(r_hat),
            cb.label,
            op.symbol(),
            ratio(factor)
        ),
        Verdict::Fail => format!(
            "{} is {}× {}: the whole interval contradicts {} {}",
            ca.label,
            ratio(r_hat),
            cb.label,
            op.symbol(),
            ratio(factor)
        ),
        _ => format!(
            "the interval [{}, {}] straddles {}: the data cannot decide",
            ratio(ci.lo),
            ratio(ci.hi),
            ratio(factor)
        ),
    };
    let result = CheckResult { verdict, ..base }
        .evidence(evidence)
        .reading(reading);
    let needs = format!("a/b {} {}", op.symbol(), ratio(factor));
    with_ratio(result, ca, cb, r_hat, &ci, (factor, needs))
}

/// Attaches the two cells' runs and the ratio evidence that the forest chart draws.
pub(super) fn with_ratio(
    mut result: CheckResult,
    a: &CellStats,
    b: &CellStats,
    ratio: f64,
    ci: &Interval,
    (threshold, needs): (f64, String),
) -> CheckResult {
    result.runs = a.run_ids.iter().chain(&b.run_ids).cloned().collect();
    result.ratio = Some(RatioEvidence {
        a: a.label.clone(),
        b: b.label.clone(),
        a_value: a.median().unwrap_or(f64::NAN),
        b_value: b.median().unwrap_or(f64::NAN),
        ratio,
        lo: ci.lo,
        hi: ci.hi,
        threshold,
        needs,
        level: ci.level,
    });
    result
}

#[cfg(test)]
mod tests {
    use super::super::interval as iv;
    use super::*;

    #[test]
    fn less_than_is_decided_at_its_boundaries() {
        assert_eq!(decide(Comparison::Less, 0.5, &iv(0.2, 0.49)), Verdict::Pass);
        assert_eq!(
            decide(Comparison::Less, 0.5, &iv(0.2, 0.5)),
            Verdict::Inconclusive
        );
        assert_eq!(decide(Comparison::Less, 0.5, &iv(0.5, 0.7)), Verdict::Fail);
        assert_eq!(
            decide(Comparison::LessEqual, 0.5, &iv(0.2, 0.5)),
            Verdict::Pass
        );
        assert_eq!(
            decide(Comparison::LessEqual, 0.5, &iv(0.5, 0.7)),
            Verdict::Inconclusive
        );
        assert_eq!(
            decide(Comparison::LessEqual, 0.5, &iv(0.51, 0.7)),
            Verdict::Fail
        );
    }

    #[test]
    fn greater_than_is_decided_at_its_boundaries() {
        assert_eq!(
            decide(Comparison::Greater, 1.0, &iv(1.01, 2.0)),
            Verdict::Pass
        );
        assert_eq!(
            decide(Comparison::Greater, 1.0, &iv(1.0, 2.0)),
            Verdict::Inconclusive
        );
        assert_eq!(
            decide(Comparison::Greater, 1.0, &iv(0.5, 1.0)),
            Verdict::Fail
        );
        assert_eq!(
            decide(Comparison::GreaterEqual, 1.0, &iv(1.0, 2.0)),
            Verdict::Pass
        );
        assert_eq!(
            decide(Comparison::GreaterEqual, 1.0, &iv(0.5, 0.99)),
            Verdict::Fail
        );
        assert_eq!(
            decide(Comparison::GreaterEqual, 1.0, &iv(0.5, 1.0)),
            Verdict::Inconclusive
        );
    }
}
