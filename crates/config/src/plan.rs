//! Stage 2: expand variants × params × repetitions into runs, in a seeded, blocked order.

use crate::{
    CellScope, CellSelector, Experiment, Order, ParamValue, REV_PARAM, Variant,
    template::substitute,
};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

pub mod layout;
mod stored;

/// One cell of the matrix: a variant at one setting of every parameter. Cells compare by
/// variant name, then by their parameter values (see [`ParamValue`]'s order).
#[derive(Debug, Clone, Eq)]
pub struct CellKey {
    pub variant: String,
    /// Parameter values by parameter name. Shared: every run of a cell can point at one map
    /// (a map per run held 0.5 KB each, 50 MB at 100,000 runs).
    pub params: Arc<BTreeMap<String, ParamValue>>,
}

// Runs of one cell share its parameter map, so two keys holding the same map are equal
// without comparing it; keys that do not share one compare by value, as a derived order would.
impl PartialEq for CellKey {
    fn eq(&self, other: &Self) -> bool {
        self.variant == other.variant
            && (Arc::ptr_eq(&self.params, &other.params) || self.params == other.params)
    }
}

impl Ord for CellKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.variant.cmp(&other.variant).then_with(|| {
            if Arc::ptr_eq(&self.params, &other.params) {
                std::cmp::Ordering::Equal
            } else {
                self.params.cmp(&other.params)
            }
        })
    }
}

impl PartialOrd for CellKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl CellKey {
    pub fn new(variant: impl Into<String>, params: Arc<BTreeMap<String, ParamValue>>) -> Self {
        CellKey {
            variant: variant.into(),
            params,
        }
    }

    /// Whether a selector names this cell: its variant, if it names one, and every
    /// parameter value it names.
    pub fn is_named_by(&self, selector: &CellSelector) -> bool {
        selector.variant.as_ref().is_none_or(|v| *v == self.variant)
            && selector
                .params
                .iter()
                .all(|(k, v)| self.params.get(k) == Some(v))
    }

    /// Whether the cell lies in a check's scope: in any of its sets.
    pub fn is_in(&self, scope: &CellScope) -> bool {
        scope.sets.iter().any(|set| {
            (set.variants.is_empty() || set.variants.contains(&self.variant))
                && set
                    .params
                    .iter()
                    .all(|(name, values)| self.params.get(name).is_some_and(|v| values.contains(v)))
        })
    }
}

/// A cell serialises as its variant and its parameter values in their display form.
impl Serialize for CellKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Shown<'a>(&'a BTreeMap<String, ParamValue>);
        impl Serialize for Shown<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map(self.0.iter().map(|(k, v)| (k, v.to_string())))
            }
        }
        let mut cell = s.serialize_struct("CellKey", 2)?;
        cell.serialize_field("variant", &self.variant)?;
        cell.serialize_field("params", &Shown(&self.params))?;
        cell.end()
    }
}

impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.variant)?;
        for (k, v) in self.params.iter() {
            write!(f, " {k}={v}")?;
        }
        Ok(())
    }
}

/// One process to run. Stored in plan.json with the cell's variant and parameter values (as
/// they are typed in lab.toml) as fields of the run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "stored::StoredRun")]
pub struct PlannedRun {
    /// Stable identifier, also the log file name: `r0001`, `r0002`, … in execution order.
    pub id: String,
    /// 1-based position in the execution order.
    pub position: usize,
    /// The cell the run measures. Its parameter map is shared: the runs of a cell point at one
    /// map, in a plan made here and in one read back ([`Plan`]'s runs are read through
    /// [`stored::runs`]).
    pub cell: CellKey,
    /// 1-based repetition within the cell; warm-up runs count separately.
    pub repetition: u32,
    pub warmup: bool,
    /// The command, shared by the runs of a cell, which run the same one.
    pub argv: Arc<[String]>,
    /// The run this one repeats, when that one ran on a busy machine.
    pub repeats: Option<String>,
    /// The look of a sampled session this run was planned for (1: the initial plan).
    pub look: u32,
    /// Bytes of padding in the run's environment (`layout = "randomized"`), see
    /// [`layout`]; `None` when the environment is left as it is.
    pub env_padding: Option<u32>,
    /// Bytes the run's heap is shifted by (`layout = "randomized"`), see [`layout`]; `None`
    /// when the layout is left as it is.
    pub heap_shift: Option<u32>,
}

/// Every planned run in execution order, with what decided the order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub order: Order,
    pub seed: u64,
    #[serde(deserialize_with = "stored::runs")]
    pub runs: Vec<PlannedRun>,
}

/// A cell before repetitions are assigned, with the index of its variant.
#[derive(Debug, Clone)]
struct Cell {
    variant: usize,
    key: CellKey,
}

/// Expands the experiment into runs. Shuffled order is blocked: each block holds every cell once,
/// warm-up blocks first, so drift spreads evenly over cells instead of confounding them.
pub fn plan(exp: &Experiment) -> Plan {
    let cells = cells(exp);
    let blocks = exp.warmup_runs + exp.repetitions;
    let mut rng = ChaCha8Rng::seed_from_u64(exp.seed);
    let mut order: Vec<(usize, u32)> = Vec::new();
    match exp.order {
        Order::Shuffled => {
            for block in 0..blocks {
                let mut ids: Vec<usize> = (0..cells.len()).collect();
                ids.shuffle(&mut rng);
                order.extend(ids.into_iter().map(|c| (c, block)));
            }
        }
        Order::Sequential => {
            for c in 0..cells.len() {
                order.extend((0..blocks).map(|block| (c, block)));
            }
        }
    }
    let runs: Vec<PlannedRun> = order
        .into_iter()
        .enumerate()
        .map(|(i, (c, block))| planned_run(exp, &cells[c], block, i + 1))
        .collect();
    let mut runs = if exp.duet.is_some() {
        paired(runs, 0)
    } else {
        runs
    };
    if exp.layout.is_some() {
        layout::pad(&mut runs, exp.seed);
    }
    Plan {
        order: exp.order,
        seed: exp.seed,
        runs,
    }
}

fn planned_run(exp: &Experiment, cell: &Cell, block: u32, position: usize) -> PlannedRun {
    let variant = &exp.variants[cell.variant];
    let warmup = block < exp.warmup_runs;
    let repetition = if warmup {
        block + 1
    } else {
        block - exp.warmup_runs + 1
    };
    PlannedRun {
        id: run_id(position),
        position,
        cell: cell.key.clone(),
        repetition,
        warmup,
        argv: run_argv(exp, variant, &cell.key.params).into(),
        repeats: None,
        look: 1,
        env_padding: None,
        heap_shift: None,
    }
}

/// The command a run executes: its variant's with the cell's values in place, under valgrind's
/// callgrind where the experiment counts instructions that way.
fn run_argv(
    exp: &Experiment,
    variant: &Variant,
    params: &BTreeMap<String, ParamValue>,
) -> Vec<String> {
    let argv: Vec<String> = variant.argv.iter().map(|a| substitute(a, params)).collect();
    if exp
        .counters
        .contains(&crate::counter::Counter::CallgrindInstructions)
    {
        crate::counter::wrap(&argv)
    } else {
        argv
    }
}

/// The runs that bring every cell in `wanted` to `target` repetitions for look `look`, at the
/// positions after `planned`: shuffled blocks (each cell once per block, while it needs runs),
/// seeded by the session's seed and the look, so a session's growth is reproducible; in
/// sequential order, each cell's runs one after the other.
pub fn look_runs(
    exp: &Experiment,
    planned: &[PlannedRun],
    look: u32,
    target: u32,
    wanted: &[CellKey],
) -> Vec<PlannedRun> {
    let cells: Vec<Cell> = cells(exp)
        .into_iter()
        .filter(|c| wanted.contains(&c.key))
        .collect();
    let mut counts: Vec<u32> = cells
        .iter()
        .map(|c| repetitions_planned(planned, &c.key))
        .collect();
    let mut done = counts.clone();
    let mut rng = ChaCha8Rng::seed_from_u64(exp.seed ^ u64::from(look).wrapping_mul(LOOK_MIX));
    let mut order: Vec<usize> = Vec::new();
    match exp.order {
        Order::Shuffled => loop {
            let mut block: Vec<usize> = (0..cells.len()).filter(|&i| done[i] < target).collect();
            if block.is_empty() {
                break;
            }
            block.shuffle(&mut rng);
            for &i in &block {
                done[i] += 1;
            }
            order.extend(block);
        },
        Order::Sequential => {
            for (i, n) in done.iter_mut().enumerate() {
                order.extend((*n..target).map(|_| i));
                *n = (*n).max(target);
            }
        }
    }
    let runs: Vec<PlannedRun> = order
        .into_iter()
        .enumerate()
        .map(|(k, i)| {
            counts[i] += 1;
            let position = planned.len() + k + 1;
            let mut run = planned_run(exp, &cells[i], exp.warmup_runs + counts[i] - 1, position);
            run.look = look;
            run
        })
        .collect();
    let mut runs = if exp.duet.is_some() {
        paired(runs, planned.len())
    } else {
        runs
    };
    if exp.layout.is_some() {
        layout::pad(&mut runs, exp.seed);
    }
    runs
}

/// The runs of a duet in pairs: each run followed by its partner, the next run of the same
/// cell at the other revision (in a shuffled plan, the one of the same block), so that the
/// two can start together. Runs keep their shuffled order otherwise and are numbered again
/// from `before + 1`; a run left without a partner keeps its place and runs alone.
pub fn paired(runs: Vec<PlannedRun>, before: usize) -> Vec<PlannedRun> {
    let mut taken = vec![false; runs.len()];
    let mut order = Vec::with_capacity(runs.len());
    for i in 0..runs.len() {
        if taken[i] {
            continue;
        }
        taken[i] = true;
        order.push(i);
        let partner = (i + 1..runs.len()).find(|&j| !taken[j] && partners(&runs[i], &runs[j]));
        if let Some(j) = partner {
            taken[j] = true;
            order.push(j);
        }
    }
    order
        .into_iter()
        .enumerate()
        .map(|(k, i)| {
            let position = before + k + 1;
            PlannedRun {
                id: run_id(position),
                position,
                ..runs[i].clone()
            }
        })
        .collect()
}

/// Whether two runs are one pair of a duet: the same cell but for the revision, both warm-up
/// or both measured.
pub fn partners(a: &PlannedRun, b: &PlannedRun) -> bool {
    let rev = |r: &PlannedRun| r.cell.params.get(REV_PARAM).cloned();
    let rest = |r: &PlannedRun| {
        let mut p = (*r.cell.params).clone();
        p.remove(REV_PARAM);
        p
    };
    a.warmup == b.warmup
        && a.cell.variant == b.cell.variant
        && rev(a).is_some()
        && rev(a) != rev(b)
        && rest(a) == rest(b)
}

/// Spreads the look number over the seed's bits (the 64-bit golden ratio, as in SplitMix64).
const LOOK_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// The highest measured repetition planned for `cell` (warm-ups and re-runs aside).
fn repetitions_planned(planned: &[PlannedRun], cell: &CellKey) -> u32 {
    planned
        .iter()
        .filter(|r| !r.warmup && r.repeats.is_none() && r.cell == *cell)
        .map(|r| r.repetition)
        .max()
        .unwrap_or(0)
}

/// The identifier of the run at a 1-based position.
pub fn run_id(position: usize) -> String {
    format!("r{position:04}")
}

/// Every cell: variants in declared order, then the parameter product (names sorted, values in
/// declared order), honouring per-variant restrictions.
/// Every cell of the matrix, in plan order.
pub fn cell_keys(exp: &Experiment) -> Vec<CellKey> {
    cells(exp).into_iter().map(|c| c.key).collect()
}

fn cells(exp: &Experiment) -> Vec<Cell> {
    let mut out = Vec::new();
    for (vi, variant) in exp.variants.iter().enumerate() {
        let mut combos: Vec<BTreeMap<String, ParamValue>> = vec![BTreeMap::new()];
        for param in &exp.params {
            let values = variant.only.get(&param.name).unwrap_or(&param.values);
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.insert(param.name.clone(), v.clone());
                        c
                    })
                })
                .collect();
        }
        out.extend(combos.into_iter().map(|params| Cell {
            variant: vi,
            key: CellKey::new(variant.name.clone(), Arc::new(params)),
        }));
    }
    out
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
