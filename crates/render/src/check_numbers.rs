//! The numbers each decided check shows: the ratio (or ρ) it decided on and, where its row
//! prints them, the medians of the two cells the ratio compares, each of the runs the check
//! read (a sampled session's check reads the runs of the look it was decided at); and what
//! the decided hypotheses risk together.

use super::number::{Number, RatioSource, Subject, kebab, ratio_number};
use lab_config::Experiment;
use lab_config::format::{correlation, number, percent, ratio_bounds, value};
use lab_findings::analysis::Analysis;
use lab_findings::checks::multiplicity::Multiplicity;
use lab_findings::checks::{CheckResult, Verdict};

/// Per decided check, in the checks' order: its ratio and the two medians its row prints, or
/// its ρ.
pub(crate) fn of(exp: &Experiment, analysis: &Analysis, checks: &[CheckResult]) -> Vec<Number> {
    let decided = || checks.iter().filter(|c| c.verdict != Verdict::NotRun);
    let mut out: Vec<Number> = decided()
        .flat_map(|c| {
            let ratio = check_ratio(c);
            let sides = ratio.is_some().then(|| sides(exp, analysis, c));
            let undisturbed = undisturbed(c);
            ratio
                .into_iter()
                .chain(sides.into_iter().flatten())
                .chain(undisturbed)
        })
        .collect();
    out.extend(decided().filter_map(check_correlation));
    out.extend(multiplicity(checks));
    out.extend(checks.iter().flat_map(figures));
    out
}

/// The figures a check's evidence prints that it names, each a number of its own:
/// `check.CHECK.FIGURE`.
fn figures(c: &CheckResult) -> impl Iterator<Item = Number> + '_ {
    c.figures.iter().map(|f| Number {
        id: figure_id(&c.name, &f.name),
        value: f.number.clone(),
        lo: f.interval.as_ref().map(|(lo, _)| lo.clone()),
        hi: f.interval.as_ref().map(|(_, hi)| hi.clone()),
        unit: String::new(),
        what: Subject::CheckFigure {
            check: c.name.clone(),
            figure: f.name.clone(),
            what: f.what.clone(),
            method: f.method.clone(),
            runs: f.runs.clone(),
        },
    })
}

/// The id of figure `figure` of check `check`.
pub(crate) fn figure_id(check: &str, figure: &str) -> String {
    format!("check.{}.{figure}", kebab(check))
}

/// The three figures of the multiplicity sentence, when the chapter prints it.
fn multiplicity(checks: &[CheckResult]) -> Vec<Number> {
    let Some(m) = Multiplicity::of(checks) else {
        return Vec::new();
    };
    [
        ("bonferroni", m.bonferroni),
        ("sidak", m.sidak),
        ("per-check", m.per_check),
    ]
    .into_iter()
    .map(|(figure, x)| Number {
        id: format!("multiplicity.{figure}"),
        value: percent(x),
        lo: None,
        hi: None,
        unit: String::new(),
        what: Subject::Multiplicity {
            figure: figure.to_string(),
            decided: m.decided.len(),
        },
    })
    .collect()
}

/// The ratio the check decided on, as the answer block prints it.
fn check_ratio(c: &CheckResult) -> Option<Number> {
    let r = c.ratio.as_ref().filter(|r| r.ratio.is_finite())?;
    let what = Subject::Ratio {
        a: r.a.clone(),
        b: r.b.clone(),
        metric: None,
        from: RatioSource::Check(c.name.clone()),
    };
    let id = format!("check.{}.ratio", kebab(&c.name));
    Some(ratio_number(id, (r.ratio, r.lo, r.hi), what))
}

/// The medians of the ratio's two cells where the check's evidence prints them as
/// `CELL = VALUE`: a ratio over a declared ceiling or a calibration has no second cell.
fn sides(exp: &Experiment, analysis: &Analysis, c: &CheckResult) -> Vec<Number> {
    let Some(r) = &c.ratio else {
        return Vec::new();
    };
    let Some(metric) = exp
        .checks
        .iter()
        .find(|s| s.name == c.name)
        .and_then(|s| s.kind.metric())
    else {
        return Vec::new();
    };
    let unit = exp.metric(metric).map_or("", |m| m.unit.as_str());
    let is_cell = |label: &str| {
        analysis
            .cells
            .iter()
            .any(|x| x.label == label && x.metric == metric)
    };
    [("a", &r.a, r.a_value), ("b", &r.b, r.b_value)]
        .into_iter()
        .filter(|(_, label, x)| x.is_finite() && is_cell(label))
        .filter(|(_, label, x)| c.evidence.contains(&printed_side(label, *x, unit)))
        .filter(|(_, _, x)| value(*x, unit).contains(&number(*x, unit)))
        .map(|(side, label, x)| Number {
            id: format!("check.{}.{side}", kebab(&c.name)),
            value: number(x, unit),
            lo: None,
            hi: None,
            unit: unit.to_string(),
            what: Subject::Side {
                check: c.name.clone(),
                side: side.to_string(),
                cell: label.clone(),
                metric: metric.to_string(),
            },
        })
        .collect()
}

/// The bounds of the check's ratio undisturbed, where its evidence or reading prints them.
fn undisturbed(c: &CheckResult) -> Option<Number> {
    let ([lo, hi], r) = (c.undisturbed?, c.ratio.as_ref()?);
    let shown = ratio_bounds(lo, hi);
    if !(c.evidence.contains(&shown) || c.reading.contains(&shown)) {
        return None;
    }
    Some(Number {
        id: format!("check.{}.undisturbed", kebab(&c.name)),
        value: shown,
        lo: None,
        hi: None,
        unit: String::new(),
        what: Subject::Undisturbed {
            check: c.name.clone(),
            a: r.a.clone(),
            b: r.b.clone(),
        },
    })
}

/// How a check's evidence prints one side of its ratio: `nonfair threads=2 = 13.5 Mops/s`.
fn printed_side(label: &str, x: f64, unit: &str) -> String {
    format!("{label} = {}", value(x, unit))
}

/// The ρ a decided `mechanism` check read, as its reading prints it.
fn check_correlation(c: &CheckResult) -> Option<Number> {
    let r = c.correlation.as_ref().filter(|r| r.rho.is_finite())?;
    Some(Number {
        id: format!("check.{}.rho", kebab(&c.name)),
        value: correlation(r.rho),
        lo: Some(correlation(r.lo)),
        hi: Some(correlation(r.hi)),
        unit: String::new(),
        what: Subject::Correlation {
            metric: r.metric.clone(),
            with: r.with.clone(),
            check: c.name.clone(),
        },
    })
}
