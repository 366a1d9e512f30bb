//! Runs nested in nodes. Where a cell's runs came from more than one cluster node, the node
//! is a level above the runs: each node's median of the cell with its own interval (the same
//! two-stage percentile bootstrap as the cell's, over that node's runs), and whether two nodes'
//! intervals miss each other. Two 95% intervals that do not overlap differ at well beyond the
//! 5% level (Schenker & Gentleman, "On judging the significance of differences by examining the
//! overlap between confidence intervals", The American Statistician 55(3), 2001), so the
//! disagreement flagged here is a real one, never noise. A session on one node (or on this
//! machine) has none of this: its analysis is exactly the local one.

use super::cells::{CellStats, Resampling, stream_label};
use crate::stats::{self, Interval, Statistic, Summary};
use crate::store::RunRow;
use serde::Serialize;
use std::collections::BTreeMap;

/// One cell's metric, node by node.
#[derive(Debug, Clone, Serialize)]
pub struct NodeMedians {
    pub label: String,
    pub metric: String,
    /// By node name.
    pub nodes: Vec<NodeMedian>,
    /// Some two nodes' intervals do not overlap.
    pub disagree: bool,
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

/// Per-node medians of every cell whose valid runs came from two nodes or more.
pub fn node_medians(cells: &[CellStats], rows: &[RunRow], r: Resampling) -> Vec<NodeMedians> {
    let node_of: BTreeMap<&str, &str> = rows
        .iter()
        .filter_map(|row| {
            row.node
                .as_deref()
                .filter(|n| !n.is_empty())
                .map(|n| (row.run_id.as_str(), n))
        })
        .collect();
    if node_of.is_empty() {
        return Vec::new();
    }
    cells
        .iter()
        .filter_map(|c| {
            let by_node = split_by_node(&c.run_ids, &c.runs, &node_of);
            (by_node.len() > 1).then(|| {
                let nodes: Vec<NodeMedian> = by_node
                    .into_iter()
                    .filter_map(|(node, values)| {
                        let label = stream_label(&c.cell, &c.metric, &format!("node/{node}"));
                        one_node(node, &values, r, &label)
                    })
                    .collect();
                NodeMedians {
                    label: c.label.clone(),
                    metric: c.metric.clone(),
                    disagree: disagree(&nodes),
                    nodes,
                }
            })
        })
        .collect()
}

/// A cell's runs (values per run) grouped by the node that ran each, in run order.
fn split_by_node(
    run_ids: &[String],
    values: &[Vec<f64>],
    node_of: &BTreeMap<&str, &str>,
) -> BTreeMap<String, Vec<Vec<f64>>> {
    let mut by_node: BTreeMap<String, Vec<Vec<f64>>> = BTreeMap::new();
    for (id, run) in run_ids.iter().zip(values) {
        let node = node_of.get(id.as_str()).copied().unwrap_or("");
        by_node
            .entry(node.to_string())
            .or_default()
            .push(run.clone());
    }
    by_node
}

fn one_node(node: String, runs: &[Vec<f64>], r: Resampling, label: &str) -> Option<NodeMedian> {
    let pooled: Vec<f64> = runs.iter().flatten().copied().collect();
    let median = Summary::of(&pooled)?.median;
    let ci = stats::percentile_ci(
        runs,
        Statistic::Median,
        r.resamples,
        r.level,
        &mut stats::stream(r.seed, label),
    )
    .filter(|_| runs.len() >= super::MIN_RUNS);
    Some(NodeMedian {
        node,
        n: runs.len(),
        median,
        ci,
    })
}

/// Whether some two nodes' intervals miss each other.
fn disagree(nodes: &[NodeMedian]) -> bool {
    let cis: Vec<&Interval> = nodes.iter().filter_map(|n| n.ci.as_ref()).collect();
    cis.iter()
        .enumerate()
        .any(|(i, a)| cis[i + 1..].iter().any(|b| a.hi < b.lo || b.hi < a.lo))
}

/// One line per cell where the nodes disagree: "double n=2 (score): n1 2.00 [1.98, 2.02]
/// over 5 runs, n2 2.50 [2.47, 2.52] over 5 runs".
pub fn disagreements(medians: &[NodeMedians]) -> Vec<String> {
    medians
        .iter()
        .filter(|m| m.disagree)
        .map(|m| {
            let nodes: Vec<String> = m
                .nodes
                .iter()
                .map(|n| {
                    let ci = n.ci.as_ref().map_or_else(String::new, |ci| {
                        format!(
                            " [{}, {}]",
                            crate::format::significant(ci.lo, 3),
                            crate::format::significant(ci.hi, 3)
                        )
                    });
                    format!(
                        "{} {}{ci} over {} runs",
                        n.node,
                        crate::format::significant(n.median, 3),
                        n.n
                    )
                })
                .collect();
            format!(
                "the nodes disagree on {} ({}): {}",
                m.label,
                m.metric,
                nodes.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resampling() -> Resampling {
        Resampling {
            seed: 11,
            resamples: 2000,
            level: 0.95,
        }
    }

    #[test]
    fn runs_are_grouped_by_their_node_in_run_order() {
        let ids: Vec<String> = ["r1", "r2", "r3"].map(String::from).to_vec();
        let values = vec![vec![1.0], vec![5.0, 6.0], vec![2.0]];
        let node_of: BTreeMap<&str, &str> = [("r1", "a"), ("r2", "b"), ("r3", "a")].into();
        let by = split_by_node(&ids, &values, &node_of);
        assert_eq!(by["a"], vec![vec![1.0], vec![2.0]]);
        assert_eq!(by["b"], vec![vec![5.0, 6.0]]);
    }

    #[test]
    fn nodes_whose_intervals_miss_each_other_disagree() {
        let a: Vec<Vec<f64>> = [10.0, 10.2, 9.9, 10.1, 10.0].map(|v| vec![v]).to_vec();
        let b: Vec<Vec<f64>> = [12.0, 12.1, 11.9, 12.2, 12.0].map(|v| vec![v]).to_vec();
        let close: Vec<Vec<f64>> = [10.1, 9.8, 10.0, 10.3, 9.9].map(|v| vec![v]).to_vec();
        let na = one_node("a".into(), &a, resampling(), "t/a").unwrap();
        let nb = one_node("b".into(), &b, resampling(), "t/b").unwrap();
        let nc = one_node("c".into(), &close, resampling(), "t/c").unwrap();
        // Medians of five values: the third smallest.
        assert_eq!((na.median, nb.median, nc.median), (10.0, 12.0, 10.0));
        // The bootstrap distribution of a median of five lies within the values' range.
        let ci = na.ci.unwrap();
        assert!(ci.lo >= 9.9 && ci.hi <= 10.2, "{ci:?}");
        assert!(disagree(&[na.clone(), nb.clone()]));
        assert!(!disagree(&[na.clone(), nc.clone()]));
        // Below MIN_RUNS a node has no interval and cannot be said to disagree.
        let few = one_node("d".into(), &b[..2], resampling(), "t/d").unwrap();
        assert!(few.ci.is_none());
        assert!(!disagree(&[na, few]));
        let line = disagreements(&[NodeMedians {
            label: "double n=2".into(),
            metric: "score".into(),
            nodes: vec![nb, nc],
            disagree: true,
        }]);
        assert!(
            line[0].starts_with("the nodes disagree on double n=2 (score): b 12.0 ["),
            "{line:?}"
        );
    }
}
