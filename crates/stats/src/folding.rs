//! A periodic series folded at its period: which iterations fall in its slow phase, for the
//! description of a periodic slowdown ("18% of them are 1.6× slower").
//!
//! The slowdowns a timer or a reporter thread causes are boxes, not sines: a stretch of each
//! cycle is slower, the rest is not. So the fold fits the box-shaped phase interval that best
//! separates high ranks from low, the Box Least Squares search of Kovács, Zucker & Mazeh (2002,
//! "A box-fitting algorithm in the search for periodic transits", A&A 391:369), on the
//! detrended ranks: the largest s²/(r(1 − r)) over phase intervals, with r the share of
//! iterations in the interval and s the sum of their centred ranks.

use super::periodogram::{MIN_CYCLES, detrended_ranks};

/// Periods tried within one Fourier step either side of each multiple.
const REFINE_POINTS: usize = 41;

/// Phase bins per iteration of the period, and the most bins a fold uses.
const BINS_PER_ITERATION: f64 = 4.0;
const MAX_BINS: usize = 256;
const MIN_BINS: usize = 8;

/// Multiples of the strongest frequency's period tried: the strongest ordinate of a box train
/// may be a harmonic of its period.
const MULTIPLES: usize = 4;

/// A series folded at its period.
#[derive(Debug, Clone, PartialEq)]
pub struct Fold {
    /// The period, in iterations (not necessarily whole).
    pub period: f64,
    /// Per iteration, whether it falls in the slow phase.
    pub slow: Vec<bool>,
}

impl Fold {
    /// The share of iterations in the slow phase.
    pub fn share(&self) -> f64 {
        self.slow.iter().filter(|s| **s).count() as f64 / self.slow.len().max(1) as f64
    }
}

/// `xs` (slow iterations high) folded at the period whose frequency, in cycles per iteration,
/// is near `frequency` (a Fourier frequency of a series of `fourier_length` values) or is a
/// subharmonic of it. `None` with fewer than [`MIN_CYCLES`] cycles or no slow phase.
pub fn fold(xs: &[f64], frequency: f64, fourier_length: usize) -> Option<Fold> {
    let n = xs.len();
    if n < 2 * MIN_CYCLES || frequency.is_nan() || frequency <= 0.0 {
        return None;
    }
    let ranks = detrended_ranks(xs);
    let step = 1.0 / fourier_length.max(1) as f64;
    let longest = (n / MIN_CYCLES) as f64;
    let mut tried: Vec<(f64, f64, Vec<bool>)> = Vec::new();
    for multiple in 1..=MULTIPLES {
        // Periods within one Fourier step of the frequency's, the box residue to choose.
        let (lo, hi) = (
            multiple as f64 / (frequency + step),
            multiple as f64 / (frequency - step).max(step / 2.0),
        );
        for i in 0..REFINE_POINTS {
            let period = lo + (hi - lo) * i as f64 / (REFINE_POINTS - 1) as f64;
            if (2.0..=longest).contains(&period)
                && let Some((residue, slow)) = best_box(&ranks, period)
            {
                tried.push((residue, period, slow));
            }
        }
    }
    best_period(tried)
}

/// The fold of largest residue; where neighbouring periods fold as well (a short series cannot
/// tell them apart), the middle one.
fn best_period(mut tried: Vec<(f64, f64, Vec<bool>)>) -> Option<Fold> {
    let top = tried.iter().map(|t| t.0).fold(f64::NEG_INFINITY, f64::max);
    tried.retain(|t| t.0 >= top * (1.0 - 1e-9));
    tried.sort_by(|a, b| a.1.total_cmp(&b.1));
    let middle = tried.len().checked_sub(1)? / 2;
    let (_, period, slow) = tried.swap_remove(middle);
    Some(Fold { period, slow })
}

/// The phase interval, at `period`, with the largest signal residue s²/(r(1 − r)) and s > 0:
/// the residue and which iterations fall in it.
fn best_box(ranks: &[f64], period: f64) -> Option<(f64, Vec<bool>)> {
    let n = ranks.len();
    let bins = ((period * BINS_PER_ITERATION).ceil() as usize).clamp(MIN_BINS, MAX_BINS);
    let bin_of = |t: usize| (((t as f64 / period).fract() * bins as f64) as usize).min(bins - 1);
    let (mut counts, mut sums) = (vec![0usize; bins], vec![0.0; bins]);
    for (t, r) in ranks.iter().enumerate() {
        counts[bin_of(t)] += 1;
        sums[bin_of(t)] += r;
    }
    let mut best: Option<(f64, usize, usize)> = None;
    for start in 0..bins {
        let (mut count, mut sum) = (0, 0.0);
        for width in 1..bins {
            let b = (start + width - 1) % bins;
            count += counts[b];
            sum += sums[b];
            if count == 0 || count == n || sum <= 0.0 {
                continue;
            }
            let r = count as f64 / n as f64;
            let residue = sum * sum / (r * (1.0 - r));
            if best.is_none_or(|(top, _, _)| residue > top) {
                best = Some((residue, start, width));
            }
        }
    }
    let (residue, start, width) = best?;
    let slow = (0..n)
        .map(|t| (bin_of(t) + bins - start) % bins < width)
        .collect();
    Some((residue, slow))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sixth iteration 1.6 times slower, on a wobble too small to matter.
    fn spikes(n: usize, every: usize) -> Vec<f64> {
        (0..n)
            .map(|t| {
                let base = 2.0 + 0.01 * ((t * 7) % 5) as f64;
                if t % every == 3 { base * 1.6 } else { base }
            })
            .collect()
    }

    #[test]
    fn finds_the_slow_phase_of_a_box_train() {
        let xs = spikes(150, 6);
        // From the strongest ordinate, a harmonic (period 3), the fold returns to period 6.
        let f = fold(&xs, 1.0 / 3.0, 150).expect("a fold");
        assert!((f.period - 6.0).abs() < 0.05, "{}", f.period);
        let slow: Vec<usize> = (0..150).filter(|t| f.slow[*t]).collect();
        assert_eq!(slow, (0..25).map(|c| c * 6 + 3).collect::<Vec<_>>());
        assert!((f.share() - 25.0 / 150.0).abs() < 1e-12);
    }

    #[test]
    fn a_non_whole_period_keeps_its_phase() {
        // A slow iteration wherever t · 2/11 passes a whole number: every 5.5 iterations.
        let xs: Vec<f64> = (0..200)
            .map(|t| {
                let crossed = ((t + 1) * 2 / 11) > (t * 2 / 11);
                if crossed { 3.2 } else { 2.0 }
            })
            .collect();
        let f = fold(&xs, 2.0 / 11.0, 200).expect("a fold");
        assert!((f.period - 5.5).abs() < 0.05, "{}", f.period);
        for (t, x) in xs.iter().enumerate() {
            assert_eq!(f.slow[t], *x > 3.0, "iteration {t}");
        }
    }

    #[test]
    fn too_short_or_without_a_frequency_is_none() {
        assert_eq!(fold(&[1.0; 7], 0.25, 7), None);
        assert_eq!(fold(&spikes(64, 6), 0.0, 64), None);
        assert_eq!(fold(&spikes(64, 6), f64::NAN, 64), None);
    }
}
