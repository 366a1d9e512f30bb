//! `lab run --dry-run`: the plan as text, with how long it is expected to take, from the
//! previous session's wall times or the duration each run's check requests.

use crate::layout::Layout;
use lab_config::plan::{self, CellKey, Plan, PlannedRun};
use lab_config::{self as config, CheckKind, Experiment, Sampling};
use lab_judge::stopping;
use lab_render as render;
use lab_store::{self as store, StoredSession};
use std::collections::BTreeMap;

/// The plan as text, with its estimated duration (run after run; with `jobs` above 1, the
/// shortest it could take when every run found a partner on other CPUs too).
pub(super) fn describe_plan(exp: &Experiment, plan: &Plan, layout: &Layout, jobs: usize) -> String {
    let previous = store::SessionList::new(&exp.name, &exp.dir, &layout.data_dir(&exp.name))
        .latest()
        .and_then(|d| store::load_session(&d).ok())
        .map(|s| mean_wall_by_cell(&s))
        .unwrap_or_default();
    let mut out = String::new();
    let mut total = 0.0;
    let mut known = true;
    for run in &plan.runs {
        let estimate = estimate_seconds(exp, run, &previous);
        total += estimate.unwrap_or(0.0);
        known &= estimate.is_some();
        let kind = if run.warmup { "warm-up" } else { "" };
        out.push_str(&format!(
            "{:>4} {} {} {kind}\n    {}\n",
            run.position,
            run.id,
            run.cell,
            render::shell_words(&run.argv)
        ));
    }
    out.push_str(&totals(plan, total, known, jobs));
    if let Some(sampling) = &exp.sampling {
        out.push_str(&worst_case(exp, plan, sampling, &previous));
    }
    out
}

/// The plan's size, order and estimated duration, `total` seconds (at least, unless every run
/// had an estimate), and with `--jobs` the least it could take.
fn totals(plan: &Plan, total: f64, known: bool, jobs: usize) -> String {
    let estimate = if known {
        format!("about {}", lab_config::format::seconds(total))
    } else {
        format!(
            "at least {} (some runs have no estimate)",
            lab_config::format::seconds(total)
        )
    };
    let mut out = format!(
        "{} runs ({} order, seed {}); estimated duration {estimate}\n",
        plan.runs.len(),
        format!("{:?}", plan.order).to_lowercase(),
        plan.seed
    );
    if jobs > 1 {
        out.push_str(&format!(
            "with --jobs {jobs}: runs of variants on disjoint `cpus` go side by side, so as little as {} if every run finds partners; runs sharing CPUs still go one at a time\n",
            lab_config::format::seconds(total / jobs as f64)
        ));
    }
    out
}

/// The most a sampled session may run: every cell the goal depends on at `sampling.max`.
fn worst_case(
    exp: &Experiment,
    plan: &Plan,
    sampling: &Sampling,
    previous: &BTreeMap<CellKey, f64>,
) -> String {
    let looks = lab_stats::sequential::schedule(exp.repetitions, sampling.max);
    let mut keys: Vec<CellKey> = plan.runs.iter().map(|r| r.cell.clone()).collect();
    keys.sort();
    keys.dedup();
    let cells = stopping::goal_cells(exp, sampling, &keys);
    let more = plan::look_runs(exp, &plan.runs, looks.len() as u32, sampling.max, &cells);
    let seconds: Option<f64> = plan
        .runs
        .iter()
        .chain(&more)
        .map(|r| estimate_seconds(exp, r, previous))
        .sum();
    format!(
        "then, while the goal is unmet, looks at {} runs per cell in the {} cells it depends on; worst case {} runs ({} more){}{}\n",
        looks
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        cells.len(),
        plan.runs.len() + more.len(),
        more.len(),
        seconds.map_or_else(String::new, |s| format!(
            ", about {}",
            lab_config::format::seconds(s)
        )),
        sampling.budget.map_or_else(String::new, |b| format!(
            "; within the time budget of {}, no look starts that would end past it",
            lab_config::format::minutes(b.as_secs_f64())
        ))
    )
}

/// The mean wall time of each cell's finished runs in a stored session, computed once.
pub(super) fn mean_wall_by_cell(session: &StoredSession) -> BTreeMap<CellKey, f64> {
    let cells: BTreeMap<&str, &CellKey> = session
        .plan
        .runs
        .iter()
        .map(|r| (r.id.as_str(), &r.cell))
        .collect();
    let mut sums: BTreeMap<CellKey, (f64, usize)> = BTreeMap::new();
    for row in &session.runs {
        if let Some(cell) = cells.get(row.run_id.as_str()) {
            let entry = sums.entry((*cell).clone()).or_default();
            entry.0 += lab_config::units::Nanos(row.wall_ns).seconds().0;
            entry.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(cell, (sum, n))| (cell, sum / n as f64))
        .collect()
}

/// The seconds `runs` are expected to take: each at its cell's mean wall time in `measured`,
/// else what its duration check requests, else the mean of every cell measured.
pub(super) fn expected_seconds(
    exp: &Experiment,
    runs: &[PlannedRun],
    measured: &BTreeMap<CellKey, f64>,
) -> f64 {
    let overall = if measured.is_empty() {
        0.0
    } else {
        measured.values().sum::<f64>() / measured.len() as f64
    };
    runs.iter()
        .map(|r| estimate_seconds(exp, r, measured).unwrap_or(overall))
        .sum()
}

/// A run's expected seconds: the mean wall time of its cell in the previous session, else
/// what its duration check requests.
fn estimate_seconds(
    exp: &Experiment,
    run: &PlannedRun,
    previous: &BTreeMap<CellKey, f64>,
) -> Option<f64> {
    if let Some(seconds) = previous.get(&run.cell) {
        return Some(*seconds);
    }
    exp.checks.iter().find_map(|c| match &c.kind {
        CheckKind::Duration { expect, .. } => {
            let values = run.cell.params.clone();
            config::template::substitute(expect, &values)
                .trim()
                .parse()
                .ok()
        }
        _ => None,
    })
}
