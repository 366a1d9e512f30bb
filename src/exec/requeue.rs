//! Which disturbed runs are run again at the end of the session, and when to stop: each run
//! at most `requeue` times, the whole session at most half its planned runs again, and no
//! more re-runs of a cell whose re-runs were all disturbed `requeue` times in a row (the
//! machine stays busy: its timings are discarded, its outputs still judged).

use crate::config::Experiment;
use crate::plan::{CellKey, PlannedRun};
use crate::store::RunRow;
use std::collections::{BTreeMap, BTreeSet};

/// What happens to a finished run.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Undisturbed, or not to be run again (it was already, as often as allowed).
    Keep,
    /// Disturbed: run it again at the end, with the share of its wall time it waited.
    Again { share: f64 },
    /// Disturbed, and its cell stays disturbed: no more re-runs of the cell (said once).
    CellStaysBusy { cell: CellKey, reruns: u32 },
    /// Disturbed, and the session's re-run budget is spent (said once).
    BudgetSpent { budget: usize },
}

/// The re-runs of one session.
#[derive(Debug)]
pub struct Requeue {
    limit: f64,
    per_run: u32,
    budget: usize,
    spent: usize,
    /// Re-runs per original run.
    again: BTreeMap<String, u32>,
    /// Disturbed re-runs in a row, per cell.
    busy_in_a_row: BTreeMap<CellKey, u32>,
    /// Cells no longer run again.
    given_up: BTreeSet<CellKey>,
    budget_said: bool,
}

impl Requeue {
    /// The re-runs allowed for a session of `planned` runs of `exp`.
    pub fn of(exp: &Experiment, planned: usize) -> Self {
        Self::new(exp.max_busy, exp.requeue, planned)
    }

    /// Runs disturbed beyond `limit` are run again up to `per_run` times each.
    pub fn new(limit: f64, per_run: u32, planned: usize) -> Self {
        Requeue {
            limit,
            per_run,
            budget: planned.div_ceil(2),
            spent: 0,
            again: BTreeMap::new(),
            busy_in_a_row: BTreeMap::new(),
            given_up: BTreeSet::new(),
            budget_said: false,
        }
    }

    /// Whether `run`, just stored as `row`, is run again. The rule is the one the validity
    /// stage judges by, applied to the counters just stored.
    pub fn decide(&mut self, run: &PlannedRun, row: &RunRow) -> Decision {
        let disturbed = row.disturbed(self.limit);
        if run.repeats.is_some() {
            let streak = self.busy_in_a_row.entry(run.cell.clone()).or_insert(0);
            *streak = if disturbed.is_some() { *streak + 1 } else { 0 };
        }
        let Some((contention, _)) = disturbed else {
            return Decision::Keep;
        };
        if self.per_run == 0 || self.given_up.contains(&run.cell) {
            return Decision::Keep;
        }
        let original = run.repeats.clone().unwrap_or_else(|| run.id.clone());
        if self.again.get(&original).copied().unwrap_or(0) >= self.per_run {
            return Decision::Keep;
        }
        let streak = self.busy_in_a_row.get(&run.cell).copied().unwrap_or(0);
        if streak >= self.per_run.max(2) {
            self.given_up.insert(run.cell.clone());
            return Decision::CellStaysBusy {
                cell: run.cell.clone(),
                reruns: streak,
            };
        }
        let count = self.again.entry(original).or_insert(0);
        if self.spent >= self.budget {
            if std::mem::replace(&mut self.budget_said, true) {
                return Decision::Keep;
            }
            return Decision::BudgetSpent {
                budget: self.budget,
            };
        }
        *count += 1;
        self.spent += 1;
        Decision::Again {
            share: contention.share(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ParamValue;

    fn run(id: &str, cell: &str, repeats: Option<&str>) -> PlannedRun {
        let params = std::sync::Arc::new([("n".to_string(), ParamValue::Text(cell.into()))].into());
        PlannedRun {
            id: id.into(),
            position: 1,
            cell: CellKey::new("v", params),
            repetition: 1,
            warmup: false,
            argv: Vec::new(),
            repeats: repeats.map(str::to_string),
            look: 1,
            env_padding: None,
        }
    }

    /// A run of 1 s that waited `waited_ms` for CPUs others had.
    fn row(waited_ms: u64) -> RunRow {
        RunRow {
            wall_ns: 1_000_000_000,
            user_ns: 1_000_000_000,
            host_busy_ns: Some(2_000_000_000),
            host_capacity_ns: Some(2_000_000_000),
            psi_cpu_own_us: Some(waited_ms * 1000),
            busy_limit: Some(0.10),
            ..RunRow::default()
        }
    }

    fn requeue(per_run: u32, planned: usize) -> Requeue {
        Requeue::new(0.10, per_run, planned)
    }

    #[test]
    fn a_disturbed_run_runs_again_as_often_as_allowed() {
        let mut q = requeue(2, 100);
        assert_eq!(q.decide(&run("r1", "a", None), &row(10)), Decision::Keep);
        assert_eq!(
            q.decide(&run("r1", "a", None), &row(400)),
            Decision::Again { share: 0.4 }
        );
        assert!(matches!(
            q.decide(&run("r9", "a", Some("r1")), &row(400)),
            Decision::Again { .. }
        ));
        assert_eq!(
            q.decide(&run("r10", "a", Some("r1")), &row(400)),
            Decision::Keep
        );
    }

    #[test]
    fn a_cell_that_stays_busy_is_given_up() {
        let mut q = requeue(2, 100);
        for (i, id) in ["r1", "r2", "r3"].iter().enumerate() {
            let first = q.decide(&run(id, "a", None), &row(400));
            assert!(matches!(first, Decision::Again { .. }), "{i}: {first:?}");
        }
        assert!(matches!(
            q.decide(&run("r4", "a", Some("r1")), &row(400)),
            Decision::Again { .. }
        ));
        let given_up = q.decide(&run("r5", "a", Some("r2")), &row(400));
        assert!(
            matches!(given_up, Decision::CellStaysBusy { reruns: 2, .. }),
            "{given_up:?}"
        );
        assert_eq!(
            q.decide(&run("r6", "a", Some("r3")), &row(400)),
            Decision::Keep
        );
        // Another cell is still run again.
        assert!(matches!(
            q.decide(&run("r7", "b", None), &row(400)),
            Decision::Again { .. }
        ));
    }

    #[test]
    fn the_session_runs_at_most_half_its_plan_again() {
        let mut q = requeue(2, 4);
        let cells = ["a", "b", "c", "d"];
        let decisions: Vec<Decision> = cells
            .iter()
            .map(|c| q.decide(&run(c, c, None), &row(400)))
            .collect();
        assert!(matches!(decisions[0], Decision::Again { .. }));
        assert!(matches!(decisions[1], Decision::Again { .. }));
        assert_eq!(decisions[2], Decision::BudgetSpent { budget: 2 });
        assert_eq!(decisions[3], Decision::Keep, "said once");
    }
}
