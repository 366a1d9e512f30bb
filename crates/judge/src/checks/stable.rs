//! `stable`: run-to-run spread under a limit and no second mode (seeds 002 and 004: runs that
//! fall into two groups make a median describe neither). Per cell, over each valid measured
//! run's median value: the coefficient of variation (sample standard deviation / mean) must
//! not exceed `max_cv`, and Hartigan's dip test (Hartigan & Hartigan 1985, Ann. Stat. 13:70)
//! must not detect a second mode at `alpha`. The CV needs 3 runs; the dip test needs 4, so a
//! cell with 3 runs is judged on its CV alone and the evidence says so.
//!
//! Practical significance: a second mode fails only when the modes' medians are further apart
//! than `mode_gap` (relative to the lower one; by default the CV limit), so two modes 3% apart
//! under a 25% limit are reported as detected but not failed. `max_cv` may differ by variant.
//!
//! A cell that moves in steps ([`super::resolution`]) is judged on the bounds its step leaves
//! the CV ([`super::resolution::cv_bounds`]): inconclusive where they straddle the limit, and
//! two modes count only when their medians lie more than two steps apart.

use super::MIN_RUNS;
use super::resolution::{Step, cv_bounds};
use super::shape::{Check, Context, Declared, Description, Outcome};
use crate::analysis::CellStats;
use lab_config::CheckKind;
use lab_config::format::{percent, value};
use lab_findings::checks::{CheckFigure, Verdict};
use lab_stats::{self as stats, DipTest};

/// The dip test's minimum sample size.
const DIP_MIN_RUNS: usize = 4;

/// What a `stable` check allows.
pub(super) struct Limits<'a> {
    pub max_cv: f64,
    pub by_variant: &'a std::collections::BTreeMap<String, f64>,
    pub mode_gap: f64,
    pub alpha: f64,
}

impl Limits<'_> {
    fn max_cv_of(&self, cell: &CellStats) -> f64 {
        self.by_variant
            .get(&cell.cell.variant)
            .copied()
            .unwrap_or(self.max_cv)
    }
}

/// One cell's spread and modes, judged.
struct Judged<'a> {
    cell: &'a CellStats,
    cv: f64,
    /// The CV limit of this cell.
    limit: f64,
    /// A second mode detected and further apart than the practical gap.
    bimodal: bool,
    dip: Option<DipTest>,
    /// The step the cell moves in, and the bounds it leaves its CV.
    step: Option<(Step, (f64, f64))>,
    verdict: Verdict,
}

/// Coefficient of variation with the n−1 standard deviation; `None` under two values or a
/// non-positive mean. The CV does not depend on scale, so values are divided by the largest
/// magnitude first: sums of values near `f64::MAX` cannot overflow to infinity.
pub(super) fn cv(xs: &[f64]) -> Option<f64> {
    let scale = xs.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if scale.is_finite() && scale > 0.0 {
        let scaled: Vec<f64> = xs.iter().map(|x| x / scale).collect();
        return cv_unscaled(&scaled);
    }
    cv_unscaled(xs)
}

fn cv_unscaled(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 || mean <= 0.0 {
        return None;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean)
}

/// A declared `stable` check.
pub(super) struct Stable<'a> {
    pub metric: &'a str,
    pub limits: Limits<'a>,
    pub unit: &'a str,
}

/// Every cell judged, the verdict, and the cell the evidence names.
pub(super) struct Spread<'a> {
    judged: Vec<Judged<'a>>,
    verdict: Verdict,
    /// The failing (else bimodal, else most spread) cell.
    worst: usize,
}

impl Outcome for Spread<'_> {
    fn verdict(&self) -> Verdict {
        self.verdict
    }

    fn runs(&self) -> Vec<String> {
        self.judged
            .iter()
            .filter(|j| j.verdict == self.verdict)
            .flat_map(|j| j.cell.run_ids.iter().map(ToString::to_string))
            .collect()
    }
}

/// The figures the evidence prints of the worst cell: its CV, and the dip with its critical
/// value where the dip test ran.
fn figures(worst: &Judged, alpha: f64) -> Vec<CheckFigure> {
    let runs = format!(
        "the {} valid, non-warm-up runs of {}, each as the median of its values",
        worst.cell.n, worst.cell.label
    );
    let figure =
        |name: &str, label: &str, number: String, what: String, method: String| CheckFigure {
            name: name.into(),
            label: label.into(),
            number,
            interval: None,
            what: format!("{what} of {} (the worst cell)", worst.cell.label),
            method,
            runs: runs.clone(),
        };
    let mut out = vec![figure(
        "worst.cv",
        "CV ",
        percent(worst.cv),
        "CV of the run medians".into(),
        "The sample standard deviation of the run medians (divided by n − 1) over their mean."
            .into(),
    )];
    if let Some(d) = &worst.dip {
        out.push(figure(
            "worst.dip",
            "dip ",
            format!("{:.3}", d.dip),
            "Hartigan's dip of the run medians".into(),
            "The largest distance between the empirical distribution of the run medians and the nearest unimodal distribution (Hartigan & Hartigan 1985).".into(),
        ));
        out.push(figure(
            "worst.critical",
            "critical ",
            format!("{:.3}", d.critical),
            "critical dip".into(),
            format!(
                "The {} quantile of the dip of {} values drawn uniformly: simulated (200,000 samples of each tabulated size, seed 2024) and interpolated in dip·√n over ln n between tabulated sizes (held beyond the largest); a dip above it detects a second mode at α = {alpha}.",
                1.0 - alpha,
                d.n
            ),
        ));
    }
    out
}

impl<'a> Declared<'a> for Stable<'a> {
    fn of(cx: &Context<'a>) -> Option<Self> {
        let CheckKind::Stable {
            metric,
            max_cv,
            max_cv_by_variant,
            mode_gap,
            alpha,
        } = &cx.spec.kind
        else {
            return None;
        };
        let limits = Limits {
            max_cv: *max_cv,
            by_variant: max_cv_by_variant,
            mode_gap: *mode_gap,
            alpha: *alpha,
        };
        Some(Stable {
            metric,
            limits,
            unit: cx.unit(metric),
        })
    }
}

impl<'a> Check<'a> for Stable<'_> {
    type Outcome = Spread<'a>;
    const KIND: &'static str = "stable";

    fn decide(&self, cx: &Context<'a>) -> Result<Spread<'a>, String> {
        let judged: Vec<Judged> = cx
            .in_scope()
            .into_iter()
            .filter(|c| c.metric == self.metric)
            .filter_map(|c| judge(c, &self.limits, cx.step(c)))
            .collect();
        let rank = |j: &Judged| {
            let v = j.verdict;
            (v == Verdict::Fail, v == Verdict::Inconclusive, j.bimodal)
        };
        let Some(worst) = judged
            .iter()
            .enumerate()
            .max_by(|(_, a), (_, b)| rank(a).cmp(&rank(b)).then(a.cv.total_cmp(&b.cv)))
            .map(|(i, _)| i)
        else {
            return Err(format!(
                "no cell has {MIN_RUNS} valid runs; the CV needs {MIN_RUNS} and the dip test {DIP_MIN_RUNS}"
            ));
        };
        let verdict = super::rule::worst(judged.iter().map(|j| j.verdict));
        Ok(Spread {
            judged,
            verdict,
            worst,
        })
    }

    fn figures(&self, s: &Spread) -> Vec<CheckFigure> {
        figures(&s.judged[s.worst], self.limits.alpha)
    }

    fn describe(&self, s: &Spread) -> Description {
        let (limits, unit) = (&self.limits, self.unit);
        let worst = &s.judged[s.worst];
        let failed = s
            .judged
            .iter()
            .filter(|j| j.verdict == Verdict::Fail)
            .count();
        let no_dip = s.judged.iter().filter(|j| j.dip.is_none()).count();
        let mut evidence = format!(
            "{} cells judged, {failed} failed; limit CV ≤ {}{}, dip test at α = {}, modes fail when over {} apart; worst {}: {}",
            s.judged.len(),
            percent(limits.max_cv),
            by_variant_text(limits),
            limits.alpha,
            percent(limits.mode_gap),
            worst.cell.label,
            describe(worst, unit)
        );
        if no_dip > 0 {
            evidence.push_str(&format!("; {no_dip} cells judged on CV only (the dip test needs {DIP_MIN_RUNS} runs and α of 0.05 or 0.01)"));
        }
        let reading = match (s.verdict, worst.step) {
            (Verdict::Pass, _) => pass_reading(&s.judged, worst, limits, unit),
            (Verdict::Inconclusive, Some((step, _))) => {
                super::resolution::reading(self.metric, unit, &step)
            }
            _ => fail_reading(worst, unit),
        };
        Description {
            evidence,
            reading,
            ratio: None,
        }
    }
}

/// " (fair ≤ 120.0%)" for the variants with a limit of their own.
fn by_variant_text(limits: &Limits) -> String {
    if limits.by_variant.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = limits
        .by_variant
        .iter()
        .map(|(v, l)| format!("{v} ≤ {}", percent(*l)))
        .collect();
    format!(" ({})", parts.join(", "))
}

fn pass_reading(judged: &[Judged], worst: &Judged, limits: &Limits, unit: &str) -> String {
    let close_modes = judged
        .iter()
        .find(|j| j.dip.as_ref().is_some_and(|d| d.second_mode_detected));
    let mut text = format!(
        "every cell's spread is within its limit (largest {}, {})",
        percent(worst.cv),
        worst.cell.label
    );
    match close_modes {
        Some(j) => text.push_str(&format!(
            "; {} has a second mode ({}), detected but closer than the declared {} gap",
            j.cell.label,
            j.dip.as_ref().map_or(String::new(), |d| modes(d, unit)),
            percent(limits.mode_gap)
        )),
        None => text.push_str(" and no second mode detected"),
    }
    text
}

fn judge<'a>(cell: &'a CellStats, limits: &Limits, step: Option<Step>) -> Option<Judged<'a>> {
    let per_run: Vec<f64> = cell
        .runs
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| stats::median(r))
        .collect();
    if per_run.len() < MIN_RUNS {
        return None;
    }
    let cv = cv(&per_run)?;
    let limit = limits.max_cv_of(cell);
    let dip = stats::dip_test(&per_run, limits.alpha);
    let bimodal = dip.as_ref().is_some_and(|d| {
        d.second_mode_detected
            && modes_gap(d) > limits.mode_gap
            && step.is_none_or(|s| beyond_steps(d, s))
    });
    let step = step.map(|s| (s, cv_bounds(&per_run, s.q)));
    // A spread that is not a finite number is never a pass.
    let verdict = match step {
        _ if !cv.is_finite() || bimodal => Verdict::Fail,
        None if cv > limit => Verdict::Fail,
        None => Verdict::Pass,
        Some((_, (lo, _))) if lo > limit => Verdict::Fail,
        Some((_, (_, hi))) if hi <= limit => Verdict::Pass,
        Some(_) => Verdict::Inconclusive,
    };
    Some(Judged {
        cell,
        cv,
        limit,
        bimodal,
        dip,
        step,
        verdict,
    })
}

/// Whether two modes' medians lie more than two steps apart: each may be off by one.
fn beyond_steps(d: &DipTest, step: Step) -> bool {
    let (lo, hi) = d
        .modes
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), m| {
            (l.min(m.median), h.max(m.median))
        });
    step.q.is_some_and(|q| hi - lo > 2.0 * q)
}

/// How far apart two modes are: the higher median over the lower, less one.
pub(super) fn modes_gap(d: &DipTest) -> f64 {
    let medians: Vec<f64> = d.modes.iter().map(|m| m.median).collect();
    let (lo, hi) = medians
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), m| {
            (l.min(*m), h.max(*m))
        });
    if medians.len() < 2 || lo <= 0.0 {
        return f64::INFINITY;
    }
    hi / lo - 1.0
}

fn describe(j: &Judged, unit: &str) -> String {
    let dip = match &j.dip {
        None => "dip test not run".to_string(),
        Some(d) if d.second_mode_detected => format!(
            "dip {:.3} > critical {:.3} (n = {}): second mode, {}",
            d.dip,
            d.critical,
            d.n,
            modes(d, unit)
        ),
        Some(d) => format!(
            "dip {:.3} ≤ critical {:.3} (n = {}): no second mode detected",
            d.dip, d.critical, d.n
        ),
    };
    let steps = match j.step {
        Some((Step { q: Some(q), .. }, (lo, hi))) => format!(
            "; in steps of {}, the CV lies in [{}, {}]",
            super::resolution::step_value(q, unit),
            percent(lo),
            percent(hi)
        ),
        Some(_) => "; in steps of an unknown size, the CV could be anything".to_string(),
        None => String::new(),
    };
    format!("CV {} over {} runs, {dip}{steps}", percent(j.cv), j.cell.n)
}

fn modes(d: &DipTest, unit: &str) -> String {
    d.modes
        .iter()
        .map(|m| format!("{} of runs at {}", percent(m.share), value(m.median, unit)))
        .collect::<Vec<_>>()
        .join(" and ")
}

fn fail_reading(j: &Judged, unit: &str) -> String {
    match &j.dip {
        Some(d) if j.bimodal => format!(
            "{} has two modes {} apart: {} (CV {})",
            j.cell.label,
            percent(modes_gap(d)),
            modes(d, unit),
            percent(j.cv)
        ),
        _ => format!(
            "{} varies {} from run to run, above the {} limit",
            j.cell.label,
            percent(j.cv),
            percent(j.limit)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cv_uses_the_sample_standard_deviation() {
        let got = cv(&[9.0, 10.0, 11.0]).unwrap();
        assert!((got - 0.1).abs() < 1e-12, "{got}");
        assert_eq!(cv(&[1.0]), None);
    }

    #[test]
    fn values_near_the_largest_double_keep_a_finite_cv() {
        let big = cv(&[1.7e308, 1.0e308, 1.7e308]).unwrap();
        let small = cv(&[1.7, 1.0, 1.7]).unwrap();
        assert!((big - small).abs() < 1e-12, "{big} vs {small}");
        assert!(cv(&[f64::INFINITY, 1.0, 2.0]).is_none_or(|c| !c.is_finite()));
    }
}
