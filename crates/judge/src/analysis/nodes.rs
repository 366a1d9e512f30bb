//! Runs nested in nodes. Where a cell's runs came from more than one cluster node (machine),
//! the node is a level above the runs: each node's median of the cell with its own interval
//! (the same two-stage percentile bootstrap as a one-machine cell's, over that node's runs),
//! and the machine effect of the cell ([`lab_stats::machine_effect`]: the share of the run
//! medians' variance between nodes and a permutation test of whether the nodes differ beyond
//! their runs' spread), which the checks judge. Only the primary metric's are computed: the
//! machine check judges that metric alone and nothing else reads them, while each node's
//! interval and the 9,999 permutations cost as much as the rest of a cell's analysis. A
//! session on one node (or on this machine) has none of this: its analysis is exactly the
//! local one.

use super::cells::stream_label;
use lab_findings::analysis::{CellStats, NodeMedian, NodeMedians, Resampling};
use lab_stats::{self as stats, Statistic};
use rayon::prelude::*;

/// Random splits of a cell's runs among its nodes for the permutation test.
pub const PERMUTATIONS: usize = 9_999;

/// Per-node medians and the machine effect of every cell of the `primary` metric whose valid
/// runs came from two nodes or more, in the order of `cells`. Cells and nodes are computed side
/// by side; each draws from its own labelled stream, so the thread count changes nothing.
pub fn node_medians(cells: &[CellStats], primary: &str, r: Resampling) -> Vec<NodeMedians> {
    cells
        .par_iter()
        .filter(|c| c.metric == primary)
        .filter_map(|c| of_cell(c, r))
        .collect()
}

/// One cell's per-node medians and machine effect; `None` when its runs came from one node.
fn of_cell(c: &CellStats, r: Resampling) -> Option<NodeMedians> {
    let machines = c.machines.as_ref()?;
    let by_node = machines.nest(&c.runs);
    let (nodes, effect) = rayon::join(
        || {
            machines
                .names
                .par_iter()
                .zip(&by_node)
                .filter_map(|(node, runs)| {
                    let label = stream_label(&c.cell, &c.metric, &format!("node/{node}"));
                    one_node(node.clone(), runs, r, &label)
                })
                .collect()
        },
        || {
            let mut rng = r.stream(&stream_label(&c.cell, &c.metric, "machines"));
            stats::machine_effect(&run_medians(&by_node), PERMUTATIONS, &mut rng)
        },
    );
    Some(NodeMedians {
        label: c.label.clone(),
        metric: c.metric.clone(),
        nodes,
        effect,
    })
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

    /// Cells of `metric` in `labels`, each of 30 runs taking turns on three nodes a, b and c,
    /// node c's runs slower by 1 in the second cell and by 2 in the third.
    fn cells_on_three_nodes(metric: &str, labels: &[&str]) -> Vec<CellStats> {
        let names = ["a", "b", "c"];
        labels
            .iter()
            .enumerate()
            .map(|(i, label)| {
                let values: Vec<f64> = (0..30)
                    .map(|k| 10.0 + (k * 7 % 11) as f64 / 10.0 + (i * (k % 3 / 2)) as f64)
                    .collect();
                let mut cell = crate::analysis::cell_of_values(label, metric, &values);
                let nodes: Vec<Option<&str>> = (0..30).map(|k| Some(names[k % 3])).collect();
                cell.machines = lab_findings::analysis::MachineLevel::of(&nodes);
                cell
            })
            .collect()
    }

    #[test]
    fn only_the_primary_metrics_cells_get_node_medians() {
        let mut cells = cells_on_three_nodes("ms", &["x=1", "x=2"]);
        cells.extend(cells_on_three_nodes("ops", &["x=1", "x=2"]));
        let nodes = node_medians(&cells, "ms", resampling());
        let judged: Vec<(&str, &str)> = nodes
            .iter()
            .map(|n| (n.label.as_str(), n.metric.as_str()))
            .collect();
        assert_eq!(judged, [("x=1", "ms"), ("x=2", "ms")]);
        assert!(nodes.iter().all(|n| n.nodes.len() == 3));
        // Node c is slower in the second cell only.
        let p = |i: usize| nodes[i].effect.map(|e| e.p_value).unwrap();
        assert!(p(1) < 0.01 && p(0) > 0.05, "{} {}", p(0), p(1));
        assert!(node_medians(&cells, "wall_s", resampling()).is_empty());
    }

    #[test]
    fn node_medians_are_the_same_on_one_thread_and_on_several() {
        let cells = cells_on_three_nodes("ms", &["x=1", "x=2", "x=3"]);
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let nodes = pool.install(|| node_medians(&cells, "ms", resampling()));
            serde_json::to_string(&nodes).unwrap()
        };
        let one = on(1);
        assert_eq!(one, on(2));
        assert_eq!(one, on(4));
        assert_eq!(one.matches("\"p_value\"").count(), 3, "{one}");
    }

    #[test]
    fn run_medians_summarise_each_run() {
        let by_node = vec![vec![vec![1.0, 3.0, 2.0], vec![5.0]], vec![vec![4.0, 6.0]]];
        assert_eq!(run_medians(&by_node), vec![vec![2.0, 5.0], vec![5.0]]);
    }
}
