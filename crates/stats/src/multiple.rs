//! Holm–Bonferroni adjustment of p-values for multiple comparisons.

/// Holm (1979, "A simple sequentially rejective multiple test procedure", Scand. J. Stat.
/// 6:65) step-down adjusted p-values, returned in input order: for the i-th smallest of m
/// p-values, p̃_(i) = max_{j≤i} min(1, (m−j+1)·p_(j)) (Wright 1992, Biometrics 48:1005).
///
/// NaN inputs stay NaN in the output and do not count towards m.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p_values.len())
        .filter(|&i| !p_values[i].is_nan())
        .collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let m = order.len();
    let mut out = vec![f64::NAN; p_values.len()];
    let mut running = 0.0f64;
    for (j, &i) in order.iter().enumerate() {
        let adj = ((m - j) as f64 * p_values[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::reference::{reference, vecs};
    use super::*;

    #[test]
    fn hand_example() {
        // sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 → max 0.06.
        let got = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-15);
        }
        assert!(holm(&[]).is_empty());
        let with_nan = holm(&[0.2, f64::NAN, 0.9]);
        assert!((with_nan[0] - 0.4).abs() < 1e-15 && with_nan[1].is_nan());
        assert!((with_nan[2] - 0.9).abs() < 1e-15);
    }

    #[test]
    fn matches_reference() {
        // Independent numpy implementation in the reference script (step-down via cummax).
        let r = reference();
        for case in r["holm"].as_array().unwrap() {
            let got = holm(&vecs(&case["p"]));
            for (g, w) in got.iter().zip(vecs(&case["adjusted"])) {
                assert!((g - w).abs() <= 1e-12, "{g} vs {w}");
            }
        }
    }
}
