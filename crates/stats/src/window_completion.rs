//! Resamples of [`ClassedRuns`] that its windows do not settle: those whose quantile fell
//! outside the window, completed from what they drew, and those of machines whose window
//! would be too wide, drawn value by value. Either way the order statistics are those of a
//! resample drawn value by value.

use super::{ClassedRuns, Plan, Span, Tally};
use crate::rng::Stream;
use crate::uniform::below;

impl ClassedRuns {
    /// [`Self::draw`] for the machines already picked, drawing every value of their runs:
    /// where their window would hold more than a quarter of the values.
    pub(super) fn draw_every_value(&self, p: f64, rng: &mut Stream) -> (u32, u32, f64) {
        let mut counts = vec![0u32; self.ranks.len()];
        let mut total = 0u64;
        for &m in &self.picked {
            let runs = &self.machines[m as usize];
            for _ in 0..runs.len() {
                let (off, len) = runs[below(rng, runs.len() as u32) as usize];
                for _ in 0..len {
                    let k = if len == 1 { 0 } else { below(rng, len) };
                    counts[self.ranks[(off + k) as usize] as usize] += 1;
                }
                total += u64::from(len);
            }
        }
        counted_order_stats(&counts, total, p)
    }

    /// The order statistics of a resample whose quantile fell outside its window: every
    /// draw of it counted at its rank, those outside the window completed from what was drawn
    /// (see the module's introduction).
    pub(super) fn complete(
        &self,
        plan: &Plan,
        tally: &Tally,
        p: f64,
        rng: &mut Stream,
    ) -> (u32, u32, f64) {
        let width = (plan.b - plan.a) as usize;
        let mut full = vec![0u32; self.ranks.len()];
        for (i, &c) in self.counts[..width].iter().enumerate() {
            full[plan.a as usize + i] += c;
        }
        let mut start = 0;
        for &(m, end) in &self.outside.ends {
            let ranks = &plan.classes(m).ranks;
            for &at in &self.outside.spilled[start..end] {
                full[ranks[at as usize] as usize] += 1;
            }
            start = end;
        }
        for &(m, class, copies, below_window) in &self.outside.classes {
            let (len, s, _) = plan.classes(m).outside[class as usize];
            let runs = self.runs_of_class(m, (plan.a, plan.b), (len, s));
            let drawn = ClassDraws {
                copies,
                below: below_window,
                below_values: s,
            };
            drawn.complete(&self.ranks, &runs, &mut full, rng);
        }
        counted_order_stats(&full, tally.total, p)
    }

    /// Machine `m`'s runs of `len` values, `below` of them under the window [a, b) and none in it.
    fn runs_of_class(&self, m: u32, (a, b): (u32, u32), (len, below): (u32, u32)) -> Vec<Span> {
        let in_class = |&(off, l): &Span| {
            let run = &self.ranks[off as usize..(off + l) as usize];
            let (s, t) = (
                run.partition_point(|&r| r < a),
                run.partition_point(|&r| r < b),
            );
            l == len && s == below as usize && t == s
        };
        self.machines[m as usize]
            .iter()
            .copied()
            .filter(in_class)
            .collect()
    }
}

/// What one class of a machine copy's runs outside the window drew: copies of its runs, and
/// draws below the window among their values.
struct ClassDraws {
    copies: u64,
    below: u64,
    /// Values below the window in each run of the class.
    below_values: u32,
}

impl ClassDraws {
    /// Counts at their ranks into `full` the draws of `copies` runs of `runs` (the class, its
    /// values ascending within each run) given that `below` of them lay below the window:
    /// which draws those were is a uniform choice among the draw slots (selection sampling,
    /// Knuth, TAOCP vol. 2, §3.4.2, Algorithm S), each copy a uniform run of the class, each
    /// draw a uniform value of the run below the window or above it.
    fn complete(&self, ranks: &[u32], runs: &[Span], full: &mut [u32], rng: &mut Stream) {
        let s = self.below_values;
        let Some(&(_, len)) = runs.first() else {
            return;
        };
        let (mut slots, mut below_left) = (self.copies * u64::from(len), self.below);
        for _ in 0..self.copies {
            let (off, _) = runs[below(rng, runs.len() as u32) as usize];
            let run = &ranks[off as usize..(off + len) as usize];
            for _ in 0..len {
                let is_below = u64::from(below(rng, slots as u32)) < below_left;
                slots -= 1;
                let at = if is_below {
                    below_left -= 1;
                    below(rng, s)
                } else {
                    s + below(rng, len - s)
                };
                full[run[at as usize] as usize] += 1;
            }
        }
    }
}

/// Pooled ranks of the type-7 order statistics at `p` of a resample of `total` values counted
/// at their ranks in `counts`, and the fraction between them.
fn counted_order_stats(counts: &[u32], total: u64, p: f64) -> (u32, u32, f64) {
    let h = total.saturating_sub(1) as f64 * p;
    let k = h.floor() as u64;
    let next = (k + 1).min(total.saturating_sub(1));
    let (mut cum, mut x) = (0u64, None);
    for (i, &c) in counts.iter().enumerate() {
        cum += u64::from(c);
        if x.is_none() && cum > k {
            x = Some(i as u32);
        }
        if cum > next {
            return (x.unwrap_or(i as u32), i as u32, h - k as f64);
        }
    }
    let last = counts.len().saturating_sub(1) as u32;
    (x.unwrap_or(last), last, h - k as f64)
}
