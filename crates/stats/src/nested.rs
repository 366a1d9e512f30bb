//! Bootstrap intervals for runs nested in machines: a three-stage percentile bootstrap that
//! resamples machines, then runs within each drawn machine, then iterations within each drawn
//! run, each stage with replacement.
//!
//! Where runs came from several machines (cluster nodes), a machine is a level above the runs:
//! runs on one machine share its CPU, firmware and neighbours, and the machines of a session
//! are a sample of the machines the result is meant for. Resampling runs alone treats every run
//! as independent and hides the machines' own spread; the nested bootstrap resamples the
//! hierarchy from the top (Davison & Hinkley 1997, "Bootstrap Methods and their Application",
//! §3.8, multi-stage sampling; Ren et al. 2010, "Nonparametric bootstrapping for hierarchical
//! data", J. Applied Statistics 37(9):1487, who show the top level must be resampled with
//! replacement).
//!
//! Which lower levels are drawn with replacement is a choice between two errors. Drawing the
//! top level only (Davison & Hinkley's "Strategy 1", the one Ren et al. recommend) estimates the
//! variance without bias as the machines grow many, but its resamples are made of whole
//! machines: with m machines the resampled statistic never leaves the range of what the m
//! machines give, so the interval misses the truth at least 2^(1−m) of the time even when the
//! machines do not differ at all (a half with 2 machines, a quarter with 3), and a session
//! runs on a handful of nodes. Drawing runs and iterations again within each drawn machine
//! ("Strategy 2") counts the runs' spread a second time when the machines agree (the bootstrap
//! variance of a mean is then about (m−1)/m + (r−1)/r times the true one for m machines of r
//! runs, Davison & Hinkley §3.8 work both out), so the interval is then somewhat too wide but
//! never much narrower than what the runs alone give; when the machines do differ, their
//! spread dominates and both strategies agree. lab takes the conservative one; the coverage of each is
//! measured in `nested_coverage.rs`.
//!
//! With one machine the first stage always draws it, and the resample is the two-stage one of
//! [`super::bootstrap::percentile_ci`] (not the same random draws: a session on one machine is
//! analysed by that function, unchanged).

use super::rng::Stream;

use super::bootstrap::{
    Interval, RatioEstimate, Statistic, log_ratio_ci, one_value, percentile_interval,
    point_interval, valid,
};
use super::uniform::{below, fill_below};
use super::window_classes::{CLASSED_MIN_VALUES, ClassedRuns};

/// A cell's values as machines → runs → iterations, ranked once, drawn many times.
///
/// As in the two-stage resampler, values are replaced by their rank in the pooled sorted data,
/// so that a resample is a count per rank and its quantile one cumulative scan.
pub(crate) struct NestedResampler {
    sorted: Vec<f64>,
    /// Per value, grouped by run and runs by machine: index into `sorted`.
    ranks: Vec<u32>,
    /// Per value, in the same order: the value, for means.
    values: Vec<f64>,
    /// Per non-empty run: (offset, len) into `ranks`/`values`.
    runs: Vec<(u32, u32)>,
    /// Per machine with a non-empty run: (first run, number of runs) into `runs`.
    machines: Vec<(u32, u32)>,
    /// Draws per rank of the resample being made; left zeroed between resamples.
    counts: Vec<u32>,
    /// One run's drawn iterations (reused).
    drawn: Vec<u32>,
    /// The runs as classes outside a window around the quantile ([`super::window_classes`]),
    /// from [`CLASSED_MIN_VALUES`] values on: below, every value is drawn.
    classed: Option<ClassedRuns>,
}

impl NestedResampler {
    /// `None` if there is no value, a value is not finite, or sizes exceed u32.
    pub(crate) fn new(machines: &[Vec<Vec<f64>>]) -> Option<NestedResampler> {
        let values: Vec<f64> = machines.iter().flatten().flatten().copied().collect();
        let total = values.len();
        if total == 0 || total >= u32::MAX as usize || values.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let (runs, spans) = spans(machines);
        let ranks = ranks_of(&values);
        let classed = classed(&ranks, &runs, &spans);
        let mut sorted = vec![0.0; total];
        for (&rank, &x) in ranks.iter().zip(&values) {
            sorted[rank as usize] = x;
        }
        Some(NestedResampler {
            sorted,
            ranks,
            values,
            runs,
            machines: spans,
            counts: vec![0; total],
            drawn: Vec::new(),
            classed,
        })
    }

    /// The statistic of all pooled values: the point estimate.
    pub(crate) fn observed(&self, statistic: Statistic) -> f64 {
        match statistic {
            Statistic::Mean => self.values.iter().sum::<f64>() / self.values.len() as f64,
            Statistic::Median => super::summary::quantile_sorted(&self.sorted, 0.5),
        }
    }

    /// The statistic of one three-stage resample: as many machines as there are, drawn with
    /// replacement; in each, as many runs as it has, drawn with replacement from its own; in
    /// each drawn run, as many iterations as it has, drawn with replacement from its own.
    pub(crate) fn draw(&mut self, statistic: Statistic, rng: &mut Stream) -> f64 {
        if statistic == Statistic::Median
            && let Some(classed) = &mut self.classed
        {
            return super::bootstrap::interpolated(&self.sorted, classed.draw(0.5, rng));
        }
        let drawn = self.count_resample(rng);
        let result = match statistic {
            Statistic::Mean => self.counted_mean(drawn),
            Statistic::Median => self.counted_quantile(0.5, drawn),
        };
        self.counts.fill(0);
        result
    }

    /// Counts one resample's draws per rank into `counts`; returns how many values it drew.
    fn count_resample(&mut self, rng: &mut Stream) -> usize {
        let n_machines = self.machines.len() as u32;
        let mut drawn_values = 0usize;
        for _ in 0..n_machines {
            let (first, n_runs) = self.machines[below(rng, n_machines) as usize];
            for _ in 0..n_runs {
                let (off, len) = self.runs[(first + below(rng, n_runs)) as usize];
                self.count_run(off, len, rng);
                drawn_values += len as usize;
            }
        }
        drawn_values
    }

    /// Draws `len` iterations of the run at `off` with replacement and counts their ranks.
    fn count_run(&mut self, off: u32, len: u32, rng: &mut Stream) {
        if len == 1 {
            self.counts[self.ranks[off as usize] as usize] += 1;
            return;
        }
        self.drawn.resize(len as usize, 0);
        fill_below(rng, len, &mut self.drawn);
        for &k in &self.drawn {
            self.counts[self.ranks[(off + k) as usize] as usize] += 1;
        }
    }

    /// The mean of the counted resample of `drawn` values.
    fn counted_mean(&self, drawn: usize) -> f64 {
        let sum: f64 = self
            .counts
            .iter()
            .zip(&self.sorted)
            .map(|(&c, &x)| f64::from(c) * x)
            .sum();
        sum / drawn as f64
    }

    /// The type-7 quantile `p` of the counted resample of `drawn` values.
    fn counted_quantile(&self, p: f64, drawn: usize) -> f64 {
        let h = (drawn - 1) as f64 * p;
        let k = h.floor() as usize;
        let (a, b) = self.order_stats(k);
        a + (h - k as f64) * (b - a)
    }

    /// Order statistics `k` and `k + 1` (0-based, the latter clamped) of the counted resample.
    fn order_stats(&self, k: usize) -> (f64, f64) {
        super::bootstrap::counted_order_stats(&self.counts, &self.sorted, k)
    }
}

/// (offset, len) of a run in the values, or of a machine in the runs.
type Span = (u32, u32);

/// The runs' spans over the flattened values and the machines' spans over the runs, leaving
/// out empty runs and machines with no value.
fn spans(machines: &[Vec<Vec<f64>>]) -> (Vec<Span>, Vec<Span>) {
    let (mut runs, mut spans) = (Vec::new(), Vec::new());
    let mut offset = 0u32;
    for machine in machines {
        let first = runs.len() as u32;
        for run in machine.iter().filter(|r| !r.is_empty()) {
            runs.push((offset, run.len() as u32));
            offset += run.len() as u32;
        }
        let count = runs.len() as u32 - first;
        if count > 0 {
            spans.push((first, count));
        }
    }
    (runs, spans)
}

/// The windowed resampler of the runs `runs` of the machines `machines` (spans into them),
/// from [`CLASSED_MIN_VALUES`] values on.
fn classed(ranks: &[u32], runs: &[Span], machines: &[Span]) -> Option<ClassedRuns> {
    if ranks.len() < CLASSED_MIN_VALUES {
        return None;
    }
    let machines: Vec<Vec<Span>> = machines
        .iter()
        .map(|&(first, count)| runs[first as usize..(first + count) as usize].to_vec())
        .collect();
    ClassedRuns::new(ranks, &machines)
}

/// Each value's rank in the pooled sorted values (ties broken by position).
fn ranks_of(values: &[f64]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    order.sort_by(|&i, &j| values[i as usize].total_cmp(&values[j as usize]));
    let mut ranks = vec![0u32; values.len()];
    for (rank, &i) in order.iter().enumerate() {
        ranks[i as usize] = rank as u32;
    }
    ranks
}

/// Three-stage percentile bootstrap CI of `statistic` over the pooled values of a cell whose
/// data are machines × runs × iterations (see the module's comment for the method). The
/// median of values that are all one number is that number without a draw from `rng`, as in
/// [`super::bootstrap::percentile_ci`].
///
/// `None` if there is no value, a value is not finite, `resamples < 2` or `level ∉ (0,1)`.
pub fn nested_percentile_ci(
    machines: &[Vec<Vec<f64>>],
    statistic: Statistic,
    resamples: usize,
    level: f64,
    rng: &mut Stream,
) -> Option<Interval> {
    if !valid(resamples, level) {
        return None;
    }
    let mut rs = NestedResampler::new(machines)?;
    if statistic == Statistic::Median
        && let Some(x) = one_value(&rs.sorted)
    {
        return Some(point_interval(x, level));
    }
    let mut stats: Vec<f64> = (0..resamples).map(|_| rs.draw(statistic, rng)).collect();
    Some(percentile_interval(&mut stats, level))
}

/// Ratio statistic(a)/statistic(b) with a percentile interval on the log scale, each side
/// resampled independently in three stages (as [`super::bootstrap::ratio_ci`] does in two:
/// Davison & Hinkley 1997 §5.2, transform, percentile interval, back-transform). A side whose
/// runs all came from one machine is given as one machine.
///
/// `None` on invalid input (as [`nested_percentile_ci`]) or if any statistic (observed or
/// resampled) is ≤ 0.
pub fn nested_ratio_ci(
    a: &[Vec<Vec<f64>>],
    b: &[Vec<Vec<f64>>],
    statistic: Statistic,
    resamples: usize,
    level: f64,
    rng: &mut Stream,
) -> Option<RatioEstimate> {
    if !valid(resamples, level) {
        return None;
    }
    let (mut ra, mut rb) = (NestedResampler::new(a)?, NestedResampler::new(b)?);
    let observed = (ra.observed(statistic), rb.observed(statistic));
    log_ratio_ci(observed, resamples, level, || {
        (ra.draw(statistic, rng), rb.draw(statistic, rng))
    })
}

#[cfg(test)]
#[path = "nested_tests.rs"]
mod tests;
