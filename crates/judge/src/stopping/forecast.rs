//! What more runs would likely buy an open hypothesis: the runs per cell and the minutes that
//! would likely decide it, or why more runs would not. An interval of a ratio narrows as
//! 1/√n (the bootstrap's, like a normal mean's): a half-width `h` at `n` runs per cell reaches
//! the distance `d` from its centre to the threshold at about `n · (h / d)²` runs (Cohen,
//! "Statistical power analysis", 1988, ch. 2: sample size from the effect and the spread). An
//! interval centred on its threshold narrows around it and never leaves it; with a practical
//! margin `m` it is at the threshold once its half-width fits within `ln(1 + m)` of the
//! threshold less the distance of its centre.

use crate::analysis::Analysis;
use crate::checks::CheckResult;
use lab_config::format::{minutes, ratio, ratio_bounds};
use lab_config::plan::CellKey;

/// Below this share of its half-width from the threshold, an interval's centre is on it.
const ON_THE_THRESHOLD: f64 = 0.1;

/// What more runs would likely do for one open hypothesis.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlook {
    /// Runs per cell that would likely decide it, and the seconds they would take beyond
    /// those already run; `None` where no number of runs likely would.
    pub runs_per_cell: Option<u32>,
    pub seconds: Option<f64>,
    /// The outlook in a few words, for the sentence that says why sampling stopped.
    pub words: String,
}

impl Outlook {
    /// No number of runs likely decides it, for the reason `words` give.
    fn never(words: String) -> Outlook {
        Outlook {
            runs_per_cell: None,
            seconds: None,
            words,
        }
    }
}

/// The outlook of `check`, open after a look with `now` runs in the fewest-run cell it reads,
/// where one more run of every cell it reads takes `round_s` seconds, a session may grow
/// each cell to `max` runs, and an interval within `margin` of the threshold is an answer.
pub fn outlook(
    check: &CheckResult,
    now: u32,
    round_s: f64,
    max: u32,
    margin: Option<f64>,
) -> Outlook {
    let never = Outlook::never;
    let Some(r) = check.ratio.as_ref().filter(|r| r.lo > 0.0 && r.hi > 0.0) else {
        return never("no estimate: it is not decided on a ratio".into());
    };
    if check.busy.is_some() {
        return never(
            "the machine's waiting, not the runs, holds it open: quiet the machine".into(),
        );
    }
    let half = (r.hi.ln() - r.lo.ln()) / 2.0;
    let gap = (r.ratio.ln() - r.threshold.ln()).abs();
    if let (Some(m), "agree") = (margin, check.kind.as_str()) {
        return band_outlook(
            r,
            Narrowing {
                now,
                half,
                round_s,
                max,
            },
            gap,
            m,
        );
    }
    // Within the margin, the half-width that would put the interval wholly inside it.
    let within = margin.map(|m| (1.0 + m).ln() - gap).filter(|w| *w > 0.0);
    if gap < ON_THE_THRESHOLD * half && within.is_none() {
        return never(format!(
            "likely never: its interval {} is centred on {}; declare a `margin` to call it at the threshold",
            ratio_bounds(r.lo, r.hi),
            ratio(r.threshold)
        ));
    }
    let to_a_side = (gap >= ON_THE_THRESHOLD * half).then(|| needed_runs(now, half, gap));
    let to_the_margin = within.map(|w| needed_runs(now, half, w));
    let needed = to_a_side
        .into_iter()
        .chain(to_the_margin)
        .min()
        .unwrap_or(u32::MAX);
    decided_at(
        r,
        Narrowing {
            now,
            half,
            round_s,
            max,
        },
        needed,
    )
}

/// How an interval narrows: its half-width `half` (log scale) at `now` runs per cell, one more
/// run of every cell read taking `round_s`, and at most `max` runs per cell.
#[derive(Clone, Copy)]
struct Narrowing {
    now: u32,
    half: f64,
    round_s: f64,
    max: u32,
}

/// The outlook of an `agree` check, decided when its interval lies wholly inside the band of
/// ±`margin` around its centre `r.threshold` (the same) or wholly outside it (they differ): its
/// centre's distance `gap` from the threshold against the edge of the band.
fn band_outlook(r: &crate::checks::RatioEvidence, n: Narrowing, gap: f64, margin: f64) -> Outlook {
    let distance = ((1.0 + margin).ln() - gap).abs();
    if distance < ON_THE_THRESHOLD * n.half {
        return Outlook::never(format!(
            "likely never: its interval {} is centred on the edge of ±{}",
            ratio_bounds(r.lo, r.hi),
            lab_config::format::percent(margin)
        ));
    }
    decided_at(r, n, needed_runs(n.now, n.half, distance))
}

/// The outlook of a hypothesis likely decided at `needed` runs per cell.
fn decided_at(r: &crate::checks::RatioEvidence, n: Narrowing, needed: u32) -> Outlook {
    if needed > n.max {
        return Outlook::never(format!(
            "likely not within {} runs per cell: about {needed} would decide it",
            n.max
        ));
    }
    let seconds = f64::from(needed.saturating_sub(n.now)) * n.round_s;
    Outlook {
        runs_per_cell: Some(needed),
        seconds: Some(seconds),
        words: format!(
            "{} {} now: about {needed} runs per cell, {} more, would likely decide it",
            ratio(r.ratio),
            ratio_bounds(r.lo, r.hi),
            minutes(seconds)
        ),
    }
}

/// Runs per cell at which an interval of half-width `half` at `now` runs, narrowing as 1/√n,
/// likely shrinks to `gap`.
fn needed_runs(now: u32, half: f64, gap: f64) -> u32 {
    (f64::from(now.max(1)) * (half / gap).powi(2)).ceil() as u32
}

/// The fewest valid runs among the cells `read`, and the seconds one more run of each takes
/// (each cell's median wall time so far): what [`outlook`] needs of the session.
pub fn of_cells(read: &[CellKey], analysis: &Analysis) -> (u32, f64) {
    let now = analysis
        .cells
        .iter()
        .filter(|c| read.contains(&c.cell))
        .map(|c| c.n as u32)
        .min()
        .unwrap_or(0);
    let round = read
        .iter()
        .map(|cell| {
            let walls: Vec<f64> = analysis
                .runs
                .iter()
                .filter(|r| &r.cell == cell && !r.warmup)
                .map(|r| r.wall_s)
                .collect();
            lab_stats::summarize(&walls).map_or(0.0, |s| s.median)
        })
        .sum();
    (now, round)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An open compare check with its ratio `r [lo, hi]` against `threshold`.
    fn open(r: f64, lo: f64, hi: f64, threshold: f64) -> CheckResult {
        let mut c = CheckResult::new(
            "h",
            "compare",
            lab_config::CheckClass::Hypothesis,
            crate::checks::Verdict::Inconclusive,
        );
        c.ratio = Some(crate::checks::RatioEvidence {
            a: "a".into(),
            b: "b".into(),
            a_value: 1.0,
            b_value: 1.0,
            ratio: r,
            lo,
            hi,
            threshold,
            needs: String::new(),
            level: 0.95,
        });
        c
    }

    #[test]
    fn an_interval_twice_as_wide_as_its_distance_needs_four_times_the_runs() {
        // Centre 1, interval [e^-0.2, e^0.2] on the log scale, threshold e^0.1: a half-width of
        // 0.2 must shrink to the 0.1 between centre and threshold.
        let check = open(1.0, (-0.2f64).exp(), 0.2f64.exp(), 0.1f64.exp());
        let o = outlook(&check, 5, 3.0, 40, None);
        assert_eq!(o.runs_per_cell, Some(20), "5 × (0.2 / 0.1)²: {o:?}");
        assert_eq!(o.seconds, Some(45.0), "15 more rounds of 3 s");
        assert_eq!(
            o.words,
            "1.00 [0.819, 1.22] now: about 20 runs per cell, 45 s more, would likely decide it"
        );
    }

    #[test]
    fn a_centred_interval_with_a_margin_is_at_the_threshold_once_it_fits_inside() {
        // Centre on the threshold, half-width 0.1 on the log scale at 5 runs, margin e^0.05 - 1:
        // the half-width must shrink to 0.05, at 5 × (0.1 / 0.05)² = 20 runs.
        let check = open(1.0, (-0.1f64).exp(), 0.1f64.exp(), 1.0);
        let margin = 0.05f64.exp() - 1.0;
        let o = outlook(&check, 5, 1.0, 40, Some(margin));
        assert_eq!(o.runs_per_cell, Some(20), "{o:?}");
        // Off centre by 0.02, a margin of 0.05 leaves 0.03 of half-width: 5 × (0.1 / 0.03)²
        // = 55.6 runs for the margin, 5 × (0.1 / 0.02)² = 125 to clear the threshold.
        let off = open(0.02f64.exp(), (-0.08f64).exp(), 0.12f64.exp(), 1.0);
        let o = outlook(&off, 5, 1.0, 80, Some(margin));
        assert_eq!(o.runs_per_cell, Some(56), "{o:?}");
    }

    #[test]
    fn a_centred_interval_is_never_decided_and_a_far_one_not_within_the_maximum() {
        let centred = outlook(&open(1.0, 0.9, 1.11, 1.0), 5, 1.0, 40, None);
        assert_eq!(centred.runs_per_cell, None);
        assert!(
            centred
                .words
                .starts_with("likely never: its interval [0.900, 1.11] is centred on 1.00"),
            "{}",
            centred.words
        );
        let slow = outlook(&open(1.0, 0.25, 4.0, 1.3), 5, 1.0, 40, None);
        assert_eq!(slow.runs_per_cell, None);
        assert!(
            slow.words.starts_with("likely not within 40 runs per cell"),
            "{}",
            slow.words
        );
    }
}
