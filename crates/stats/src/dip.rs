//! Hartigan's dip statistic and a dip test for a second mode with a simulated table.

use super::rng::Stream;
use rand::Rng;

use super::summary::{quantile_in_place, quantile_sorted};
pub use lab_basis::{DipTest, Mode};

/// Dip of sorted data: the sup distance between the empirical CDF and the closest
/// unimodal CDF (Hartigan & Hartigan, "The Dip Test of Unimodality", Ann. Stat. 13(1), 1985,
/// §2), computed with algorithm AS 217 (Hartigan, Appl. Stat. 34:320, 1985) including the
/// corrections of Maechler's R package `diptest` (dip.c, v0.75). The result lies in
/// [1/(2n), 1/4]: the minimum 1/(2n) is the distance of any continuous CDF to an ECDF
/// step (as R's `dip(min.is.0 = FALSE)`).
///
/// Returns NaN for empty input or NaN values; `sorted` must be ascending.
pub fn dip(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 || sorted.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    if n < 2 || sorted[0] == sorted[n - 1] {
        return 1.0 / (2.0 * n as f64);
    }
    // 1-based copy to follow the published algorithm literally.
    let mut x = Vec::with_capacity(n + 1);
    x.push(0.0);
    x.extend_from_slice(sorted);
    let (mn, mj) = hull_indices(&x, n);
    let mut st = DipState {
        low: 1,
        high: n,
        dip: 1.0,
    };
    while st.step(&x, &mn, &mj) {}
    st.dip / (2.0 * n as f64)
}

/// AS 217 steps 1–2: `mn[j]` is the previous vertex of the greatest convex minorant of
/// points 1..=j, `mj[k]` the next vertex of the least concave majorant of k..=n.
fn hull_indices(x: &[f64], n: usize) -> (Vec<usize>, Vec<usize>) {
    let mut mn = vec![0usize; n + 1];
    mn[1] = 1;
    for j in 2..=n {
        mn[j] = j - 1;
        loop {
            let (a, b) = (mn[j], mn[mn[j]]);
            if a == 1 || (x[j] - x[a]) * ((a - b) as f64) < (x[a] - x[b]) * ((j - a) as f64) {
                break;
            }
            mn[j] = b;
        }
    }
    let mut mj = vec![0usize; n + 1];
    mj[n] = n;
    for k in (1..n).rev() {
        mj[k] = k + 1;
        loop {
            let (a, b) = (mj[k], mj[mj[k]]);
            if a == n
                || (x[k] - x[a]) * (a as f64 - b as f64) < (x[a] - x[b]) * (k as f64 - a as f64)
            {
                break;
            }
            mj[k] = b;
        }
    }
    (mn, mj)
}

struct DipState {
    low: usize,
    high: usize,
    /// Running dip in units of 1/n·2 (AS 217 keeps counts; divided by 2n at the end).
    dip: f64,
}

impl DipState {
    /// One pass of AS 217 steps 3–6 on [low, high]; `false` when the algorithm stops.
    fn step(&mut self, x: &[f64], mn: &[usize], mj: &[usize]) -> bool {
        let mut gcm = vec![self.high];
        while *gcm.last().unwrap_or(&0) > self.low {
            gcm.push(mn[gcm[gcm.len() - 1]]);
        }
        let mut lcm = vec![self.low];
        while *lcm.last().unwrap_or(&usize::MAX) < self.high {
            lcm.push(mj[lcm[lcm.len() - 1]]);
        }
        let (d, ig, ih) = max_gap(x, &gcm, &lcm);
        if d < self.dip {
            return false;
        }
        let dip_l = gcm_dip(x, &gcm[ig..]);
        let dip_u = lcm_dip(x, &lcm[ih..]);
        self.dip = self.dip.max(dip_l.max(dip_u));
        if self.low == gcm[ig] && self.high == lcm[ih] {
            return false;
        }
        self.low = gcm[ig];
        self.high = lcm[ih];
        true
    }
}

/// AS 217 step 4: largest distance between GCM and LCM over [low, high] and the 0-based
/// positions in `gcm`/`lcm` where the new modal interval starts.
fn max_gap(x: &[f64], gcm: &[usize], lcm: &[usize]) -> (f64, usize, usize) {
    let (lg, ll) = (gcm.len(), lcm.len());
    let (mut ig, mut ih) = (lg - 1, ll - 1);
    if lg == 2 && ll == 2 {
        return (1.0, ig, ih);
    }
    let (mut ix, mut iv) = (lg - 2, 1usize);
    let mut d = 0.0;
    loop {
        let (gx, lv) = (gcm[ix], lcm[iv]);
        if gx > lv {
            let g1 = gcm[ix + 1];
            let dx = (lv - g1 + 1) as f64 - (x[lv] - x[g1]) * (gx - g1) as f64 / (x[gx] - x[g1]);
            iv += 1;
            if dx >= d {
                (d, ig, ih) = (dx, ix + 1, iv - 1);
            }
        } else {
            let l1 = lcm[iv - 1];
            let dx = (x[gx] - x[l1]) * (lv - l1) as f64 / (x[lv] - x[l1]) - (gx - l1 - 1) as f64;
            if dx >= d {
                (d, ig, ih) = (dx, ix, iv);
            }
            ix = ix.saturating_sub(1);
        }
        iv = iv.min(ll - 1);
        if gcm[ix] == lcm[iv] {
            return (d, ig, ih);
        }
    }
}

/// AS 217 step 5, convex minorant part: largest ECDF excess over the GCM chords.
/// `g` lists GCM vertices in decreasing index order.
fn gcm_dip(x: &[f64], g: &[usize]) -> f64 {
    let mut dip_l = 0.0f64;
    for w in g.windows(2) {
        let (j, jb) = (w[0], w[1]);
        let mut max_t = 1.0f64;
        if j - jb > 1 && x[j] != x[jb] {
            let c = (j - jb) as f64 / (x[j] - x[jb]);
            for jj in jb..=j {
                max_t = max_t.max((jj - jb + 1) as f64 - (x[jj] - x[jb]) * c);
            }
        }
        dip_l = dip_l.max(max_t);
    }
    dip_l
}

/// AS 217 step 5, concave majorant part; `l` lists LCM vertices in increasing order.
fn lcm_dip(x: &[f64], l: &[usize]) -> f64 {
    let mut dip_u = 0.0f64;
    for w in l.windows(2) {
        let (j, jb) = (w[0], w[1]);
        let mut max_t = 1.0f64;
        if jb - j > 1 && x[jb] != x[j] {
            let c = (jb - j) as f64 / (x[jb] - x[j]);
            for jj in j..=jb {
                max_t = max_t.max((x[jj] - x[j]) * c - (jj as f64 - j as f64 - 1.0));
            }
        }
        dip_u = dip_u.max(max_t);
    }
    dip_u
}

/// Sample sizes of [`CRITICAL_95`] and [`CRITICAL_99`].
pub const CRITICAL_N: [usize; 15] = [4, 5, 6, 7, 8, 9, 10, 15, 20, 30, 50, 100, 200, 500, 1000];

/// 0.95 quantile of the dip of n uniform values (test size α = 0.05), generated by
/// `simulate_critical_value(n, 0.05, 200_000, 2024)` rounded to 5 decimals (see the ignored test
/// `regenerate_critical_table`).
pub const CRITICAL_95: [f64; 15] = [
    0.20721, 0.18625, 0.16478, 0.15996, 0.15431, 0.14662, 0.13973, 0.11874, 0.10516, 0.08821,
    0.07033, 0.05116, 0.03683, 0.02369, 0.01693,
];

/// 0.99 quantile (α = 0.01), same simulation.
pub const CRITICAL_99: [f64; 15] = [
    0.23150, 0.19642, 0.19186, 0.18407, 0.17318, 0.16419, 0.15987, 0.13560, 0.12076, 0.10168,
    0.08095, 0.05899, 0.04273, 0.02747, 0.01958,
];

/// Critical value of the dip by simulation: the (1−α) type-7 quantile of the dip of
/// `replications` samples of n iid U(0,1) values — the uniform is the least favourable
/// unimodal null (Hartigan & Hartigan 1985, §4 and Table 1). Stream: `stream(seed,
/// "dip-critical/{n}")`. Returns NaN if n = 0, `replications` = 0 or α ∉ (0,1).
pub fn simulate_critical_value(n: usize, alpha: f64, replications: usize, seed: u64) -> f64 {
    if !(alpha > 0.0 && alpha < 1.0) {
        return f64::NAN;
    }
    quantile_in_place(
        &mut simulate_uniform_dips(n, replications, seed),
        1.0 - alpha,
    )
}

/// Dips of `replications` sorted samples of n iid U(0,1) values drawn from
/// `stream(seed, "dip-critical/{n}")`; empty if n = 0.
pub fn simulate_uniform_dips(n: usize, replications: usize, seed: u64) -> Vec<f64> {
    if n == 0 {
        return vec![];
    }
    let mut rng: Stream = super::rng::stream(seed, &format!("dip-critical/{n}"));
    let mut sample = vec![0.0; n];
    let mut dips = Vec::with_capacity(replications);
    for _ in 0..replications {
        sample.iter_mut().for_each(|v| *v = rng.r#gen::<f64>());
        sample.sort_by(f64::total_cmp);
        dips.push(dip(&sample));
    }
    dips
}

/// Critical dip for n ≥ 4 at α ∈ {0.05, 0.01}: table value, linear interpolation of
/// dip·√n in ln n between table sizes (dip·√n tends to a constant, Hartigan & Hartigan
/// 1985 §3), and dip·√n held constant beyond n = 1000. `None` for other α or n < 4.
pub fn critical_value(n: usize, alpha: f64) -> Option<f64> {
    let table = if (alpha - 0.05).abs() < 1e-12 {
        &CRITICAL_95
    } else if (alpha - 0.01).abs() < 1e-12 {
        &CRITICAL_99
    } else {
        return None;
    };
    if n < 4 {
        return None;
    }
    let scaled = |i: usize| table[i] * (CRITICAL_N[i] as f64).sqrt();
    let last = CRITICAL_N.len() - 1;
    let i = CRITICAL_N.iter().position(|&m| m >= n).unwrap_or(last);
    if CRITICAL_N[i] == n {
        return Some(table[i]);
    }
    let nf = n as f64;
    if n > CRITICAL_N[last] {
        return Some(scaled(last) / nf.sqrt());
    }
    let (a, b) = ((CRITICAL_N[i - 1] as f64).ln(), (CRITICAL_N[i] as f64).ln());
    let t = (nf.ln() - a) / (b - a);
    Some((scaled(i - 1) + t * (scaled(i) - scaled(i - 1))) / nf.sqrt())
}

/// Optimal split of sorted data into two contiguous groups minimising the within-group sum
/// of squares (1-D k-means with k = 2 is solved exactly by a scan over split points; Fisher
/// 1958, JASA 53:789). Returns the size of the lower group (≥ 1).
fn two_means_split(sorted: &[f64]) -> usize {
    let n = sorted.len();
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let c: Vec<f64> = sorted.iter().map(|x| x - mean).collect(); // centred for accuracy
    let (tot, tot2) = c.iter().fold((0.0, 0.0), |(s, q), &v| (s + v, q + v * v));
    let (mut s, mut q, mut best, mut best_k) = (0.0, 0.0, f64::INFINITY, 1);
    for k in 1..n {
        s += c[k - 1];
        q += c[k - 1] * c[k - 1];
        let (kl, kr) = (k as f64, (n - k) as f64);
        let sse = (q - s * s / kl) + ((tot2 - q) - (tot - s).powi(2) / kr);
        if sse < best {
            (best, best_k) = (sse, k);
        }
    }
    best_k
}

/// Dip test at level α ∈ {0.05, 0.01} (Hartigan & Hartigan 1985): second mode detected
/// when the dip exceeds the simulated uniform critical value. `None` if n < 4, any value is
/// NaN, or α is not tabulated.
pub fn dip_test(xs: &[f64], alpha: f64) -> Option<DipTest> {
    if xs.len() < 4 || xs.iter().any(|x| x.is_nan()) {
        return None;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let critical = critical_value(n, alpha)?;
    let d = dip(&sorted);
    let second_mode_detected = d > critical;
    let mode = |s: &[f64]| Mode {
        median: quantile_sorted(s, 0.5),
        share: s.len() as f64 / n as f64,
    };
    let modes = if second_mode_detected {
        let k = two_means_split(&sorted);
        vec![mode(&sorted[..k]), mode(&sorted[k..])]
    } else {
        vec![mode(&sorted)]
    };
    Some(DipTest {
        dip: d,
        critical,
        n,
        second_mode_detected,
        modes,
    })
}

#[cfg(test)]
#[path = "dip_tests.rs"]
mod tests;
