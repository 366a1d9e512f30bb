//! The automatic periodicity check: no cell's iterations slow down periodically beneath a
//! summary that hides it.
//!
//! A program's own timer or reporter thread (a stats dump every 50 ms, a profiler's tick, a
//! cache flush) can make every seventh iteration twice as slow: the median is then one of the
//! fast iterations, the spread looks steady, and the steady-state classification sees one level
//! (it finds changes, not repetitions). Each valid run's iterations past its warm-up are tested
//! for a period with Fisher's g test on their prewhitened logarithms (Fisher 1929, see
//! [`lab_stats::periodogram`]), a cell's runs combined by Fisher's method (Fisher 1932), the
//! cells by Holm's step-down procedure at [`ALPHA`] family-wise (Holm 1979). A periodic cell
//! fails when its clearest run, folded at its period ([`lab_stats::folding`]), has slow
//! iterations at least [`MIN_SLOWDOWN`] × its fast ones: smaller wobbles are measurements'
//! texture, named but not failed. A run the machine kept waiting for CPUs others had beyond
//! `max_busy` is not judged: a busy machine's scheduler slows iterations periodically too.
//! Sessions with no cell whose runs print series of a timed metric do not list the check.

use crate::analysis::{Analysis, CellStats};
use lab_config::format::{p_value, percent, ratio, significant, value};
use lab_config::{Better, CheckClass, Experiment, Waiting};
use lab_findings::checks::{CheckResult, Verdict};
use lab_stats::periodogram::{MAX_ITERATIONS, MIN_ITERATIONS};
use lab_stats::{PeriodTest, fisher_combined, fisher_g_test, fold, holm, median};

/// The check's name, as the report lists it.
pub const PERIODIC: &str = "no cell's iterations slow down periodically";

/// The family-wise error rate across the cells tested: a failure marks hypotheses untrusted,
/// so the check asks for strong evidence.
pub(super) const ALPHA: f64 = 0.001;

/// How much slower a periodic cell's slow iterations must be than its others to fail.
pub(super) const MIN_SLOWDOWN: f64 = 1.1;

/// Cells named in a reading before "and N more".
const NAMED_CELLS: usize = 3;

/// One cell's series of a timed metric, with what the check needs to know of the metric.
pub(super) struct Series<'a> {
    pub cell: &'a CellStats,
    /// Slow iterations are high values (times), or low ones (rates).
    pub lower_is_better: bool,
    /// Seconds per unit of the metric, where its values are times per iteration.
    pub seconds_per_unit: Option<f64>,
}

/// One cell's judged runs (indices into its runs) and their tests, combined.
pub(super) struct Tested<'a> {
    pub series: &'a Series<'a>,
    pub runs: Vec<(usize, PeriodTest)>,
    pub p_value: f64,
    /// After Holm's adjustment across every tested cell.
    pub adjusted: f64,
}

/// What a periodic cell's clearest run shows, folded at its period.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Slowdown {
    /// In iterations.
    pub period: f64,
    /// In seconds, where the values are times per iteration.
    pub period_s: Option<f64>,
    /// The share of iterations in the slow phase.
    pub share: f64,
    /// Their median over the others' (rates: the others' over theirs).
    pub slower: f64,
}

/// Every tested cell, the periodic ones, the runs left out, and the longest series.
pub(super) struct Judgement<'a> {
    pub tested: Vec<Tested<'a>>,
    /// Periodic after Holm, each with what its clearest run shows (`None` where its fold found
    /// no slow phase).
    pub periodic: Vec<(usize, Option<Slowdown>)>,
    /// Runs long enough to judge that the machine disturbed beyond `max_busy`.
    pub left_out: usize,
    /// The most iterations any run of the series printed past its warm-up.
    pub longest: usize,
}

/// The check's result; `None` when no run prints a series of a timed metric.
pub(super) fn periodic_result(exp: &Experiment, analysis: &Analysis) -> Option<CheckResult> {
    let series: Vec<Series> = analysis
        .cells
        .iter()
        .filter_map(|c| series_of(exp, c))
        .collect();
    if series.is_empty() {
        return None;
    }
    Some(decided(&judge(&series)))
}

/// The cell as a series the check reads: a timed metric (a time or a rate) with some run
/// printing more than one value.
fn series_of<'a>(exp: &Experiment, cell: &'a CellStats) -> Option<Series<'a>> {
    let metric = exp.metric(&cell.metric)?;
    if !metric.is_timing() || metric.waiting() == Waiting::Untouched {
        return None;
    }
    cell.runs.iter().any(|r| r.len() > 1).then(|| Series {
        cell,
        lower_is_better: metric.better == Better::Lower,
        seconds_per_unit: (metric.waiting() == Waiting::Lengthens)
            .then(|| lab_config::units::seconds_per(&metric.unit))
            .flatten(),
    })
}

/// Tests every series, adjusts across cells, and describes the periodic ones.
pub(super) fn judge<'a>(series: &'a [Series<'a>]) -> Judgement<'a> {
    use rayon::prelude::*;
    let mut tested: Vec<Tested> = series.par_iter().filter_map(test_cell).collect();
    let adjusted = holm(&tested.iter().map(|t| t.p_value).collect::<Vec<_>>());
    for (t, a) in tested.iter_mut().zip(adjusted) {
        t.adjusted = a;
    }
    let periodic = tested
        .iter()
        .enumerate()
        .filter(|(_, t)| t.adjusted <= ALPHA)
        .map(|(i, t)| (i, slowdown(t)))
        .collect();
    Judgement {
        left_out: series
            .iter()
            .map(|s| long_enough(s.cell).count() - judged_runs(s.cell).count())
            .sum(),
        longest: series
            .iter()
            .flat_map(|s| s.cell.runs.iter().map(Vec::len))
            .max()
            .unwrap_or(0),
        tested,
        periodic,
    }
}

/// Runs (indices) printing enough iterations to test.
fn long_enough(cell: &CellStats) -> impl Iterator<Item = usize> + '_ {
    (0..cell.runs.len()).filter(|&i| cell.runs[i].len() >= MIN_ITERATIONS)
}

/// Runs long enough to test that the machine did not disturb beyond `max_busy`.
fn judged_runs(cell: &CellStats) -> impl Iterator<Item = usize> + '_ {
    long_enough(cell).filter(|i| !cell.disturbed.contains(i))
}

/// The cell's judged runs tested and combined; `None` when no run could be tested.
fn test_cell<'a>(series: &'a Series<'a>) -> Option<Tested<'a>> {
    let runs: Vec<(usize, PeriodTest)> = judged_runs(series.cell)
        .filter_map(|i| Some((i, fisher_g_test(&series.cell.runs[i])?)))
        .collect();
    let p_value = fisher_combined(&runs.iter().map(|(_, t)| t.p_value).collect::<Vec<_>>())?;
    Some(Tested {
        series,
        runs,
        p_value,
        adjusted: p_value,
    })
}

/// The cell's clearest run (smallest p-value) folded at its period.
fn slowdown(tested: &Tested) -> Option<Slowdown> {
    let (run, test) = tested
        .runs
        .iter()
        .min_by(|a, b| a.1.p_value.total_cmp(&b.1.p_value))?;
    let s = tested.series;
    let values = &s.cell.runs[*run][..s.cell.runs[*run].len().min(MAX_ITERATIONS)];
    let oriented: Vec<f64> = if s.lower_is_better {
        values.to_vec()
    } else {
        values.iter().map(|v| -v).collect()
    };
    let folded = fold(&oriented, test.frequency, values.len() - 1)?;
    let (mut slow, mut fast): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for (v, is_slow) in values.iter().zip(&folded.slow) {
        if *is_slow { &mut slow } else { &mut fast }.push(*v);
    }
    let (slow, fast) = (sorted_median(slow)?, sorted_median(fast)?);
    let slower = if s.lower_is_better {
        slow / fast
    } else {
        fast / slow
    };
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    Some(Slowdown {
        period: folded.period,
        period_s: s.seconds_per_unit.map(|u| folded.period * mean * u),
        share: folded.share(),
        slower: slower.is_finite().then_some(slower)?,
    })
}

/// The median of `xs`; `None` when empty.
fn sorted_median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    Some(median(&xs))
}

impl Judgement<'_> {
    /// The periodic cells whose slowdown is large enough to fail, with it.
    fn failing(&self) -> Vec<(&Tested<'_>, &Slowdown)> {
        self.periodic
            .iter()
            .filter_map(|(i, s)| Some((&self.tested[*i], s.as_ref()?)))
            .filter(|(_, s)| s.slower >= MIN_SLOWDOWN)
            .collect()
    }

    fn verdict(&self) -> Verdict {
        if !self.failing().is_empty() {
            Verdict::Fail
        } else if self.tested.is_empty() {
            Verdict::NotRun
        } else {
            Verdict::Pass
        }
    }

    fn runs_judged(&self) -> usize {
        self.tested.iter().map(|t| t.runs.len()).sum()
    }
}

/// The result of a judgement: fails when a periodic cell's slow iterations are
/// [`MIN_SLOWDOWN`] slower, and names the runs of such cells.
pub(super) fn decided(j: &Judgement) -> CheckResult {
    let verdict = j.verdict();
    let reading = match verdict {
        Verdict::Fail => failing_reading(&j.failing()),
        Verdict::NotRun => not_run_reading(j),
        _ => passing_reading(j),
    };
    let runs = j
        .failing()
        .iter()
        .flat_map(|(t, _)| {
            t.runs
                .iter()
                .map(|(i, _)| t.series.cell.run_ids[*i].to_string())
        })
        .collect();
    let mut result = CheckResult::new(PERIODIC, "automatic", CheckClass::Validity, verdict)
        .evidence(evidence(j))
        .reading(reading)
        .runs(runs);
    result.automatic = true;
    result
}

/// "every 5.4 iterations (about 11.8 ms): 18.0% of them are 1.60× slower".
pub(super) fn describe(s: &Slowdown) -> String {
    let about = s
        .period_s
        .map(|t| format!(" (about {})", value(t * 1e3, "ms")))
        .unwrap_or_default();
    format!(
        "every {} iterations{about}: {} of them are {}× slower",
        significant(s.period, 2),
        percent(s.share),
        ratio(s.slower)
    )
}

/// "`jit n=1`: iterations slow down every 5.4 iterations (about 11.8 ms): 18.0% of them are
/// 1.60× slower; the median hides it; and 1 more cell".
fn failing_reading(failing: &[(&Tested, &Slowdown)]) -> String {
    let mut parts: Vec<String> = failing
        .iter()
        .take(NAMED_CELLS)
        .map(|(t, s)| {
            let hides = if s.share < 0.5 {
                "the median hides it"
            } else {
                "the median is one of them and hides the faster rest"
            };
            format!(
                "`{}`: iterations slow down {}; {hides}",
                t.series.cell.label,
                describe(s)
            )
        })
        .collect();
    if failing.len() > NAMED_CELLS {
        parts.push(format!("and {} more", cells(failing.len() - NAMED_CELLS)));
    }
    parts.join("; ")
}

/// "no cell's iterations slow down periodically (2 cells, 10 runs judged)", with the periodic
/// cells whose slowdown is too small to fail.
fn passing_reading(j: &Judgement) -> String {
    let mut reading = format!(
        "no cell's iterations slow down periodically ({}, {} runs judged)",
        cells(j.tested.len()),
        j.runs_judged()
    );
    for (i, s) in j.periodic.iter().take(NAMED_CELLS) {
        let label = &j.tested[*i].series.cell.label;
        reading.push_str(&match s {
            Some(s) => format!(
                "; `{label}` repeats {}, under the {}× that fails",
                describe(s),
                ratio(MIN_SLOWDOWN)
            ),
            None => format!("; `{label}` has a period but no slow phase"),
        });
    }
    reading
}

fn not_run_reading(j: &Judgement) -> String {
    if j.left_out > 0 {
        return format!(
            "every run printing {MIN_ITERATIONS} or more iterations waited for CPUs others had \
             beyond max_busy ({} runs): a busy machine's scheduler slows iterations \
             periodically too",
            j.left_out
        );
    }
    format!(
        "no run printed {MIN_ITERATIONS} iterations past its warm-up (the longest printed {}): \
         too few to tell a period",
        j.longest
    )
}

/// "1 cell", "3 cells".
fn cells(k: usize) -> String {
    format!("{k} cell{}", if k == 1 { "" } else { "s" })
}

/// The method and the counts behind the verdict.
fn evidence(j: &Judgement) -> String {
    if j.tested.is_empty() {
        return format!(
            "runs print at most {} iterations past their warm-up; Fisher's g test (Fisher 1929) \
             is run on {MIN_ITERATIONS} or more (periods up to 8 iterations, four cycles each)",
            j.longest
        );
    }
    let mut text = format!(
        "Fisher's g test (Fisher 1929) on each run's prewhitened logarithms, a cell's runs \
         combined by Fisher's method, Holm (1979) across {} at {} family-wise; slow iterations \
         under {}× the others do not fail",
        cells(j.tested.len()),
        percent(ALPHA),
        ratio(MIN_SLOWDOWN),
    );
    let named: Vec<String> = j
        .periodic
        .iter()
        .take(NAMED_CELLS)
        .map(|(i, _)| {
            let t = &j.tested[*i];
            format!("`{}` ({})", t.series.cell.label, p_value(t.adjusted))
        })
        .collect();
    text.push_str(&match j.periodic.len() {
        0 => "; no cell periodic".to_string(),
        k if k > NAMED_CELLS => format!(
            "; periodic: {}, and {} more",
            named.join(", "),
            k - NAMED_CELLS
        ),
        _ => format!("; periodic: {}", named.join(", ")),
    });
    text.push_str(&format!(
        "; {} runs of {MIN_ITERATIONS} or more iterations judged",
        j.runs_judged()
    ));
    if j.left_out > 0 {
        text.push_str(&format!(
            ", {} left out: the machine kept them waiting beyond max_busy",
            j.left_out
        ));
    }
    text
}

#[cfg(test)]
#[path = "periodic_tests.rs"]
mod tests;
