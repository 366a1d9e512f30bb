//! Tests of bootstrap intervals (`bootstrap.rs`), against reference values.

use super::super::reference::{reference, vecs};
use super::super::rng::{Generator, stream, stream_of};
use super::*;

/// Both analyses' generators: each must agree with the references.
const GENERATORS: [Generator; 2] = [Generator::ChaCha8, Generator::Xoshiro256PlusPlus];
use rand::RngCore;

fn singles(xs: &[f64]) -> Vec<Vec<f64>> {
    xs.iter().map(|&x| vec![x]).collect()
}

/// `iv` within 3% of the reference interval's width plus 3 × the Monte-Carlo spread of its
/// ends (`lo`, `hi`, `lo_sd`, `hi_sd` of `case`).
fn assert_near_reference(iv: &Interval, case: &serde_json::Value) {
    let end = |key: &str| case[key].as_f64().unwrap();
    let w = end("hi") - end("lo");
    assert!(
        (iv.lo - end("lo")).abs() <= 0.03 * w + 3.0 * end("lo_sd"),
        "{case} {iv:?}"
    );
    assert!(
        (iv.hi - end("hi")).abs() <= 0.03 * w + 3.0 * end("hi_sd"),
        "{case} {iv:?}"
    );
}

#[test]
fn percentile_median_matches_scipy() {
    for generator in GENERATORS {
        // scipy.stats.bootstrap(method="percentile", statistic=np.median, 10,000 resamples)
        // on fixed data sets; tolerance: 3 % of the interval width plus 3 × the Monte-Carlo
        // spread of scipy's endpoints over 20 seeds.
        let r = reference();
        for case in r["bootstrap_median"].as_array().unwrap() {
            let xs = vecs(&case["data"]);
            let mut rng = stream_of(generator, 7, case["name"].as_str().unwrap());
            let iv = percentile_ci(&singles(&xs), Statistic::Median, 10_000, 0.95, &mut rng);
            let iv = iv.unwrap();
            assert_near_reference(&iv, case);
        }
    }
}

#[test]
fn bca_mean_matches_scipy() {
    for generator in GENERATORS {
        // scipy.stats.bootstrap(method="BCa", statistic=np.mean, 10,000 resamples).
        let r = reference();
        for case in r["bootstrap_bca_mean"].as_array().unwrap() {
            let xs = vecs(&case["data"]);
            let mut rng = stream_of(generator, 11, case["name"].as_str().unwrap());
            let iv = bca_mean_ci(&xs, 10_000, 0.95, &mut rng).unwrap();
            assert_near_reference(&iv, case);
        }
    }
}

#[test]
fn hierarchical_matches_numpy_two_stage() {
    for generator in GENERATORS {
        // Independent numpy implementation of the two-stage bootstrap in the reference
        // script (runs, then iterations within runs; pooled statistic), 10,000 resamples.
        let r = reference();
        for case in r["bootstrap_hierarchical"].as_array().unwrap() {
            let runs: Vec<Vec<f64>> = case["runs"].as_array().unwrap().iter().map(vecs).collect();
            for (key, stat) in [("mean", Statistic::Mean), ("median", Statistic::Median)] {
                let c = &case[key];
                let mut rng = stream_of(generator, 13, key);
                let iv = percentile_ci(&runs, stat, 10_000, 0.95, &mut rng).unwrap();
                let (lo, hi) = (c["lo"].as_f64().unwrap(), c["hi"].as_f64().unwrap());
                let (slo, shi) = (c["lo_sd"].as_f64().unwrap(), c["hi_sd"].as_f64().unwrap());
                let w = hi - lo;
                assert!(
                    (iv.lo - lo).abs() <= 0.03 * w + 3.0 * slo,
                    "{key} {iv:?} {c}"
                );
                assert!(
                    (iv.hi - hi).abs() <= 0.03 * w + 3.0 * shi,
                    "{key} {iv:?} {c}"
                );
            }
        }
    }
}

#[test]
fn ratio_of_scaled_data_is_exact_scale() {
    // b = 2a exactly: every paired resample of independent streams differs, but the
    // observed ratio is exactly 1/2 and the interval must straddle it.
    let a: Vec<f64> = (1..=30).map(|i| 10.0 + f64::from(i % 7)).collect();
    let b: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
    let mut rng = stream(1, "ratio");
    let est = ratio_ci(
        &singles(&a),
        &singles(&b),
        Statistic::Median,
        2000,
        0.95,
        &mut rng,
    );
    let est = est.unwrap();
    assert!((est.ratio - 0.5).abs() < 1e-15);
    assert!(est.interval.lo < 0.5 && est.interval.hi > 0.5);
    let neg = [vec![-1.0], vec![2.0]];
    assert!(ratio_ci(&neg, &neg, Statistic::Mean, 100, 0.95, &mut rng).is_none());
}

#[test]
fn degenerate_inputs_do_not_panic() {
    let mut rng = stream(0, "edge");
    let m = Statistic::Median;
    assert!(percentile_ci(&[], m, 100, 0.95, &mut rng).is_none());
    assert!(percentile_ci(&[vec![]], m, 100, 0.95, &mut rng).is_none());
    assert!(percentile_ci(&[vec![f64::NAN]], m, 100, 0.95, &mut rng).is_none());
    assert!(percentile_ci(&[vec![1.0]], m, 1, 0.95, &mut rng).is_none());
    assert!(percentile_ci(&[vec![1.0]], m, 100, 1.0, &mut rng).is_none());
    let one = percentile_ci(&[vec![3.0], vec![]], m, 100, 0.95, &mut rng).unwrap();
    assert_eq!((one.lo, one.hi), (3.0, 3.0));
    assert!(bca_mean_ci(&[1.0], 100, 0.95, &mut rng).is_none());
    let c = bca_mean_ci(&[2.0, 2.0, 2.0], 100, 0.95, &mut rng).unwrap();
    assert_eq!((c.lo, c.hi), (2.0, 2.0));
}

#[test]
fn batched_means_are_the_one_at_a_time_means_bit_for_bit() {
    // 21 resamples: two full batches and a part of one, on single values and on runs of
    // several values; the same stream must give the same bits either way.
    let xs: Vec<f64> = (0..997)
        .map(|i| ((i * 7919) % 1009) as f64 * 0.37 + 1e-3)
        .collect();
    let several: Vec<Vec<f64>> = xs.chunks(5).map(<[f64]>::to_vec).collect();
    let empty: f64 = std::iter::empty::<f64>().sum();
    assert_eq!(
        ZERO_SUM.to_bits(),
        empty.to_bits(),
        "sums start where Iterator::sum does"
    );
    for runs in [singles(&xs), several] {
        let (mut one, mut batched) = (
            Resampler::new(&runs).unwrap(),
            Resampler::new(&runs).unwrap(),
        );
        let (mut r1, mut r2) = (stream(3, "means"), stream(3, "means"));
        let expected: Vec<u64> = (0..21).map(|_| one.draw_mean(&mut r1).to_bits()).collect();
        let got: Vec<u64> = batched
            .draw_means(21, &mut r2)
            .iter()
            .map(|m| m.to_bits())
            .collect();
        assert_eq!(got, expected);
        assert_eq!(r1.next_u32(), r2.next_u32(), "both consumed the same draws");
    }
}

#[test]
fn bulk_draws_below_n_are_the_one_at_a_time_draws() {
    // n = 2³¹ + 1 rejects almost half the words (2³² mod n = 2³¹ − 1), so rejected words
    // must be dropped exactly where `below` drops them; n = 10 and n = 1 reject none or few.
    for n in [(1u32 << 31) + 1, 10, 1] {
        let (mut r1, mut r2) = (stream(5, "below"), stream(5, "below"));
        let expected: Vec<u32> = (0..1_000).map(|_| below(&mut r1, n)).collect();
        let mut got = vec![0u32; 1_000];
        fill_below(&mut r2, n, &mut got);
        assert_eq!(got, expected, "n = {n}");
        assert_eq!(
            r1.next_u32(),
            r2.next_u32(),
            "n = {n}: the same words consumed"
        );
    }
}

#[test]
fn the_two_analyses_draw_other_resamples_of_the_same_data_to_the_same_end() {
    let xs: Vec<f64> = (0..500)
        .map(|i| 1.0 + (f64::from(i) * 0.37).sin())
        .collect();
    let interval = |generator| {
        let mut rng = stream_of(generator, 1, "mean");
        bca_mean_ci(&xs, 4_000, 0.95, &mut rng).unwrap()
    };
    let (one, two) = (
        interval(Generator::ChaCha8),
        interval(Generator::Xoshiro256PlusPlus),
    );
    assert_ne!((one.lo, one.hi), (two.lo, two.hi));
    let width = one.hi - one.lo;
    assert!((one.lo - two.lo).abs() < 0.05 * width, "{one:?} {two:?}");
    assert!((one.hi - two.hi).abs() < 0.05 * width, "{one:?} {two:?}");
    assert_eq!(
        interval(Generator::Xoshiro256PlusPlus),
        two,
        "seeded: the same again"
    );
}

#[test]
fn values_all_one_number_give_the_interval_the_draws_give_without_drawing() {
    // Runs of one value and of three, below and above the windows' thresholds, and a
    // number that interpolation between two copies of it keeps exactly.
    for (runs, len) in [(40, 1), (2_000, 3), (6_000, 1)] {
        let cell: Vec<Vec<f64>> = vec![vec![7.3; len]; runs];
        let mut rng = stream(5, "one value");
        let mut rs = Resampler::new(&cell).unwrap();
        let mut drawn: Vec<f64> = (0..200)
            .map(|_| rs.draw(Statistic::Median, &mut rng))
            .collect();
        let want = percentile_interval(&mut drawn, 0.95);
        let mut untouched = stream(6, "untouched");
        let got = percentile_ci(&cell, Statistic::Median, 200, 0.95, &mut untouched);
        assert_eq!(got, Some(want));
        assert_eq!(untouched.next_u32(), stream(6, "untouched").next_u32());
        let nested = vec![cell.clone(), cell];
        let got = super::super::nested::nested_percentile_ci(
            &nested,
            Statistic::Median,
            200,
            0.95,
            &mut stream(7, "nested"),
        );
        assert_eq!(got, Some(want));
    }
    // A zero is drawn: two zeros of different signs interpolate to +0.
    assert_eq!(one_value(&[-0.0, -0.0]), None);
    assert_eq!(one_value(&[2.0, 2.0000001]), None);
}
