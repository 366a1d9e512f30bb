//! Mann–Kendall trend test and the Theil–Sen slope for values in execution order.

use serde::Serialize;
use statrs::function::erf::erfc;

/// Result of the Mann–Kendall test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannKendall {
    /// S = Σ_{i<j} sign(y_j − y_i).
    pub s: f64,
    /// Var(S) under H0 with the tie correction.
    pub var_s: f64,
    /// Continuity-corrected normal score.
    pub z: f64,
    /// Two-sided p-value from the normal approximation.
    pub p_value: f64,
    /// Kendall's tau-a against time: S / (n(n−1)/2).
    pub tau: f64,
}

/// Sizes of groups of tied values (groups of size 1 omitted).
pub(crate) fn tie_groups(xs: &[f64]) -> Vec<usize> {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let j = i + s[i..].iter().take_while(|&&x| x == s[i]).count();
        if j - i > 1 {
            out.push(j - i);
        }
        i = j;
    }
    out
}

/// Mann–Kendall test for a monotone trend in `ys` (execution order): Mann (1945,
/// Econometrica 13:245), Kendall (1975, "Rank Correlation Methods", ch. 4); variance with
/// ties Var(S) = [n(n−1)(2n+5) − Σ t(t−1)(2t+5)]/18 and z = (S ∓ 1)/√Var(S) as in Hirsch,
/// Slack & Smith (1982, Water Resour. Res. 18:107) and Gilbert (1987, "Statistical Methods
/// for Environmental Pollution Monitoring", §16.4.1, eqs. 16.3–16.5).
///
/// `None` if n < 3 or any value is NaN. All-tied data give z = 0, p = 1.
pub fn mann_kendall(ys: &[f64]) -> Option<MannKendall> {
    let n = ys.len();
    if n < 3 || ys.iter().any(|y| y.is_nan()) {
        return None;
    }
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += match ys[j].partial_cmp(&ys[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let nf = n as f64;
    let ties: f64 = tie_groups(ys)
        .iter()
        .map(|&t| {
            let t = t as f64;
            t * (t - 1.0) * (2.0 * t + 5.0)
        })
        .sum();
    let var_s = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties) / 18.0;
    let sf = s as f64;
    let z = if var_s <= 0.0 || s == 0 {
        0.0
    } else {
        (sf - sf.signum()) / var_s.sqrt()
    };
    let p_value = erfc(z.abs() / std::f64::consts::SQRT_2);
    let tau = sf / (nf * (nf - 1.0) / 2.0);
    Some(MannKendall {
        s: sf,
        var_s,
        z,
        p_value,
        tau,
    })
}

/// Theil–Sen slope: median of pairwise slopes (y_j − y_i)/(x_j − x_i) over pairs with
/// x_i ≠ x_j (Sen 1968, JASA 63:1379, eq. 2.3; Theil 1950). The median of an even number of
/// slopes is the mean of the middle two, as scipy.stats.theilslopes.
///
/// `None` if lengths differ, any value is not finite, or all x are equal.
pub fn theil_sen_slope(xs: &[f64], ys: &[f64]) -> Option<f64> {
    if xs.len() != ys.len() || xs.iter().chain(ys).any(|v| !v.is_finite()) {
        return None;
    }
    let mut slopes = Vec::with_capacity(xs.len() * xs.len().saturating_sub(1) / 2);
    for i in 0..xs.len() {
        for j in i + 1..xs.len() {
            let dx = xs[j] - xs[i];
            if dx != 0.0 {
                slopes.push((ys[j] - ys[i]) / dx);
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    Some(super::summary::quantile_in_place(&mut slopes, 0.5))
}

#[cfg(test)]
mod tests {
    use super::super::reference::{reference, vecs};
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-300) || a == b
    }

    #[test]
    fn mann_kendall_matches_reference() {
        // S, Var(S), z, p, tau from the textbook formulas implemented in numpy in the
        // reference script (and cross-checked there against pymannkendall).
        let r = reference();
        for case in r["mann_kendall"].as_array().unwrap() {
            let ys = vecs(&case["data"]);
            let mk = mann_kendall(&ys).unwrap();
            for (got, key) in [
                (mk.s, "s"),
                (mk.var_s, "var_s"),
                (mk.z, "z"),
                (mk.p_value, "p"),
                (mk.tau, "tau"),
            ] {
                let want = case[key].as_f64().unwrap();
                assert!(close(got, want), "{} {key}: {got} vs {want}", case["name"]);
            }
        }
    }

    #[test]
    fn mann_kendall_hand_example() {
        // ys = 1,2,3,4,5: S = 10, Var = 5·4·15/18 = 50/3, z = 9/√(50/3).
        let mk = mann_kendall(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(mk.s, 10.0);
        assert!((mk.var_s - 50.0 / 3.0).abs() < 1e-12);
        assert!((mk.z - 9.0 / (50.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(mk.tau, 1.0);
        let flat = mann_kendall(&[2.0; 6]).unwrap();
        assert_eq!((flat.z, flat.p_value), (0.0, 1.0));
        assert!(mann_kendall(&[1.0, 2.0]).is_none());
        assert!(mann_kendall(&[1.0, f64::NAN, 2.0]).is_none());
    }

    #[test]
    fn theil_sen_matches_scipy() {
        // scipy.stats.theilslopes(y, x).slope
        let r = reference();
        for case in r["theil_sen"].as_array().unwrap() {
            let (x, y) = (vecs(&case["x"]), vecs(&case["y"]));
            let want = case["slope"].as_f64().unwrap();
            let got = theil_sen_slope(&x, &y).unwrap();
            assert!(close(got, want), "{}: {got} vs {want}", case["name"]);
        }
        assert!(theil_sen_slope(&[1.0, 1.0], &[1.0, 2.0]).is_none());
        assert!(theil_sen_slope(&[1.0], &[1.0, 2.0]).is_none());
    }
}
