//! Counting draws by rank: a resample of a cell's values drawn as counts over their ascending
//! order, its order statistics read from the counts, and the sums a mean's resamples take side
//! by side.

use super::super::uniform::below;
use super::MEAN_BATCH;
use lab_basis::Interval;
use rand::RngCore;

/// Draws as many of `runs` (spans into `ranks`) as there are, with replacement, and every
/// value of each drawn run with replacement, counting each drawn value's rank in `counts`;
/// returns the values drawn.
#[inline(always)]
pub(super) fn count_every_value<R: RngCore>(
    runs: &[(u32, u32)],
    ranks: &[u32],
    counts: &mut [u32],
    rng: &mut R,
) -> usize {
    let n_runs = runs.len() as u32;
    let mut m = 0usize;
    for _ in 0..n_runs {
        let (off, len) = runs[below(rng, n_runs) as usize];
        for _ in 0..len {
            let k = if len == 1 { 0 } else { below(rng, len) };
            counts[ranks[(off + k) as usize] as usize] += 1;
        }
        m += len as usize;
    }
    m
}

/// Indices of `values` in ascending order, equal values in index order (what a stable sort
/// of the indices by `f64::total_cmp` gives): each key sorted beside its index, not looked up
/// through it.
pub(super) fn ascending_order(values: &[f64]) -> Vec<u32> {
    let mut keyed: Vec<(i64, u32)> = values
        .iter()
        .enumerate()
        .map(|(i, &x)| (total_order_key(x), i as u32))
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// The integer whose order is `f64::total_cmp`'s (the same flip of the bits as its source).
fn total_order_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// Order statistics `k` and `k + 1` (0-based, the latter clamped) of a resample counted by
/// rank: `counts[i]` draws of the value `sorted[i]`.
pub(crate) fn counted_order_stats(counts: &[u32], sorted: &[f64], k: usize) -> (f64, f64) {
    let mut cum = 0usize;
    let mut first = None;
    for (i, &c) in counts.iter().enumerate() {
        cum += c as usize;
        if first.is_none() && cum > k {
            first = Some(sorted[i]);
        }
        if cum > k + 1 {
            return (first.unwrap_or(sorted[i]), sorted[i]);
        }
    }
    let a = first.unwrap_or(f64::NAN);
    (a, a)
}

/// The number every one of `sorted` (ascending by `f64::total_cmp`) is, where they are all
/// one number other than zero: then every resample's quantile is that number, as is every
/// quantile of those, and an interval of quantiles needs no draw to be `[x, x]`. (A zero is
/// left to the draws: the interpolation between two zeros of either sign gives +0.)
pub(crate) fn one_value(sorted: &[f64]) -> Option<f64> {
    let (&first, &last) = (sorted.first()?, sorted.last()?);
    (first.to_bits() == last.to_bits() && first != 0.0).then_some(first)
}

/// The interval `[x, x]` at `level`.
pub(crate) fn point_interval(x: f64, level: f64) -> Interval {
    Interval {
        lo: x,
        hi: x,
        level,
    }
}

/// What summing no values gives: the start of every sum, as `Iterator::sum` starts it.
pub(super) const ZERO_SUM: f64 = -0.0;

/// The sums of the values at [`MEAN_BATCH`] resamples of indices (`indices` holds one
/// resample after the other), each added in its own order, the sums side by side.
#[inline(never)] // kept apart, its four sums stay in registers
pub(super) fn sums_side_by_side(values: &[f64], indices: &[u32]) -> [f64; MEAN_BATCH] {
    let n = indices.len() / MEAN_BATCH;
    let (a, rest) = indices.split_at(n);
    let (b, rest) = rest.split_at(n);
    let (c, d) = rest.split_at(n);
    let [mut sa, mut sb, mut sc, mut sd] = [ZERO_SUM; MEAN_BATCH];
    for (((&ia, &ib), &ic), &id) in a.iter().zip(b).zip(c).zip(d) {
        sa += values[ia as usize];
        sb += values[ib as usize];
        sc += values[ic as usize];
        sd += values[id as usize];
    }
    [sa, sb, sc, sd]
}
