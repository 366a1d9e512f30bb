//! The evidence and reading of the `order` check: each test's statistic and p-values, what the
//! leading failure found, or why nothing did.

use super::Part;
use super::residuals::{Holm, Tests};
use lab_config::format::{percent, significant};
use lab_findings::checks::CheckFigure;
use lab_stats as stats;
use std::collections::BTreeMap;

pub(super) fn evidence(tests: &Tests, judged: &Holm) -> String {
    let parts = [
        trend_evidence(tests, judged),
        carry_evidence(tests, judged),
        within_evidence(tests, judged),
        sequence_evidence(tests, judged),
        first_evidence(tests, judged),
    ];
    let medians: Vec<String> = tests
        .groups
        .iter()
        .map(|(v, g)| {
            format!(
                "after {v}: {} (n = {})",
                signed_percent(stats::median(g)),
                g.len()
            )
        })
        .collect();
    let tested = tests.p_values().iter().filter(|p| !p.is_nan()).count();
    format!(
        "{} runs, residual = value / cell mean − 1, Holm-adjusted over the {tested} tests that ran; {}; median residual {}",
        tests.n,
        parts.join("; "),
        medians.join(", ")
    )
}

/// "p = RAW (Holm-adjusted ADJUSTED)" for a part.
fn p_pair(raw: f64, judged: &Holm, part: Part) -> String {
    format!("{} (Holm-adjusted {})", p_is(raw), p(judged.adjusted(part)))
}

fn trend_evidence(tests: &Tests, judged: &Holm) -> String {
    format!(
        "trend: Mann–Kendall τ = {}, {}, Theil–Sen {} per 100 runs against a declared limit of {}",
        signed_to(tests.trend.tau, 3),
        p_pair(tests.trend.p_value, judged, Part::Trend),
        signed_percent(tests.drift()),
        limit(judged.max_drift)
    )
}

fn carry_evidence(tests: &Tests, judged: &Holm) -> String {
    match &tests.carry {
        Some(k) => format!(
            "carry-over: Kruskal–Wallis by the previous run's variant H = {:.2}, df = {}, {}",
            k.h,
            k.df,
            p_pair(k.p_value, judged, Part::CarryOver)
        ),
        None => not_tested(Part::CarryOver),
    }
}

fn within_evidence(tests: &Tests, judged: &Holm) -> String {
    match &tests.within {
        Some(w) => format!(
            "within cells: Wald–Wolfowitz serial correlation of detrended residuals, mean lag-1 r = {} over {} cell{} ({} runs), z = {}, {}",
            signed(w.r),
            w.groups,
            if w.groups == 1 { "" } else { "s" },
            w.n,
            signed(w.z),
            p_pair(w.p_value, judged, Part::WithinCells)
        ),
        None => not_tested(Part::WithinCells),
    }
}

fn sequence_evidence(tests: &Tests, judged: &Holm) -> String {
    let lb = &tests.sequence;
    format!(
        "whole sequence: Ljung–Box Q(1) = {:.2} on detrended residuals, lag-1 r = {}, {}",
        lb.q,
        signed(lb.r1),
        p_pair(lb.p_value, judged, Part::Sequence)
    )
}

fn first_evidence(tests: &Tests, judged: &Holm) -> String {
    match &tests.first {
        Some(f) => format!(
            "first of cell: van Elteren rank sum of each cell's first run over {} cell{}, excess {} ranks, mean position {}, {}",
            f.cells,
            if f.cells == 1 { "" } else { "s" },
            signed(f.excess),
            percent(f.mean_position),
            p_pair(f.p_value, judged, Part::FirstOfCell)
        ),
        None => not_tested(Part::FirstOfCell),
    }
}

fn not_tested(part: Part) -> String {
    let (what, needs) = part.untested();
    format!("{what} not tested: needs {needs}")
}

/// The reading of a failed check: what its lead part found, and the other failing parts.
pub(super) fn fail_reading(lead: Part, others: &[Part], tests: &Tests, judged: &Holm) -> String {
    let adjusted = judged.adjusted(lead);
    let sentence = match lead {
        Part::CarryOver => carry_reading(&tests.groups, adjusted),
        Part::WithinCells => within_reading(tests.within.map_or(0.0, |w| w.r), adjusted),
        Part::Sequence => sequence_reading(tests.sequence.r1, adjusted),
        Part::FirstOfCell => first_reading(tests.first.map_or(0.5, |f| f.mean_position), adjusted),
        Part::Trend => format!(
            "values drift {} per 100 runs in execution order, more than the declared {} (Mann–Kendall, adjusted {})",
            signed_percent(tests.drift()),
            limit(judged.max_drift),
            p_is(adjusted)
        ),
    };
    if others.is_empty() {
        return sentence;
    }
    let also: Vec<&str> = others.iter().map(|p| p.finding()).collect();
    format!("{sentence}; also {}", also.join(", "))
}

fn carry_reading(groups: &BTreeMap<String, Vec<f64>>, adjusted: f64) -> String {
    let mut medians: Vec<(&String, f64)> =
        groups.iter().map(|(v, g)| (v, stats::median(g))).collect();
    medians.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (low, high) = (medians[0], medians[medians.len() - 1]);
    format!(
        "runs right after a `{}` run sat {} from their cell mean, right after `{}` {}: the previous run changes the result (adjusted {})",
        low.0,
        signed_percent(low.1),
        high.0,
        signed_percent(high.1),
        p_is(adjusted)
    )
}

fn within_reading(r: f64, adjusted: f64) -> String {
    let how = if r < 0.0 {
        "each run lands on the other side of its cell's mean from the previous run of its cell"
    } else {
        "each run lands on the same side of its cell's mean as the previous run of its cell"
    };
    format!(
        "serial dependence within cells: {how} (mean lag-1 r = {}, adjusted {})",
        signed(r),
        p_is(adjusted)
    )
}

fn sequence_reading(r1: f64, adjusted: f64) -> String {
    let how = if r1 < 0.0 {
        "each run lands on the other side of its cell's mean from the run executed before it"
    } else {
        "each run lands on the same side of its cell's mean as the run executed before it"
    };
    format!(
        "serial dependence in execution order: {how} (lag-1 r = {}, adjusted {})",
        signed(r1),
        p_is(adjusted)
    )
}

fn first_reading(position: f64, adjusted: f64) -> String {
    let (side, end) = if position >= 0.5 {
        ("high", "lowest")
    } else {
        ("low", "highest")
    };
    let share = if position >= 0.5 {
        position
    } else {
        1.0 - position
    };
    format!(
        "the first run of each cell sits {side} in its cell, on average {} of the way from its {end} value: it pays for something the later runs do not (a cold cache, an input not yet read); set warmup_runs = 1 (adjusted {})",
        percent(share),
        p_is(adjusted)
    )
}

/// The reading when nothing failed: the untested parts first, then a small drift, else calm.
pub(super) fn quiet_reading(tests: &Tests, judged: &Holm) -> String {
    let calm = format!(
        "no dependence on execution order (adjusted p ≥ {})",
        p(judged.smallest_other(tests))
    );
    let drift = judged.small_drift(tests).then(|| {
        format!(
            "drift detected ({} per 100 runs, adjusted {}) but smaller than the declared {} per 100 runs",
            signed_percent(tests.drift()),
            p_is(judged.adjusted(Part::Trend)),
            limit(judged.max_drift)
        )
    });
    let untested = judged.untested();
    if untested.is_empty() {
        return match drift {
            Some(drift) => format!("{drift}; otherwise {calm}"),
            None => format!(
                "{calm}: neither on position, nor on the previous run, nor between runs of a cell, nor in a cell's first run"
            ),
        };
    }
    let (what, needs): (Vec<&str>, Vec<String>) = untested.iter().map(|p| p.untested()).unzip();
    let found = match drift {
        Some(drift) => format!("{drift}, otherwise {calm}"),
        None => calm,
    };
    format!(
        "{} not tested (it needs {}); where tested, {found}",
        what.join(" and "),
        needs.join(" and ")
    )
}

/// A declared drift limit: `5%`, `2.5%`.
fn limit(max_drift: f64) -> String {
    format!("{}%", (max_drift * 100_000.0).round() / 1000.0)
}

/// `x` with an explicit sign (a true minus) and two decimals.
fn signed(x: f64) -> String {
    signed_to(x, 2)
}

fn signed_to(x: f64, decimals: usize) -> String {
    if x >= 0.0 {
        format!("+{x:.decimals$}")
    } else {
        format!("−{:.decimals$}", -x)
    }
}

fn signed_percent(x: f64) -> String {
    if x >= 0.0 {
        format!("+{}", percent(x))
    } else {
        format!("−{}", percent(-x))
    }
}

/// "p = 0.012", or "p < 0.0001".
fn p_is(x: f64) -> String {
    if x < 1e-4 {
        "p < 0.0001".into()
    } else {
        format!("p = {}", p(x))
    }
}

fn p(x: f64) -> String {
    if x < 1e-4 {
        "< 0.0001".into()
    } else {
        significant(x, 2)
    }
}

/// The figures the evidence prints, in its order, for the chapter to link: each tested part's
/// statistic, its p-value and its Holm-adjusted p-value (a p-value printed as "< 0.0001" is
/// no number of its own, and stays plain). `read` names the runs the tests read; `alpha` is
/// the level adjusted p-values fail below.
pub(super) fn figures(tests: &Tests, judged: &Holm, read: &str, alpha: f64) -> Vec<CheckFigure> {
    let tested = tests.p_values().iter().filter(|p| !p.is_nan()).count();
    let mut out = Vec::new();
    let statistics = [
        Some(statistic(
            Part::Trend,
            "Mann–Kendall τ = ",
            signed_to(tests.trend.tau, 3),
        )),
        tests
            .carry
            .map(|k| statistic(Part::CarryOver, "H = ", format!("{:.2}", k.h))),
        tests
            .within
            .map(|w| statistic(Part::WithinCells, "z = ", signed(w.z))),
        Some(statistic(
            Part::Sequence,
            "Q(1) = ",
            format!("{:.2}", tests.sequence.q),
        )),
        tests
            .first
            .map(|f| statistic(Part::FirstOfCell, "excess ", signed(f.excess))),
    ];
    let p_values = tests.p_values();
    for (part, found) in statistics.into_iter().enumerate() {
        let Some(stat) = found else { continue };
        let raw = p_values[part];
        let adjusted = judged.adjusted(stat.part);
        out.push(stat.figure(read));
        if raw >= 1e-4 {
            out.push(p_figure(&stat, raw, read));
        }
        if adjusted >= 1e-4 {
            out.push(adjusted_figure(&stat, adjusted, read, (tested, alpha)));
        }
    }
    out
}

/// A part's test statistic as the evidence prints it.
struct Statistic {
    part: Part,
    label: &'static str,
    number: String,
}

fn statistic(part: Part, label: &'static str, number: String) -> Statistic {
    Statistic {
        part,
        label,
        number,
    }
}

/// What a part's test statistic is, how it is computed, and how its p-value is found.
fn described(part: Part) -> [&'static str; 3] {
    match part {
        Part::Trend => [
            "Mann–Kendall τ of the residuals against their position in execution order",
            "Kendall's S, the pairs of runs in which the later one has the larger residual less those in which it has the smaller (tied pairs count for neither), over all n(n − 1)/2 pairs (Mann 1945; Kendall 1975)",
            "two-sided, from z = (S ∓ 1)/√Var(S) against the normal distribution, Var(S) corrected for ties (Hirsch, Slack & Smith 1982)",
        ],
        Part::CarryOver => [
            "Kruskal–Wallis H of the residuals grouped by the previous run's variant",
            "The Kruskal–Wallis statistic of the residuals' mid-ranks, grouped by the variant of the run just before each, corrected for ties (Kruskal & Wallis 1952)",
            "the upper tail of χ² with the groups less one as degrees of freedom",
        ],
        Part::WithinCells => [
            "Wald–Wolfowitz z of the detrended residuals within cells",
            "Each cell's detrended residuals, centred and scaled to a sum of squares of 1, give their circular lag-1 serial sum; the sums are pooled over the cells and set against their mean and variance over every ordering (Wald & Wolfowitz 1943)",
            "two-sided, from z against the normal distribution",
        ],
        Part::Sequence => [
            "Ljung–Box Q at lag 1 of the detrended residuals in execution order",
            "Q = n(n + 2) r₁² / (n − 1), from the lag-1 autocorrelation r₁ of every detrended residual in execution order (Ljung & Box 1978)",
            "the upper tail of χ² with 1 degree of freedom",
        ],
        Part::FirstOfCell => [
            "van Elteren rank excess of each cell's first run",
            "The sum over cells of the first run's rank among its cell's runs less the rank it would have on average (van Elteren 1960)",
            "two-sided, against the statistic's distribution when a cell's runs are exchangeable: exact while its support is small, else normal with a continuity correction",
        ],
    }
}

impl Statistic {
    fn figure(&self, read: &str) -> CheckFigure {
        let [what, method, _] = described(self.part);
        CheckFigure {
            name: format!("{}.{}", self.part.key(), self.part.statistic()),
            label: self.label.to_string(),
            number: self.number.clone(),
            interval: None,
            what: what.to_string(),
            method: format!("{method}."),
            runs: read.to_string(),
        }
    }
}

fn p_figure(stat: &Statistic, raw: f64, read: &str) -> CheckFigure {
    let [what, method, p_found] = described(stat.part);
    CheckFigure {
        name: format!("{}.p", stat.part.key()),
        label: "p = ".into(),
        number: p(raw),
        interval: None,
        what: format!("p-value of the {what}"),
        method: format!(
            "{method}; the p-value is {p_found}, before adjusting for the other tests."
        ),
        runs: read.to_string(),
    }
}

fn adjusted_figure(
    stat: &Statistic,
    adjusted: f64,
    read: &str,
    (tested, alpha): (usize, f64),
) -> CheckFigure {
    CheckFigure {
        name: format!("{}.adjusted-p", stat.part.key()),
        label: "Holm-adjusted ".into(),
        number: p(adjusted),
        interval: None,
        what: format!("Holm-adjusted p-value of the {}", described(stat.part)[0]),
        method: format!(
            "Holm's step-down adjustment (Holm 1979) of the p-values of the {tested} tests that ran: the k-th smallest is multiplied by {tested} − k + 1, made no smaller than the one before it, and capped at 1. The part fails below α = {}.",
            significant(alpha, 2)
        ),
        runs: read.to_string(),
    }
}
