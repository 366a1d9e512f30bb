//! The search step of PELT (used by `changepoint`): segment costs from prefix sums,
//! and the candidates' costs judged first through a logarithm with a proven error bound, so
//! that the exact logarithm is taken only where it can change PELT's choice.
//!
//! At step t PELT needs, of every candidate s, F(s) + C(s, t): which one is least (the first
//! of the least, in candidate order) and which exceed F(t) (those are pruned). Each value is
//! first bounded, `a ± e` ([`Cost::bounded_value`]); a value is computed exactly only when its bound
//! reaches the least upper bound of all (it may be the least) or straddles F(t). Every choice
//! is then the one exact values give, with a fraction of the exact logarithms.

/// Prefix sums for O(1) segment costs.
pub(super) struct Cost {
    s1: Vec<f64>,
    s2: Vec<f64>,
    floor: f64,
    /// The sums are small enough for [`Cost::bounded_value`]'s bound to hold on every segment.
    bounded: bool,
    /// 1/k for every segment length k.
    inverse: Vec<f64>,
    ln: LnTable,
}

impl Cost {
    pub(super) fn new(series: &[f64]) -> Cost {
        let mean = series.iter().sum::<f64>() / series.len() as f64;
        let (mut s1, mut s2) = (vec![0.0], vec![0.0]);
        for &y in series {
            let c = y - mean; // centring keeps the variance formula accurate
            s1.push(s1[s1.len() - 1] + c);
            s2.push(s2[s2.len() - 1] + c * c);
        }
        let total_var = s2[series.len()] / series.len() as f64;
        Cost {
            bounded: s2[series.len()] < 1e290,
            s1,
            s2,
            floor: (total_var * 1e-8).max(f64::MIN_POSITIVE),
            inverse: (0..=series.len()).map(|k| 1.0 / k as f64).collect(),
            ln: LnTable::new(),
        }
    }

    /// Normal mean-and-variance change cost of `series[a..b]`: m·ln(σ̂²), σ̂² the MLE
    /// variance floored at 1e-8 × the whole-series variance (twice the negative profile
    /// log-likelihood up to a constant; Killick, Fearnhead & Eckley 2012 §4.2; Chen &
    /// Gupta 2000, ch. 3).
    pub(super) fn of(&self, a: usize, b: usize) -> f64 {
        let m = (b - a) as f64;
        let s = self.s1[b] - self.s1[a];
        let var = ((self.s2[b] - self.s2[a]) - s * s / m) / m;
        m * var.max(self.floor).ln()
    }

    /// `base` + [`Self::of`]`(a, b)` approximately, with a bound on its distance from the
    /// exact sum (infinite where none is known): the variance through 1/m instead of two
    /// divisions, its logarithm from [`LnTable`].
    ///
    /// The bound: with u = 2⁻⁵³, T = s²/m and D = Q − T (Q the sum of squares), multiplying by
    /// 1/m moves T by at most 3u·T and D, with the roundings of both subtractions, by at most
    /// 3u·T + 2u·D; the last scaling adds 3u. The variance's relative distance is then below
    /// ρ = u·(4·T/D + 8) and its logarithm's below 2ρ, flooring included (it is monotone).
    /// T/D is bounded by T·2⁻ᵉ, 2ᵉ ≤ D, and must stay under [`MAX_CANCELLATION`].
    fn bounded_value(&self, base: f64, a: usize, b: usize) -> (f64, f64) {
        let k = b - a;
        let (m, inverse) = (k as f64, self.inverse[k]);
        let s = self.s1[b] - self.s1[a];
        let t = s * s * inverse;
        let d = (self.s2[b] - self.s2[a]) - t;
        let cancellation = t * power_of_two_below_inverse(d);
        if !self.bounded || cancellation.is_nan() || cancellation > MAX_CANCELLATION {
            return (base, f64::INFINITY);
        }
        let rho = UNIT_ROUNDOFF * (4.0 * cancellation + 8.0);
        let part = m * self.ln.of((d * inverse).max(self.floor));
        let value = base + part;
        let error = m * (LN_ERROR + 2.0 * rho) + SUM_ROUNDING * (value.abs() + part.abs());
        (value, error)
    }
}

/// 2⁻ᵉ for the largest 2ᵉ ≤ `d`; infinite unless `d` is positive and normal (a NaN has
/// the exponent 2047).
fn power_of_two_below_inverse(d: f64) -> f64 {
    let exponent = (d.to_bits() >> 52) & 0x7ff;
    if d <= 0.0 || exponent == 0 || exponent >= 2046 {
        return f64::INFINITY;
    }
    f64::from_bits((2046 - exponent) << 52)
}

/// u = 2⁻⁵³, the relative rounding of one operation, rounded up.
const UNIT_ROUNDOFF: f64 = 1.12e-16;

/// The largest T/D for which [`Cost::bounded_value`] bounds the variance; past it the
/// subtraction cancels too much and the value is computed exactly.
const MAX_CANCELLATION: f64 = (1u64 << 20) as f64;

/// A bound on |[`LnTable::of`]`(x)` − `x.ln()`| for every positive normal x: the series'
/// truncation error is below 3.7·10⁻¹² and the roundings, `ln`'s own included, below
/// 5·10⁻¹³, so the bound holds twentyfold.
const LN_ERROR: f64 = 1e-10;

/// A bound on the relative rounding of F(s) + m·ln, on its magnitudes, to cover both the
/// exact sum and the approximate one (a few units in the last place, fourfold).
const SUM_ROUNDING: f64 = 4e-15;

/// ln x by table lookup (Tang 1990, "Table-driven implementation of the logarithm function
/// in IEEE floating-point arithmetic", ACM TOMS 16:378): x = 2ᵉ·m, m in [1, 2) falling in
/// one of 256 intervals of centre c; ln m = ln(m/c) + ln c, with r = m/c − 1, |r| ≤ 2⁻⁹,
/// and ln(1 + r) by its series to r³, whose remainder is below r⁴/4/(1 − |r|).
struct LnTable {
    /// Per interval: 1/c.
    inverse_centre: [f64; 256],
    /// Per interval: −ln(1/c), `ln` of the value stored above.
    ln_centre: [f64; 256],
}

impl LnTable {
    fn new() -> LnTable {
        let mut table = LnTable {
            inverse_centre: [0.0; 256],
            ln_centre: [0.0; 256],
        };
        for j in 0..256 {
            let inverse = 1.0 / (1.0 + (j as f64 + 0.5) / 256.0);
            table.inverse_centre[j] = inverse;
            table.ln_centre[j] = -inverse.ln();
        }
        table
    }

    /// ln x for a positive normal x, within [`LN_ERROR`].
    fn of(&self, x: f64) -> f64 {
        const MANTISSA: u64 = (1 << 52) - 1;
        let bits = x.to_bits();
        let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
        let j = ((bits >> 44) & 0xff) as usize;
        let m = f64::from_bits((bits & MANTISSA) | (1023 << 52));
        let r = m * self.inverse_centre[j] - 1.0;
        let ln_1p = r * (1.0 - r * (0.5 - r * (1.0 / 3.0)));
        e as f64 * std::f64::consts::LN_2 + (self.ln_centre[j] + ln_1p)
    }
}

/// PELT's candidate starts of the last segment, with what the current step learnt of each.
#[derive(Default)]
pub(super) struct Candidates {
    starts: Vec<usize>,
    /// Per candidate, at the current step: F(s) + C(s, t), approximate or exact.
    value: Vec<f64>,
    /// Per candidate: a bound on the distance of `value` from the exact one (0 when exact).
    error: Vec<f64>,
}

impl Candidates {
    /// Adds `s`, which must exceed every candidate held.
    pub(super) fn push(&mut self, s: usize) {
        self.starts.push(s);
    }

    /// The least F(s) + C(s, t) over the candidates and the first s giving it, both exactly
    /// as computing every value exactly would find them.
    pub(super) fn least(&mut self, cost: &Cost, f: &[f64], t: usize) -> (f64, usize) {
        self.bound(cost, f, t);
        let upper = self
            .value
            .iter()
            .zip(&self.error)
            .fold(f64::INFINITY, |u, (&a, &e)| u.min(a + e));
        let mut best = (f64::INFINITY, 0);
        for (i, &s) in self.starts.iter().enumerate() {
            if self.value[i] - self.error[i] <= upper {
                let v = f[s] + cost.of(s, t);
                (self.value[i], self.error[i]) = (v, 0.0);
                if v < best.0 {
                    best = (v, s);
                }
            }
        }
        best
    }

    /// Approximate values and their bounds for step `t`.
    fn bound(&mut self, cost: &Cost, f: &[f64], t: usize) {
        self.value.clear();
        self.error.clear();
        for &s in &self.starts {
            let (value, error) = cost.bounded_value(f[s], s, t);
            self.value.push(value);
            self.error.push(error);
        }
    }

    /// Pruning (Killick, Fearnhead & Eckley 2012, Theorem 3.1 with K = 0): drops every s
    /// with F(s) + C(s, t) > F(t) = `limit`, computing the exact value only where the bound
    /// straddles the limit. In place: no allocation per step.
    pub(super) fn prune(&mut self, cost: &Cost, f: &[f64], t: usize, limit: f64) {
        let mut kept = 0;
        for i in 0..self.starts.len() {
            let (a, e, s) = (self.value[i], self.error[i], self.starts[i]);
            let keep = if a + e <= limit {
                true
            } else if a - e > limit {
                false
            } else {
                f[s] + cost.of(s, t) <= limit
            };
            self.starts[kept] = s;
            kept += usize::from(keep);
        }
        self.starts.truncate(kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_logarithm_stays_within_its_bound() {
        let table = LnTable::new();
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut worst = 0.0f64;
        for i in 0..2_000_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Every exponent, mantissas near 1 and 2, and near the intervals' edges.
            let x = match i % 3 {
                0 => f64::from_bits(state % 0x7FE0_0000_0000_0000 + (1 << 52)),
                1 => {
                    let low = state & 0xff;
                    let edge = if state & 256 == 0 {
                        low
                    } else {
                        (1 << 44) - 1 - low
                    };
                    f64::from_bits((1023 << 52) | ((state >> 56) << 44) | edge)
                }
                _ => 1.0 + (state >> 11) as f64 / (1u64 << 53) as f64,
            };
            if x.is_normal() {
                worst = worst.max((table.of(x) - x.ln()).abs());
            }
        }
        assert!(worst < LN_ERROR / 10.0, "{worst}");
    }
}
