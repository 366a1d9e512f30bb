//! Uniform integers drawn from a seeded stream, shared by every bootstrap resampler: one
//! draw at a time or in bulk, the same integers from the same words either way.

use super::rng::Stream;
use rand::{Rng, RngCore};

/// Fills `out` with uniform integers in [0, n), n ≥ 1: the same ones, from the same words of
/// the stream, as calling [`below`] once per element. The words are taken in bulk, never more
/// than are needed; a word [`below`] rejects (its low half of w·n under 2³² mod n) is dropped
/// and the next one taken in its place.
pub(crate) fn fill_below(rng: &mut Stream, n: u32, out: &mut [u32]) {
    let t = n.wrapping_neg() % n;
    let mut done = 0;
    while done < out.len() {
        let words = &mut out[done..];
        rng.fill(&mut *words);
        let accepted = |w: u32| w.wrapping_mul(n) >= t;
        if words.iter().fold(true, |all, &w| all & accepted(w)) {
            // The usual case: no word rejected, so each word is one draw.
            for w in words.iter_mut() {
                *w = ((u64::from(*w) * u64::from(n)) >> 32) as u32;
            }
            return;
        }
        let mut kept = done;
        for i in done..out.len() {
            let w = out[i];
            out[kept] = ((u64::from(w) * u64::from(n)) >> 32) as u32;
            kept += usize::from(accepted(w));
        }
        done = kept;
    }
}

/// Uniform integer in [0, n) for n ≥ 1, unbiased: Lemire's multiply-shift with rejection
/// ("Fast random integer generation in an interval", ACM TOMACS 29(1), 2019, Algorithm 5).
#[inline]
pub(crate) fn below<R: RngCore + ?Sized>(rng: &mut R, n: u32) -> u32 {
    let mut m = u64::from(rng.next_u32()) * u64::from(n);
    if (m as u32) < n {
        let t = n.wrapping_neg() % n;
        while (m as u32) < t {
            m = u64::from(rng.next_u32()) * u64::from(n);
        }
    }
    (m >> 32) as u32
}
