//! Uniform integers drawn from a seeded stream, shared by every bootstrap resampler: one
//! draw at a time or in bulk, the same integers from the same words either way.

use super::rng::{Stream, Xoshiro256PlusPlus};
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

/// Adds one to `counts[i]` for each of `draws` uniform integers i in [0, n), n ≥ 1 and
/// `counts.len() ≥ n`: the same integers, from the same words, as [`fill_below`] into a
/// buffer of `draws` and counting them. `buffer` is the room that takes on a stream other
/// than xoshiro256++'s, whose words are counted as they are drawn, eight at a time.
pub(crate) fn count_below(
    rng: &mut Stream,
    n: u32,
    draws: usize,
    counts: &mut [u32],
    buffer: &mut Vec<u32>,
) {
    match rng {
        Stream::Xoshiro(x) => count_drawn(x, n, n.wrapping_neg() % n, draws, counts),
        _ => {
            buffer.resize(draws, 0);
            fill_below(rng, n, buffer);
            for &d in buffer.iter() {
                counts[d as usize] += 1;
            }
        }
    }
}

/// [`count_below`] from a xoshiro256++ stream, a word w accepted when the low half of w·n is
/// at least `threshold`. Counting does not depend on the order of the draws, so eight
/// words, taken whenever eight or more draws are left (the words a draw at a time would take
/// too), count every one of them they accept.
#[inline(always)]
fn count_drawn(
    x: &mut Xoshiro256PlusPlus,
    n: u32,
    threshold: u32,
    draws: usize,
    counts: &mut [u32],
) {
    let counts = &mut counts[..n as usize];
    let mut left = draws;
    while left >= 8 {
        for w in x.next_eight_words() {
            let m = u64::from(w) * u64::from(n);
            let accepted = m as u32 >= threshold;
            counts[(m >> 32) as usize] += u32::from(accepted);
            left -= usize::from(accepted);
        }
    }
    while left > 0 {
        let m = u64::from(x.next_word()) * u64::from(n);
        if m as u32 >= threshold {
            counts[(m >> 32) as usize] += 1;
            left -= 1;
        }
    }
}

/// Uniform integer in [0, n) for n ≥ 1, unbiased: Lemire's multiply-shift with rejection
/// ("Fast random integer generation in an interval", ACM TOMACS 29(1), 2019, Algorithm 5).
#[inline(always)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Generator, stream_of};

    #[test]
    fn counted_draws_are_the_buffered_draws_from_the_same_words() {
        for generator in [Generator::ChaCha8, Generator::Xoshiro256PlusPlus] {
            for (n, draws, skip) in [(1u32, 5usize, 0usize), (7, 1_000, 1), (1_034, 1_041, 3)] {
                let mut counted = stream_of(generator, 9, "count");
                let mut buffered = counted.clone();
                for _ in 0..skip {
                    counted.next_u32();
                    buffered.next_u32();
                }
                let mut counts = vec![0u32; n as usize];
                count_below(&mut counted, n, draws, &mut counts, &mut Vec::new());
                let mut drawn = vec![0u32; draws];
                fill_below(&mut buffered, n, &mut drawn);
                let mut want = vec![0u32; n as usize];
                for d in drawn {
                    want[d as usize] += 1;
                }
                assert_eq!(counts, want, "{generator:?} n = {n}");
                assert_eq!(
                    counted.next_u32(),
                    buffered.next_u32(),
                    "{generator:?} n = {n}"
                );
            }
        }
    }

    #[test]
    fn counted_draws_drop_the_rejected_words_as_one_at_a_time() {
        // A threshold of 2³¹ rejects about half the words: the words taken and the counts are
        // those of drawing one at a time.
        let (n, threshold, draws) = (10u32, 1u32 << 31, 103usize);
        let Stream::Xoshiro(mut counted) = stream_of(Generator::Xoshiro256PlusPlus, 4, "reject")
        else {
            unreachable!()
        };
        let mut single = counted.clone();
        let mut counts = vec![0u32; n as usize];
        count_drawn(&mut counted, n, threshold, draws, &mut counts);
        let mut want = vec![0u32; n as usize];
        let mut left = draws;
        while left > 0 {
            let m = u64::from(single.next_word()) * u64::from(n);
            if m as u32 >= threshold {
                want[(m >> 32) as usize] += 1;
                left -= 1;
            }
        }
        assert_eq!(counts, want);
        assert_eq!(counts.iter().sum::<u32>() as usize, draws);
        assert_eq!(counted.next_word(), single.next_word());
    }
}
