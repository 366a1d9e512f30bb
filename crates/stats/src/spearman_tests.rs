//! Tests of Spearman's ρ and its stratified bootstrap interval (`spearman.rs`), against SciPy.

use super::super::reference::{reference, vecs};
use super::super::rng::stream;
use super::*;

#[test]
fn average_ranks_share_the_mean_rank_of_a_tie() {
    // scipy.stats.rankdata([3, 1, 4, 1, 5, 9, 2, 6, 5, 3]) (method="average").
    let ranks = average_ranks(&[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0]);
    assert_eq!(
        ranks,
        vec![4.5, 1.5, 6.0, 1.5, 7.5, 10.0, 3.0, 9.0, 7.5, 4.5]
    );
}

#[test]
fn rho_matches_scipy_spearmanr_with_and_without_ties() {
    // scipy.stats.spearmanr(x, y).statistic, cases in scripts/stats_reference.py.
    let r = reference();
    let cases = r["spearman"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for case in cases {
        let (x, y) = (vecs(&case["x"]), vecs(&case["y"]));
        let rho = spearman(&x, &y).unwrap();
        let want = case["rho"].as_f64().unwrap();
        assert!(
            (rho - want).abs() < 1e-12,
            "{}: {rho} vs {want}",
            case["name"]
        );
    }
}

#[test]
fn rho_of_known_small_cases() {
    // Perfect monotone relations whatever the spacing; a reversed one is -1; by hand:
    // x = 1..5, y = 2, 1, 4, 3, 5 → d = (1, 1, 1, 1, 0), ρ = 1 − 6·4 / (5·24) = 0.8.
    assert_eq!(
        spearman(&[1.0, 2.0, 3.0], &[10.0, 200.0, 3000.0]),
        Some(1.0)
    );
    assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
    let rho = spearman(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 1.0, 4.0, 3.0, 5.0]).unwrap();
    assert!((rho - 0.8).abs() < 1e-12, "{rho}");
}

#[test]
fn rho_is_undefined_without_variation_or_pairs() {
    assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
    assert_eq!(spearman(&[1.0, 2.0, 3.0], &[5.0, 5.0, 5.0]), None);
    assert_eq!(spearman(&[1.0], &[2.0]), None);
    assert_eq!(spearman(&[1.0, 2.0], &[2.0]), None);
    assert_eq!(spearman(&[1.0, f64::NAN, 3.0], &[1.0, 2.0, 3.0]), None);
}

fn strata(case: &serde_json::Value) -> Vec<Vec<(f64, f64)>> {
    case["strata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s.as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
                .collect()
        })
        .collect()
}

#[test]
fn the_stratified_interval_matches_an_independent_numpy_bootstrap() {
    // numpy resampling pairs within each stratum, scipy's spearmanr per resample, 10,000
    // resamples, endpoints averaged over 20 seeds; tolerance: 3% of the width plus 4 × their
    // Monte-Carlo spread.
    let r = reference();
    let case = &r["spearman_stratified"];
    let strata = strata(case);
    let pooled: (Vec<f64>, Vec<f64>) = strata.iter().flatten().copied().unzip();
    let rho = spearman(&pooled.0, &pooled.1).unwrap();
    assert!((rho - case["rho"].as_f64().unwrap()).abs() < 1e-12);
    let iv = spearman_ci(&strata, 10_000, 0.95, &mut stream(11, "mechanism/t")).unwrap();
    let (lo, hi) = (case["lo"].as_f64().unwrap(), case["hi"].as_f64().unwrap());
    let (slo, shi) = (
        case["lo_sd"].as_f64().unwrap(),
        case["hi_sd"].as_f64().unwrap(),
    );
    let w = hi - lo;
    assert!(
        (iv.lo - lo).abs() <= 0.03 * w + 4.0 * slo,
        "{iv:?} vs [{lo}, {hi}]"
    );
    assert!(
        (iv.hi - hi).abs() <= 0.03 * w + 4.0 * shi,
        "{iv:?} vs [{lo}, {hi}]"
    );
    assert!(iv.lo < rho && rho < iv.hi);
}

#[test]
fn the_same_seed_gives_the_same_interval_and_another_seed_another() {
    let r = reference();
    let strata = strata(&r["spearman_stratified"]);
    let ci = |seed: u64| spearman_ci(&strata, 10_000, 0.95, &mut stream(seed, "m")).unwrap();
    assert_eq!(ci(3), ci(3));
    assert_ne!(ci(3), ci(4));
}

#[test]
fn resampling_keeps_each_strata_size() {
    // Two strata whose x levels never overlap: a resample keeps 3 of the first and 2 of the
    // second, so x always varies and every resample has a ρ; ρ = 1 exactly each time.
    let strata = vec![
        vec![(1.0, 1.0), (1.0, 1.0), (1.0, 1.0)],
        vec![(2.0, 5.0), (2.0, 5.0)],
    ];
    let iv = spearman_ci(&strata, 500, 0.95, &mut stream(1, "m")).unwrap();
    assert_eq!((iv.lo, iv.hi), (1.0, 1.0));
}

#[test]
fn data_that_do_not_vary_have_no_interval() {
    let flat = vec![vec![(1.0, 2.0), (1.0, 3.0)], vec![(1.0, 4.0)]];
    assert_eq!(spearman_ci(&flat, 100, 0.95, &mut stream(1, "m")), None);
    let ok = vec![vec![(1.0, 2.0), (2.0, 3.0)], vec![(3.0, 4.0)]];
    assert_eq!(spearman_ci(&ok, 1, 0.95, &mut stream(1, "m")), None);
    assert_eq!(spearman_ci(&ok, 100, 1.0, &mut stream(1, "m")), None);
}

#[test]
fn a_resample_by_counts_has_the_rho_of_its_pairs_sorted_afresh() {
    // Every resample's ρ from counts equals `spearman` on the same drawn pairs, ties and all:
    // the draws are replayed from a copy of the stream, stratum by stratum.
    let strata = vec![
        vec![(1.0, 5.0), (2.0, 5.0), (2.0, 4.0)],
        vec![(3.0, 1.0), (2.0, 2.0), (5.0, 2.0), (4.0, 0.5)],
    ];
    let (xs, ys): (Vec<f64>, Vec<f64>) = strata.iter().flatten().copied().unzip();
    let mut resampler = Resampler::new(&strata, xs, ys);
    let mut rng = stream(5, "m");
    let mut replay = rng.clone();
    for _ in 0..200 {
        let rho = resampler.draw(&mut rng);
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for stratum in &strata {
            for _ in 0..stratum.len() {
                let (a, b) = stratum[below(&mut replay, stratum.len() as u32) as usize];
                x.push(a);
                y.push(b);
            }
        }
        match (rho, spearman(&x, &y)) {
            (Some(r), Some(want)) => assert!((r - want).abs() < 1e-12, "{r} vs {want}"),
            (got, want) => assert_eq!(got, want, "{x:?} {y:?}"),
        }
    }
}
