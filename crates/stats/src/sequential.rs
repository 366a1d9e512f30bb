//! Group-sequential looks: when runs are added until the data decide, every look reads its
//! intervals at a level of its own, so that over all looks together the chance that any
//! interval misses stays within the session's stated error rate.
//!
//! Method: repeated confidence intervals (Jennison & Turnbull 1989, "Interim analyses: the
//! repeated confidence interval approach", JRSS B 51(3):305–361) with the error rate spent
//! over the looks by the Lan–DeMets Pocock-type spending function
//! α(t) = α · ln(1 + (e − 1) · t), t = runs per cell at the look ÷ runs per cell at the last
//! possible look (Lan & DeMets 1983, "Discrete sequential boundaries for clinical trials",
//! Biometrika 70(3):659–663). Look k reads its intervals at 1 − (α(t_k) − α(t_{k−1})).
//! Lan and DeMets derive exact boundaries for normal statistics from the correlation between
//! looks; lab's intervals are bootstrap intervals, so the levels here rest on the union
//! (Bonferroni) bound alone: P(some look's interval misses) ≤ Σ_k (α(t_k) − α(t_{k−1})) = α.
//! That is conservative, and it holds whichever look the session stops at.

/// Runs per cell at each look: `min`, then half as many again each time, ending at `max`
/// (5, 8, 12, 18, 27, 40). Few looks keep each one's level close to the stated one.
pub fn schedule(min: u32, max: u32) -> Vec<u32> {
    let min = min.max(1);
    let mut looks = vec![min];
    let mut n = min;
    while n < max {
        n = (n + n.div_ceil(2)).min(max);
        looks.push(n);
    }
    looks
}

/// The Lan–DeMets Pocock-type spending function: the error rate spent by information
/// fraction `t` ∈ [0, 1] out of `alpha`.
pub fn spent(alpha: f64, t: f64) -> f64 {
    alpha * (1.0 + (std::f64::consts::E - 1.0) * t.clamp(0.0, 1.0)).ln()
}

/// The confidence level of each look of `schedule`, for a session stated at `level`.
pub fn look_levels(level: f64, schedule: &[u32]) -> Vec<f64> {
    let alpha = 1.0 - level;
    let last = f64::from(schedule.last().copied().unwrap_or(1).max(1));
    let mut before = 0.0;
    schedule
        .iter()
        .map(|&n| {
            let now = spent(alpha, f64::from(n) / last);
            let look = 1.0 - (now - before);
            before = now;
            look
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_grow_by_half_and_end_at_the_budget() {
        assert_eq!(schedule(5, 40), vec![5, 8, 12, 18, 27, 40]);
        assert_eq!(schedule(3, 20), vec![3, 5, 8, 12, 18, 20]);
        assert_eq!(schedule(10, 10), vec![10]);
        assert_eq!(schedule(1, 3), vec![1, 2, 3]);
    }

    #[test]
    fn levels_match_the_spending_function_and_spend_exactly_alpha() {
        // α(t) = 0.05 · ln(1 + (e − 1) t) at t = n/40, computed independently in Python:
        // look levels 0.990272, 0.994959, 0.993983, 0.992147, 0.990138, 0.988502.
        let levels = look_levels(0.95, &schedule(5, 40));
        let expected = [0.990272, 0.994959, 0.993983, 0.992147, 0.990138, 0.988502];
        for (got, want) in levels.iter().zip(expected) {
            assert!((got - want).abs() < 5e-7, "{levels:?}");
        }
        let total: f64 = levels.iter().map(|l| 1.0 - l).sum();
        assert!((total - 0.05).abs() < 1e-12);
        assert!((spent(0.05, 1.0) - 0.05).abs() < 1e-15);
        assert_eq!(spent(0.05, 0.0), 0.0);
    }

    #[test]
    fn a_single_look_keeps_the_stated_level() {
        let levels = look_levels(0.95, &schedule(7, 7));
        assert_eq!(levels.len(), 1);
        assert!((levels[0] - 0.95).abs() < 1e-12);
    }
}
