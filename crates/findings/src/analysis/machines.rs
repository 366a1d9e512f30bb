//! Runs nested in machines within one cell: which machine (cluster node) ran each run, and the
//! intervals that resample the machines first. Where a cell's valid runs came from two machines
//! or more, its interval of the median is the three-stage bootstrap of
//! `lab_stats::nested` (machines, runs within them, iterations within runs), and every
//! ratio that reads the cell resamples it so; a cell on one machine keeps the two-stage
//! interval, computed exactly as before.

use lab_basis::Interval;
use serde::Serialize;
use std::collections::BTreeSet;

/// The machines of a cell whose runs came from more than one.
#[derive(Debug, Clone, Serialize)]
pub struct MachineLevel {
    /// The machines' names, sorted (empty for runs that name none).
    pub names: Vec<String>,
    /// Per run of the cell, parallel to the cell's `runs`: its machine's index in `names`.
    #[serde(skip)]
    pub of_run: Vec<usize>,
    /// The two-stage interval of the median from the runs and iterations alone, as if a
    /// single machine had run them all: what the cell's interval would be without machines.
    pub runs_only_ci: Option<Interval>,
}

impl MachineLevel {
    /// The machines of runs that name `nodes`, one per run; `None` unless they name two or more.
    pub fn of(nodes: &[Option<&str>]) -> Option<MachineLevel> {
        let names: BTreeSet<&str> = nodes.iter().map(|n| n.unwrap_or("")).collect();
        if names.len() < 2 {
            return None;
        }
        let names: Vec<String> = names.into_iter().map(str::to_string).collect();
        let of_run = nodes
            .iter()
            .map(|n| {
                let name = n.unwrap_or("");
                names.iter().position(|m| m == name).unwrap_or(0)
            })
            .collect();
        Some(MachineLevel {
            names,
            of_run,
            runs_only_ci: None,
        })
    }

    /// The runs' values grouped machine by machine (in `names` order), each machine's runs in
    /// run order.
    pub fn nest(&self, runs: &[Vec<f64>]) -> Vec<Vec<Vec<f64>>> {
        let mut machines = vec![Vec::new(); self.names.len()];
        for (run, &m) in runs.iter().zip(&self.of_run) {
            machines[m].push(run.clone());
        }
        machines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_nested_by_their_machine_in_run_order() {
        let nodes = [Some("b"), Some("a"), None, Some("b")];
        let m = MachineLevel::of(&nodes).unwrap();
        assert_eq!(m.names, vec!["", "a", "b"]);
        assert_eq!(m.of_run, vec![2, 1, 0, 2]);
        let runs = vec![vec![1.0], vec![2.0, 3.0], vec![4.0], vec![5.0]];
        assert_eq!(
            m.nest(&runs),
            vec![
                vec![vec![4.0]],
                vec![vec![2.0, 3.0]],
                vec![vec![1.0], vec![5.0]]
            ]
        );
        assert!(MachineLevel::of(&[Some("a"), Some("a")]).is_none());
        assert!(MachineLevel::of(&[None, None]).is_none());
    }
}
