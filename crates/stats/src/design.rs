//! How much the runs of a cell cluster: the intraclass correlation of runs and the design
//! effect it implies for an interval that pooled every iteration as if independent.

pub use lab_basis::DesignEffect;

/// ICC(1) of runs from one-way random-effects ANOVA with unequal group sizes (Shrout &
/// Fleiss 1979, Psych. Bull. 86:420, ICC(1,1); n0 for unbalanced groups from Snedecor &
/// Cochran 1989 §13.3) and the design effect 1 + (m̄−1)·ICC of Kish (1965, "Survey
/// Sampling", §5.4), m̄ = mean iterations per run.
///
/// `None` with fewer than 2 non-empty runs, no within-run replication, or non-finite data.
/// All-identical data give ICC 0.
pub fn design_effect(runs: &[Vec<f64>]) -> Option<DesignEffect> {
    let groups: Vec<&Vec<f64>> = runs.iter().filter(|r| !r.is_empty()).collect();
    let k = groups.len();
    let total: usize = groups.iter().map(|g| g.len()).sum();
    if k < 2 || total <= k || groups.iter().any(|g| g.iter().any(|x| !x.is_finite())) {
        return None;
    }
    let n = total as f64;
    let grand = groups.iter().flat_map(|g| g.iter()).sum::<f64>() / n;
    let (mut ssb, mut ssw, mut sum_sq_sizes) = (0.0, 0.0, 0.0);
    for g in &groups {
        let ni = g.len() as f64;
        let mi = g.iter().sum::<f64>() / ni;
        ssb += ni * (mi - grand).powi(2);
        ssw += g.iter().map(|x| (x - mi).powi(2)).sum::<f64>();
        sum_sq_sizes += ni * ni;
    }
    let msb = ssb / (k - 1) as f64;
    let msw = ssw / (n - k as f64);
    let n0 = (n - sum_sq_sizes / n) / (k - 1) as f64;
    let denom = msb + (n0 - 1.0) * msw;
    let icc = if denom > 0.0 {
        (msb - msw) / denom
    } else {
        0.0
    };
    let m_bar = n / k as f64;
    let effect = (1.0 + (m_bar - 1.0) * icc.max(0.0)).max(1.0);
    Some(DesignEffect {
        icc,
        effect,
        naive_ci_understatement: effect.sqrt(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::reference::{reference, vecs};
    use super::*;

    #[test]
    fn design_effect_matches_reference() {
        // ICC(1), design effect, sqrt: numpy one-way ANOVA in the reference script.
        let r = reference();
        for case in r["design_effect"].as_array().unwrap() {
            let runs: Vec<Vec<f64>> = case["runs"].as_array().unwrap().iter().map(vecs).collect();
            let d = design_effect(&runs).unwrap();
            let icc = case["icc"].as_f64().unwrap();
            let eff = case["effect"].as_f64().unwrap();
            assert!(
                (d.icc - icc).abs() <= 1e-9 * icc.abs().max(1.0),
                "{d:?} {case}"
            );
            assert!((d.effect - eff).abs() <= 1e-9 * eff, "{d:?}");
            assert!((d.naive_ci_understatement - eff.sqrt()).abs() <= 1e-9 * eff);
        }
        // Hand value: runs {1,3} and {5,7}: MSB = 16, MSW = 2, n0 = 2, ICC = 14/18.
        let d = design_effect(&[vec![1.0, 3.0], vec![5.0, 7.0]]).unwrap();
        assert!((d.icc - 14.0 / 18.0).abs() < 1e-12);
        assert!((d.effect - (1.0 + 14.0 / 18.0)).abs() < 1e-12);
        assert!(design_effect(&[vec![1.0], vec![2.0]]).is_none());
        assert!(design_effect(&[vec![1.0, 2.0]]).is_none());
    }
}
