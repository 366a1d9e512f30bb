//! Kruskal–Wallis rank test of whether several groups come from the same distribution.

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::trend::tie_groups;

/// Result of the Kruskal–Wallis test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KruskalWallis {
    /// Tie-corrected H statistic.
    pub h: f64,
    /// Degrees of freedom: number of non-empty groups − 1.
    pub df: usize,
    /// Upper-tail chi-square(df) probability of `h`.
    pub p_value: f64,
}

/// Mid-ranks (1-based, ties get the average rank) of `xs`.
pub(crate) fn mid_ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut ranks = vec![0.0; xs.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && xs[order[j]] == xs[order[i]] {
            j += 1;
        }
        let avg = (i + 1 + j) as f64 / 2.0; // mean of ranks i+1 ..= j
        for &o in &order[i..j] {
            ranks[o] = avg;
        }
        i = j;
    }
    ranks
}

/// Kruskal–Wallis H test (Kruskal & Wallis 1952, JASA 47:583, eq. 1.1 and the tie
/// correction eq. 1.2: H / (1 − Σ(t³−t)/(N³−N))), p-value from χ²(k−1).
/// Empty groups are ignored.
///
/// `None` with fewer than two non-empty groups, any NaN, or all values tied.
pub fn kruskal_wallis(groups: &[Vec<f64>]) -> Option<KruskalWallis> {
    let groups: Vec<&Vec<f64>> = groups.iter().filter(|g| !g.is_empty()).collect();
    let pooled: Vec<f64> = groups.iter().flat_map(|g| g.iter().copied()).collect();
    if groups.len() < 2 || pooled.iter().any(|x| x.is_nan()) {
        return None;
    }
    let n = pooled.len() as f64;
    let ranks = mid_ranks(&pooled);
    let mut offset = 0;
    let mut sum = 0.0;
    for g in &groups {
        let r: f64 = ranks[offset..offset + g.len()].iter().sum();
        sum += r * r / g.len() as f64;
        offset += g.len();
    }
    let h_raw = 12.0 / (n * (n + 1.0)) * sum - 3.0 * (n + 1.0);
    let ties: f64 = tie_groups(&pooled)
        .iter()
        .map(|&t| (t as f64).powi(3) - t as f64)
        .sum();
    let c = 1.0 - ties / (n.powi(3) - n);
    if c <= 0.0 {
        return None;
    }
    let h = h_raw / c;
    let df = groups.len() - 1;
    let p_value = ChiSquared::new(df as f64).ok()?.sf(h);
    Some(KruskalWallis { h, df, p_value })
}

#[cfg(test)]
mod tests {
    use super::super::reference::{reference, vecs};
    use super::*;

    #[test]
    fn matches_scipy_kruskal() {
        // scipy.stats.kruskal(*groups) statistic and pvalue.
        let r = reference();
        for case in r["kruskal"].as_array().unwrap() {
            let groups: Vec<Vec<f64>> = case["groups"]
                .as_array()
                .unwrap()
                .iter()
                .map(vecs)
                .collect();
            let kw = kruskal_wallis(&groups).unwrap();
            let (h, p) = (case["h"].as_f64().unwrap(), case["p"].as_f64().unwrap());
            assert!(
                (kw.h - h).abs() <= 1e-9 * h,
                "{}: {} vs {h}",
                case["name"],
                kw.h
            );
            assert!(
                (kw.p_value - p).abs() <= 1e-9 * p,
                "{}: {} {p}",
                case["name"],
                kw.p_value
            );
            assert_eq!(kw.df as u64, case["df"].as_u64().unwrap());
        }
    }

    #[test]
    fn edge_cases() {
        assert!(kruskal_wallis(&[vec![1.0, 2.0]]).is_none());
        assert!(kruskal_wallis(&[vec![1.0], vec![1.0]]).is_none());
        assert!(kruskal_wallis(&[vec![1.0], vec![f64::NAN]]).is_none());
        assert_eq!(
            mid_ranks(&[10.0, 20.0, 10.0, 30.0]),
            vec![1.5, 3.0, 1.5, 4.0]
        );
    }
}
