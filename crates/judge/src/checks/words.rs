//! Phrases the descriptions of checks share: two cells set side by side, a correlation with
//! its interval.

use super::pair::Pair;
use lab_config::format::{correlation as correlation_value, level, percent, ratio_interval, value};
use lab_stats::Interval;

/// "a = CELL = VALUE, b = CELL = VALUE; a/b = R [LO, HI] (95% CI)".
pub fn pair(p: &Pair, unit: &str, ci_level: f64) -> String {
    let (d, iv) = (&p.decision, &p.decision.interval);
    format!(
        "a = {} = {}, b = {} = {}; a/b = {} ({} CI)",
        p.a.label,
        value(p.a.median().unwrap_or(f64::NAN), unit),
        p.b.label,
        value(p.b.median().unwrap_or(f64::NAN), unit),
        ratio_interval(d.estimate, iv.lo, iv.hi),
        level(ci_level)
    )
}

/// "ρ = -0.82 [-0.90, -0.71] (95% CI) over 36 runs in 4 cells".
pub fn correlation(rho: f64, interval: &Interval, runs: usize, cells: usize) -> String {
    format!(
        "ρ = {} {} ({} CI) over {runs} runs in {cells} cells",
        correlation_value(rho),
        correlation_bounds(interval),
        level(interval.level)
    )
}

/// The bounds of a correlation's interval: `[-0.90, -0.71]`.
pub fn correlation_bounds(interval: &Interval) -> String {
    format!(
        "[{}, {}]",
        correlation_value(interval.lo),
        correlation_value(interval.hi)
    )
}

/// `result` read as at the threshold, when it is: "at the threshold: 0.098 [0.092, 0.104],
/// within ±10.0% of 0.100 — the data cannot tell which side, and more runs would not change
/// what it means".
pub fn at_threshold(
    mut result: super::CheckResult,
    decisions: &[&super::shape::Decision],
) -> super::CheckResult {
    if result.verdict != super::Verdict::AtThreshold {
        return result;
    }
    let near = decisions
        .iter()
        .find(|d| d.verdict == super::Verdict::AtThreshold);
    if let Some(d) = near {
        result.reading = format!(
            "at the threshold: {}, within ±{} of {} — the data cannot tell which side, and more runs would not change what it means",
            ratio_interval(d.estimate, d.interval.lo, d.interval.hi),
            percent(d.margin.unwrap_or(0.0)),
            threshold(d.rule)
        );
    }
    result
}

/// Runs that waited less than this share of their wall time are not worth a sentence.
const NOTABLE_WAIT: f64 = 0.01;

/// `result` with what the machine's disturbance did to the `decisions` it rests on: a verdict
/// withheld reads "machine busy" with what the runs waited and the range the undisturbed
/// ratio could take; a verdict that stands says in its evidence what it rests on.
pub fn disturbance(
    mut result: super::CheckResult,
    decisions: &[&super::shape::Decision],
) -> super::CheckResult {
    let weighed = decisions
        .iter()
        .filter_map(|d| Some((*d, d.disturbance?)))
        .max_by(|(_, a), (_, b)| {
            (a.withheld, a.most)
                .partial_cmp(&(b.withheld, b.most))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    let Some((decision, found)) = weighed else {
        return result;
    };
    let (iv, env) = (&decision.interval, &found.envelope);
    if found.withheld && result.verdict == super::Verdict::Inconclusive && found.reshaped > 0 {
        let cause = format!(
            "{} parallel run{} waited for a CPU others had for up to {} of their wall time",
            found.reshaped,
            if found.reshaped == 1 { "" } else { "s" },
            percent(found.most)
        );
        result.reading = format!(
            "machine busy: {cause}, and threads that wait interleave otherwise, so {} could be anything undisturbed; quiet the machine or add runs",
            ratio_interval(decision.estimate, iv.lo, iv.hi),
        );
        result.busy = Some(cause);
    } else if found.withheld && result.verdict == super::Verdict::Inconclusive {
        let cause = format!(
            "runs waited for a CPU others had for up to {} of their wall time",
            percent(found.most)
        );
        result.reading = format!(
            "machine busy: {cause}, as much as separates {} from {}: undisturbed it could lie anywhere in {}; quiet the machine or add runs",
            ratio_interval(decision.estimate, iv.lo, iv.hi),
            threshold(decision.rule),
            lab_config::format::ratio_bounds(env.lo, env.hi)
        );
        result.busy = Some(cause);
    } else if found.taken_out && found.most >= NOTABLE_WAIT {
        result.evidence.push_str(&format!(
            "; {} of {} runs waited for a CPU others had (up to {} of their wall time), and each run's own waiting is taken out of its wall time: one task worked in each, and a single task's waiting adds to its wall time exactly",
            found.slowed_runs,
            found.runs,
            percent(found.most)
        ));
    } else if found.most >= NOTABLE_WAIT {
        let consequence = if matches!(result.verdict, super::Verdict::Pass | super::Verdict::Fail) {
            "which cannot explain the verdict: undisturbed the ratio lies within"
        } else {
            "so undisturbed the ratio could lie anywhere in"
        };
        result.evidence.push_str(&format!(
            "; {} of {} runs waited for a CPU others had (up to {} of their wall time), {consequence} {}",
            found.slowed_runs,
            found.runs,
            percent(found.most),
            lab_config::format::ratio_bounds(env.lo, env.hi)
        ));
    }
    result
}

/// `result` with why a cell's steps withheld its verdict, where they did: the reading names
/// the step, and the evidence the interval widened by it. Where no step is known but an
/// interval has zero width, the reading says it decides nothing.
pub fn resolution(
    mut result: super::CheckResult,
    decisions: &[&super::shape::Decision],
) -> super::CheckResult {
    if result.verdict != super::Verdict::Inconclusive {
        return result;
    }
    if let Some(found) = decisions.iter().find_map(|d| d.resolution.as_ref()) {
        result.reading = found.reading.clone();
        result.evidence.push_str(&format!(
            "; widened by one step at each end, the interval is {}",
            lab_config::format::ratio_bounds(found.widened.lo, found.widened.hi)
        ));
    } else if let Some(d) = decisions
        .iter()
        .find(|d| d.verdict == super::Verdict::Inconclusive && !super::rule::has_width(&d.interval))
    {
        result.reading = format!(
            "the interval {} has zero width: its runs printed too few distinct values, and an interval of zero width decides nothing; time with a finer clock or add runs",
            ratio_interval(d.estimate, d.interval.lo, d.interval.hi)
        );
    }
    result
}

/// The threshold a rule sets a ratio against: "1.05", "the band [0.95, 1.05]".
fn threshold(rule: super::rule::Rule) -> String {
    use super::rule::Rule;
    match rule {
        Rule::Compare(_, t) => lab_config::format::ratio(t),
        Rule::Within(lo, hi) | Rule::Outside(lo, hi) => {
            format!("the band {}", lab_config::format::ratio_bounds(lo, hi))
        }
    }
}
