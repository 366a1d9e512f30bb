//! Tests of the dip statistic, its critical-value table and the dip test (`dip.rs`), against reference values.

use super::super::reference::{reference, vecs};
use super::*;
use rayon::prelude::*;

#[test]
fn dip_matches_diptest_package() {
    // diptest.dipstat(x, allow_zero=False) (PyPI `diptest` 0.12, Maechler's C AS 217).
    let r = reference();
    for case in r["dip"].as_array().unwrap() {
        let mut xs = vecs(&case["data"]);
        xs.sort_by(f64::total_cmp);
        let want = case["dip"].as_f64().unwrap();
        let got = dip(&xs);
        assert!(
            (got - want).abs() <= 1e-9 * want,
            "{}: {got} vs {want}",
            case["name"]
        );
    }
}

#[test]
fn dip_extremes() {
    // Two equal point masses: dip = 1/4 exactly; evenly spaced data: the minimum 1/(2n).
    let two: Vec<f64> = (0..1000).map(|i| f64::from(i / 500)).collect();
    assert!((dip(&two) - 0.25).abs() < 1e-12);
    let even: Vec<f64> = (0..1000).map(f64::from).collect();
    assert!((dip(&even) - 1.0 / 2000.0).abs() < 1e-12);
    assert!(dip(&[]).is_nan());
    assert_eq!(dip(&[3.0]), 0.5);
    assert!(dip_test(&[1.0, 2.0, 3.0], 0.05).is_none());
    assert!(dip_test(&[1.0, 2.0, 3.0, 4.0], 0.10).is_none());
}

#[test]
fn table_matches_published_hartigan_values() {
    // Hartigan & Hartigan (1985) Table 1 / R diptest qDiptab, 0.95 quantile.
    for (n, want) in [
        (10, 0.1394),
        (20, 0.1047),
        (30, 0.0884),
        (50, 0.0702),
        (100, 0.0510),
    ] {
        let got = critical_value(n, 0.05).unwrap();
        assert!((got - want).abs() <= 0.005, "n={n}: {got} vs {want}");
    }
    // Whole table against qDiptab (diptest package consts) at 0.95 and 0.99.
    let r = reference();
    let q = &r["dip_qdiptab"];
    for (i, (a, b)) in vecs(&q["q95"]).iter().zip(vecs(&q["q99"])).enumerate() {
        assert!(
            (CRITICAL_95[i] - a).abs() <= 0.005,
            "n={} {a}",
            CRITICAL_N[i]
        );
        assert!(
            (CRITICAL_99[i] - b).abs() <= 0.005,
            "n={} {b}",
            CRITICAL_N[i]
        );
    }
}

#[test]
fn fast_simulation_reproduces_table() {
    // 4,000 replications: MC sd of the 0.95 quantile is ≈ 0.002 at n = 10; allow 0.01.
    for (i, &n) in CRITICAL_N
        .iter()
        .enumerate()
        .filter(|(_, n)| [10, 30, 100].contains(n))
    {
        let got = simulate_critical_value(n, 0.05, 4000, 99);
        assert!((got - CRITICAL_95[i]).abs() <= 0.01, "n={n}: {got}");
    }
}

#[test]
#[ignore = "slow: regenerates CRITICAL_95/CRITICAL_99 (200,000 replications per n)"]
fn regenerate_critical_table() {
    let rows: Vec<(f64, f64)> = CRITICAL_N
        .par_iter()
        .map(|&n| {
            let mut d = simulate_uniform_dips(n, 200_000, 2024);
            (
                quantile_in_place(&mut d, 0.95),
                quantile_in_place(&mut d, 0.99),
            )
        })
        .collect();
    println!("95: {:?}", rows.iter().map(|r| r.0).collect::<Vec<_>>());
    println!("99: {:?}", rows.iter().map(|r| r.1).collect::<Vec<_>>());
}

#[test]
fn detects_two_clusters_and_splits_them() {
    let mut xs: Vec<f64> = (0..60).map(|i| 10.0 + f64::from(i % 7) * 0.1).collect();
    xs.extend((0..40).map(|i| 20.0 + f64::from(i % 5) * 0.1));
    let t = dip_test(&xs, 0.05).unwrap();
    assert!(t.second_mode_detected && t.dip > 0.15);
    assert_eq!(t.modes.len(), 2);
    assert!((t.modes[0].share - 0.6).abs() < 1e-12 && (t.modes[1].share - 0.4).abs() < 1e-12);
    assert!((t.modes[0].median - 10.3).abs() < 1e-9 && (t.modes[1].median - 20.2).abs() < 1e-9);
    let one: Vec<f64> = (0..100).map(|i| f64::from(i * 37 % 101)).collect();
    let t = dip_test(&one, 0.05).unwrap();
    assert!(!t.second_mode_detected && t.modes.len() == 1 && t.modes[0].share == 1.0);
}
