//! How many hypothesis verdicts could be passes by chance when several are declared: each is
//! decided on a 95% interval, so with k of them the family-wise chance of at least one false
//! pass is at most k · 5% (Bonferroni) and 1 − 0.95^k for independent checks (Šidák 1967,
//! JASA 62:626). The sentence goes into the report next to the verdicts, and its three figures
//! into the chapter's catalogue of numbers.

use super::{CheckResult, Verdict};
use lab_config::CheckClass;
use lab_config::format::percent;

/// The nominal error rate of each hypothesis check (95% intervals, α = 0.05).
pub const ALPHA: f64 = 0.05;

/// What two or more decided hypothesis verdicts risk together.
#[derive(Debug, Clone, PartialEq)]
pub struct Multiplicity {
    /// The hypothesis checks decided (passed or failed), in the checks' order.
    pub decided: Vec<String>,
    pub passed: usize,
    /// At most k · α, capped at 1 (Bonferroni).
    pub bonferroni: f64,
    /// 1 − (1 − α)^k, for independent checks (Šidák).
    pub sidak: f64,
    /// The confidence each check would need for α over the whole set: 1 − α/k.
    pub per_check: f64,
}

impl Multiplicity {
    /// The family-wise risk of the decided hypothesis checks, when there are two or more.
    pub fn of(checks: &[CheckResult]) -> Option<Multiplicity> {
        let decided: Vec<&CheckResult> = checks
            .iter()
            .filter(|c| {
                c.class == CheckClass::Hypothesis
                    && matches!(c.verdict, Verdict::Pass | Verdict::Fail)
            })
            .collect();
        let k = decided.len();
        if k < 2 {
            return None;
        }
        Some(Multiplicity {
            passed: decided
                .iter()
                .filter(|c| c.verdict == Verdict::Pass)
                .count(),
            decided: decided.iter().map(|c| c.name.clone()).collect(),
            bonferroni: (k as f64 * ALPHA).min(1.0),
            sidak: 1.0 - (1.0 - ALPHA).powi(k as i32),
            per_check: 1.0 - ALPHA / k as f64,
        })
    }

    /// The sentence the report prints next to the verdicts.
    pub fn sentence(&self) -> String {
        format!(
            "{} hypothesis checks were decided, {} passed. Each is decided at 95% confidence, so if none of them held, the chance that at least one would pass anyway is up to {} ({} if they are independent); to hold it at 5% for the whole set, read each at {} confidence (Bonferroni).",
            self.decided.len(),
            self.passed,
            percent(self.bonferroni),
            percent(self.sidak),
            percent(self.per_check)
        )
    }
}

/// A sentence for the report when two or more hypothesis checks were decided, else `None`.
pub fn multiplicity(checks: &[CheckResult]) -> Option<String> {
    Multiplicity::of(checks).map(|m| m.sentence())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hypothesis(verdict: Verdict) -> CheckResult {
        CheckResult::new("h", "compare", CheckClass::Hypothesis, verdict)
    }

    #[test]
    fn counts_only_decided_hypotheses() {
        assert_eq!(
            multiplicity(&[hypothesis(Verdict::Pass), hypothesis(Verdict::Inconclusive)]),
            None
        );
        let text = multiplicity(&[
            hypothesis(Verdict::Pass),
            hypothesis(Verdict::Pass),
            hypothesis(Verdict::Fail),
        ])
        .unwrap();
        assert!(
            text.starts_with("3 hypothesis checks were decided, 2 passed."),
            "{text}"
        );
        assert!(
            text.contains("up to 15.0% (14.3% if they are independent)"),
            "{text}"
        );
        assert!(text.contains("at 98.3% confidence"), "{text}");
    }
}
