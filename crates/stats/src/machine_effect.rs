//! Whether machines differ beyond the spread of the runs each ran: the share of variance that
//! lies between machines and a seeded permutation test of the runs' medians across machines.
//!
//! Each run is summarised by its median (its iterations' spread is the runs' business, not the
//! machines'). The size of a machine effect is ICC(1) of the run medians grouped by machine,
//! from one-way random-effects ANOVA (Shrout & Fleiss 1979, Psych. Bull. 86:420; n0 for
//! unequal groups from Snedecor & Cochran 1989 §13.3): the estimated share of the run medians'
//! variance that lies between machines. Whether there is one at all is a permutation test
//! (Good 2005, "Permutation, Parametric and Bootstrap Tests of Hypotheses", ch. 3; Ernst 2004,
//! "Permutation methods: a basis for exact inference", Statistical Science 19(4):676): under
//! no machine effect every split of the runs among the machines, keeping their sizes, is as
//! likely as the one observed, so the share of random splits whose Kruskal–Wallis H (Kruskal &
//! Wallis 1952, on ranks: one slow run cannot make a machine look slow) is at least the
//! observed one is the p-value, counted as (1 + hits)/(1 + permutations) so that it is never
//! zero (Phipson & Smyth 2010, "Permutation p-values should never be zero", SAGMB 9(1)).
//! It needs no normality and is exact in level for any number of runs, which matters with the
//! handful of runs a node may hold.

use super::rng::Stream;
use statrs::function::gamma::ln_gamma;
use std::collections::BTreeMap;

use super::design::design_effect;
use super::kruskal::{kruskal_wallis, mid_ranks};
use super::uniform::below;
pub use lab_basis::MachineEffect;
use rand::RngCore;

/// The machine effect of run medians `groups` (one group per machine), with `permutations`
/// random splits drawn from `rng`.
///
/// `None` with fewer than two machines with a run, no machine with two runs, a value that is
/// not finite, or every run median tied.
pub fn machine_effect(
    groups: &[Vec<f64>],
    permutations: usize,
    rng: &mut Stream,
) -> Option<MachineEffect> {
    let mut groups: Vec<Vec<f64>> = groups.iter().filter(|g| !g.is_empty()).cloned().collect();
    // The largest machine first: a split leaves the first group's runs unshuffled.
    groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
    let icc = design_effect(&groups)?.icc;
    let h = kruskal_wallis(&groups)?.h;
    let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
    let pooled: Vec<f64> = groups.iter().flatten().copied().collect();
    let ranks = mid_ranks(&pooled);
    let observed = rank_statistic(&ranks, &sizes);
    // Equal statistics up to rounding count as reached: the sums of ranks are exact in f64.
    let reached = observed - 1e-9 * observed.abs();
    // The same words either way; xoshiro256++'s are taken inline, from a copy that can live
    // in registers, then put back.
    let hits = match rng {
        Stream::Xoshiro(x) => {
            let mut words = x.clone();
            let hits = count_reached(&ranks, &sizes, permutations, reached, &mut words);
            *x = words;
            hits
        }
        _ => count_reached(&ranks, &sizes, permutations, reached, rng),
    };
    Some(MachineEffect {
        machines: groups.len(),
        runs: pooled.len(),
        icc,
        between_share: icc.max(0.0),
        h,
        p_value: (1 + hits) as f64 / (1 + permutations) as f64,
        permutations,
        smallest_p: smallest_p(&sizes).max(1.0 / (1 + permutations) as f64),
    })
}

/// Σ R_g²/n_g over the groups, which orders the splits of fixed ranks as H does (H is an
/// increasing linear function of it for given N and ties: Kruskal & Wallis 1952, eq. 1.1).
fn rank_statistic(ranks: &[f64], sizes: &[usize]) -> f64 {
    let mut offset = 0;
    let mut sums = Vec::with_capacity(sizes.len());
    for &n in sizes {
        sums.push(ranks[offset..offset + n].iter().sum());
        offset += n;
    }
    statistic_of_sums(&sums, sizes)
}

/// Σ R_g²/n_g of the groups' rank sums `sums`.
fn statistic_of_sums(sums: &[f64], sizes: &[usize]) -> f64 {
    sums.iter()
        .zip(sizes)
        .fold(0.0, |sum, (&r, &n)| sum + r * r / n as f64)
}

/// How many of `permutations` successive shuffles of `ranks` (each shuffling the one before)
/// give a [`rank_statistic`] of at least `reached`. Ranks are multiples of ½, so they are
/// shuffled as whole numbers of halves, whose sums are exact: the same sums and statistics.
fn count_reached<R: RngCore>(
    ranks: &[f64],
    sizes: &[usize],
    permutations: usize,
    reached: f64,
    rng: &mut R,
) -> usize {
    let mut halves: Vec<u64> = ranks.iter().map(|&r| (2.0 * r) as u64).collect();
    let total = halves.iter().sum();
    let mut sums = vec![0.0; sizes.len()];
    (0..permutations)
        .filter(|_| {
            shuffle_summing(&mut halves, sizes, total, &mut sums, rng);
            statistic_of_sums(&sums, sizes) >= reached
        })
        .count()
}

/// A uniform random split of `xs` into groups of `sizes`, in order: Fisher–Yates (Knuth, TAOCP
/// vol. 2, §3.4.2, Algorithm P) with unbiased draws over the positions past the first group,
/// from the last down, which then hold a uniform draw without replacement of the values
/// whatever their order before; the first group holds the rest, its order of no matter. Each
/// group's sum is taken as the shuffle settles its positions, the first group's is what the
/// others leave of `total`, all put in `sums` halved: the sums of [`rank_statistic`] without a
/// second pass, and none of the draws that would only reorder the first group.
fn shuffle_summing<R: RngCore>(
    xs: &mut [u64],
    sizes: &[usize],
    total: u64,
    sums: &mut [f64],
    rng: &mut R,
) {
    let mut group = sizes.len() - 1;
    let mut start = xs.len() - sizes[group];
    let (mut sum, mut settled) = (0u64, 0u64);
    for i in (sizes[0]..xs.len()).rev() {
        let j = below(rng, i as u32 + 1) as usize;
        xs.swap(i, j);
        sum += xs[i];
        if i == start {
            sums[group] = sum as f64 / 2.0;
            settled += sum;
            sum = 0;
            group -= 1;
            start -= sizes[group];
        }
    }
    sums[0] = (total - settled) as f64 / 2.0;
}

/// 1 over the number of distinct splits of N runs into groups of these sizes: N!/Π n_g!
/// splits, of which those that only swap whole groups of equal size give the same statistic.
fn smallest_p(sizes: &[usize]) -> f64 {
    let n: usize = sizes.iter().sum();
    let ln_fact = |k: usize| ln_gamma(k as f64 + 1.0);
    let mut same_size: BTreeMap<usize, usize> = BTreeMap::new();
    for &s in sizes {
        *same_size.entry(s).or_default() += 1;
    }
    let ln_splits = ln_fact(n)
        - sizes.iter().map(|&s| ln_fact(s)).sum::<f64>()
        - same_size.values().map(|&c| ln_fact(c)).sum::<f64>();
    (-ln_splits).exp()
}

#[cfg(test)]
mod tests {
    use super::super::rng::stream;
    use super::*;

    #[test]
    fn smallest_p_counts_the_distinct_splits() {
        // 2 machines × 3 runs: C(6,3) = 20 splits, 10 once the two machines are swapped.
        assert!((smallest_p(&[3, 3]) - 0.1).abs() < 1e-12);
        // 3 + 4 runs: C(7,3) = 35, no swap possible.
        assert!((smallest_p(&[3, 4]) - 1.0 / 35.0).abs() < 1e-12);
        // 3 × 3 runs: 9!/(3!³·3!) = 280.
        assert!((smallest_p(&[3, 3, 3]) - 1.0 / 280.0).abs() < 1e-12);
    }

    #[test]
    fn separated_machines_reach_the_exact_p_value() {
        // Machines at 1–4 and 11–14: H is the largest of all C(8,4)/2 = 35 distinct splits,
        // so the exact p-value is 1/35 = 0.0286; 20,000 permutations land within 0.004.
        let groups = vec![vec![1.0, 2.0, 3.0, 4.0], vec![11.0, 12.0, 13.0, 14.0]];
        let e = machine_effect(&groups, 20_000, &mut stream(1, "perm")).unwrap();
        assert!((e.p_value - 1.0 / 35.0).abs() < 0.004, "{e:?}");
        assert!((e.smallest_p - 1.0 / 35.0).abs() < 1e-12);
        assert_eq!((e.machines, e.runs, e.permutations), (2, 8, 20_000));
        // ANOVA by hand: group means 2.5 and 12.5, MSB = 4·(5² + 5²) = 200, MSW = 10/6 = 5/3,
        // n0 = 4: ICC = (200 − 5/3)/(200 + 3·5/3) = 0.96748.
        assert!((e.icc - (200.0 - 5.0 / 3.0) / 205.0).abs() < 1e-12, "{e:?}");
        assert_eq!(e.between_share, e.icc);
        // scipy.stats.kruskal([1,2,3,4],[11,12,13,14]).statistic = 5.333…
        assert!((e.h - 16.0 / 3.0).abs() < 1e-12, "{e:?}");
    }

    #[test]
    fn interleaved_machines_show_no_effect() {
        // Alternating ranks: H is small, most splits reach it; ICC negative, share 0.
        let groups = vec![vec![1.0, 3.0, 5.0, 7.0], vec![2.0, 4.0, 6.0, 8.0]];
        let e = machine_effect(&groups, 5_000, &mut stream(2, "perm")).unwrap();
        // Exact: H grows with |R₁ − 18|, R₁ the first machine's rank sum (16 here). Of the 70
        // splits, 7 + 8 + 7 have R₁ in 17..=19, so P(|R₁ − 18| ≥ 2) = 48/70 = 0.6857.
        assert!((e.p_value - 48.0 / 70.0).abs() < 0.03, "{e:?}");
        assert!(e.icc < 0.0 && e.between_share == 0.0, "{e:?}");
    }

    /// Fisher–Yates over the ranks themselves past the first group, and their statistic
    /// summed after.
    fn shuffle_then_sum(ranks: &mut [f64], sizes: &[usize], rng: &mut Stream) -> f64 {
        for i in (sizes[0]..ranks.len()).rev() {
            let j = below(rng, i as u32 + 1) as usize;
            ranks.swap(i, j);
        }
        rank_statistic(ranks, sizes)
    }

    #[test]
    fn groups_summed_while_shuffling_reach_what_summing_after_reaches() {
        // Ties (mid-ranks of ½), groups of one at either end, and one group of everything
        // but one: every permutation's statistic and the words taken are the same.
        let values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0];
        for sizes in [
            vec![1, 1, 9],
            vec![9, 1, 1],
            vec![4, 3, 4],
            vec![10, 1],
            vec![1, 10],
        ] {
            let mut ranks = mid_ranks(&values);
            let mut halves: Vec<u64> = ranks.iter().map(|&r| (2.0 * r) as u64).collect();
            let total = halves.iter().sum();
            let (mut rng, mut again) = (stream(3, "sums"), stream(3, "sums"));
            let mut sums = vec![0.0; sizes.len()];
            for _ in 0..200 {
                shuffle_summing(&mut halves, &sizes, total, &mut sums, &mut rng);
                let want = shuffle_then_sum(&mut ranks, &sizes, &mut again);
                assert_eq!(statistic_of_sums(&sums, &sizes), want, "{sizes:?}");
            }
            assert_eq!(rng.next_u32(), again.next_u32());
        }
    }

    #[test]
    fn splits_that_leave_the_first_group_unshuffled_are_uniform() {
        // Ranks 1 to 5 (halves 2 to 10) split 3 + 2: each of the C(5,2) = 10 second groups
        // is as likely as any other, whatever the order the split before left.
        let sizes = [3, 2];
        let mut halves: Vec<u64> = vec![2, 4, 6, 8, 10];
        let mut sums = vec![0.0; 2];
        let mut seen = std::collections::BTreeMap::<Vec<u64>, usize>::new();
        let mut rng = stream(4, "uniform");
        let draws = 50_000;
        for _ in 0..draws {
            shuffle_summing(&mut halves, &sizes, 30, &mut sums, &mut rng);
            let mut second = halves[3..].to_vec();
            second.sort_unstable();
            assert_eq!(sums[1], second.iter().sum::<u64>() as f64 / 2.0);
            assert_eq!(sums[0] + sums[1], 15.0);
            *seen.entry(second).or_default() += 1;
        }
        assert_eq!(seen.len(), 10);
        // Each share is 1/10 within five standard errors (√(0.09/50,000) = 0.00134).
        for (second, n) in seen {
            let share = n as f64 / draws as f64;
            assert!((share - 0.1).abs() < 0.0067, "{second:?}: {share}");
        }
    }

    #[test]
    fn the_same_stream_gives_the_same_p_value_and_bad_input_none() {
        let groups = vec![vec![1.0, 2.5, 2.0], vec![2.2, 3.0, 4.0], vec![0.5, 1.5]];
        let a = machine_effect(&groups, 999, &mut stream(7, "same")).unwrap();
        let b = machine_effect(&groups, 999, &mut stream(7, "same")).unwrap();
        assert_eq!(a, b);
        let mut rng = stream(0, "edge");
        assert!(machine_effect(&[vec![1.0, 2.0]], 10, &mut rng).is_none());
        assert!(machine_effect(&[vec![1.0], vec![2.0]], 10, &mut rng).is_none());
        assert!(machine_effect(&[vec![1.0, 1.0], vec![1.0, 1.0]], 10, &mut rng).is_none());
        assert!(machine_effect(&[vec![1.0, f64::NAN], vec![2.0, 3.0]], 10, &mut rng).is_none());
    }
}
