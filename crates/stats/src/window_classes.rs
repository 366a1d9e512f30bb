//! Quantiles of two- and three-stage bootstrap resamples of many short runs (a few values
//! each), in time that grows with the values near the quantile rather than with all of them.
//!
//! A resample picks machines with replacement, then in each picked machine as many runs as it
//! has with replacement, then in each picked run as many values as it has with replacement
//! (Davison & Hinkley 1997, "Bootstrap Methods and their Application", §3.8; one machine is
//! the two-stage resample). Split the pooled ranks into [0, a), the window [a, b) and [b, N).
//! A run with no value in the window is, for the quantile, only its length L and the number s
//! of its values below a: each copy of it adds L draws, each below a with probability s / L.
//! So the runs of a machine fall into classes by (L, s), plus the runs with a value in the
//! window. Given the picked machines, the copies per class of a picked machine are a
//! multinomial over the classes' sizes (drawn as successive binomials, Devroye 1986,
//! "Non-Uniform Random Variate Generation", §XI.1.4); m copies of class (L, s) add
//! Binomial(m·L, s / L) draws below a; only the copies of runs in the window are drawn value
//! by value. With X draws below a in all, the type-7 order statistics k and k + 1 of the
//! resample are order statistics k − X and k − X + 1 of the window's draws: the same bootstrap
//! distribution as drawing every value.
//!
//! The window depends only on which machines were picked (as a multiset): its edges are the
//! ranks below which the expected draws fall short of the quantile's rank, and pass it, by
//! four standard deviations of the draws below less p times the draws in all (placed by the
//! expected draws, not by ranks, so that ties and gaps in a machine's values cannot narrow
//! it on one side). When the order statistics fall
//! outside it (about once in 16,000 resamples) the resample is completed, not drawn again:
//! given what was drawn, each class's draws below the window are a uniform choice of its
//! copies' draw slots (Knuth, TAOCP vol. 2, §3.4.2, Algorithm S), each copy a uniform run of
//! its class and each draw a uniform value of its run below or above the window, and the
//! draws outside the window of the runs in it are kept as they are drawn. So the window's
//! width decides the cost, never the distribution. Where the window would hold more than a
//! quarter of the values, the picked machines' runs are drawn value by value. Each multiset's
//! window and classes are built once, when first picked.

use super::rng::Stream;
use super::uniform::below;
use super::window::binomial;
use rand::RngCore;
use std::collections::BTreeMap;

/// Standard deviations of the draws below the quantile, less their expected share, that the
/// window spans on each side: wide enough that completing a missed resample costs a few
/// draws per resample on average, narrow enough that the draws in the window stay few.
const HALF_WIDTH_SDS: f64 = 4.0;

/// From this many values of a cell on, its quantiles are drawn through windows: below, a
/// window would hold most of the values.
pub(crate) const CLASSED_MIN_VALUES: usize = 1_000;

/// Most machines for which windows are kept: each multiset of picked machines has its own
/// (10 for 3 machines, 462 for 6).
const MAX_MACHINES: usize = 6;

/// A run's span into the ranks: (offset, len).
type Span = (u32, u32);

/// The runs of a cell, machine by machine, for windowed resamples of their quantiles.
pub(super) struct ClassedRuns {
    /// Per value, grouped by run, each run's ascending: its rank in the pooled sorted data.
    ranks: Vec<u32>,
    /// Per machine: its runs' spans into `ranks`.
    machines: Vec<Vec<Span>>,
    /// Per machine: its values' pooled ranks, ascending.
    sorted: Vec<Vec<u32>>,
    /// The windows built so far, by multiset of picked machines (see [`multiset_key`]) and
    /// quantile.
    plans: BTreeMap<(u64, u64), Option<Plan>>,
    /// Draws per rank inside the window of the resample being drawn, then [`SPARE_SLOTS`]
    /// slots for the draws outside it; left zeroed.
    counts: Vec<u32>,
    /// The picked machines of the resample being drawn (reused).
    picked: Vec<u32>,
    /// The same, sorted: the multiset their window is built for (reused).
    key: Vec<u32>,
    /// What the resample being drawn drew outside the window, for completing it on a miss.
    outside: Outside,
    /// Standard deviations the windows span on each side ([`HALF_WIDTH_SDS`]).
    half_width_sds: f64,
}

/// The draws of one resample outside its window, kept so that a resample whose quantile falls
/// outside the window can be completed instead of drawn again.
struct Outside {
    /// Per picked machine copy and class of its runs outside the window, drawn at least
    /// once: (machine, class index, copies, draws below the window).
    classes: Vec<(u32, u32, u64, u64)>,
    /// Indices into [`Classes::codes`] of the draws outside the window of runs in it,
    /// written at every draw and kept where the draw lay outside: room for every draw of
    /// a resample.
    spilled: Vec<u32>,
    /// Per picked machine copy: its machine and the end of its draws in `spilled`.
    ends: Vec<(u32, usize)>,
}

/// One window and the classes of the machines it was built for.
struct Plan {
    a: u32,
    b: u32,
    /// Per machine (by index, `None` where not picked in this multiset).
    machines: Vec<Option<Classes>>,
}

impl Plan {
    /// The classes of machine `m`, one of those the plan was built for.
    fn classes(&self, m: u32) -> &Classes {
        self.machines[m as usize]
            .as_ref()
            .expect("a plan holds the classes of every machine it was built for")
    }
}

/// A machine's runs for one window.
struct Classes {
    /// Runs with no value in the window: (len, values below it, how many such runs).
    outside: Vec<(u32, u32, u32)>,
    /// Runs with a value in the window: their spans into `codes`.
    inside: Vec<Span>,
    /// Per value of the runs in `inside`, in their order: its rank less `a` inside the
    /// window [a, b), `width` below it and `width + 1` above it. A draw is then one look
    /// into the values of the runs in the window, not into the ranks of every run.
    codes: Vec<u32>,
    /// Per value of the runs in `inside`, in their order: its pooled rank.
    ranks: Vec<u32>,
    /// The window's width, b − a.
    width: u32,
}

/// Slots past the window's counts that the draws outside it are counted in, in turn.
const SPARE_SLOTS: u32 = 8;

/// What one resample drew: values in all, values below the window.
#[derive(Default)]
struct Tally {
    total: u64,
    below: u64,
}

impl ClassedRuns {
    /// `ranks` holds each value's pooled rank grouped by run, `machines` each machine's runs
    /// as spans into it; `None` with more than [`MAX_MACHINES`] machines or no value.
    pub(super) fn new(ranks: &[u32], machines: &[Vec<Span>]) -> Option<ClassedRuns> {
        if machines.is_empty() || machines.len() > MAX_MACHINES || ranks.is_empty() {
            return None;
        }
        let mut ranks = ranks.to_vec();
        let mut sorted = Vec::with_capacity(machines.len());
        for runs in machines {
            let mut mine = Vec::new();
            for &(off, len) in runs {
                let run = &mut ranks[off as usize..(off + len) as usize];
                run.sort_unstable();
                mine.extend_from_slice(run);
            }
            mine.sort_unstable();
            sorted.push(mine);
        }
        let most_draws = machines
            .iter()
            .map(|runs| {
                let longest = runs.iter().map(|&(_, len)| len as usize).max().unwrap_or(0);
                runs.len() * longest
            })
            .max()
            .unwrap_or(0)
            * machines.len();
        Some(ClassedRuns {
            counts: vec![0; ranks.len() + SPARE_SLOTS as usize],
            outside: Outside {
                classes: Vec::new(),
                spilled: vec![0; most_draws],
                ends: Vec::with_capacity(machines.len()),
            },
            ranks,
            machines: machines.to_vec(),
            sorted,
            plans: BTreeMap::new(),
            half_width_sds: HALF_WIDTH_SDS,
            picked: Vec::with_capacity(machines.len()),
            key: Vec::with_capacity(machines.len()),
        })
    }

    /// Pooled ranks of the type-7 order statistics at `p` (k and k + 1, 0-based, the latter
    /// clamped) and the fraction between them, of one resample.
    pub(super) fn draw(&mut self, p: f64, rng: &mut Stream) -> (u32, u32, f64) {
        self.pick_machines(rng);
        let key = (multiset_key(&self.key), p.to_bits());
        if !self.plans.contains_key(&key) {
            let plan = self.plan(&self.key, p);
            self.plans.insert(key, plan);
        }
        let Some(plan) = self.plans.get(&key).and_then(Option::as_ref) else {
            return self.draw_every_value(p, rng);
        };
        let width = (plan.b - plan.a) as usize;
        let counts = &mut self.counts[..width + SPARE_SLOTS as usize];
        let outside = &mut self.outside;
        outside.classes.clear();
        outside.ends.clear();
        let mut tally = Tally::default();
        for &m in &self.picked {
            let classes = plan.classes(m);
            let n_runs = self.machines[m as usize].len() as u64;
            draw_machine(m, classes, n_runs, counts, outside, &mut tally, rng);
        }
        let drawn = match order_stats(&counts[..width], &tally, p) {
            Some((i, j, f)) => (plan.a + i, plan.a + j, f),
            None => self.complete(plan, &tally, p, rng),
        };
        self.counts[..width + SPARE_SLOTS as usize].fill(0);
        drawn
    }

    /// Draws the machines of one resample into `picked`, and their multiset into `key`.
    fn pick_machines(&mut self, rng: &mut Stream) {
        let n_machines = self.machines.len() as u32;
        self.picked.clear();
        for _ in 0..n_machines {
            // One machine is always the one picked: no draw needed.
            let m = if n_machines == 1 {
                0
            } else {
                below(rng, n_machines)
            };
            self.picked.push(m);
        }
        self.key.clear();
        self.key.extend_from_slice(&self.picked);
        self.key.sort_unstable();
    }

    /// The window and classes for the machines `picked` (a sorted multiset), or `None` where
    /// the window would hold more than a quarter of the values.
    fn plan(&self, picked: &[u32], p: f64) -> Option<Plan> {
        let values: u64 = picked
            .iter()
            .map(|&m| self.sorted[m as usize].len() as u64)
            .sum();
        let target = p * values.saturating_sub(1) as f64;
        let total = self.ranks.len() as u32;
        let at = self.first_rank_reaching(picked, target);
        let variance: f64 = picked.iter().map(|&m| self.spread(m, at, p)).sum();
        let reach = self.half_width_sds * variance.sqrt() + 2.0;
        let a = self
            .first_rank_reaching(picked, target - reach)
            .saturating_sub(1);
        let b = self
            .first_rank_reaching(picked, target + reach)
            .saturating_add(2)
            .min(total);
        if u64::from(b - a) * 4 > u64::from(total) {
            return None;
        }
        let mut machines: Vec<Option<Classes>> = (0..self.machines.len()).map(|_| None).collect();
        for &m in picked {
            machines[m as usize] = Some(self.classes(m, a, b));
        }
        Some(Plan { a, b, machines })
    }

    /// The values of the machines `picked` (with repetition) below pooled rank `a`.
    fn values_below(&self, picked: &[u32], a: u32) -> u64 {
        picked
            .iter()
            .map(|&m| self.sorted[m as usize].partition_point(|&r| r < a) as u64)
            .sum()
    }

    /// The first pooled rank below which the machines `picked` hold at least `count` values
    /// (every rank when they hold fewer).
    fn first_rank_reaching(&self, picked: &[u32], count: f64) -> u32 {
        let (mut lo, mut hi) = (0u32, self.ranks.len() as u32);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if (self.values_below(picked, mid) as f64) < count {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The variance, over one copy of machine `m` (all its runs picked with replacement), of
    /// its draws below rank `a` less `p` times its draws in all.
    fn spread(&self, m: u32, a: u32, p: f64) -> f64 {
        let runs = &self.machines[m as usize];
        let n = runs.len() as f64;
        let (mut sum, mut sum_sq, mut within) = (0.0, 0.0, 0.0);
        for &(off, len) in runs {
            let run = &self.ranks[off as usize..(off + len) as usize];
            let s = run.partition_point(|&r| r < a) as f64;
            let l = f64::from(len);
            let d = s - p * l;
            sum += d;
            sum_sq += d * d;
            within += s * (1.0 - s / l);
        }
        let mean = sum / n;
        n * ((sum_sq / n - mean * mean).max(0.0) + within / n)
    }

    /// Machine `m`'s runs for the window [a, b): classes of those outside it, and those in it.
    fn classes(&self, m: u32, a: u32, b: u32) -> Classes {
        let mut outside: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        let (mut inside, mut codes, mut ranks) = (Vec::new(), Vec::new(), Vec::new());
        let code = |r: u32| match r {
            r if r < a => b - a,
            r if r < b => r - a,
            _ => b - a + 1,
        };
        for &(off, len) in &self.machines[m as usize] {
            let run = &self.ranks[off as usize..(off + len) as usize];
            let s = run.partition_point(|&r| r < a);
            let t = run.partition_point(|&r| r < b);
            if t > s {
                inside.push((codes.len() as u32, len));
                codes.extend(run.iter().map(|&r| code(r)));
                ranks.extend_from_slice(run);
            } else {
                *outside.entry((len, s as u32)).or_default() += 1;
            }
        }
        let outside = outside.into_iter().map(|((l, s), c)| (l, s, c)).collect();
        Classes {
            outside,
            inside,
            codes,
            ranks,
            width: b - a,
        }
    }
}

/// One number per sorted multiset of at most [`MAX_MACHINES`] machines: their indices (each
/// under 8) as octal digits.
fn multiset_key(sorted: &[u32]) -> u64 {
    sorted.iter().fold(0, |key, &m| key * 8 + u64::from(m))
}

/// Draws one copy of machine `m` of `n_runs` runs: its copies per class, the draws below the
/// window of those outside it, and every draw of those inside (counted into `counts` by
/// their [`Classes::codes`]), keeping in `outside` what a completion would need.
fn draw_machine(
    m: u32,
    classes: &Classes,
    n_runs: u64,
    counts: &mut [u32],
    outside: &mut Outside,
    tally: &mut Tally,
    rng: &mut Stream,
) {
    let copies = draw_outside(m, classes, n_runs, &mut outside.classes, tally, rng);
    let start = outside.ends.last().map_or(0, |&(_, end)| end);
    let spilled = &mut outside.spilled[start..];
    // The same draws from the same words on either stream; xoshiro256++'s words are taken
    // inline, without a branch on the generator per draw.
    let inside = match rng {
        Stream::Xoshiro(x) => {
            // Drawn from a copy, which can live in registers, then put back.
            let mut words = x.clone();
            let drawn = draw_inside(classes, copies, counts, spilled, &mut words);
            *x = words;
            drawn
        }
        _ => draw_inside(classes, copies, counts, spilled, rng),
    };
    tally.total += inside.total;
    tally.below += inside.below;
    outside.ends.push((m, start + inside.spilled));
}

/// Draws the copies per class of one copy of machine `m` of `n_runs` runs and the draws below
/// the window of those outside it, into `tally` and, per class drawn, into `drawn`; returns
/// the copies of the runs in the window.
fn draw_outside(
    m: u32,
    classes: &Classes,
    n_runs: u64,
    drawn: &mut Vec<(u32, u32, u64, u64)>,
    tally: &mut Tally,
    rng: &mut Stream,
) -> u64 {
    let (mut copies, mut runs_left) = (n_runs, n_runs);
    for (class, &(len, s, count)) in classes.outside.iter().enumerate() {
        let picked = binomial(copies, f64::from(count) / runs_left as f64, rng);
        copies -= picked;
        runs_left -= u64::from(count);
        let draws = picked * u64::from(len);
        let below_window = match s {
            0 => 0,
            s if s == len => draws,
            s => binomial(draws, f64::from(s) / f64::from(len), rng),
        };
        tally.total += draws;
        tally.below += below_window;
        if picked > 0 {
            drawn.push((m, class as u32, picked, below_window));
        }
    }
    copies
}

/// What the runs in the window drew: values in all, values below the window, and values
/// outside it (their indices into [`Classes::codes`] written to the room given).
struct Inside {
    total: u64,
    below: u64,
    spilled: usize,
}

/// Draws `copies` runs of the runs in the window and every value of each, counting each
/// drawn value in the window at its [`Classes::codes`]. A value outside the window is counted
/// in one of [`SPARE_SLOTS`] slots past the window's, taken in turn, so that no increment
/// waits on the one before, and its index is kept in `spilled`: written at every draw, kept
/// by moving past it only where the draw lay outside, so that no branch depends on where a
/// draw lay.
#[inline(always)]
fn draw_inside<R: RngCore>(
    classes: &Classes,
    copies: u64,
    counts: &mut [u32],
    spilled: &mut [u32],
    rng: &mut R,
) -> Inside {
    let (inside, codes) = (&classes.inside[..], &classes.codes[..]);
    let width = classes.width;
    let n_inside = inside.len() as u32;
    let mut drawn = Inside {
        total: 0,
        below: 0,
        spilled: 0,
    };
    let mut spare = 0u32;
    for _ in 0..copies {
        let (start, len) = inside[below(rng, n_inside) as usize];
        for _ in 0..len {
            let k = if len == 1 { 0 } else { below(rng, len) };
            let at = start + k;
            let code = codes[at as usize];
            drawn.below += u64::from(code == width);
            spilled[drawn.spilled] = at;
            drawn.spilled += usize::from(code >= width);
            spare = (spare + 1) % SPARE_SLOTS;
            let slot = if code < width { code } else { width + spare };
            counts[slot as usize] += 1;
        }
        drawn.total += u64::from(len);
    }
    drawn
}

/// Window indices of the type-7 order statistics at `p` of a resample that drew `tally`,
/// from the draws `counts` inside the window, and the fraction between them; `None` where
/// one of them lies outside the window.
fn order_stats(counts: &[u32], tally: &Tally, p: f64) -> Option<(u32, u32, f64)> {
    let h = tally.total.checked_sub(1)? as f64 * p;
    let k = h.floor() as u64;
    let next = (k + 1).min(tally.total - 1);
    let (first, second) = (k.checked_sub(tally.below)?, next.checked_sub(tally.below)?);
    let (mut cum, mut x) = (0u64, None);
    for (i, &c) in counts.iter().enumerate() {
        cum += u64::from(c);
        if x.is_none() && cum > first {
            x = Some(i as u32);
        }
        if cum > second {
            return Some((x?, i as u32, h - k as f64));
        }
    }
    None
}

#[path = "window_completion.rs"]
mod completion;

#[cfg(test)]
#[path = "window_classes_tests.rs"]
mod tests;
