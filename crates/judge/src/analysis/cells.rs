//! Per-cell statistics of every numeric metric over the valid, non-warm-up runs.

use super::shape;
use crate::validity::RunView;
use lab_config::plan::CellKey;
use lab_config::{Better, Experiment, Metric};
use lab_findings::analysis::{CellStats, MachineLevel, Resampling};
use lab_stats::{self as stats, Interval, Percentiles, Statistic, Stream};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// `cell` after the start-up taken out of each value (standard error `se`) has widened its
/// intervals of the median and mean ([`lab_stats::shift`]).
pub(super) fn carrying_start_up(mut cell: CellStats, se: f64) -> CellStats {
    let widen = |iv: Option<Interval>| iv.map(|iv| stats::shift::widen(iv, se));
    cell.median_ci = widen(cell.median_ci);
    cell.mean_ci = widen(cell.mean_ci);
    cell.start_up_se = se;
    cell
}

/// A cell of `metric` whose runs each printed one of `values`, with nothing else computed:
/// for the tests of what reads cells (checks, comparisons).
#[cfg(test)]
pub(crate) fn cell_of_values(label: &str, metric: &str, values: &[f64]) -> CellStats {
    let cell = CellKey::new(label, std::sync::Arc::new(BTreeMap::new()));
    let runs = values.iter().map(|v| vec![*v]).collect();
    without_intervals(&cell, label.into(), metric.into(), runs)
}

/// A cell of `runs` of `metric` with nothing read off them but their summary: no run
/// named, no interval or test, no machine, waiting taken to lengthen it.
fn without_intervals(
    cell: &CellKey,
    label: String,
    metric: String,
    runs: Vec<Vec<f64>>,
) -> CellStats {
    let pooled: Vec<f64> = runs.iter().flatten().copied().collect();
    CellStats {
        cell: cell.clone(),
        label,
        metric,
        n: runs.len(),
        warmup_runs: 0,
        invalid_runs: 0,
        busy_runs: 0,
        slowed: Vec::new(),
        waiting: lab_config::Waiting::Lengthens,
        exact: Vec::new(),
        disturbed: Vec::new(),
        reshaped: 0,
        run_ids: Vec::new(),
        positions: Vec::new(),
        summary: stats::summarize(&pooled),
        median_ci: None,
        exact_median_ci: None,
        mean_ci: None,
        design_effect: None,
        modes: None,
        drift: None,
        steady: None,
        percentiles: None,
        machines: None,
        start_up_se: 0.0,
        runs,
    }
}

/// The stable label of a cell's random stream: the same cell always gets the same resamples.
pub fn stream_label(cell: &CellKey, metric: &str, purpose: &str) -> String {
    format!("{purpose}/{metric}/{cell}")
}

/// Statistics for every (cell, analysed metric) that has planned runs, in plan order.
pub fn cell_stats(
    exp: &Experiment,
    cells: &[CellKey],
    runs: &[RunView],
    resampling: Resampling,
) -> Vec<CellStats> {
    cell_stats_of(exp, &exp.analysed_metrics(), cells, runs, resampling)
}

/// Statistics of the given metrics for every cell, in plan order (for a built-in metric that
/// only the notes ask for).
pub fn cell_stats_of(
    exp: &Experiment,
    metrics: &[&Metric],
    cells: &[CellKey],
    runs: &[RunView],
    resampling: Resampling,
) -> Vec<CellStats> {
    // One seeded stream per cell: results do not depend on how rayon schedules the work.
    each_cell(exp, metrics, cells, runs.iter(), |cell| {
        with_intervals(cell, resampling)
    })
}

/// The values of the given metrics for every cell, in plan order, with what is read off them
/// directly (the runs they came from, their summary, steady states and machines) and none of
/// the intervals and tests ([`CellStats::median_ci`] to [`CellStats::percentiles`] are
/// `None`), which take nearly all of an analysis's time: what a check that judges runs
/// rather than intervals reads.
pub fn cell_values_of(
    exp: &Experiment,
    metrics: &[&Metric],
    cells: &[CellKey],
    runs: &[&RunView],
) -> Vec<CellStats> {
    each_cell(exp, metrics, cells, runs.iter().copied(), |cell| cell)
}

/// `finish` of the values of every (cell, metric), in plan order, computed side by side.
fn each_cell<'r>(
    exp: &Experiment,
    metrics: &[&Metric],
    cells: &[CellKey],
    runs: impl Iterator<Item = &'r RunView>,
    finish: impl Fn(CellStats) -> CellStats + Sync,
) -> Vec<CellStats> {
    let jobs: Vec<(&CellKey, &Metric)> = cells
        .iter()
        .flat_map(|c| metrics.iter().map(move |m| (c, *m)))
        .collect();
    let mut by_cell: BTreeMap<&CellKey, Vec<&RunView>> = BTreeMap::new();
    for run in runs {
        by_cell.entry(&run.cell).or_default().push(run);
    }
    jobs.par_iter()
        .map(|(cell, metric)| {
            let runs = by_cell.get(cell).map_or(&[][..], |v| v);
            finish(cell_values(
                cell,
                super::cell_label(exp, cell),
                metric,
                runs,
            ))
        })
        .collect()
}

/// Values are percentiles material from this many pooled values on.
const MIN_VALUES_FOR_PERCENTILES: usize = 100;

/// The values of `metric` in one cell and what is read off them directly; no interval or
/// test.
fn cell_values(cell: &CellKey, label: String, metric: &Metric, runs: &[&RunView]) -> CellStats {
    let (used, values) = counted_runs(runs, metric);
    let (values, steady) = shape::steady_segments(values, metric.better == Better::Lower);
    let nodes: Vec<Option<&str>> = used.iter().map(|v| v.node.as_deref()).collect();
    CellStats {
        warmup_runs: runs.iter().filter(|v| v.warmup).count(),
        invalid_runs: invalid(runs, metric).count(),
        busy_runs: invalid(runs, metric).filter(|v| busy(v)).count(),
        steady,
        run_ids: used.iter().map(|v| v.id.as_str().into()).collect(),
        positions: used.iter().map(|v| v.position).collect(),
        slowed: slowed_shares(&used, metric),
        exact: exact_waits(&used, metric),
        disturbed: (0..used.len()).filter(|i| used[*i].disturbed).collect(),
        reshaped: reshaped_runs(&used, metric),
        waiting: metric.waiting(),
        machines: MachineLevel::of(&nodes),
        ..without_intervals(cell, label, metric.name.clone(), values)
    }
}

/// `cell` with its intervals and tests computed from its values.
fn with_intervals(mut cell: CellStats, r: Resampling) -> CellStats {
    let pooled = cell.pooled();
    let means = shape::run_means(&cell.runs);
    let (key, metric) = (&cell.cell, &cell.metric);
    let stream = |purpose: &str| r.stream(&stream_label(key, metric, purpose));
    let enough = cell.runs.len() >= super::MIN_RUNS;
    let (values, positions) = (&cell.runs, &cell.positions);
    let machines = cell.machines.as_mut();
    // Each interval draws from a stream of its own: computed side by side, they are the
    // same as one after the other.
    // The drift (a slope selection over every pair of runs) needs no stream.
    let ((median_ci, drift), (mean_ci, (percentiles, sorted))) = rayon::join(
        || {
            rayon::join(
                || median_cis(values, machines, &stream, r, enough),
                || shape::drift(&means, positions),
            )
        },
        || {
            rayon::join(
                || mean_ci(&means, &stream, r, enough),
                || {
                    rayon::join(
                        || percentiles_of(&pooled, &stream, r),
                        || sorted_copy(&pooled),
                    )
                },
            )
        },
    );
    cell.median_ci = median_ci;
    cell.exact_median_ci = stats::exact_median_ci(&sorted, r.level);
    cell.mean_ci = mean_ci;
    cell.design_effect = shape::design(&cell.runs);
    cell.modes = shape::modes(&means);
    cell.drift = drift;
    cell.percentiles = percentiles;
    cell
}

/// The runs that count for `metric` (valid, not warm-ups, with a value), and their values.
fn counted_runs<'v>(runs: &[&'v RunView], metric: &Metric) -> (Vec<&'v RunView>, Vec<Vec<f64>>) {
    runs.iter()
        .filter(|v| !v.warmup && v.counts_for(metric))
        .map(|v| (*v, v.numbers(&metric.name, metric.warmup_iterations)))
        .filter(|(_, values)| !values.is_empty())
        .unzip()
}

/// The runs of the cell that are not warm-ups and give no valid value of `metric`.
fn invalid<'v>(
    runs: &'v [&RunView],
    metric: &'v Metric,
) -> impl Iterator<Item = &'v &'v RunView> + 'v {
    runs.iter().filter(|v| !v.warmup && !v.counts_for(metric))
}

/// Whether an invalid run's timing was discarded because the machine was busy.
fn busy(run: &RunView) -> bool {
    run.timing_discarded()
        && run
            .failed_checks
            .iter()
            .any(|c| c == crate::validity::automatic::QUIET)
}

/// Parallel runs the machine disturbed beyond `max_busy`, for a timing metric.
fn reshaped_runs(used: &[&RunView], metric: &Metric) -> usize {
    if metric.is_timing() {
        used.iter().filter(|v| v.reshaped).count()
    } else {
        0
    }
}

/// The bias-corrected interval of the mean of the runs' means, when there are enough runs.
fn mean_ci(
    means: &[f64],
    stream: &(impl Fn(&str) -> Stream + Sync),
    r: Resampling,
    enough: bool,
) -> Option<Interval> {
    stats::bca_mean_ci(means, r.resamples, r.level, &mut stream("mean")).filter(|_| enough)
}

/// Each run's [`RunView::slowed`] share, when some run was slowed and waiting moves `metric`.
fn slowed_shares(used: &[&RunView], metric: &Metric) -> Vec<f64> {
    let moved = metric.waiting() != lab_config::Waiting::Untouched;
    if !moved || used.iter().all(|v| v.slowed <= 0.0) {
        return Vec::new();
    }
    used.iter().map(|v| v.slowed).collect()
}

/// Each run's [`RunView::exact_wait`] for the wall time, when some run was slowed; empty for
/// any other metric, whose undisturbed value waiting only bounds.
fn exact_waits(used: &[&RunView], metric: &Metric) -> Vec<bool> {
    if metric.name != "wall_s" || used.iter().all(|v| v.slowed <= 0.0) {
        return Vec::new();
    }
    used.iter().map(|v| v.exact_wait).collect()
}

/// The cell's interval of the median: two-stage over its runs, or three-stage when its runs
/// came from several machines (the runs-only interval then kept beside it in `machines`).
fn median_cis(
    values: &[Vec<f64>],
    machines: Option<&mut MachineLevel>,
    stream: &(impl Fn(&str) -> Stream + Sync),
    r: Resampling,
    enough: bool,
) -> Option<Interval> {
    let median = Statistic::Median;
    let runs_only_ci =
        stats::percentile_ci(values, median, r.resamples, r.level, &mut stream("median"))
            .filter(|_| enough);
    let Some(m) = machines else {
        return runs_only_ci;
    };
    m.runs_only_ci = runs_only_ci;
    let mut rng = stream("median/machines");
    stats::nested_percentile_ci(&m.nest(values), median, r.resamples, r.level, &mut rng)
        .filter(|_| enough)
}

/// Latency percentiles of the pooled values, when there are enough of them.
fn percentiles_of(
    pooled: &[f64],
    stream: &(impl Fn(&str) -> Stream + Sync),
    r: Resampling,
) -> Option<Percentiles> {
    (pooled.len() >= MIN_VALUES_FOR_PERCENTILES)
        .then(|| {
            stats::latency_percentiles(pooled, r.resamples, r.level, &mut stream("percentiles"))
        })
        .flatten()
}

/// `values` in ascending order.
fn sorted_copy(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}
