//! Whether the machine's disturbance could explain a ratio's verdict.
//!
//! Each run's undisturbed value lies in a range the time it waited for a CPU bounds
//! ([`crate::analysis::slowed`]). The undisturbed ratio of two
//! cells' medians then lies between the ratio with every run of one cell at the end of its
//! range that lowers the ratio and the other's at the end that raises it, and the reverse.
//!
//! The verdict is read on both extremes, each bootstrapped from the same stream as the
//! measured ratio (so every resample is the same draw of runs, and each resampled median
//! moves monotonically with the values): the **envelope** runs from the low end of the one
//! to the high end of the other, and holds the interval the undisturbed runs would give. A
//! verdict the envelope reaches too stands, and says what it rests on; a verdict only the
//! measured interval reaches is withheld: the disturbance could explain it.
//!
//! The bound holds for a program whose work does not depend on when it runs. A parallel one
//! (several threads or processes working) interleaves otherwise when its threads wait: two
//! threads meant to run side by side take turns, a lock changes hands another way, and the
//! program may even run faster. Where such runs waited beyond `max_busy`, no range holds,
//! and every verdict on their cells is withheld.

use super::rule::Rule;
use crate::analysis::slowed::{End, cell_at};
use crate::analysis::{CellStats, Resampling, median_ratio};
use lab_findings::checks::Verdict;
use lab_stats::Interval;

/// What the disturbance did to one ratio's verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Disturbance {
    /// The interval the undisturbed ratio's interval lies within.
    pub envelope: Interval,
    /// Runs of the two cells the machine slowed, of all their runs.
    pub slowed_runs: usize,
    pub runs: usize,
    /// The largest share of its wall time a run of the two cells waited.
    pub most: f64,
    /// Parallel runs of the two cells the machine disturbed beyond `max_busy`: waiting
    /// changes how their threads interleave, so the envelope is unbounded.
    pub reshaped: usize,
    /// Whether the measured interval decided a verdict the envelope does not: the machine
    /// could explain it.
    pub withheld: bool,
    /// Whether each run's waiting was taken out of its value exactly (one task worked in each
    /// run that waited, `analysis::slowed`): the envelope is then the interval itself.
    pub taken_out: bool,
}

/// What was taken out of two cells whose every run that waited is known undisturbed; the
/// envelope is the interval of the undisturbed values, `interval`.
pub(super) fn taken_out(a: &CellStats, b: &CellStats, interval: Interval) -> Option<Disturbance> {
    let shares = a.slowed.iter().chain(&b.slowed);
    Some(Disturbance {
        envelope: interval,
        slowed_runs: shares.clone().filter(|s| **s > 0.0).count(),
        runs: a.runs.len() + b.runs.len(),
        most: shares.copied().fold(0.0, f64::max),
        reshaped: 0,
        withheld: false,
        taken_out: true,
    })
}

/// The envelope of the ratio `a / b` over the range the machine leaves each run's value in,
/// `None` when neither cell has a run the machine slowed.
pub(super) fn envelope(
    a: &CellStats,
    b: &CellStats,
    measured: Interval,
    r: Resampling,
    stream: &str,
) -> Option<Disturbance> {
    let reshaped = a.reshaped + b.reshaped;
    if a.slowed.is_empty() && b.slowed.is_empty() && reshaped == 0 {
        return None;
    }
    let ratio = |a: &CellStats, b: &CellStats| {
        median_ratio(a, b, r.resamples, r.level, &mut r.stream(stream))
    };
    let low = ratio(&cell_at(a, End::Low), &cell_at(b, End::High))?;
    let high = ratio(&cell_at(a, End::High), &cell_at(b, End::Low))?;
    let shares = a.slowed.iter().chain(&b.slowed);
    let (lo, hi) = if reshaped > 0 {
        (0.0, f64::INFINITY)
    } else {
        (low.interval.lo, high.interval.hi)
    };
    Some(Disturbance {
        envelope: Interval {
            lo: lo.min(measured.lo),
            hi: hi.max(measured.hi),
            level: measured.level,
        },
        reshaped,
        slowed_runs: shares.clone().filter(|s| **s > 0.0).count(),
        runs: a.runs.len() + b.runs.len(),
        most: shares.copied().fold(0.0, f64::max),
        withheld: false,
        taken_out: false,
    })
}

impl Disturbance {
    /// The verdict `rule` reaches on `measured`, weighed against the envelope: withheld
    /// (inconclusive) when only the measured interval decides it.
    pub fn weigh(&mut self, rule: Rule, margin: Option<f64>, measured: Verdict) -> Verdict {
        let robust = rule.decide_near(&self.envelope, margin);
        let decided = measured.decided();
        if decided && robust != measured {
            self.withheld = true;
            Verdict::Inconclusive
        } else {
            measured
        }
    }
}

#[cfg(test)]
#[path = "disturbance_tests.rs"]
mod tests;
