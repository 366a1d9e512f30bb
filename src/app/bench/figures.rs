//! The figures `lab bench` reports of each command at each parameter set: every valid run's
//! times and their summary as hyperfine computes it, and a ratio of two commands in words.

use lab_config::format::significant;
use lab_stats::Summary;
use std::collections::BTreeMap;

/// One command at one parameter set, with every valid run's measurements.
pub(super) struct Timed {
    pub label: String,
    /// The command as it ran, parameters replaced.
    pub command: String,
    pub params: BTreeMap<String, String>,
    /// Wall seconds of each valid timed run, in execution order.
    pub times: Vec<f64>,
    pub user: Vec<f64>,
    pub system: Vec<f64>,
    pub memory_bytes: Vec<u64>,
    pub exit_codes: Vec<Option<i32>>,
    pub median: Option<f64>,
    pub interval: Option<(f64, f64, f64)>,
    /// Timed runs that failed or could not be timed, with the first reason.
    pub invalid: usize,
    pub first_problem: Option<String>,
    /// Some timed run exited with a non-zero code (what `-i` accepts).
    pub failed: bool,
}

/// "1.95× [1.90, 2.01] faster": a ratio a/b below 1 turned round, so that the factor reads
/// above 1 with its direction. Four significant digits, so that an interval near the edge of
/// a ±2% band shows which side of it each end lies (1.019, not 1.02).
pub(super) fn directed(r: f64, lo: f64, hi: f64) -> String {
    let fine = |x: f64| significant(x, 4);
    if r < 1.0 {
        format!(
            "{}× [{}, {}] faster",
            fine(1.0 / r),
            fine(1.0 / hi),
            fine(1.0 / lo)
        )
    } else {
        format!("{}× [{}, {}] slower", fine(r), fine(lo), fine(hi))
    }
}

/// hyperfine's summary figures of `xs`, from lab's one [`Summary`] (0 where there are none).
fn summary_of(xs: &[f64], figure: fn(&Summary) -> f64) -> f64 {
    lab_stats::summarize(xs).map_or(0.0, |s| figure(&s))
}

/// The arithmetic mean; 0 for no values.
pub(super) fn mean(xs: &[f64]) -> f64 {
    summary_of(xs, |s| s.mean)
}

/// The sample standard deviation (divisor n − 1), as hyperfine reports it; 0 below two values.
pub(super) fn sd(xs: &[f64]) -> f64 {
    summary_of(xs, |s| if s.n < 2 { 0.0 } else { s.sd })
}

/// The smallest and largest value; (0, 0) for none.
pub(super) fn range(xs: &[f64]) -> (f64, f64) {
    (summary_of(xs, |s| s.min), summary_of(xs, |s| s.max))
}

/// The median of `xs` (the mean of the middle two for an even count); 0 for none.
pub(super) fn median(xs: &[f64]) -> f64 {
    summary_of(xs, |s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_and_centre_are_hyperfines() {
        let xs = [0.1, 0.2, 0.4, 0.3];
        assert!((mean(&xs) - 0.25).abs() < 1e-15);
        // numpy.std([0.1, 0.2, 0.4, 0.3], ddof=1) = 0.12909944487358058
        assert!((sd(&xs) - 0.129_099_444_873_580_58).abs() < 1e-15);
        assert!((median(&xs) - 0.25).abs() < 1e-15);
        assert_eq!(range(&xs), (0.1, 0.4));
        assert_eq!(sd(&[1.0]), 0.0);
    }
}
