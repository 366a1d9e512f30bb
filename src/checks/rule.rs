//! The one decision every interval check makes: a statistic's confidence interval set against
//! a threshold. Pass when the whole interval satisfies the rule, fail when the whole interval
//! contradicts it, inconclusive when it straddles the threshold.

use super::verdict::Verdict;
use crate::config::Comparison;
use crate::stats::Interval;

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
