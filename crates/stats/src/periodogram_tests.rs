use super::*;
use crate::rng::standard_normal;

// Reference values from an independent computation with numpy 2.4, scipy 1.17 and mpmath 1.4:
//
//   import numpy as np, mpmath as mp
//   from scipy.stats import rankdata
//   mp.mp.dps = 50
//   def g_p(g, m):   # Fisher (1929) eq. 16, in 50-digit arithmetic
//       g = mp.mpf(g); s = mp.mpf(0)
//       for j in range(1, int(mp.floor(1/g)) + 1):
//           t = mp.binomial(m, j) * (1 - j*g)**(m-1)
//           s += t if j % 2 else -t
//       return s
//   def run(x, scale):
//       y = np.log(x) if scale == "log" else rankdata(x)
//       t = np.arange(len(y))
//       slope, icpt = np.polyfit(t, y, 1); z = y - (icpt + slope*t)
//       phi = np.sum(z[1:]*z[:-1]) / np.sum(z*z); e = z[1:] - phi*z[:-1]
//       n = len(e); I = np.abs(np.fft.fft(e))**2; ks = np.arange(4, (n-1)//2 + 1)
//       g = I[ks].max() / I[ks].sum(); k = ks[I[ks].argmax()]
//       return I[4:9], len(ks), k, g, g_p(g, len(ks))
//   x = np.array([10 + ((t*37) % 11)*0.1 + (4.0 if t % 7 == 2 else 0.0) for t in range(48)])
//   run(x, "log"); run(x - 10.5, "rank")
//   from scipy.stats import chi2; chi2.sf(-2*np.sum(np.log(ps)), 2*len(ps))   # Fisher's method

/// (g, m, P(G > g)) from `g_p` above.
const FISHER_G: [(f64, usize, f64); 7] = [
    (0.5, 12, 0.005859375),
    (0.3, 12, 0.23451097072),
    (0.1, 60, 0.11643483557694538),
    (0.2, 60, 0.00011493702138759164),
    (0.05, 200, 0.007363920940769841),
    (0.02, 1000, 1.7173126581905272e-6),
    (0.2, 1023, 9.286292083224036e-97),
];

#[test]
fn fisher_g_p_values_match_the_exact_formula() {
    for (g, m, want) in FISHER_G {
        let got = fisher_g_p_value(g, m);
        assert!(
            ((got - want) / want).abs() < 1e-9,
            "g = {g}, m = {m}: {got} vs {want}"
        );
    }
}

#[test]
fn fisher_g_p_values_near_one_stay_in_range() {
    // The alternating sum cannot resolve these; the Gumbel limit is within 1e-3 of the exact
    // 0.6348396 (m = 1000, g = ln(1000)/1000) and 1.0 (m = 2047, g = ln(2047)/4094).
    let typical = fisher_g_p_value(1000f64.ln() / 1000.0, 1000);
    assert!((typical - 0.6348396).abs() < 1e-3, "{typical}");
    let small = fisher_g_p_value(2047f64.ln() / 4094.0, 2047);
    assert!((small - 1.0).abs() < 1e-9, "{small}");
    assert_eq!(fisher_g_p_value(1.0, 12), 0.0);
    assert_eq!(fisher_g_p_value(0.5, 1), 1.0);
}

/// The fixed series of the reference: a slow iteration every seventh on a wobble.
fn reference_series() -> Vec<f64> {
    (0..48)
        .map(|t| {
            let spike = if t % 7 == 2 { 4.0 } else { 0.0 };
            10.0 + ((t * 37) % 11) as f64 * 0.1 + spike
        })
        .collect()
}

/// What numpy gives for one series: the periodogram at k = 4..=8, the largest ordinate's k,
/// g and its p-value, of 47 prewhitened values and 20 ordinates.
struct Reference {
    ordinates: [f64; 5],
    k: usize,
    g: f64,
    p: f64,
}

fn assert_matches(xs: &[f64], want: Reference) {
    let z = prewhitened(xs);
    assert_eq!(z.len(), 47);
    for (k, w) in (4..=8).zip(want.ordinates) {
        let got = power_at(&z, k as f64 / 47.0);
        assert!(((got - w) / w).abs() < 1e-9, "k = {k}: {got} vs {w}");
    }
    let test = fisher_g_test(xs).expect("48 values are enough");
    assert_eq!(test.ordinates, 20);
    assert!((test.frequency - want.k as f64 / 47.0).abs() < 1e-12);
    assert!((test.g - want.g).abs() < 1e-12, "{} vs {}", test.g, want.g);
    assert!(
        (test.p_value - want.p).abs() < 1e-12,
        "{} vs {}",
        test.p_value,
        want.p
    );
}

#[test]
fn the_test_of_a_fixed_series_matches_numpy() {
    // Logarithms (φ = −0.1886977168935292): the period of 7 iterations is k = 7 of 47.
    assert_matches(
        &reference_series(),
        Reference {
            ordinates: [
                0.008099606492171351,
                0.195759991419455,
                0.7072641001612275,
                4.594598195098347,
                0.3360858443672479,
            ],
            k: 7,
            g: 0.29874183354822,
            p: 0.02358318000054648,
        },
    );
    // With values that are not positive, ranks (φ = −0.2910547815190901).
    let shifted: Vec<f64> = reference_series().iter().map(|x| x - 10.5).collect();
    assert_matches(
        &shifted,
        Reference {
            ordinates: [
                7707.820845692667,
                5708.925112637806,
                3113.2828105797525,
                18591.860216064604,
                5593.041572221731,
            ],
            k: 17,
            g: 0.31594640789962647,
            p: 0.014713318340972774,
        },
    );
}

#[test]
fn fishers_method_matches_scipy() {
    let cases: [(&[f64], f64); 4] = [
        (&[0.5], 0.5000000000000001),
        (&[0.01, 0.2, 0.7], 0.04082702883527948),
        (&[1e-5, 0.3, 0.9, 0.5, 0.05], 0.0002700477996698508),
        (&[1.0, 1.0], 1.0),
    ];
    for (ps, want) in cases {
        let got = fisher_combined(ps).unwrap();
        assert!((got - want).abs() < 1e-12, "{ps:?}: {got} vs {want}");
    }
    assert_eq!(fisher_combined(&[]), None);
    assert!(fisher_combined(&[0.0]).unwrap() < 1e-300);
}

#[test]
fn short_or_broken_series_are_not_tested() {
    assert_eq!(fisher_g_test(&[1.0; 31]), None);
    let mut xs = reference_series();
    xs[3] = f64::NAN;
    assert_eq!(fisher_g_test(&xs), None);
    let flat = fisher_g_test(&[2.0; 40]).expect("tested");
    assert_eq!(flat.p_value, 1.0);
}

/// Under white noise the p-value is uniform: of 2,000 series of 100 normal values, the share
/// below 0.05 and 0.01 stays within four binomial standard errors of 5% and 1%.
#[test]
fn p_values_are_uniform_under_white_noise() {
    let mut rng = crate::stream(7, "periodogram-level");
    let ps: Vec<f64> = (0..2000)
        .map(|_| {
            let xs: Vec<f64> = (0..100).map(|_| standard_normal(&mut rng)).collect();
            fisher_g_test(&xs).unwrap().p_value
        })
        .collect();
    let below = |a: f64| ps.iter().filter(|p| **p < a).count() as f64 / ps.len() as f64;
    for a in [0.05f64, 0.01] {
        let se = (a * (1.0 - a) / 2000.0).sqrt();
        assert!((below(a) - a).abs() < 4.0 * se, "P(p < {a}) = {}", below(a));
    }
}
