//! CPU time as the companion of a wall-time comparison a busy machine left undecided: waiting
//! for a CPU lengthens a run's wall time but not the CPU time it used, so for runs that kept
//! a CPU busy the ratio of their CPU times still answers. It hides what the wall time shows
//! of waiting on memory, disks and locks, and the line says so.

use crate::assess::Assessed;
use lab_judge::analysis::{CellStats, cell_stats_of};
use lab_judge::checks::CheckResult;

/// Runs whose CPU time is at least this share of their undisturbed wall time kept a CPU busy.
const CPU_BOUND: f64 = 0.8;

/// "on CPU time (…): 1.091× [1.079, 1.103] slower (95% CI)", for a comparison `check` whose
/// wall-time verdict was withheld because the machine was busy, when both cells' runs kept a
/// CPU busy.
pub(super) fn companion(a: &Assessed, check: &CheckResult) -> Option<String> {
    check.busy.as_ref()?;
    let evidence = check.ratio.as_ref()?;
    let cpu = a.experiment.metric("cpu_s")?;
    let cell_of = |label: &str| {
        a.analysis
            .cells
            .iter()
            .find(|c| c.label == label && c.metric == "wall_s")
    };
    let walls = [cell_of(&evidence.a)?, cell_of(&evidence.b)?];
    let keys = walls.map(|c| c.cell.clone());
    let r = a.analysis.resampling;
    let cpus = cell_stats_of(&a.experiment, &[cpu], &keys, &a.analysis.runs, r);
    let [ca, cb] = cpus.as_slice() else {
        return None;
    };
    if !walls
        .iter()
        .zip([ca, cb])
        .all(|(w, c)| kept_a_cpu_busy(a, w, c))
    {
        return None;
    }
    let stream = format!("cpu/{}", check.name);
    let (ratio, iv) = lab_judge::checks::ratio_of(ca, cb, r, &stream).ok()?;
    Some(format!(
        "on CPU time (user + system, which waiting does not lengthen; it hides waiting on memory and I/O): {} ({} CI)",
        super::figures::directed(ratio, iv.lo, iv.hi),
        lab_config::format::level(iv.level)
    ))
}

/// Whether the median run of a cell used a CPU for most of its wall time once its waiting is
/// taken out.
fn kept_a_cpu_busy(a: &Assessed, wall: &CellStats, cpu: &CellStats) -> bool {
    let waited: Vec<f64> = a
        .analysis
        .runs
        .iter()
        .filter(|r| r.cell == wall.cell && !r.warmup)
        .filter_map(|r| r.busy_share)
        .collect();
    let share = lab_stats::summarize(&waited).map_or(0.0, |s| s.median);
    match (wall.median(), cpu.median()) {
        (Some(w), Some(c)) if w > 0.0 => c / (w * (1.0 - share.min(0.95))) >= CPU_BOUND,
        _ => false,
    }
}
