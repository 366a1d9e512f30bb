//! The automatic parallel-plausibility check: no speed-up beyond the CPUs the runs used.
//!
//! Along a `scaling` check's parameter, or any parameter named like a thread count, a gain
//! (throughput up, or time down, as the metric's `better` says) between two values cannot
//! exceed how many more CPUs the runs kept busy: a cell's CPUs are the median over its valid
//! runs of (user + system) / wall time. Superlinear speed-ups are real where the working set
//! starts to fit the combined caches of more cores (Ristov et al. 2016, "Superlinear speedup in
//! HPC systems: why and when?", FedCSIS; Gustafson 1988 on scaled speed-up), but rarely beyond
//! a quarter, so the gain may reach [`ALLOWANCE`] × the CPU gain. A pair fails when its gain's
//! interval lies wholly above that: the work is counted more than once, or the baseline is
//! wrong. The bound only holds for work that needs the CPU: a thread that waits (I/O, sleep,
//! a lock held elsewhere) overlaps its waiting with others' work, and threads that spin on a
//! contended lock burn CPU without progress (lockstack-dip at two threads uses 1.6× the CPUs of
//! four for a third of the throughput). So the baseline is one thread, which can neither wait
//! for a peer nor spin on one, and must have wanted a CPU [`BUSY`] of its wall time (running
//! on one, or waiting while others had it: on a busy machine a CPU-bound thread runs half the
//! time and waits the rest, and its gain still tracks the CPUs it got); other pairs are not
//! judged, and with no pair judged the report does not list the check. A failure whose every
//! failing pair has runs the machine disturbed beyond `max_busy` is withheld as
//! inconclusive: a run that waited for a CPU others had spreads its waiting unevenly over its
//! start-up and its measured phase, so its CPU time no longer bounds its measured work.

use crate::analysis::{Analysis, CellStats, Resampling};
use lab_config::format::{grouped, percent, ratio, ratio_interval};
use lab_config::{Better, CheckClass, CheckKind, Experiment};
use lab_findings::checks::{CheckFigure, CheckResult, Verdict};
use lab_stats::Interval;

/// The check's name, as the report lists it.
pub const PARALLEL: &str = "no speed-up beyond the CPUs the runs used";

/// How far a gain may exceed the CPU gain before it is implausible: cache effects.
pub(super) const ALLOWANCE: f64 = 1.25;

/// The share of its wall time the one-thread cell must have run on a CPU or waited for one.
pub(super) const BUSY: f64 = 0.9;

/// Parameter names taken for a count of threads or processes.
pub(super) const THREAD_NAMES: [&str; 8] = [
    "threads",
    "nthreads",
    "workers",
    "jobs",
    "cores",
    "procs",
    "num_threads",
    "t",
];

/// A metric walked along a parameter, in one variant or all.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Axis {
    pub metric: String,
    pub along: String,
    pub variant: Option<String>,
}

/// Two cells of one series judged.
pub(super) struct Pair<'a> {
    pub low: &'a CellStats,
    pub high: &'a CellStats,
    pub values: (f64, f64),
    pub gain: f64,
    pub interval: Interval,
    pub cpu_gain: f64,
    pub verdict: Verdict,
    pub better: Better,
}

/// Whether a gain with this interval is more than the CPU gain explains.
pub(super) fn decide(interval: &Interval, cpu_gain: f64) -> Verdict {
    if interval.lo > cpu_gain * ALLOWANCE {
        Verdict::Fail
    } else {
        Verdict::Pass
    }
}

/// The axes to judge: every `scaling` check's, then the primary metric along each
/// thread-like parameter of two values or more.
pub(super) fn axes(exp: &Experiment) -> Vec<Axis> {
    let mut axes: Vec<Axis> = exp
        .checks
        .iter()
        .filter_map(|c| match &c.kind {
            CheckKind::Scaling {
                metric,
                along,
                variant,
                ..
            } => Some(Axis {
                metric: metric.clone(),
                along: along.clone(),
                variant: variant.clone(),
            }),
            _ => None,
        })
        .collect();
    if let Some(primary) = exp.primary_metric() {
        for p in exp.params.iter().filter(|p| p.values.len() >= 2) {
            let axis = Axis {
                metric: primary.name.clone(),
                along: p.name.clone(),
                variant: None,
            };
            if THREAD_NAMES.contains(&p.name.to_lowercase().as_str()) && !axes.contains(&axis) {
                axes.push(axis);
            }
        }
    }
    axes
}

/// The median CPUs a cell's valid runs kept busy, where recorded.
pub(super) fn cpus_used(cell: &CellStats, analysis: &Analysis) -> Option<f64> {
    let mut cpus: Vec<f64> = analysis
        .runs
        .iter()
        .filter(|r| r.is_valid() && r.cell == cell.cell)
        .filter_map(|r| r.usage.cpus)
        .collect();
    if cpus.is_empty() {
        return None;
    }
    cpus.sort_by(f64::total_cmp);
    Some(lab_stats::summary::median(&cpus))
}

/// The median share of its wall time a cell's valid runs either ran on a CPU or waited for
/// one others had: 1 for one thread that always wanted a CPU, on a busy machine as on a quiet
/// one.
pub(super) fn cpu_demand(cell: &CellStats, analysis: &Analysis) -> Option<f64> {
    let mut demand: Vec<f64> = analysis
        .runs
        .iter()
        .filter(|r| r.is_valid() && r.cell == cell.cell)
        .filter_map(|r| Some(r.usage.cpus? + r.usage.waiting.unwrap_or(0.0)))
        .collect();
    if demand.is_empty() {
        return None;
    }
    demand.sort_by(f64::total_cmp);
    Some(lab_stats::summary::median(&demand))
}

/// Every judged pair of `axis`'s series: one thread against each higher value.
pub(super) fn pairs<'a>(exp: &Experiment, analysis: &'a Analysis, axis: &Axis) -> Vec<Pair<'a>> {
    let Some(metric) = exp.metric(&axis.metric) else {
        return Vec::new();
    };
    let series = super::series::along(
        exp,
        &analysis.cells,
        &axis.metric,
        &axis.along,
        axis.variant.as_deref(),
    );
    let mut judged = Vec::new();
    for s in series {
        let at = |c: &CellStats| c.cell.params.get(&axis.along).and_then(|v| v.as_f64());
        for (i, low) in s.iter().enumerate() {
            for high in &s[i + 1..] {
                let (Some(lv), Some(hv)) = (at(low), at(high)) else {
                    continue;
                };
                let (low, high, lv, hv) = if lv <= hv {
                    (*low, *high, lv, hv)
                } else {
                    (*high, *low, hv, lv)
                };
                judged.extend(pair(analysis, metric.better, (low, high), (lv, hv)));
            }
        }
    }
    judged
}

/// One pair judged, or `None` where the lower cell waited (see the module) or a ratio is
/// undefined.
fn pair<'a>(
    analysis: &'a Analysis,
    better: Better,
    (low, high): (&'a CellStats, &'a CellStats),
    values: (f64, f64),
) -> Option<Pair<'a>> {
    let (cpu_low, cpu_high) = (cpus_used(low, analysis)?, cpus_used(high, analysis)?);
    if values.0 != 1.0 || values.1 <= values.0 || cpu_demand(low, analysis)? < BUSY {
        return None;
    }
    let (a, b) = match better {
        Better::Higher => (high, low),
        Better::Lower => (low, high),
    };
    let label = format!("parallel/{}/{}/{}", low.metric, low.label, high.label);
    let (gain, interval) = super::ratio_of(a, b, analysis.resampling, &label).ok()?;
    let cpu_gain = cpu_high / cpu_low;
    Some(Pair {
        low,
        high,
        values,
        gain,
        interval,
        cpu_gain,
        verdict: decide(&interval, cpu_gain),
        better,
    })
}

/// The check's result and the axes whose series failed; `None` when no pair could be judged.
pub(super) fn parallel_result(
    exp: &Experiment,
    analysis: &Analysis,
) -> Option<(CheckResult, Vec<Axis>)> {
    let mut judged: Vec<(Axis, Pair)> = Vec::new();
    for axis in axes(exp) {
        for p in pairs(exp, analysis, &axis) {
            judged.push((axis.clone(), p));
        }
    }
    if judged.is_empty() {
        return None;
    }
    let failed: Vec<&(Axis, Pair)> = judged
        .iter()
        .filter(|(_, p)| p.verdict == Verdict::Fail)
        .collect();
    let busy = withheld_for(&failed, analysis);
    let verdict = match (&busy, failed.is_empty()) {
        (Some(_), _) => Verdict::Inconclusive,
        (None, true) => Verdict::Pass,
        (None, false) => Verdict::Fail,
    };
    // The pair furthest beyond its CPUs decides what the reading says.
    let excess = |p: &Pair| p.interval.lo / p.cpu_gain;
    let worst = judged
        .iter()
        .max_by(|a, b| excess(&a.1).total_cmp(&excess(&b.1)))?;
    let mut result = CheckResult::new(PARALLEL, "automatic", CheckClass::Validity, verdict)
        .evidence(format!(
            "{} pairs judged, each gain against the CPU gain × {}; the nearest: {}",
            judged.len(),
            ratio(ALLOWANCE),
            listed(&worst.0, &worst.1)
        ))
        .reading(match &busy {
            Some(cause) => format!(
                "machine busy: {}: {cause}, which could explain it; quiet the machine or add runs",
                said(&worst.0, &worst.1)
            ),
            None => reading(&worst.0, &worst.1),
        })
        .runs(
            failed
                .iter()
                .flat_map(|(_, p)| p.low.run_ids.iter().chain(&p.high.run_ids))
                .map(ToString::to_string)
                .collect(),
        );
    result.automatic = true;
    result.busy = busy;
    result.figures = figures(&worst.1, analysis.resampling);
    let mut axes: Vec<Axis> = failed.iter().map(|(a, _)| a.clone()).collect();
    axes.dedup();
    if result.verdict != Verdict::Fail {
        axes.clear();
    }
    Some((result, axes))
}

/// Why the machine withholds the failure of the `failed` pairs: every one of them has runs it
/// disturbed (see the module); `None` when one has none, or nothing failed.
fn withheld_for(failed: &[&(Axis, Pair)], analysis: &Analysis) -> Option<String> {
    if failed.is_empty() {
        return None;
    }
    failed
        .iter()
        .map(|(_, p)| disturbed(p, analysis))
        .collect::<Option<Vec<usize>>>()
        .map(|counts| busy_cause(counts.iter().sum(), failed, analysis))
}

/// How many runs of `p`'s two cells the machine disturbed beyond `max_busy`; `None` when it
/// disturbed none. A run that waited for a CPU others had no longer tells by its CPU time what
/// CPU its measured work had: the waiting falls unevenly on its start-up and its measured
/// phase, so a gain beyond its CPUs could be the disturbance's.
fn disturbed(p: &Pair, analysis: &Analysis) -> Option<usize> {
    let n = analysis
        .runs
        .iter()
        .filter(|r| r.disturbed && (r.cell == p.low.cell || r.cell == p.high.cell))
        .count();
    (n > 0).then_some(n)
}

/// "N runs waited for a CPU others had for more than `max_busy` of their wall time, up to X".
fn busy_cause(runs: usize, failed: &[&(Axis, Pair)], analysis: &Analysis) -> String {
    let cells: Vec<&lab_config::plan::CellKey> = failed
        .iter()
        .flat_map(|(_, p)| [&p.low.cell, &p.high.cell])
        .collect();
    let most = analysis
        .runs
        .iter()
        .filter(|r| r.disturbed && cells.contains(&&r.cell))
        .filter_map(|r| r.busy_share)
        .fold(0.0, f64::max);
    format!(
        "{runs} run{} of the pair{} waited for a CPU others had for more than `max_busy` of \
         their wall time, up to {}",
        if runs == 1 { "" } else { "s" },
        if failed.len() == 1 { "" } else { "s" },
        lab_config::format::percent(most)
    )
}

/// "mops: threads=1 → threads=4 ×7.93 [7.76, 7.96] on ×1.98 CPU".
fn listed(axis: &Axis, p: &Pair) -> String {
    format!(
        "{}: {} → {} ×{} on ×{} CPU",
        p.high.label,
        place(axis, p.values.0),
        place(axis, p.values.1),
        ratio_interval(p.gain, p.interval.lo, p.interval.hi),
        ratio(p.cpu_gain)
    )
}

/// The figures the evidence prints of the nearest pair: its gain, with its interval, and the
/// gain in CPUs it is held against.
fn figures(p: &Pair, r: Resampling) -> Vec<CheckFigure> {
    let cells = format!("{} to {}", p.low.label, p.high.label);
    let runs = format!(
        "the valid, non-warm-up runs of {} ({} runs) and of {} ({} runs)",
        p.low.label, p.low.n, p.high.label, p.high.n
    );
    let (over, under) = match p.better {
        Better::Higher => (p.high, p.low),
        Better::Lower => (p.low, p.high),
    };
    let gain = CheckFigure {
        name: "nearest.gain".into(),
        label: "×".into(),
        number: ratio(p.gain),
        interval: Some((ratio(p.interval.lo), ratio(p.interval.hi))),
        what: format!(
            "gain in {} from {cells}, the pair nearest its CPUs",
            p.low.metric
        ),
        method: format!(
            "The median of {} of {} over that of {} ({} {} is better), with its {} percentile bootstrap interval: each cell's runs resampled on their own, {} resamples, seed {}.",
            p.low.metric,
            over.label,
            under.label,
            if p.better == Better::Higher {
                "higher"
            } else {
                "lower"
            },
            p.low.metric,
            percent(r.level),
            grouped(r.resamples as u64),
            r.seed
        ),
        runs: runs.clone(),
    };
    let cpus = CheckFigure {
        name: "nearest.cpu-gain".into(),
        label: "on ×".into(),
        number: ratio(p.cpu_gain),
        interval: None,
        what: format!("gain in CPUs from {cells}"),
        method: format!(
            "The median over each cell's valid runs of (user + system CPU time) / wall time, of {} over that of {}; a gain beyond {} times it fails.",
            p.high.label,
            p.low.label,
            ratio(ALLOWANCE)
        ),
        runs,
    };
    vec![gain, cpus]
}

fn place(axis: &Axis, value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}={}", axis.along, value as i64)
    } else {
        format!(
            "{}={}",
            axis.along,
            lab_config::format::significant(value, 6)
        )
    }
}

/// "`peek`: mops grows 7.93× [7.76, 7.96] from threads=1 to threads=4 while its runs used
/// 1.98× the CPU time per second: the work is counted more than once or the baseline is wrong".
fn reading(axis: &Axis, p: &Pair) -> String {
    let said = said(axis, p);
    match p.verdict {
        Verdict::Fail => {
            format!("{said}: the work is counted more than once or the baseline is wrong")
        }
        _ => format!("every gain stays within the CPUs its runs used; the nearest: {said}"),
    }
}

/// "`peek`: mops grows 7.93× [7.76, 7.96] from threads=1 to threads=4 while its runs used
/// 1.98× the CPU time per second".
fn said(axis: &Axis, p: &Pair) -> String {
    let moves = if p.low.cell.variant.is_empty() {
        String::new()
    } else {
        format!("`{}`: ", p.low.cell.variant)
    };
    let verb = match p.better {
        Better::Higher => "grows",
        Better::Lower => "falls",
    };
    format!(
        "{moves}{} {verb} {}× {} from {} to {} while its runs used {}× the CPU time per second",
        axis.metric,
        ratio(p.gain),
        lab_config::format::ratio_bounds(p.interval.lo, p.interval.hi),
        place(axis, p.values.0),
        place(axis, p.values.1),
        ratio(p.cpu_gain)
    )
}

#[cfg(test)]
#[path = "parallel_tests.rs"]
mod tests;
