//! Tests of the machine-effect check (`machines.rs`): its verdicts, Holm's adjustment across
//! cells, and the words that carry the numbers.

use super::*;

fn node(name: &str, n: usize, median: f64) -> NodeMedian {
    NodeMedian {
        node: name.into(),
        n,
        median,
        ci: None,
    }
}

fn effect(machines: usize, runs: usize, share: f64, p: f64, smallest: f64) -> MachineEffect {
    MachineEffect {
        machines,
        runs,
        icc: share,
        between_share: share.max(0.0),
        h: 7.5,
        p_value: p,
        permutations: 9_999,
        smallest_p: smallest,
    }
}

fn cell(label: &str, e: Option<MachineEffect>, nodes: Vec<NodeMedian>) -> NodeMedians {
    NodeMedians {
        label: label.into(),
        metric: "ms".into(),
        nodes,
        effect: e,
    }
}

fn verdict_of(cells: &[NodeMedians]) -> CheckResult {
    let spanning: Vec<&NodeMedians> = cells.iter().collect();
    let (judged, unjudged) = judge(&spanning, &[]);
    decided(&judged, &unjudged)
}

#[test]
fn a_node_apart_fails_with_the_size_of_its_difference() {
    let nodes = vec![node("a", 5, 2.0), node("b", 5, 3.6), node("c", 5, 2.1)];
    let r = verdict_of(&[cell(
        "x=1",
        Some(effect(3, 15, 0.62, 0.0001, 1.0 / 756_756.0)),
        nodes,
    )]);
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(r.class, CheckClass::Validity);
    assert!(r.automatic);
    assert_eq!(
        r.reading,
        "cell x=1: node b's median is 1.80× node a's; the nodes hold 62.0% of the variance of the run medians (p = 0.00010)"
    );
    assert_eq!(
        r.evidence,
        "x=1: nodes a 2.00 over 5 runs, b 3.60 over 5 runs, c 2.10 over 5 runs; between nodes 62.0% of the run medians' variance (ICC 0.620), Kruskal–Wallis H 7.50, permutation p = 0.00010 over 9,999 splits (Holm 0.00010)"
    );
}

#[test]
fn nodes_within_their_runs_spread_pass() {
    let nodes = vec![node("a", 6, 2.0), node("b", 6, 2.01)];
    let r = verdict_of(&[cell(
        "x=1",
        Some(effect(2, 12, -0.1, 0.41, 1.0 / 462.0)),
        nodes,
    )]);
    assert_eq!(r.verdict, Verdict::Pass);
    assert_eq!(
        r.reading,
        "in the one cell that ran on several the nodes agree within their runs' spread (smallest p = 0.41)"
    );
    assert!(r.runs.is_empty());
}

#[test]
fn too_few_runs_to_split_leave_it_inconclusive() {
    // Two nodes of three runs: 10 distinct splits, the smallest p-value 0.1.
    let nodes = vec![node("a", 3, 2.0), node("b", 3, 9.0)];
    let r = verdict_of(&[cell("x=1", Some(effect(2, 6, 0.9, 0.1, 0.1)), nodes)]);
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert_eq!(
        r.reading,
        "x=1: 6 runs on 2 nodes can be split among them in only 10 distinct ways, so no difference could reach 5.0% (at least 4 runs on each of 2 nodes, or 3 on each of 3, are needed)"
    );
    let none = verdict_of(&[cell("y", None, vec![node("a", 1, 2.0), node("b", 1, 3.0)])]);
    assert_eq!(none.verdict, Verdict::Inconclusive);
    assert!(
        none.reading.starts_with("y: no node ran two valid runs"),
        "{}",
        none.reading
    );
}

#[test]
fn p_values_are_adjusted_across_cells() {
    // Holm: 0.03 and 0.04 of two cells become 0.06 and 0.06, neither at most 5%.
    let two = || vec![node("a", 8, 2.0), node("b", 8, 2.2)];
    let small = 1.0 / 6435.0;
    let r = verdict_of(&[
        cell("x=1", Some(effect(2, 16, 0.3, 0.03, small)), two()),
        cell("x=2", Some(effect(2, 16, 0.3, 0.04, small)), two()),
    ]);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.evidence);
    assert!(
        r.evidence
            .contains("p = 0.030 over 9,999 splits (Holm 0.060)"),
        "{}",
        r.evidence
    );
    // Alone, 0.03 fails.
    let alone = verdict_of(&[cell("x=1", Some(effect(2, 16, 0.3, 0.03, small)), two())]);
    assert_eq!(alone.verdict, Verdict::Fail);
    // A failing cell makes the check fail even beside an undecided one.
    let mixed = verdict_of(&[
        cell("x=1", Some(effect(2, 16, 0.3, 0.001, small)), two()),
        cell("x=2", Some(effect(2, 6, 0.3, 0.1, 0.1)), two()),
    ]);
    assert_eq!(mixed.verdict, Verdict::Fail);
    assert!(
        mixed
            .reading
            .starts_with("cell x=1: node b's median is 1.10× node a's")
    );
}
