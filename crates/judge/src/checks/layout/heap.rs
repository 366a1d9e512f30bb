//! The heap half of the layout check: whether a cell's primary metric depends on where within
//! a cache line its heap lands.
//!
//! A record that straddles two cache lines in some runs and not in others (an 8-byte field
//! 60 bytes into a line, a lock word split across two) costs a few times more to touch; the
//! heap shift moves every block the program allocates by 0, 16, 32 or 48 bytes along a line,
//! the plan drawing each position equally often (see [`lab_config::plan::layout::heap_shift`]).
//! Each position's runs are set against the cell's other runs, as the padding's halves are:
//! the ratio of their medians with its percentile bootstrap interval, against the band
//! `1 ± layout_tolerance`.
//!
//! Four comparisons a cell, of three or four runs a position in a small session: the
//! bootstrap interval of so few runs' median is narrower than it should be, and the largest
//! of four differences is larger than one would be. So an interval wholly outside the band
//! fails only when the positions also differ by a permutation test of that largest
//! difference (the position labels shuffled among the runs of each half of the paddings, as
//! the plan crosses them; the maximum over the family, Westfall & Young 1993), at the
//! session's level: exact at any size and whatever the values' spread, it keeps false alarms
//! under the level for the four together. A cell passes only when every position's interval
//! lies inside the band: all four must hold, so each may be judged at the session's level (an
//! intersection–union test, Berger 1982).

use super::super::MIN_RUNS;
use super::super::rule::Rule;
use super::effect::{CellEffect, Sides, Split, compare};
use crate::analysis::{CellStats, Resampling, stream_label};
use lab_config::plan::layout::{CACHE_LINE, HEAP_POSITIONS, HEAP_STEP, PAD_SPLIT, heap_position};
use lab_findings::checks::Verdict;
use lab_stats::{self as stats, Stream};
use std::collections::HashMap;

/// How many shuffles the permutation test draws: its p-value is then known to within about
/// ±0.004 at 0.05.
pub(super) const PERMUTATIONS: usize = 10_000;

/// One run of the cell: its heap position, whether it is padded with at least half the range,
/// its id and its values.
type Run<'a> = (u32, bool, &'a str, &'a Vec<f64>);

/// The comparison of each heap position's runs with the cell's others: none where no run of
/// the cell had its heap shifted, why not where some position has too few runs.
pub(super) fn effects(
    cell: &CellStats,
    (shifts, paddings): (&HashMap<&str, u32>, &HashMap<&str, u32>),
    (r, rule): (Resampling, Rule),
) -> Result<Vec<CellEffect>, String> {
    let runs: Vec<Run<'_>> = cell
        .run_ids
        .iter()
        .zip(&cell.runs)
        .filter_map(|(id, values)| {
            let position = heap_position(*shifts.get(id.as_str())?);
            let upper = paddings.get(id.as_str()).is_some_and(|p| *p >= PAD_SPLIT);
            Some((position, upper, id.as_str(), values))
        })
        .collect();
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let counts: Vec<usize> = (0..HEAP_POSITIONS)
        .map(|p| runs.iter().filter(|run| run.0 == p).count())
        .collect();
    if counts.iter().any(|n| *n < MIN_RUNS) {
        return Err(too_few(&cell.label, &counts));
    }
    let ids: Vec<String> = runs.iter().map(|run| run.2.to_string()).collect();
    let mut rng = r.stream(&stream_label(
        &cell.cell,
        &cell.metric,
        "layout heap shuffles",
    ));
    let p_value = permutation_p(&runs, PERMUTATIONS, &mut rng);
    (0..HEAP_POSITIONS)
        .map(|p| {
            let (these, others): (Vec<&Run<'_>>, Vec<_>) = runs.iter().partition(|run| run.0 == p);
            let sides = Sides {
                these: these.iter().map(|run| run.3).collect(),
                others: others.iter().map(|run| run.3).collect(),
                runs: ids.clone(),
            };
            let purpose = format!("layout heap {p}");
            let split = Split::HeapPosition(p * HEAP_STEP);
            let mut e = compare(cell, split, sides, (r, r.level, &purpose), rule)?;
            e.p_value = Some(p_value);
            if e.verdict == Verdict::Fail && p_value >= 1.0 - r.level {
                e.verdict = Verdict::Inconclusive;
            }
            Ok(e)
        })
        .collect()
}

/// The share of `shuffles` relabellings of the runs' positions (within each half of the
/// paddings) whose largest difference between a position and the others is at least the one
/// observed, counting the observed labelling among them (Phipson & Smyth 2010): never 0.
fn permutation_p(runs: &[Run<'_>], shuffles: usize, rng: &mut Stream) -> f64 {
    use rand::seq::SliceRandom;
    let medians: Vec<f64> = runs.iter().map(|run| stats::median(run.3)).collect();
    let mut labels: Vec<u32> = runs.iter().map(|run| run.0).collect();
    let observed = largest_difference(&medians, &labels);
    let halves: [Vec<usize>; 2] =
        [false, true].map(|upper| (0..runs.len()).filter(|i| runs[*i].1 == upper).collect());
    let mut at_least = 0;
    for _ in 0..shuffles {
        for half in &halves {
            let mut drawn: Vec<u32> = half.iter().map(|i| labels[*i]).collect();
            drawn.shuffle(rng);
            for (i, label) in half.iter().zip(drawn) {
                labels[*i] = label;
            }
        }
        // A relative margin, so that a shuffle equal to the observed one counts as equal.
        at_least += usize::from(largest_difference(&medians, &labels) >= observed * (1.0 - 1e-12));
    }
    (1 + at_least) as f64 / (1 + shuffles) as f64
}

/// The largest |ln(median at a position / median elsewhere)| over the heap positions.
fn largest_difference(medians: &[f64], labels: &[u32]) -> f64 {
    let (mut at, mut elsewhere) = (Vec::new(), Vec::new());
    (0..HEAP_POSITIONS)
        .map(|p| {
            at.clear();
            elsewhere.clear();
            for (m, label) in medians.iter().zip(labels) {
                if *label == p { &mut at } else { &mut elsewhere }.push(*m);
            }
            let (a, b) = (stats::median(&at), stats::median(&elsewhere));
            if a > 0.0 && b > 0.0 {
                (a / b).ln().abs()
            } else {
                0.0
            }
        })
        .fold(0.0, f64::max)
}

/// "b has 2/4/4/4 valid runs with heap_shift mod 64 = 0/16/32/48; 3 at each position are
/// needed".
fn too_few(label: &str, counts: &[usize]) -> String {
    let counts: Vec<String> = counts.iter().map(ToString::to_string).collect();
    let positions: Vec<String> = (0..HEAP_POSITIONS)
        .map(|p| (p * HEAP_STEP).to_string())
        .collect();
    format!(
        "{label} has {} valid runs with heap_shift mod {CACHE_LINE} = {}; {MIN_RUNS} at each position are needed",
        counts.join("/"),
        positions.join("/")
    )
}
