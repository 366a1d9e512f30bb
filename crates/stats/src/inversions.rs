//! Counting and listing inversions by merge sort in O(n log n) (+ O(k) for k listed pairs):
//! the step that makes Mann–Kendall's S and Theil–Sen's slope selection near-linear.
//!
//! Knight (1966, JASA 61:436, "A computer method for calculating Kendall's tau with ungrouped
//! data") counts the discordant pairs of a sequence while merge-sorting it; the same merge
//! lists them when asked (Cole, Salowe, Steiger & Szemerédi 1989 use it for slope selection).

use std::cmp::Ordering;

/// Below this length a block is insertion-sorted: each shift is one inversion.
const INSERTION_MAX: usize = 24;

/// Sorts `keys` ascending by `cmp` and returns the number of pairs i < j that it had
/// inverted, i.e. with `cmp(keys[i], keys[j]) == Greater` for `strict`, or not `Less`
/// (greater or equal) otherwise. `scratch` is resized to `keys.len()`.
pub(crate) fn sort_counting<T: Copy>(
    keys: &mut [T],
    scratch: &mut Vec<T>,
    strict: bool,
    cmp: &impl Fn(&T, &T) -> Ordering,
) -> u64 {
    let mut count = 0u64;
    sort_with(keys, scratch, strict, cmp, &mut |earlier: &[T], _| {
        count += earlier.len() as u64
    });
    count
}

/// As [`sort_counting`], calling `pair(earlier, later)` for every inverted pair.
pub(crate) fn sort_visiting<T: Copy>(
    keys: &mut [T],
    scratch: &mut Vec<T>,
    strict: bool,
    cmp: &impl Fn(&T, &T) -> Ordering,
    pair: &mut impl FnMut(T, T),
) {
    sort_with(keys, scratch, strict, cmp, &mut |earlier: &[T], later| {
        for &e in earlier {
            pair(e, later);
        }
    });
}

/// The merge sort behind both: `inverted(earlier, later)` receives every element inverted
/// with `later` at once, so counting costs O(1) per merge step, not one call per pair.
fn sort_with<T: Copy>(
    keys: &mut [T],
    scratch: &mut Vec<T>,
    strict: bool,
    cmp: &impl Fn(&T, &T) -> Ordering,
    pair: &mut impl FnMut(&[T], T),
) {
    if keys.len() < 2 {
        return;
    }
    scratch.clear();
    scratch.extend_from_slice(keys);
    merge_sort(keys, &mut scratch[..], strict, cmp, pair);
}

/// Whether `earlier` before `later` is an inversion.
fn inverted<T>(earlier: &T, later: &T, strict: bool, cmp: &impl Fn(&T, &T) -> Ordering) -> bool {
    match cmp(earlier, later) {
        Ordering::Greater => true,
        Ordering::Equal => !strict,
        Ordering::Less => false,
    }
}

fn merge_sort<T: Copy>(
    keys: &mut [T],
    scratch: &mut [T],
    strict: bool,
    cmp: &impl Fn(&T, &T) -> Ordering,
    pair: &mut impl FnMut(&[T], T),
) {
    let n = keys.len();
    if n <= INSERTION_MAX {
        insertion_sort(keys, strict, cmp, pair);
        return;
    }
    let mid = n / 2;
    {
        let (left, right) = keys.split_at_mut(mid);
        let (s_left, s_right) = scratch.split_at_mut(mid);
        merge_sort(left, s_left, strict, cmp, pair);
        merge_sort(right, s_right, strict, cmp, pair);
    }
    scratch.copy_from_slice(keys);
    let (left, right) = scratch.split_at(mid);
    let (mut a, mut b) = (0, 0);
    for slot in keys.iter_mut() {
        let take_right =
            b < right.len() && (a == left.len() || inverted(&left[a], &right[b], strict, cmp));
        if take_right {
            // Every element still waiting on the left is inverted with right[b]: the left
            // half is sorted, so all of them compare like left[a] or beyond it.
            pair(&left[a..], right[b]);
            *slot = right[b];
            b += 1;
        } else {
            *slot = left[a];
            a += 1;
        }
    }
}

fn insertion_sort<T: Copy>(
    keys: &mut [T],
    strict: bool,
    cmp: &impl Fn(&T, &T) -> Ordering,
    pair: &mut impl FnMut(&[T], T),
) {
    for i in 1..keys.len() {
        let key = keys[i];
        let mut j = i;
        while j > 0 && inverted(&keys[j - 1], &key, strict, cmp) {
            pair(&[keys[j - 1]], key);
            keys[j] = keys[j - 1];
            j -= 1;
        }
        keys[j] = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(xs: &[i64], strict: bool) -> u64 {
        let mut c = 0;
        for i in 0..xs.len() {
            for j in i + 1..xs.len() {
                if xs[i] > xs[j] || (!strict && xs[i] == xs[j]) {
                    c += 1;
                }
            }
        }
        c
    }

    #[test]
    fn counts_equal_the_pairwise_definition_with_and_without_ties() {
        let mut state = 7u64;
        for n in [0usize, 1, 2, 5, 24, 25, 60, 333] {
            let xs: Vec<i64> = (0..n)
                .map(|_| (super::super::rng::splitmix64(&mut state) % 17) as i64)
                .collect();
            for strict in [true, false] {
                let mut keys = xs.clone();
                let got = sort_counting(&mut keys, &mut Vec::new(), strict, &i64::cmp);
                assert_eq!(got, naive(&xs, strict), "n = {n}, strict = {strict}");
                assert!(keys.windows(2).all(|w| w[0] <= w[1]));
            }
        }
    }

    #[test]
    fn visits_exactly_the_inverted_pairs() {
        let xs: Vec<(i64, usize)> = [5, 3, 3, 9, 1, 4, 4, 8, 2, 7, 0, 6]
            .iter()
            .copied()
            .cycle()
            .take(40)
            .enumerate()
            .map(|(i, v)| (v, i))
            .collect();
        let mut seen = Vec::new();
        let mut keys = xs.clone();
        sort_visiting(
            &mut keys,
            &mut Vec::new(),
            false,
            &|a, b| a.0.cmp(&b.0),
            &mut |a, b| seen.push((a.1, b.1)),
        );
        seen.sort_unstable();
        let mut want = Vec::new();
        for i in 0..xs.len() {
            for j in i + 1..xs.len() {
                if xs[i].0 >= xs[j].0 {
                    want.push((i, j));
                }
            }
        }
        assert_eq!(seen, want);
    }
}
