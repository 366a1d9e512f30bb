//! Whether the first run of each cell stands apart from the cell's later runs: the stratified
//! rank test of one observation per stratum.
//!
//! Within a cell whose runs are exchangeable, the first run's rank among the cell's values is
//! uniform over the ranks (ties averaged). The statistic is the sum over cells of the first
//! run's rank less its expectation, which is van Elteren's stratified Wilcoxon rank-sum (van
//! Elteren 1960, Biometrika 47) with one observation in the tested group of each stratum and
//! equal weights. Under exchangeability each term is a uniform draw from the cell's ranks, so
//! the null distribution is the convolution of those discrete uniforms: computed exactly on
//! the doubled ranks (integers even with ties) while its support stays small, else by the
//! normal approximation with a continuity correction (the sum of many bounded independent
//! terms; Lindeberg). The p-value is two-sided: a first run may be slow (a cold cache) or fast
//! (a warm one the later runs lose).

use statrs::function::erf::erfc;

/// Cells of fewer runs carry no information on their first one.
pub const MIN_CELL_RUNS: usize = 2;

/// Largest support of the doubled-rank sum computed exactly.
const EXACT_SUPPORT: usize = 20_000;

/// The test's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FirstRank {
    /// Cells that took part.
    pub cells: usize,
    /// Sum over cells of (first run's rank − (n + 1) / 2).
    pub excess: f64,
    /// Mean over cells of the first run's rank as a share of the way from the lowest (0) to
    /// the highest (1) rank: 0.5 when the first run is typical.
    pub mean_position: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// The test over `cells`, each cell's values in execution order (the first is the first run);
/// `None` when no cell has [`MIN_CELL_RUNS`] values.
pub fn first_rank_test(cells: &[Vec<f64>]) -> Option<FirstRank> {
    let ranked: Vec<Vec<f64>> = cells
        .iter()
        .filter(|c| c.len() >= MIN_CELL_RUNS)
        .map(|c| super::kruskal::mid_ranks(c))
        .collect();
    if ranked.is_empty() {
        return None;
    }
    let excess: f64 = ranked
        .iter()
        .map(|r| r[0] - (r.len() as f64 + 1.0) / 2.0)
        .sum();
    let mean_position = ranked
        .iter()
        .map(|r| (r[0] - 1.0) / (r.len() as f64 - 1.0))
        .sum::<f64>()
        / ranked.len() as f64;
    let support: usize = ranked.iter().map(|r| 2 * r.len()).sum();
    let p_value = if support <= EXACT_SUPPORT {
        exact_p(&ranked, excess)
    } else {
        normal_p(&ranked, excess)
    };
    Some(FirstRank {
        cells: ranked.len(),
        excess,
        mean_position,
        p_value,
    })
}

/// P(|S − E S| ≥ |excess|) under the exact null: the convolution of each cell's uniform draw
/// of a doubled rank.
fn exact_p(ranked: &[Vec<f64>], excess: f64) -> f64 {
    let mut dist = vec![1.0f64];
    for ranks in ranked {
        let doubled: Vec<usize> = ranks.iter().map(|r| (2.0 * r).round() as usize).collect();
        let top = doubled.iter().copied().max().unwrap_or(0);
        let mut next = vec![0.0; dist.len() + top];
        let share = 1.0 / ranks.len() as f64;
        for (s, p) in dist.iter().enumerate().filter(|(_, p)| **p > 0.0) {
            for d in &doubled {
                next[s + d] += p * share;
            }
        }
        dist = next;
    }
    let centre: f64 = ranked.iter().map(|r| r.len() as f64 + 1.0).sum();
    let observed = (2.0 * excess).abs();
    let p: f64 = dist
        .iter()
        .enumerate()
        .filter(|(s, _)| (*s as f64 - centre).abs() >= observed - 1e-9)
        .map(|(_, p)| p)
        .sum();
    p.min(1.0)
}

/// The normal approximation with a continuity correction of a quarter rank (half a doubled
/// rank, the step of the sum where ties average).
fn normal_p(ranked: &[Vec<f64>], excess: f64) -> f64 {
    let variance: f64 = ranked
        .iter()
        .map(|r| {
            let mean = (r.len() as f64 + 1.0) / 2.0;
            r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / r.len() as f64
        })
        .sum();
    if variance <= 0.0 {
        return 1.0;
    }
    let z = ((excess.abs() - 0.25).max(0.0)) / variance.sqrt();
    erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn one_cell_whose_first_run_is_the_largest_of_ten_has_p_one_fifth() {
        let cell: Vec<f64> = [10.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0].to_vec();
        let t = first_rank_test(&[cell]).unwrap();
        assert_eq!(t.excess, 4.5);
        assert_eq!(t.mean_position, 1.0);
        // Ranks 1 and 10 of ten lie 4.5 from the centre: 2 of 10 equally likely ranks.
        assert!((t.p_value - 0.2).abs() < 1e-12, "{}", t.p_value);
    }

    /// Three cells of five runs, each first run the slowest: the sum of three uniform draws
    /// from 1..=5 reaches 15 (or 3) with probability 2 / 125.
    #[test]
    fn three_cells_with_the_slowest_first_run_have_p_two_in_125() {
        let cell = vec![9.0, 1.0, 2.0, 3.0, 4.0];
        let t = first_rank_test(&[cell.clone(), cell.clone(), cell]).unwrap();
        assert!((t.p_value - 2.0 / 125.0).abs() < 1e-12, "{}", t.p_value);
    }

    /// Ties: two cells [5, 5, 1] have ranks {2.5, 2.5, 1} and first ranks 2.5 each, a sum of 5
    /// against a centre of 4. Two draws sum to 5 (4 of 9), 3.5 (4 of 9) or 2 (1 of 9): only
    /// 3.5 lies nearer the centre than 1, so p = 5/9.
    #[test]
    fn tied_values_average_their_ranks() {
        let cell = vec![5.0, 5.0, 1.0];
        let t = first_rank_test(&[cell.clone(), cell]).unwrap();
        assert!((t.p_value - 5.0 / 9.0).abs() < 1e-12, "{}", t.p_value);
    }

    /// The normal approximation agrees with the exact sum where both apply: 40 cells of 8 runs
    /// whose first runs sit at rank 6.
    #[test]
    fn the_normal_approximation_agrees_with_the_exact_sum() {
        let cell = vec![6.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 8.0];
        let cells = vec![cell; 40];
        let ranked: Vec<Vec<f64>> = cells.iter().map(|c| crate::kruskal::mid_ranks(c)).collect();
        let exact = exact_p(&ranked, 60.0);
        let normal = normal_p(&ranked, 60.0);
        assert!(
            (exact - normal).abs() < 0.01 * exact.max(1e-6) + 2e-4,
            "{exact} {normal}"
        );
    }

    /// 1,000 simulated clean sessions of 12 cells × 6 exchangeable runs (lognormal values):
    /// rejections at α = 0.05 stay under 7%, and the exact test's level is not exceeded by
    /// more than its simulation error (√(0.05·0.95/1000) ≈ 0.7%).
    #[test]
    fn clean_sessions_reject_at_the_nominal_rate() {
        let mut rng = crate::stream(5, "first-rank-false-alarms");
        let mut rejected = 0;
        for _ in 0..1000 {
            let cells: Vec<Vec<f64>> = (0..12)
                .map(|_| (0..6).map(|_| (rng.r#gen::<f64>() * 0.4).exp()).collect())
                .collect();
            rejected += usize::from(first_rank_test(&cells).unwrap().p_value < 0.05);
        }
        assert!(rejected <= 70, "{rejected} of 1000 rejected");
    }

    /// A first run 2× slower in every cell of 4 × 5 runs is found.
    #[test]
    fn a_slow_first_run_in_every_cell_is_found() {
        let mut rng = crate::stream(6, "first-rank-power");
        let cells: Vec<Vec<f64>> = (0..4)
            .map(|_| {
                (0..5)
                    .map(|i| (1.0 + 0.05 * rng.r#gen::<f64>()) * if i == 0 { 2.0 } else { 1.0 })
                    .collect()
            })
            .collect();
        let t = first_rank_test(&cells).unwrap();
        assert!((t.p_value - 2.0 / 625.0).abs() < 1e-12, "{}", t.p_value);
    }
}
