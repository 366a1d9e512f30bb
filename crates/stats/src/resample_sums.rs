//! Resampled sums of single values for analysis 2 (xoshiro256++ streams): a resample's
//! indices are drawn and its values added in one pass, into eight sums by position, so that
//! neither the words nor the indices go through memory and eight additions overlap.

use super::rng::Xoshiro256PlusPlus;

/// What summing no values gives, as `Iterator::sum` starts it.
const ZERO_SUM: f64 = -0.0;

/// The sum of one resample with replacement of `values` (1 ≤ len ≤ 2³²): position k draws
/// its index as [`super::uniform::below`] would, one word at a time (Lemire's multiply-shift
/// with rejection), and adds its value to sum k mod 8; the eight sums are then added
/// pairwise, ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)).
pub(super) fn resampled_sum(values: &[f64], x: &mut Xoshiro256PlusPlus) -> f64 {
    let n = values.len() as u32;
    sum_below(values, n, n.wrapping_neg() % n, x)
}

/// [`resampled_sum`] with indices in [0, n), n ≤ len, a word w accepted when the low half of
/// w·n is at least `threshold` (2³² mod n for unbiased draws; tests raise it to reject often).
#[inline(always)]
fn sum_below(values: &[f64], n: u32, threshold: u32, x: &mut Xoshiro256PlusPlus) -> f64 {
    let len = values.len();
    let mut sums = [ZERO_SUM; 8];
    let mut k = 0;
    while k + 8 <= len {
        // Each word's product w·n: its high half is the index, its low half decides.
        let products = x.next_eight_words().map(|w| u64::from(w) * u64::from(n));
        if products
            .iter()
            .fold(true, |all, &m| all & (m as u32 >= threshold))
        {
            for (sum, m) in sums.iter_mut().zip(products) {
                *sum += values[(m >> 32) as usize];
            }
            k += 8;
        } else {
            (sums, k) = with_rejection(values, n, threshold, x, sums, k, products);
        }
    }
    while k < len {
        sums = add_at(sums, k, values[draw(x, n, threshold) as usize]);
        k += 1;
    }
    let [a, b, c, d, e, f, g, h] = sums;
    ((a + b) + (c + d)) + ((e + f) + (g + h))
}

/// Positions k.. after a group of eight words with one rejected: its accepted words fill
/// the next positions in order, then words are drawn one at a time up to the next multiple
/// of eight (k + 8 at most, which the caller has room for).
#[cold]
#[inline(never)]
fn with_rejection(
    values: &[f64],
    n: u32,
    threshold: u32,
    x: &mut Xoshiro256PlusPlus,
    mut sums: [f64; 8],
    mut k: usize,
    products: [u64; 8],
) -> ([f64; 8], usize) {
    for m in products.into_iter().filter(|&m| m as u32 >= threshold) {
        sums = add_at(sums, k, values[(m >> 32) as usize]);
        k += 1;
    }
    while !k.is_multiple_of(8) {
        sums = add_at(sums, k, values[draw(x, n, threshold) as usize]);
        k += 1;
    }
    (sums, k)
}

/// `sums` with `v` added to the sum of position `k`, each sum named by a constant so that
/// the sums can stay in registers.
#[inline(always)]
fn add_at(mut sums: [f64; 8], k: usize, v: f64) -> [f64; 8] {
    match k % 8 {
        0 => sums[0] += v,
        1 => sums[1] += v,
        2 => sums[2] += v,
        3 => sums[3] += v,
        4 => sums[4] += v,
        5 => sums[5] += v,
        6 => sums[6] += v,
        _ => sums[7] += v,
    }
    sums
}

/// One index in [0, n): words until one is accepted ([`super::uniform::below`] when
/// `threshold` is 2³² mod n).
#[inline]
fn draw(x: &mut Xoshiro256PlusPlus, n: u32, threshold: u32) -> u32 {
    loop {
        let m = u64::from(x.next_word()) * u64::from(n);
        if m as u32 >= threshold {
            return (m >> 32) as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Generator, Stream, stream_of};
    use crate::uniform::below;

    fn xoshiro(label: &str) -> Xoshiro256PlusPlus {
        match stream_of(Generator::Xoshiro256PlusPlus, 7, label) {
            Stream::Xoshiro(x) => x,
            Stream::ChaCha8(_) => unreachable!(),
        }
    }

    /// The definition, one position at a time: each index drawn with `next`, added to the
    /// sum of its position mod 8, the sums then added pairwise.
    fn one_at_a_time(values: &[f64], mut next: impl FnMut() -> u32) -> f64 {
        let mut sums = [ZERO_SUM; 8];
        for k in 0..values.len() {
            sums[k % 8] += values[next() as usize];
        }
        let [a, b, c, d, e, f, g, h] = sums;
        ((a + b) + (c + d)) + ((e + f) + (g + h))
    }

    fn values(len: usize) -> Vec<f64> {
        (0..len).map(|i| (i as f64 * 0.37).sin() * 1e3).collect()
    }

    #[test]
    fn a_resampled_sum_is_that_of_one_unbiased_draw_at_a_time() {
        for len in [1, 2, 7, 8, 9, 23, 64, 1_003, 10_000] {
            for skip in [0, 1] {
                let values = values(len);
                let mut a = xoshiro(&format!("{len}"));
                for _ in 0..skip {
                    a.next_word();
                }
                let mut b = a.clone();
                let expected = one_at_a_time(&values, || below(&mut b, len as u32));
                let got = resampled_sum(&values, &mut a);
                assert_eq!(got.to_bits(), expected.to_bits(), "len {len} skip {skip}");
                assert_eq!(
                    a.next_word(),
                    b.next_word(),
                    "both streams left at one word"
                );
            }
        }
    }

    #[test]
    fn rejected_words_leave_the_accepted_ones_at_the_next_positions() {
        // A threshold of 2³¹ rejects about every other word, so most groups of eight have
        // one rejected; 3·2³⁰ three words in four.
        for threshold in [1 << 31, 3 << 30] {
            for len in [8, 9, 16, 23, 1_003] {
                for skip in [0, 1] {
                    let values = values(len);
                    let n = len as u32 - u32::from(len > 8);
                    let mut a = xoshiro(&format!("{threshold}/{len}"));
                    for _ in 0..skip {
                        a.next_word();
                    }
                    let mut b = a.clone();
                    let expected = one_at_a_time(&values, || draw(&mut b, n, threshold));
                    let got = sum_below(&values, n, threshold, &mut a);
                    assert_eq!(
                        got.to_bits(),
                        expected.to_bits(),
                        "{threshold} {len} {skip}"
                    );
                    assert_eq!(a.next_word(), b.next_word());
                }
            }
        }
    }

    #[test]
    fn draw_with_the_unbiased_threshold_is_below() {
        let mut a = xoshiro("draw");
        let mut b = a.clone();
        for n in [1, 3, 10_000, 3 << 30, u32::MAX] {
            for _ in 0..1_000 {
                assert_eq!(draw(&mut a, n, n.wrapping_neg() % n), below(&mut b, n));
            }
        }
    }
}
