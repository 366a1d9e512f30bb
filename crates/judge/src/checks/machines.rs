//! The automatic check of a session whose cells ran on several machines (cluster nodes): the
//! primary metric must not depend on the machine that ran a run beyond the runs' own spread.
//!
//! A machine that is slower than the others (another CPU stepping, a governor, a noisy
//! neighbour, a thermal limit) makes the runs on it agree with each other and differ from the
//! rest: pooled, they look like ordinary spread, and a runs-only interval is then too narrow.
//! For every cell whose runs came from two machines or more, the analysis gives the machine
//! effect ([`lab_stats::machine_effect`]): the share of the run medians' variance between
//! machines (ICC(1)) and a permutation p-value of whether they differ. The p-values of the
//! cells are adjusted together by Holm's step-down procedure (Holm 1979, Scand. J. Stat.
//! 6:65), so that a session of many cells on several machines does not fail by chance one
//! time in a few. A cell fails when its adjusted p-value is at most 5%; a cell whose runs
//! cannot be split among its machines in enough ways for any difference to reach 5% (two
//! machines of three runs each have only ten) is undecided. The check fails when some cell
//! fails, is inconclusive when some cell is undecided, and passes otherwise. Each cell's
//! interval already resamples its machines (see [`lab_stats::nested`]), whatever this
//! check finds; what it says is whether the machines are interchangeable.

use crate::analysis::{Analysis, CellStats, NodeMedian, NodeMedians};
use lab_config::format::{p_value, percent, ratio, significant};
use lab_config::{CheckClass, Experiment};
use lab_findings::checks::{CheckResult, Verdict};
use lab_stats::MachineEffect;

/// The check's name, as the report lists it.
pub const MACHINES: &str = "no cell depends on the machine that ran it";

/// The level at which a machine effect is reported: the complement of the stated level.
const ALPHA: f64 = 1.0 - crate::analysis::LEVEL;

/// One cell spanning machines, judged.
struct CellFinding<'a> {
    nodes: &'a NodeMedians,
    cell: Option<&'a CellStats>,
    effect: MachineEffect,
    /// The Holm-adjusted p-value.
    adjusted: f64,
}

/// The check's result for a session whose cells ran on several machines; `None` when no cell
/// of the primary metric did (its report does not list the check).
pub(super) fn machines_result(exp: &Experiment, analysis: &Analysis) -> Option<CheckResult> {
    let primary = exp.primary_metric()?.name.as_str();
    let spanning: Vec<&NodeMedians> = analysis
        .nodes
        .iter()
        .filter(|n| n.metric == primary)
        .collect();
    if spanning.is_empty() {
        return None;
    }
    let (judged, unjudged) = judge(&spanning, &analysis.cells);
    Some(decided(&judged, &unjudged))
}

/// The cells that can be judged, with their adjusted p-values, and why the others cannot.
fn judge<'a>(
    spanning: &[&'a NodeMedians],
    cells: &'a [CellStats],
) -> (Vec<CellFinding<'a>>, Vec<String>) {
    let mut unjudged = Vec::new();
    let mut testable = Vec::new();
    for &nodes in spanning {
        match nodes.effect {
            None => unjudged.push(format!(
                "{}: no node ran two valid runs, or every run's median is the same",
                nodes.label
            )),
            Some(e) if e.smallest_p > ALPHA => unjudged.push(too_few_splits(nodes, &e)),
            Some(e) => testable.push((nodes, e)),
        }
    }
    let p: Vec<f64> = testable.iter().map(|(_, e)| e.p_value).collect();
    let adjusted = lab_stats::holm(&p);
    let judged = testable
        .into_iter()
        .zip(adjusted)
        .map(|((nodes, effect), adjusted)| CellFinding {
            nodes,
            cell: cells
                .iter()
                .find(|c| c.label == nodes.label && c.metric == nodes.metric),
            effect,
            adjusted,
        })
        .collect();
    (judged, unjudged)
}

/// "x=1: 6 runs on 2 nodes split among them in only 10 ways: no difference could reach 5%".
fn too_few_splits(nodes: &NodeMedians, e: &MachineEffect) -> String {
    format!(
        "{}: {} runs on {} nodes can be split among them in only {} distinct ways, so no difference could reach {} (at least 4 runs on each of 2 nodes, or 3 on each of 3, are needed)",
        nodes.label,
        e.runs,
        e.machines,
        (1.0 / e.smallest_p).round(),
        percent(ALPHA)
    )
}

fn decided(judged: &[CellFinding], unjudged: &[String]) -> CheckResult {
    let failing: Vec<&CellFinding> = judged.iter().filter(|f| f.adjusted <= ALPHA).collect();
    let verdict = if !failing.is_empty() {
        Verdict::Fail
    } else if !unjudged.is_empty() {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    };
    let reading = match verdict {
        Verdict::Fail => failing
            .iter()
            .map(|f| failing_reading(f, judged.len()))
            .collect::<Vec<_>>()
            .join("; "),
        Verdict::Inconclusive => unjudged.join("; "),
        _ => passing_reading(judged),
    };
    let mut evidence: Vec<String> = judged.iter().map(evidence).collect();
    evidence.extend(unjudged.iter().cloned());
    let mut result = CheckResult::new(MACHINES, "automatic", CheckClass::Validity, verdict)
        .evidence(evidence.join("; "))
        .reading(reading);
    result.automatic = true;
    if verdict == Verdict::Fail {
        result.runs = failing
            .iter()
            .filter_map(|f| f.cell)
            .flat_map(|c| c.run_ids.iter().map(ToString::to_string))
            .collect();
    }
    result
}

/// The nodes with the lowest and the highest median.
fn extremes(nodes: &[NodeMedian]) -> Option<(&NodeMedian, &NodeMedian)> {
    let lowest = nodes.iter().min_by(|a, b| a.median.total_cmp(&b.median))?;
    let highest = nodes.iter().max_by(|a, b| a.median.total_cmp(&b.median))?;
    Some((lowest, highest))
}

/// "cell x=1: node b's median is 1.8× node a's; the nodes hold 62.0% of the variance of the
/// run medians (p = 0.0001)", the p-value Holm-adjusted over the `tested` cells.
fn failing_reading(f: &CellFinding, tested: usize) -> String {
    let size = extremes(&f.nodes.nodes).map_or_else(String::new, |(lo, hi)| {
        format!(
            ": node {}'s median is {}× node {}'s",
            hi.node,
            ratio(hi.median / lo.median),
            lo.node
        )
    });
    let adjusted = if tested > 1 {
        format!(", Holm-adjusted over {tested} cells")
    } else {
        String::new()
    };
    format!(
        "cell {}{size}; the nodes hold {} of the variance of the run medians ({}{adjusted})",
        f.nodes.label,
        percent(f.effect.between_share),
        p_value(f.adjusted),
    )
}

/// "in all 3 cells the nodes agree within their runs' spread (smallest p = 0.31)".
fn passing_reading(judged: &[CellFinding]) -> String {
    let smallest = judged
        .iter()
        .map(|f| f.adjusted)
        .fold(f64::INFINITY, f64::min);
    format!(
        "in {} the nodes agree within their runs' spread (smallest {})",
        match judged.len() {
            1 => "the one cell that ran on several".to_string(),
            2 => "both cells that ran on several".to_string(),
            n => format!("all {n} cells that ran on several"),
        },
        p_value(smallest)
    )
}

/// "x=1: nodes a 2.00 [1.98, 2.02] over 5 runs, b 2.50 [2.47, 2.52] over 5 runs; between
/// nodes 91.0% of the run medians' variance (ICC 0.910), Kruskal–Wallis H 6.82, permutation
/// p = 0.0079 (Holm 0.0079); median 2.25 [1.99, 2.51] resampling nodes, [2.02, 2.48] runs alone".
fn evidence(f: &CellFinding) -> String {
    let nodes: Vec<String> = f.nodes.nodes.iter().map(node_text).collect();
    let e = &f.effect;
    format!(
        "{}: nodes {}; between nodes {} of the run medians' variance (ICC {}), Kruskal–Wallis H {}, permutation {} over {} splits (Holm {}){}",
        f.nodes.label,
        nodes.join(", "),
        percent(e.between_share),
        significant(e.icc, 3),
        significant(e.h, 3),
        p_value(e.p_value),
        lab_config::format::grouped(e.permutations as u64),
        significant(f.adjusted, 2),
        f.cell.map_or_else(String::new, intervals_text)
    )
}

/// "a 2.00 [1.98, 2.02] over 5 runs".
fn node_text(n: &NodeMedian) -> String {
    let ci = n.ci.as_ref().map_or_else(String::new, |ci| {
        format!(" [{}, {}]", significant(ci.lo, 3), significant(ci.hi, 3))
    });
    format!(
        "{} {}{ci} over {} runs",
        n.node,
        significant(n.median, 3),
        n.n
    )
}

/// "; median 2.25 [1.99, 2.51] resampling nodes, [2.02, 2.48] runs alone".
fn intervals_text(c: &CellStats) -> String {
    let (Some(median), Some(ci)) = (c.median(), c.median_ci) else {
        return String::new();
    };
    let alone = c
        .machines
        .as_ref()
        .and_then(|m| m.runs_only_ci)
        .map_or_else(String::new, |r| {
            format!(
                ", [{}, {}] runs alone",
                significant(r.lo, 3),
                significant(r.hi, 3)
            )
        });
    format!(
        "; median {} [{}, {}] resampling nodes{alone}",
        significant(median, 3),
        significant(ci.lo, 3),
        significant(ci.hi, 3)
    )
}

#[cfg(test)]
#[path = "machines_tests.rs"]
mod tests;
