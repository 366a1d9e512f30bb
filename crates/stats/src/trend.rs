//! Mann–Kendall trend test and the Theil–Sen slope for values in execution order.

pub use lab_basis::MannKendall;
use statrs::function::erf::erfc;

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
    let groups = tie_groups(ys);
    let s = kendall_s(ys, &groups);
    let nf = n as f64;
    let ties: f64 = groups
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

/// S = Σ_{i<j} sign(y_j − y_i) = concordant − discordant pairs, in O(n log n): the discordant
/// pairs (y_i > y_j) are counted while merge-sorting (Knight 1966, JASA 61:436), tied pairs
/// are Σ t(t−1)/2 over `groups`, and every other pair is concordant. Exact, ties included.
fn kendall_s(ys: &[f64], groups: &[usize]) -> i64 {
    let n = ys.len() as u64;
    let mut keys = ys.to_vec();
    let cmp = |a: &f64, b: &f64| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal);
    let discordant = super::inversions::sort_counting(&mut keys, &mut Vec::new(), true, &cmp);
    let tied: u64 = groups.iter().map(|&t| (t * (t - 1) / 2) as u64).sum();
    let concordant = n * (n - 1) / 2 - discordant - tied;
    concordant as i64 - discordant as i64
}

/// Up to this many points the slopes are all computed and their median taken directly (at
/// most 2·10⁶ slopes, 16 MB); beyond, they are selected without being stored.
const ALL_PAIRS_MAX_N: usize = 2_000;

/// Theil–Sen slope: median of pairwise slopes (y_j − y_i)/(x_j − x_i) over pairs with
/// x_i ≠ x_j (Sen 1968, JASA 63:1379, eq. 2.3; Theil 1950). The median of an even number of
/// slopes is the mean of the middle two, as scipy.stats.theilslopes. Beyond
/// [`ALL_PAIRS_MAX_N`] points the middle slopes are found by slope selection in
/// O(n log² n) time and O(n) memory ([`super::theil_sen`]), from a fixed seed.
///
/// `None` if lengths differ, any value is not finite, or all x are equal.
pub fn theil_sen_slope(xs: &[f64], ys: &[f64]) -> Option<f64> {
    if xs.len() != ys.len() || xs.iter().chain(ys).any(|v| !v.is_finite()) {
        return None;
    }
    if xs.len() > ALL_PAIRS_MAX_N {
        return theil_sen_by_selection(xs, ys);
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

/// The median slope by selection: the middle one, or the type-7 mean of the middle two
/// (`lo + ½(hi − lo)`, as [`super::summary::quantile_in_place`] computes it).
fn theil_sen_by_selection(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let points = super::theil_sen::Points::new(xs, ys);
    let m = points.pairs();
    if m == 0 {
        return None;
    }
    // Selection is exact whatever its pivots: the upper middle slope, when the lower one's
    // selection did not find it too, is selected on a stream of its own.
    let select = |rank: u64, label: &str| {
        super::theil_sen::select_with_next(&points, rank, &mut super::rng::stream(0, label))
    };
    let (lo, next) = select((m - 1) / 2, "theil-sen");
    if m % 2 == 1 {
        return Some(lo);
    }
    let hi = next.unwrap_or_else(|| select(m / 2, "theil-sen/upper").0);
    Some(lo + 0.5 * (hi - lo))
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

    /// The series of scripts/scale_reference.py, operation for operation.
    fn series(name: &str, n: usize) -> (Vec<f64>, Vec<f64>) {
        (0..n as i64)
            .map(|i| match name {
                "drift" => (
                    i as f64,
                    ((i * 7919 + 13) % 1009) as f64 / 100.0 + i as f64 * 0.003,
                ),
                "tied_x" => (
                    (i / 3) as f64,
                    ((i * 104729 + 7) % 997) as f64 / 10.0 - i as f64 * 0.01,
                ),
                "tied_y" => (i as f64, ((i * 31) % 7) as f64),
                "falling" => (
                    (i * 2) as f64,
                    50.0 - i as f64 * 0.25 + ((i * 37) % 11) as f64,
                ),
                _ => unreachable!("unknown series {name}"),
            })
            .unzip()
    }

    fn scale_reference() -> serde_json::Value {
        serde_json::from_str(include_str!("../tests/data/scale_reference.json")).unwrap()
    }

    #[test]
    fn past_the_all_pairs_cut_over_both_match_scipy_and_numpy() {
        // scipy.stats.theilslopes and the all-pairs Mann–Kendall of scripts/scale_reference.py
        // on series of 2,200 to 4,000 points, which take the selection and merge-sort paths.
        for case in scale_reference()["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let (x, y) = series(name, case["n"].as_u64().unwrap() as usize);
            assert!(x.len() > ALL_PAIRS_MAX_N);
            let want = case["slope"].as_f64().unwrap();
            let got = theil_sen_slope(&x, &y).unwrap();
            assert!(close(got, want), "{name}: slope {got} vs {want}");
            let mk = mann_kendall(&y).unwrap();
            let r = &case["mann_kendall"];
            for (got, key) in [
                (mk.s, "s"),
                (mk.var_s, "var_s"),
                (mk.z, "z"),
                (mk.p_value, "p"),
            ] {
                let want = r[key].as_f64().unwrap();
                assert!(close(got, want), "{name} {key}: {got} vs {want}");
            }
        }
    }

    /// All-pairs S, as the test was computed before merge-sort counting.
    fn naive_s(ys: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..ys.len() {
            for j in i + 1..ys.len() {
                s += match ys[j].partial_cmp(&ys[i]) {
                    Some(std::cmp::Ordering::Greater) => 1.0,
                    Some(std::cmp::Ordering::Less) => -1.0,
                    _ => 0.0,
                };
            }
        }
        s
    }

    #[test]
    fn selection_equals_the_all_pairs_median_on_small_awkward_series() {
        // Ties in x, duplicated points, negative zero, a constant series and both parities
        // of the number of slopes: selection must give the all-pairs median exactly.
        let mut state = 3u64;
        let mut next = || super::super::rng::splitmix64(&mut state);
        for n in [3usize, 4, 7, 30, 31, 200, 513, 1500] {
            for kind in 0..4 {
                let (xs, ys): (Vec<f64>, Vec<f64>) = (0..n)
                    .map(|i| {
                        let r = next();
                        let x = match kind {
                            0 => i as f64,
                            1 => (r % 13) as f64,
                            _ => (i / 2) as f64 * -1.5,
                        };
                        let y = match kind {
                            3 => 4.0,
                            2 => ((r >> 8) % 5) as f64 - 2.0,
                            _ => ((r >> 8) % 10_000) as f64 / 77.0 + 0.01 * i as f64,
                        };
                        (x, if y == 0.0 { -0.0 } else { y })
                    })
                    .unzip();
                let want = theil_sen_slope(&xs, &ys);
                let got = theil_sen_by_selection(&xs, &ys);
                assert_eq!(got, want, "n = {n}, kind {kind}");
                assert_eq!(
                    mann_kendall(&ys).map(|m| m.s),
                    Some(naive_s(&ys)),
                    "n = {n}, kind {kind}"
                );
            }
        }
    }

    #[test]
    fn a_selection_finds_the_next_rank_as_the_all_pairs_order_places_it() {
        // Every rank of a series with tied x and tied y: the slope and, where the selection
        // gives one, the next slope are those of all pairs sorted.
        every_rank_as_all_pairs(|i| (i / 3) as f64);
    }

    #[test]
    fn a_selection_among_many_equal_slopes_finds_every_rank() {
        // Distinct x and y in 7 values: a seventh of the slopes are 0, more than the bracket
        // lists, so the ranks among them are decided by the counts at the repeated value.
        every_rank_as_all_pairs(|i| (3 * i + i % 2) as f64);
    }

    #[test]
    fn clock_ticks_give_the_all_pairs_median_slope() {
        // Runs that took 20 to 22 ticks of 4 ms, and counts, past the size where every pair
        // is listed: most middle slopes are exactly 0, and some series drift.
        let mut state = 5u64;
        for (n, levels, step) in [(2_500, 3, 0.004), (3_001, 40, 1.0), (2_400, 2, 0.004)] {
            let xs: Vec<f64> = (0..n).map(|i| (i * 10 + i % 7) as f64).collect();
            let ys: Vec<f64> = (0..n)
                .map(|i| {
                    let r = super::super::rng::splitmix64(&mut state) % levels;
                    step * (20 + r + (i as u64 * levels / n as u64 / 2)) as f64
                })
                .collect();
            let mut slopes = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    slopes.push((ys[j] - ys[i]) / (xs[j] - xs[i]));
                }
            }
            let want = super::super::summary::quantile_in_place(&mut slopes, 0.5);
            assert_eq!(theil_sen_slope(&xs, &ys), Some(want), "n = {n}");
        }
    }

    /// Checks every rank's selection, and the next rank where one is given, against all pairs
    /// sorted, for 90 points at `x(i)` with y in 7 values.
    fn every_rank_as_all_pairs(x: impl Fn(usize) -> f64) {
        let mut state = 11u64;
        let (xs, ys): (Vec<f64>, Vec<f64>) = (0..90)
            .map(|i| {
                let r = super::super::rng::splitmix64(&mut state);
                (x(i), ((r >> 8) % 7) as f64)
            })
            .unzip();
        let mut slopes = Vec::new();
        for i in 0..xs.len() {
            for j in i + 1..xs.len() {
                if xs[i] != xs[j] {
                    slopes.push((ys[j] - ys[i]) / (xs[j] - xs[i]));
                }
            }
        }
        slopes.sort_by(f64::total_cmp);
        let points = super::super::theil_sen::Points::new(&xs, &ys);
        let mut nexts = 0;
        for k in 0..slopes.len() {
            let mut rng = super::super::rng::stream(0, "next rank");
            let (slope, next) =
                super::super::theil_sen::select_with_next(&points, k as u64, &mut rng);
            assert_eq!(slope, slopes[k], "rank {k}");
            if let Some(next) = next {
                assert_eq!(next, slopes[k + 1], "rank {}", k + 1);
                nexts += 1;
            }
        }
        assert!(nexts > slopes.len() / 2, "{nexts} of {}", slopes.len());
    }

    #[test]
    fn two_hundred_thousand_points_take_linear_memory() {
        // 2·10¹⁰ slopes would need 160 GB; selection holds a few vectors of n. The answer is
        // checked by counting: at most half the slopes lie below it and at most half above.
        let (x, y) = series("drift", 200_000);
        let slope = theil_sen_slope(&x, &y).unwrap();
        let points = super::super::theil_sen::Points::new(&x, &y);
        let (below, above) = points.count_around(slope);
        let half = points.pairs() / 2;
        assert!(
            below <= half && above <= half,
            "{below} {above} of {}",
            points.pairs()
        );
        assert!((slope - 0.003).abs() < 1e-4, "{slope}");
        assert!(mann_kendall(&y).unwrap().z > 10.0);
    }
}
