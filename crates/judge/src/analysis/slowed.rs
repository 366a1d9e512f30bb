//! Where a run's undisturbed value lies. A run that waited for a CPU others had for a share
//! `w` of its wall time was slowed by at most that much: the disturbance is one-sided (Chen &
//! Revels, "Robust benchmarking in noisy environments", 2016), so its value undisturbed lies
//! between what was measured and that value with the waited share taken out: a time at most
//! `v · (1 − w)`, a rate at most `v / (1 − w)`. Every comparison that weighs the machine's
//! disturbance reads its cells at the two ends of these ranges.
//!
//! For the wall time of a run in which one task worked, the range is a point: a single task's
//! wall time is the time it ran, the time it waited to run and the time it was blocked or
//! asleep, so the time it waited for a CPU others had adds to its wall time exactly, and its
//! wall time undisturbed is the measured one less that waiting.

use super::CellStats;
use lab_config::Waiting;

/// The most of a run's wall time counted as disturbance: a run that waited for nearly all of
/// it still bounds its undisturbed time above zero.
pub const MOST_SLOWED: f64 = 0.95;

/// Which end of its range a value is taken at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Low,
    High,
}

/// `value` of a run that waited for `share` of its wall time, at the `end` of the range its
/// undisturbed value lies in; for an `exact` run (see the module), the one undisturbed value.
pub fn at(value: f64, share: f64, waiting: Waiting, end: End, exact: bool) -> f64 {
    let kept = 1.0 - share.clamp(0.0, MOST_SLOWED);
    match (waiting, end) {
        (Waiting::Lengthens, End::Low) => value * kept,
        (Waiting::Lengthens, End::High) if exact => value * kept,
        (Waiting::Lowers, End::High) => value / kept,
        (Waiting::Lowers, End::Low) if exact => value / kept,
        _ => value,
    }
}

/// `cell` with every run's values at the `end` of their ranges.
pub fn cell_at(cell: &CellStats, end: End) -> CellStats {
    let mut out = cell.clone();
    for (i, (values, share)) in out.runs.iter_mut().zip(&cell.slowed).enumerate() {
        let exact = cell.exact.get(i).copied().unwrap_or(false);
        for v in values.iter_mut() {
            *v = at(*v, *share, cell.waiting, end, exact);
        }
    }
    out
}

/// Whether every run of `cells` that waited is an exact one, and some did: their undisturbed
/// values are known, not bounded.
pub fn all_exact(cells: &[&CellStats]) -> bool {
    let waited = |c: &&CellStats| c.slowed.iter().any(|s| *s > 0.0);
    cells.iter().any(waited)
        && cells.iter().all(|c| {
            c.reshaped == 0
                && c.slowed
                    .iter()
                    .enumerate()
                    .all(|(i, s)| *s <= 0.0 || c.exact.get(i).copied().unwrap_or(false))
        })
}

/// The largest share any run of `cell` waited, 0 when none did.
pub fn most(cell: &CellStats) -> f64 {
    cell.slowed.iter().copied().fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_may_have_been_shorter_and_a_rate_higher_by_what_the_run_waited() {
        assert!((at(100.0, 0.3, Waiting::Lengthens, End::Low, false) - 70.0).abs() < 1e-9);
        assert_eq!(at(100.0, 0.3, Waiting::Lengthens, End::High, false), 100.0);
        assert!((at(70.0, 0.3, Waiting::Lowers, End::High, false) - 100.0).abs() < 1e-9);
        assert_eq!(at(70.0, 0.3, Waiting::Lowers, End::Low, false), 70.0);
        assert_eq!(at(5.0, 0.9, Waiting::Untouched, End::Low, false), 5.0);
        // A run that waited for all its wall time still bounds its value above zero.
        assert!((at(100.0, 1.0, Waiting::Lengthens, End::Low, false) - 5.0).abs() < 1e-9);
        // A single task's wall time undisturbed is known: both ends are that value.
        assert!((at(100.0, 0.3, Waiting::Lengthens, End::High, true) - 70.0).abs() < 1e-9);
    }
}
