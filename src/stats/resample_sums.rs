//! Resampled sums of single values for analysis 2 (xoshiro256++ streams): a resample's
//! indices are drawn and its values added in one pass, into four sums by position, so that
//! neither the words nor the indices go through memory and four additions overlap.

use super::rng::Xoshiro256PlusPlus;
use super::uniform::below;

/// What summing no values gives, as `Iterator::sum` starts it.
const ZERO_SUM: f64 = -0.0;

/// The sum of one resample with replacement of `values` (1 ≤ len ≤ 2³²): position k draws
/// its index as [`below`] would, one word at a time, and adds its value to sum k mod 4; the
/// four sums are then added pairwise, (s0 + s1) + (s2 + s3).
pub(super) fn resampled_sum(values: &[f64], x: &mut Xoshiro256PlusPlus) -> f64 {
    let mut sums = FourSums([ZERO_SUM; 4]);
    resample_indices(x, values.len() as u32, values.len(), |slot, i| {
        sums.add(slot, values[i as usize]);
    });
    let [a, b, c, d] = sums.0;
    (a + b) + (c + d)
}

/// Four running sums, each addressed by a constant wherever the slot is one, so that they
/// stay in registers.
struct FourSums([f64; 4]);

impl FourSums {
    #[inline(always)]
    fn add(&mut self, slot: usize, v: f64) {
        let s = &mut self.0;
        match slot {
            0 => s[0] += v,
            1 => s[1] += v,
            2 => s[2] += v,
            _ => s[3] += v,
        }
    }
}

/// `len` uniform indices in [0, n), n ≥ 1, handed to `take` in position order with each
/// position's slot (its position mod 4): the integers [`below`] draws one at a time (Lemire's
/// multiply-shift with rejection), taken four words at a time wherever a position is a
/// multiple of four and four positions remain.
#[inline(always)]
pub(super) fn resample_indices(
    x: &mut Xoshiro256PlusPlus,
    n: u32,
    len: usize,
    mut take: impl FnMut(usize, u32),
) {
    let t = n.wrapping_neg() % n;
    let mut k = 0;
    while k < len {
        if k % 4 == 0 && k + 4 <= len {
            // Each word's product w·n: its high half is the index, its low half decides.
            let products = x.next_four_words().map(|w| u64::from(w) * u64::from(n));
            let accepted = |m: u64| m as u32 >= t;
            if products.iter().fold(true, |all, &m| all & accepted(m)) {
                for (slot, &m) in products.iter().enumerate() {
                    take(slot, (m >> 32) as u32);
                }
                k += 4;
            } else {
                // A word rejected: the accepted ones fill the next positions in order, as
                // one draw at a time would have taken them.
                for &m in products.iter().filter(|&&m| accepted(m)) {
                    take(k % 4, (m >> 32) as u32);
                    k += 1;
                }
            }
            continue;
        }
        take(k % 4, below(x, n));
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::{Generator, Stream, stream_of};

    fn xoshiro(label: &str) -> Xoshiro256PlusPlus {
        match stream_of(Generator::Xoshiro256PlusPlus, 7, label) {
            Stream::Xoshiro(x) => x,
            Stream::ChaCha8(_) => unreachable!(),
        }
    }

    /// `len` draws of [`below`], one at a time.
    fn one_at_a_time(x: &mut Xoshiro256PlusPlus, n: u32, len: usize) -> Vec<(usize, u32)> {
        (0..len).map(|k| (k % 4, below(x, n))).collect()
    }

    #[test]
    fn indices_are_those_of_one_draw_at_a_time_with_rejections_and_odd_starts() {
        // n = 3·2³⁰ rejects a word in four; 10,000 rejects one in 600,000 or so.
        for n in [1, 2, 7, 10_000, 3 << 30, u32::MAX] {
            for len in [0, 1, 7, 8, 9, 23, 64, 1001] {
                for skip in [0, 1] {
                    let mut a = xoshiro(&format!("{n}/{len}"));
                    for _ in 0..skip {
                        a.next_word();
                    }
                    let mut b = a.clone();
                    let mut got = Vec::new();
                    resample_indices(&mut a, n, len, |slot, i| got.push((slot, i)));
                    assert_eq!(
                        got,
                        one_at_a_time(&mut b, n, len),
                        "n {n} len {len} skip {skip}"
                    );
                    assert_eq!(
                        a.next_word(),
                        b.next_word(),
                        "both streams left at one word"
                    );
                }
            }
        }
    }

    #[test]
    fn rejections_do_happen_in_the_test_and_every_index_is_below_n() {
        let mut x = xoshiro("rejects");
        let n = 3u32 << 30;
        let mut drawn = 0usize;
        resample_indices(&mut x, n, 10_000, |_, i| {
            assert!(i < n);
            drawn += 1;
        });
        assert_eq!(drawn, 10_000);
        // Ten thousand indices took about 13,333 words: the stream moved past 10,000 words.
        let mut fresh = xoshiro("rejects");
        let words: Vec<u32> = (0..12_000).map(|_| fresh.next_word()).collect();
        let t = n.wrapping_neg() % n;
        let rejected = words.iter().filter(|&&w| w.wrapping_mul(n) < t).count();
        assert!(rejected > 2_500, "{rejected} of 12,000 words rejected");
    }

    #[test]
    fn the_sum_adds_each_position_into_its_slot_then_the_slots_pairwise() {
        let values: Vec<f64> = (0..1_003)
            .map(|i| (f64::from(i) * 0.37).sin() * 1e3)
            .collect();
        let mut a = xoshiro("sum");
        let mut b = a.clone();
        let mut sums = [ZERO_SUM; 4];
        for (slot, i) in one_at_a_time(&mut b, values.len() as u32, values.len()) {
            sums[slot] += values[i as usize];
        }
        let [s0, s1, s2, s3] = sums;
        let expected = (s0 + s1) + (s2 + s3);
        assert_eq!(resampled_sum(&values, &mut a).to_bits(), expected.to_bits());
    }
}
