//! Runs nested in nodes. Where a cell's runs came from more than one cluster node (machine),
//! the node is a level above the runs: each node's median of the cell with its own interval
//! (the same two-stage percentile bootstrap as a one-machine cell's, over that node's runs),
//! and the machine effect of the cell ([`lab_stats::machine_effect`]: the share of the run
//! medians' variance between nodes and a permutation test of whether the nodes differ beyond
//! their runs' spread), which the checks judge. A session on one node (or on this machine) has
//! none of this: its analysis is exactly the local one.

use super::cells::stream_label;
use lab_findings::analysis::{CellStats, NodeMedian, NodeMedians, Resampling};
use lab_stats::{self as stats, Statistic};

/// Random splits of a cell's runs among its nodes for the permutation test.
pub const PERMUTATIONS: usize = 9_999;

/// Per-node medians and the machine effect of every cell whose valid runs came from two nodes
/// or more.
pub fn node_medians(cells: &[CellStats], r: Resampling) -> Vec<NodeMedians> {
    cells
        .iter()
        .filter_map(|c| {
            let machines = c.machines.as_ref()?;
            let by_node = machines.nest(&c.runs);
            let nodes: Vec<NodeMedian> = machines
                .names
                .iter()
                .zip(&by_node)
                .filter_map(|(node, runs)| {
                    let label = stream_label(&c.cell, &c.metric, &format!("node/{node}"));
                    one_node(node.clone(), runs, r, &label)
                })
                .collect();
            let mut rng = r.stream(&stream_label(&c.cell, &c.metric, "machines"));
            Some(NodeMedians {
                label: c.label.clone(),
                metric: c.metric.clone(),
                nodes,
                effect: stats::machine_effect(&run_medians(&by_node), PERMUTATIONS, &mut rng),
            })
        })
        .collect()
}

/// Each run's median, node by node.
fn run_medians(by_node: &[Vec<Vec<f64>>]) -> Vec<Vec<f64>> {
    by_node
        .iter()
        .map(|runs| runs.iter().map(|run| stats::median(run)).collect())
        .collect()
}

fn one_node(node: String, runs: &[Vec<f64>], r: Resampling, label: &str) -> Option<NodeMedian> {
    let pooled: Vec<f64> = runs.iter().flatten().copied().collect();
    let median = stats::summarize(&pooled)?.median;
    let ci = stats::percentile_ci(
        runs,
        Statistic::Median,
        r.resamples,
        r.level,
        &mut r.stream(label),
    )
    .filter(|_| runs.len() >= super::MIN_RUNS);
    Some(NodeMedian {
        node,
        n: runs.len(),
        median,
        ci,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resampling() -> Resampling {
        Resampling {
            seed: 11,
            resamples: 2000,
            level: 0.95,
            generator: lab_stats::Generator::ChaCha8,
        }
    }

    #[test]
    fn a_node_has_its_median_and_an_interval_from_three_runs() {
        let a: Vec<Vec<f64>> = [10.0, 10.2, 9.9, 10.1, 10.0].map(|v| vec![v]).to_vec();
        let na = one_node("a".into(), &a, resampling(), "t/a").unwrap();
        // The median of five values: the third smallest.
        assert_eq!(na.median, 10.0);
        // The bootstrap distribution of a median of five lies within the values' range.
        let ci = na.ci.unwrap();
        assert!(ci.lo >= 9.9 && ci.hi <= 10.2, "{ci:?}");
        // Below MIN_RUNS a node has no interval.
        let few = one_node("d".into(), &a[..2], resampling(), "t/d").unwrap();
        assert!(few.ci.is_none());
        assert_eq!(few.n, 2);
    }

    #[test]
    fn run_medians_summarise_each_run() {
        let by_node = vec![vec![vec![1.0, 3.0, 2.0], vec![5.0]], vec![vec![4.0, 6.0]]];
        assert_eq!(run_medians(&by_node), vec![vec![2.0, 5.0], vec![5.0]]);
    }
}
