//! Stage 6: from the judged runs of a session to per-cell statistics. A pure function of the
//! experiment and the stored data: the same inputs give the same `Analysis`. It judges
//! nothing (the validity stage did) and decides nothing (the checks stage does).

mod cells;
mod nodes;
mod ratio;
mod shape;
pub mod slowed;

#[cfg(test)]
pub(crate) use cells::cell_of_values;
pub use cells::{cell_stats, cell_stats_of, cell_values_of, stream_label};
pub use lab_findings::analysis::{
    Analysis, CellStats, Counts, Drift, LEVEL, MIN_RUNS, MachineLevel, NodeMedian, NodeMedians,
    Resampling, RunSteadiness, RunView, SteadyStates, Usage, cell_label,
};
pub use nodes::{PERMUTATIONS, node_medians};
pub use ratio::median_ratio;
pub use shape::MIN_ITERATIONS_FOR_STEADY_STATE;

use lab_config::plan::CellKey;
use lab_config::{CellSelector, Experiment, ParamValue};
use lab_stats::Generator;
use lab_stats::sequential::{look_levels, schedule};
use lab_store::StoredSession;

/// Bootstrap resamples per interval.
pub const RESAMPLES: usize = 10_000;
/// The environment variable that sets the resamples per interval of a session's analysis in
/// place of [`RESAMPLES`] (a whole number from 100 on): the growth test counts lab's own work
/// on sessions of two sizes under valgrind, where 10,000 resamples of every interval would take
/// it many minutes. The book states the number used.
pub const RESAMPLES_VAR: &str = "LAB_RESAMPLES";

/// Analyses one stored session of `exp` from its judged runs (the validity stage's
/// [`crate::validity::Validity::runs`], taken over rather than copied: at 100,000 runs a copy
/// held a few hundred megabytes).
pub fn analyze(exp: &Experiment, session: &StoredSession, runs: Vec<RunView>) -> Analysis {
    let resampling = Resampling {
        seed: exp.seed,
        resamples: resamples(),
        level: session_level(exp, &session.plan),
        // A manifest of an analysis this lab does not know is refused when it is read.
        generator: session.manifest.generator().unwrap_or(Generator::ChaCha8),
    };
    let cell_keys = cell_keys(exp, session);
    let cells = carry_start_up(cell_stats(exp, &cell_keys, &runs, resampling), session);
    let nodes = exp
        .primary_metric()
        .map_or_else(Vec::new, |m| node_medians(&cells, &m.name, resampling));
    Analysis {
        experiment: exp.name.clone(),
        session: session.name.clone(),
        manifest: session.manifest.clone(),
        resampling,
        counts: counts(session, &runs),
        cell_keys,
        cells,
        runs,
        nodes,
    }
}

/// The resamples per interval: [`RESAMPLES`], or the number [`RESAMPLES_VAR`] gives.
fn resamples() -> usize {
    std::env::var(RESAMPLES_VAR)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n >= 100)
        .unwrap_or(RESAMPLES)
}

/// `cells` with the uncertainty of the start-up the session took out of every wall time (its
/// `start_up` command) carried into the wall-time cells' intervals.
fn carry_start_up(cells: Vec<CellStats>, session: &StoredSession) -> Vec<CellStats> {
    let Some(cost) = session
        .manifest
        .calibration
        .as_ref()
        .and_then(|c| c.start_up.as_ref())
    else {
        return cells;
    };
    let se = cost.standard_error_s();
    cells
        .into_iter()
        .map(|c| match c.metric.as_str() {
            "wall_s" => cells::carrying_start_up(c, se),
            _ => c,
        })
        .collect()
}

/// The level a session's intervals are read at: [`LEVEL`], or for a sampled session the level
/// of the last look its plan reached (Lan–DeMets spending over the looks, see
/// [`lab_stats::sequential`]).
pub fn session_level(exp: &Experiment, plan: &lab_config::plan::Plan) -> f64 {
    let Some(sampling) = &exp.sampling else {
        return LEVEL;
    };
    let levels = look_levels(LEVEL, &schedule(exp.repetitions, sampling.max));
    let look = plan.runs.iter().map(|r| r.look).max().unwrap_or(1) as usize;
    levels
        .get(look.saturating_sub(1))
        .or(levels.last())
        .copied()
        .unwrap_or(LEVEL)
}

/// The distinct cells of the plan: variants in declared order, then parameter values in
/// declared parameter order. Each cell is kept once as it is first met (a key per planned run
/// held 50 MB and took a sort of 100,000 keys at 100,000 runs).
fn cell_keys(exp: &Experiment, session: &StoredSession) -> Vec<CellKey> {
    let mut seen = std::collections::BTreeSet::new();
    let mut keys: Vec<CellKey> = Vec::new();
    for run in &session.plan.runs {
        if seen.insert(&run.cell) {
            keys.push(run.cell.clone());
        }
    }
    keys.sort_by_cached_key(|k| {
        let rank = exp.variants.iter().position(|v| v.name == k.variant);
        let values: Vec<Option<ParamValue>> = exp
            .params
            .iter()
            .map(|p| k.params.get(&p.name).cloned())
            .collect();
        (rank, values)
    });
    keys
}

fn counts(session: &StoredSession, runs: &[RunView]) -> Counts {
    let measured: Vec<&RunView> = runs.iter().filter(|r| !r.warmup).collect();
    Counts {
        planned: session.plan.runs.len(),
        finished: runs.len(),
        warmup: runs.len() - measured.len(),
        invalid: measured.iter().filter(|r| !r.is_valid()).count(),
        valid: measured.iter().filter(|r| r.is_valid()).count(),
        busy: measured.iter().filter(|r| r.disturbed_only()).count(),
    }
}

/// The statistics of `metric` in the cell a selector names.
pub fn find_cell<'a>(
    cells: &'a [CellStats],
    selector: &CellSelector,
    metric: &str,
) -> Option<&'a CellStats> {
    cells
        .iter()
        .find(|c| c.metric == metric && c.cell.is_named_by(selector))
}
