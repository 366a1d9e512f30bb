//! What the analysis of one session found: per cell and metric, the statistics of its valid
//! runs with their intervals, the runs themselves as judged, and the machines they came from.

mod cells;
mod machines;
mod nodes;
mod shape;

pub use crate::runs::{RunView, Usage};
pub use cells::{CellStats, Resampling};
pub use machines::MachineLevel;
pub use nodes::{NodeMedian, NodeMedians};
pub use shape::{Drift, RunSteadiness, SteadyStates};

use lab_config::Experiment;
use lab_config::plan::CellKey;
use lab_store::Manifest;
use serde::Serialize;

/// The stated confidence level of every interval; a sampled session reads each look at a
/// higher level so that its intervals keep this one over all looks (the judgement's
/// `analysis::session_level`).
pub const LEVEL: f64 = 0.95;

/// Fewest valid runs per cell for an interval, and so for a check that compares cells: with
/// two runs a bootstrap can only resample two values, and its "interval" is their range.
pub const MIN_RUNS: usize = 3;

/// Everything the report shows, computed from one session.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    pub experiment: String,
    pub session: String,
    pub manifest: Manifest,
    pub resampling: Resampling,
    pub counts: Counts,
    /// Cells in plan order (variants as declared, then parameters).
    pub cell_keys: Vec<CellKey>,
    pub cells: Vec<CellStats>,
    pub runs: Vec<RunView>,
    /// Where runs of a cell came from more than one cluster node: each node's median and the
    /// machine effect, of the primary metric only (the one the machine check judges).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeMedians>,
}

impl Analysis {
    /// The timed (not warm-up) runs of `cell`, in execution order.
    pub fn timed_runs<'a>(&'a self, cell: &'a CellKey) -> impl Iterator<Item = &'a RunView> + 'a {
        self.runs
            .iter()
            .filter(move |r| &r.cell == cell && !r.warmup)
    }

    /// Why the first timed run of `cell` that was invalid was so.
    pub fn first_problem<'a>(&'a self, cell: &'a CellKey) -> Option<&'a str> {
        self.timed_runs(cell)
            .find_map(|r| r.problems.first())
            .map(String::as_str)
    }
}

/// How many runs there were and how many were used.
#[derive(Debug, Clone, Serialize)]
pub struct Counts {
    pub planned: usize,
    pub finished: usize,
    pub warmup: usize,
    pub invalid: usize,
    pub valid: usize,
    /// Measured runs whose timings alone were discarded because the machine was busy.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub busy: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A cell's name on the page: the variant and the parameters that take several values.
pub fn cell_label(exp: &Experiment, cell: &CellKey) -> String {
    let mut label = cell.variant.clone();
    for p in exp.params.iter().filter(|p| p.values.len() > 1) {
        if let Some(v) = cell.params.get(&p.name) {
            label.push_str(&format!(" {}={v}", p.name));
        }
    }
    label
}
