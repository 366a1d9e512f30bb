//! `agree`: two cells that must measure the same thing match within a margin (seed 000, trap 4:
//! the OpenMP build on one thread ran 5.5× slower than the sequential build). Decided on the
//! bootstrap CI of the ratio of their medians against the band [1/(1+m), 1+m].

use super::pair::{Named, Pair};
use super::rule::Rule;
use super::shape::{Check, Context, Declared, Description};
use lab_config::CheckKind;
use lab_config::format::ratio_bounds;
use lab_config::format::{percent, ratio};
use lab_findings::checks::Verdict;

/// A declared `agree` check: pass when the whole interval lies inside the band, fail when it
/// lies wholly outside it.
pub(super) struct Agree<'a> {
    pub cells: Named<'a>,
    pub margin: f64,
    pub unit: &'a str,
}

impl Agree<'_> {
    /// The band the ratio must stay in, symmetric on the log scale.
    fn band(&self) -> (f64, f64) {
        (1.0 / (1.0 + self.margin), 1.0 + self.margin)
    }
}

impl<'a> Declared<'a> for Agree<'a> {
    fn of(cx: &Context<'a>) -> Option<Self> {
        let CheckKind::Agree {
            metric,
            a,
            b,
            margin,
        } = &cx.spec.kind
        else {
            return None;
        };
        Some(Agree {
            cells: Named { metric, a, b },
            margin: *margin,
            unit: cx.unit(metric),
        })
    }
}

impl<'a> Check<'a> for Agree<'_> {
    type Outcome = Pair<'a>;
    const KIND: &'static str = "agree";

    fn decide(&self, cx: &Context<'a>) -> Result<Pair<'a>, String> {
        let (low, high) = self.band();
        Pair::judge(cx, Self::KIND, &self.cells, Rule::Within(low, high))
    }

    fn describe(&self, p: &Pair) -> Description {
        let (low, high) = self.band();
        let margin = percent(self.margin);
        let (a, b, r) = (&p.a.label, &p.b.label, ratio(p.decision.estimate));
        let iv = &p.decision.interval;
        let reading = match p.decision.verdict {
            Verdict::Pass => format!("{a} and {b} agree: {a} is {r}× the other, within ±{margin}"),
            Verdict::Fail => format!("{a} is {r}× {b}, which should match it within ±{margin}"),
            _ => format!(
                "the interval {} reaches outside ±{margin}: the data cannot decide",
                ratio_bounds(iv.lo, iv.hi)
            ),
        };
        let evidence = format!(
            "{}; agreement needs a/b within {} (±{margin})",
            p.side_by_side(self.unit, p.level),
            ratio_bounds(low, high)
        );
        Description {
            evidence,
            reading,
            ratio: Some(p.chart(1.0, format!("a/b within ±{margin}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::interval as iv;
    use super::*;

    #[test]
    fn the_band_is_symmetric_on_the_log_scale() {
        let (low, high) = (1.0 / 1.1, 1.1);
        let decide = |lo, hi| Rule::Within(low, high).decide(&iv(lo, hi));
        assert_eq!(decide(0.95, 1.05), Verdict::Pass);
        assert_eq!(decide(1.0 / 1.1, 1.1), Verdict::Pass);
        assert_eq!(decide(0.9, 1.0), Verdict::Inconclusive);
        assert_eq!(decide(1.05, 1.2), Verdict::Inconclusive);
        assert_eq!(decide(5.0, 6.0), Verdict::Fail);
        assert_eq!(decide(0.5, 0.9), Verdict::Fail);
    }
}
