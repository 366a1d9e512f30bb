//! A cell whose runs came from more than one cluster node (machine), node by node: each node's
//! median with its interval, and the machine effect of the cell.

use lab_basis::{Interval, MachineEffect};
use serde::Serialize;

/// One cell's metric, node by node.
#[derive(Debug, Clone, Serialize)]
pub struct NodeMedians {
    pub label: String,
    pub metric: String,
    /// By node name.
    pub nodes: Vec<NodeMedian>,
    /// Whether the nodes differ beyond their runs' spread; `None` when no node ran two runs
    /// or every run's median is the same.
    pub effect: Option<MachineEffect>,
}

/// A node's share of one cell.
#[derive(Debug, Clone, Serialize)]
pub struct NodeMedian {
    pub node: String,
    /// Valid runs of the cell on this node.
    pub n: usize,
    pub median: f64,
    /// None below [`super::MIN_RUNS`] runs on the node.
    pub ci: Option<Interval>,
}
