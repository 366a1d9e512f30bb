//! How many values of a multiset of runs lie below a pooled rank, for placing the window of
//! `window_runs`: a search over blocks of ranks and a scan within one, instead of a
//! binary search in every picked run at every step of the search over ranks.
//!
//! With the runs' ranks a partition of 0..N, the values of the picked runs below rank r are
//! W(r) = Σ_{ρ < r} w(run of ρ), w the number of times a run was picked. W is known at block
//! boundaries from per-run counts stored there, so the smallest r with W(r) ≥ target lies in
//! the one block found by bisecting the boundaries, and is found by adding w along it.

/// Pooled ranks grouped into blocks, with each run's count of values below every boundary.
pub(super) struct RanksBelow {
    /// Per pooled rank: the run holding it.
    run_of: Vec<u32>,
    /// Per boundary b (rank min(b·block, N), the last at N), per run: its values below it.
    below: Vec<u32>,
    runs: usize,
    block: usize,
    /// Per run: the times the current multiset holds it.
    weight: Vec<u32>,
}

impl RanksBelow {
    /// The index of runs whose ranks are `ranks[off..off + len]` for each span, covering
    /// 0..`total` once.
    pub(super) fn new(ranks: &[u32], spans: &[(u32, u32)], total: usize) -> RanksBelow {
        let runs = spans.len().max(1);
        // About one stored count per 32 ranks, and a scan of at most `block` ranks.
        let block = (32 * runs).next_power_of_two().max(256);
        let mut run_of = vec![0u32; total];
        for (j, &(off, len)) in spans.iter().enumerate() {
            for &r in &ranks[off as usize..(off + len) as usize] {
                run_of[r as usize] = j as u32;
            }
        }
        let mut counts = vec![0u32; runs];
        let mut below = Vec::with_capacity((total.div_ceil(block) + 1) * runs);
        for (r, &j) in run_of.iter().enumerate() {
            if r % block == 0 {
                below.extend_from_slice(&counts);
            }
            counts[j as usize] += 1;
        }
        below.extend_from_slice(&counts);
        RanksBelow {
            run_of,
            below,
            runs,
            block,
            weight: vec![0; runs],
        }
    }

    /// Takes `picked` (run indices, repeats allowed) as the current multiset.
    pub(super) fn set(&mut self, picked: &[usize]) {
        self.weight.fill(0);
        for &j in picked {
            self.weight[j] += 1;
        }
    }

    /// W at boundary `b`: the values of the `picked` runs below it.
    fn at_boundary(&self, b: usize, picked: &[usize]) -> usize {
        let row = &self.below[b * self.runs..(b + 1) * self.runs];
        picked.iter().map(|&j| row[j] as usize).sum()
    }

    /// The smallest pooled rank with at least `target` values of the `picked` runs (the
    /// multiset last [`Self::set`]) below it; N when there is none.
    pub(super) fn rank_with_below(&self, picked: &[usize], target: usize) -> u32 {
        let total = self.run_of.len();
        let boundaries = self.below.len() / self.runs;
        let (mut lo, mut hi) = (0, boundaries);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.at_boundary(mid, picked) >= target {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        if lo == boundaries {
            return total as u32;
        }
        if lo == 0 {
            return 0;
        }
        let start = (lo - 1) * self.block;
        let mut sum = self.at_boundary(lo - 1, picked);
        for (r, &j) in self.run_of[start..].iter().enumerate() {
            sum += self.weight[j as usize] as usize;
            if sum >= target {
                return (start + r + 1) as u32;
            }
        }
        total as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rank_found_is_the_smallest_with_the_target_below_it() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        // 7 runs of unequal lengths, their ranks a shuffled partition of 0..total.
        let lens = [900usize, 1, 2_500, 40, 1_300, 700, 3_000];
        let total: usize = lens.iter().sum();
        let mut perm: Vec<u32> = (0..total as u32).collect();
        for i in (1..total).rev() {
            perm.swap(i, next(i + 1));
        }
        let mut spans = Vec::new();
        let mut off = 0u32;
        for &len in &lens {
            perm[off as usize..off as usize + len].sort_unstable();
            spans.push((off, len as u32));
            off += len as u32;
        }
        let mut index = RanksBelow::new(&perm, &spans, total);
        for _ in 0..300 {
            let picked: Vec<usize> = (0..lens.len()).map(|_| next(lens.len())).collect();
            index.set(&picked);
            let below = |r: u32| -> usize {
                let run = |j: usize| &perm[spans[j].0 as usize..][..spans[j].1 as usize];
                picked
                    .iter()
                    .map(|&j| run(j).partition_point(|&x| x < r))
                    .sum()
            };
            let all: usize = picked.iter().map(|&j| lens[j]).sum();
            for target in [0, 1, next(all + 1), next(all + 1), all, all + 1] {
                // The bisection over every rank, each step searching every picked run.
                let (mut lo, mut hi) = (0u32, total as u32);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if below(mid) >= target {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                let want = lo;
                assert_eq!(index.rank_with_below(&picked, target), want, "{target}");
            }
        }
    }
}
