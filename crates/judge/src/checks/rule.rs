//! The one decision every interval check makes: a statistic's confidence interval set against
//! a threshold. Pass when the whole interval satisfies the rule, fail when the whole interval
//! contradicts it, inconclusive when it straddles the threshold.
//!
//! On a clock's readings (a time, or a rate per unit of time) an interval of zero width decides
//! nothing ([`Rule::decide_reading`]): every resample gave one value because the runs printed
//! one value each, and a time repeats exactly only when a clock coarser than the work rounded
//! it ([`super::resolution`]). A count or a score a program computes (instructions under
//! callgrind, a compressed size) repeats because it is exact, and its point interval decides.

use lab_config::Comparison;
use lab_findings::checks::Verdict;
use lab_stats::Interval;

/// What a check asks of a statistic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// `statistic OP threshold`.
    Compare(Comparison, f64),
    /// Inside `[low, high]`, both ends included: at or above `low` and at or below `high`.
    Within(f64, f64),
    /// Outside `[low, high]`: passes where [`Rule::Within`] fails and fails where it passes.
    Outside(f64, f64),
}

impl Rule {
    /// The verdict of this rule on `interval`.
    pub fn decide(self, interval: &Interval) -> Verdict {
        match self {
            Rule::Compare(op, threshold) => against(op, threshold, interval),
            Rule::Within(low, high) => all([
                against(Comparison::GreaterEqual, low, interval),
                against(Comparison::LessEqual, high, interval),
            ]),
            Rule::Outside(low, high) => opposite(Rule::Within(low, high).decide(interval)),
        }
    }
}

impl Rule {
    /// The verdict of this rule on `interval`, where an interval that straddles a
    /// `Compare` threshold but lies wholly within ± `margin` of it is at the threshold: the
    /// two one-sided tests of equivalence (Schuirmann 1987) both reject a difference beyond the
    /// margin, so the data cannot tell which side and more runs would not change what it means.
    pub fn decide_near(self, interval: &Interval, margin: Option<f64>) -> Verdict {
        let verdict = self.decide(interval);
        match (verdict, self, margin) {
            (Verdict::Inconclusive, Rule::Compare(_, t), Some(m))
                if interval.lo >= t / (1.0 + m) && interval.hi <= t * (1.0 + m) =>
            {
                Verdict::AtThreshold
            }
            _ => verdict,
        }
    }
}

impl Rule {
    /// [`Rule::decide_near`] on the interval of a statistic of `clocked` values (a clock's
    /// readings): there an interval of zero width is inconclusive, at the threshold or not.
    pub fn decide_reading(
        self,
        interval: &Interval,
        margin: Option<f64>,
        clocked: bool,
    ) -> Verdict {
        if clocked && !has_width(interval) {
            return Verdict::Inconclusive;
        }
        self.decide_near(interval, margin)
    }
}

/// Whether `interval` is one: its upper end above its lower (false for a point or NaN ends).
pub fn has_width(interval: &Interval) -> bool {
    interval.hi > interval.lo
}

/// Decides `statistic OP threshold` from the statistic's interval.
pub fn against(op: Comparison, threshold: f64, interval: &Interval) -> Verdict {
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

/// Several conditions together: pass when every one passes, fail when any fails.
fn all<const N: usize>(verdicts: [Verdict; N]) -> Verdict {
    if verdicts.iter().all(|v| *v == Verdict::Pass) {
        Verdict::Pass
    } else if verdicts.contains(&Verdict::Fail) {
        Verdict::Fail
    } else {
        Verdict::Inconclusive
    }
}

/// Pass for fail and fail for pass.
fn opposite(verdict: Verdict) -> Verdict {
    match verdict {
        Verdict::Pass => Verdict::Fail,
        Verdict::Fail => Verdict::Pass,
        other => other,
    }
}

/// The worst verdict among those decided (fail, then inconclusive, then at the threshold),
/// else pass.
pub fn worst(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    let seen: Vec<Verdict> = verdicts.into_iter().collect();
    [Verdict::Fail, Verdict::Inconclusive, Verdict::AtThreshold]
        .into_iter()
        .find(|v| seen.contains(v))
        .unwrap_or(Verdict::Pass)
}

#[cfg(test)]
mod tests {
    use super::super::interval as iv;
    use super::*;
    use Comparison::*;
    use Verdict::*;

    fn compare(op: Comparison, t: f64, lo: f64, hi: f64) -> Verdict {
        Rule::Compare(op, t).decide(&iv(lo, hi))
    }

    #[test]
    fn below_a_threshold_is_decided_at_its_edges() {
        // Wholly below, touching from below, straddling, touching from above, wholly above.
        let cases = [
            (0.2, 0.49, Pass, Pass),
            (0.2, 0.5, Inconclusive, Pass),
            (0.4, 0.6, Inconclusive, Inconclusive),
            (0.5, 0.7, Fail, Inconclusive),
            (0.51, 0.7, Fail, Fail),
        ];
        for (lo, hi, less, less_equal) in cases {
            assert_eq!(compare(Less, 0.5, lo, hi), less, "[{lo}, {hi}] < 0.5");
            assert_eq!(
                compare(LessEqual, 0.5, lo, hi),
                less_equal,
                "[{lo}, {hi}] ≤ 0.5"
            );
        }
    }

    #[test]
    fn above_a_threshold_is_decided_at_its_edges() {
        let cases = [
            (1.01, 2.0, Pass, Pass),
            (1.0, 2.0, Inconclusive, Pass),
            (0.9, 1.1, Inconclusive, Inconclusive),
            (0.5, 1.0, Fail, Inconclusive),
            (0.5, 0.99, Fail, Fail),
        ];
        for (lo, hi, greater, greater_equal) in cases {
            assert_eq!(compare(Greater, 1.0, lo, hi), greater, "[{lo}, {hi}] > 1");
            assert_eq!(
                compare(GreaterEqual, 1.0, lo, hi),
                greater_equal,
                "[{lo}, {hi}] ≥ 1"
            );
        }
    }

    #[test]
    fn a_point_interval_on_the_threshold_decides_the_inclusive_rules_only() {
        assert_eq!(compare(Less, 1.0, 1.0, 1.0), Fail);
        assert_eq!(compare(LessEqual, 1.0, 1.0, 1.0), Pass);
        assert_eq!(compare(Greater, 1.0, 1.0, 1.0), Fail);
        assert_eq!(compare(GreaterEqual, 1.0, 1.0, 1.0), Pass);
    }

    #[test]
    fn an_interval_of_zero_width_on_a_clocks_readings_decides_nothing() {
        let reading = |rule: Rule, lo, hi, margin| rule.decide_reading(&iv(lo, hi), margin, true);
        // On the threshold, and far from it: a point is no interval.
        for op in [Less, LessEqual, Greater, GreaterEqual] {
            let rule = Rule::Compare(op, 1.0);
            assert_eq!(reading(rule, 1.0, 1.0, None), Inconclusive, "{op:?} at 1");
            assert_eq!(
                reading(rule, 1.15, 1.15, None),
                Inconclusive,
                "{op:?} at 1.15"
            );
        }
        assert_eq!(
            reading(Rule::Within(0.9, 1.1), 1.0, 1.0, None),
            Inconclusive
        );
        assert_eq!(
            reading(Rule::Outside(0.99, 1.01), 2.0, 2.0, None),
            Inconclusive
        );
        let near = reading(Rule::Compare(Less, 1.0), 1.0, 1.0, Some(0.1));
        assert_eq!(near, Inconclusive, "nor is it at the threshold");
        assert_eq!(
            reading(Rule::Compare(Less, 1.0), f64::NAN, f64::NAN, None),
            Inconclusive
        );
        // The narrowest interval that is one still decides; an exact count's point decides.
        assert_eq!(
            reading(Rule::Compare(Greater, 1.0), 1.15, 1.15 + 1e-12, None),
            Pass
        );
        let count = Rule::Compare(Greater, 1.0).decide_reading(&iv(13.5, 13.5), None, false);
        assert_eq!(count, Pass);
    }

    #[test]
    fn within_a_band_both_ends_count_as_inside() {
        let within = |lo, hi| Rule::Within(0.9, 1.1).decide(&iv(lo, hi));
        assert_eq!(within(0.95, 1.05), Pass);
        assert_eq!(within(0.9, 1.1), Pass);
        assert_eq!(within(0.85, 1.0), Inconclusive, "straddles the low end");
        assert_eq!(within(1.0, 1.2), Inconclusive, "straddles the high end");
        assert_eq!(within(0.5, 1.5), Inconclusive, "straddles both ends");
        assert_eq!(within(0.5, 0.89), Fail, "wholly below");
        assert_eq!(within(1.11, 2.0), Fail, "wholly above");
        assert_eq!(within(1.1, 2.0), Inconclusive, "touches the high end");
    }

    #[test]
    fn outside_a_band_is_within_turned_round() {
        let outside = |lo, hi| Rule::Outside(0.99, 1.01).decide(&iv(lo, hi));
        assert_eq!(outside(0.995, 1.005), Fail);
        assert_eq!(outside(0.99, 1.01), Fail);
        assert_eq!(outside(0.98, 1.005), Inconclusive);
        assert_eq!(outside(1.02, 1.3), Pass);
        assert_eq!(outside(0.5, 0.98), Pass);
        assert_eq!(outside(1.01, 1.3), Inconclusive);
    }

    #[test]
    fn an_interval_within_the_margin_of_its_threshold_is_at_the_threshold() {
        let near = |lo, hi| Rule::Compare(Less, 0.1).decide_near(&iv(lo, hi), Some(0.10));
        assert_eq!(
            near(0.092, 0.104),
            AtThreshold,
            "straddles, wholly within ±10%"
        );
        assert_eq!(
            near(0.1 / 1.1, 0.1 * 1.1),
            AtThreshold,
            "the margin's ends belong to it"
        );
        assert_eq!(near(0.085, 0.104), Inconclusive, "reaches below 0.1/1.1");
        assert_eq!(near(0.092, 0.112), Inconclusive, "reaches above 0.1 × 1.1");
        assert_eq!(near(0.05, 0.099), Pass, "a decided side stays decided");
        assert_eq!(near(0.101, 0.105), Fail);
        let without = Rule::Compare(Less, 0.1).decide_near(&iv(0.092, 0.104), None);
        assert_eq!(without, Inconclusive, "no margin, no answer");
        let band = Rule::Within(0.95, 1.05).decide_near(&iv(0.94, 1.0), Some(0.1));
        assert_eq!(band, Inconclusive, "bands have edges, not a threshold");
    }

    #[test]
    fn the_worst_verdict_speaks_for_several() {
        assert_eq!(worst([Pass, Inconclusive, Pass]), Inconclusive);
        assert_eq!(worst([Inconclusive, Fail]), Fail);
        assert_eq!(worst([Pass]), Pass);
        assert_eq!(worst([]), Pass);
    }
}
