//! The answer in the terminal after `lab run`: per cell the primary metric's median with its
//! 95% interval and run count, its ratio to the first variant at the same parameters (as
//! hyperfine reports relative speed), every check's verdict on one line, and where the chapter
//! is. Printed as text or JSON; it decides `lab run`'s exit code like `lab check` does.

use crate::assess::Assessed;
use lab_config::format::{interval, number, ratio, ratio_bounds, terminal};
use lab_config::{Better, CheckClass};
use lab_judge::checks::{Verdict, ratio_of};
use serde::Serialize;
use std::path::Path;

/// What a session found, in a few lines.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub experiment: String,
    pub session: String,
    pub state: String,
    pub metric: String,
    pub unit: String,
    /// Empty where the summary is not printed ([`Wanted::Verdict`]).
    pub cells: Vec<SummaryCell>,
    /// The confidence level of every interval (above 95% at the looks of a sampled session).
    pub level: f64,
    /// A sampled session: why sampling stopped.
    pub sampling: Option<String>,
    pub checks: Vec<SummaryCheck>,
    pub chapter: String,
    /// A validity check or a hypothesis failed, or no run produced a valid measurement.
    pub failed: bool,
    /// A session across revisions: the head revision against the base, cell by cell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revisions: Option<lab_judge::compare::Comparison>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SummaryCell {
    pub cell: String,
    pub n: usize,
    pub median: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// This cell's median over the first variant's at the same parameters, with its interval.
    pub relative: Option<Relative>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Relative {
    pub to: String,
    pub ratio: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// "faster", "slower" or "no detectable difference" (the interval holds 1).
    pub reading: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SummaryCheck {
    pub verdict: String,
    pub class: String,
    pub name: String,
    pub reading: String,
    pub untrusted: bool,
}

/// What a chapter's summary is wanted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// Printing, as `lab run` and `lab import` do: every cell, with its ratio to the first
    /// variant and that ratio's interval.
    Printed,
    /// Only what decides an exit code (whether something failed, how the revisions compared):
    /// no cell, so no ratio is resampled, for the commands that print no summary.
    Verdict,
}

/// The summary of an assessed session whose chapter is at `chapter`, as `wanted`.
pub fn summarise(a: &Assessed, chapter: &Path, wanted: Wanted) -> Summary {
    let exp = &a.experiment;
    let primary = exp.primary_metric();
    let metric = primary.map_or_else(String::new, |m| m.name.clone());
    let cells: Vec<SummaryCell> = a
        .analysis
        .cells
        .iter()
        .filter(|c| wanted == Wanted::Printed && c.metric == metric)
        .map(|c| summary_cell(a, c, primary.map_or(Better::Higher, |m| m.better)))
        .collect();
    let checks = a
        .findings
        .checks
        .iter()
        .map(|c| SummaryCheck {
            verdict: c.verdict.word().to_string(),
            class: match c.class {
                CheckClass::Validity => "validity".into(),
                CheckClass::Hypothesis => "hypothesis".into(),
            },
            name: c.name.clone(),
            reading: c.reading.clone(),
            untrusted: c.untrusted,
        })
        .collect();
    Summary {
        experiment: exp.name.clone(),
        session: a.session.name.clone(),
        state: format!(
            "profile {}; {}",
            a.session.manifest.profile.as_deref().unwrap_or("default"),
            a.session.manifest.status()
        ),
        unit: primary.map_or_else(String::new, |m| m.unit.clone()),
        metric,
        cells,
        level: a.analysis.resampling.level,
        sampling: a.looks.last().map(|s| s.sentence(exp)),
        checks,
        chapter: chapter.display().to_string(),
        failed: failed(a),
        revisions: None,
    }
}

/// A validity check or a hypothesis failed, or no run produced a valid measurement.
pub fn failed(a: &Assessed) -> bool {
    a.analysis.counts.valid == 0 || a.findings.checks.iter().any(|c| c.verdict == Verdict::Fail)
}

fn summary_cell(a: &Assessed, c: &lab_judge::analysis::CellStats, better: Better) -> SummaryCell {
    let first = a.experiment.variants.first().map(|v| v.name.as_str());
    let base = a.analysis.cells.iter().find(|b| {
        b.metric == c.metric
            && Some(b.cell.variant.as_str()) == first
            && b.cell.params == c.cell.params
    });
    let relative = base
        .filter(|b| b.cell != c.cell)
        .and_then(|b| relative(a, c, b, better));
    SummaryCell {
        cell: c.label.clone(),
        n: c.n,
        median: c.summary.as_ref().map(|s| s.median),
        lo: c.median_ci.map(|i| i.lo),
        hi: c.median_ci.map(|i| i.hi),
        relative,
    }
}

fn relative(
    a: &Assessed,
    c: &lab_judge::analysis::CellStats,
    base: &lab_judge::analysis::CellStats,
    better: Better,
) -> Option<Relative> {
    let point = c.summary.as_ref()?.median / base.summary.as_ref()?.median;
    if !point.is_finite() {
        return None;
    }
    let label = format!("summary/{}/{}/{}", c.metric, c.cell, base.cell);
    let interval = ratio_of(c, base, a.analysis.resampling, &label).ok();
    let (lo, hi) = interval.map_or((None, None), |(_, i)| (Some(i.lo), Some(i.hi)));
    let reading = match (lo, hi) {
        (Some(lo), Some(hi)) if lo > 1.0 || hi < 1.0 => {
            let higher = lo > 1.0;
            if higher == (better == Better::Higher) {
                "faster"
            } else {
                "slower"
            }
            .to_string()
        }
        (Some(_), Some(_)) => "no detectable difference".to_string(),
        _ => "too few runs for an interval".to_string(),
    };
    Some(Relative {
        to: base.label.clone(),
        ratio: point,
        lo,
        hi,
        reading,
    })
}

/// The summary as aligned text for the terminal.
pub fn text(s: &Summary) -> String {
    let mut out = format!("{} — session {} ({})\n", s.experiment, s.session, s.state);
    if !s.cells.is_empty() {
        out.push_str(&format!(
            "{}{}: median [{} CI]\n",
            s.metric,
            if s.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", s.unit)
            },
            lab_config::format::level(s.level)
        ));
        let width = s
            .cells
            .iter()
            .map(|c| lab_config::format::width(&c.cell))
            .max()
            .unwrap_or(0);
        for c in &s.cells {
            let value = match (c.median, c.lo, c.hi) {
                (Some(m), Some(lo), Some(hi)) => interval(m, lo, hi, &s.unit),
                (Some(m), _, _) => number(m, &s.unit),
                _ => "no valid run".into(),
            };
            let relative = c.relative.as_ref().map_or(String::new(), |r| {
                let interval = match (r.lo, r.hi) {
                    (Some(lo), Some(hi)) => format!(" {}", ratio_bounds(lo, hi)),
                    _ => String::new(),
                };
                format!("  {}×{interval} {}: {}", ratio(r.ratio), r.to, r.reading)
            });
            out.push_str(&format!(
                "  {}  {value}  n={}{relative}\n",
                lab_config::format::pad(&c.cell, width),
                c.n
            ));
        }
    }
    for c in &s.checks {
        let verdict = format!("{}{}", c.verdict, if c.untrusted { "*" } else { "" });
        out.push_str(&format!("  {verdict:<13} {}: {}\n", c.name, c.reading));
    }
    if s.checks.iter().any(|c| c.untrusted) {
        out.push_str("  * untrusted: a validity check failed in a cell the hypothesis read, or across the session\n");
    }
    if let Some(sampling) = &s.sampling {
        out.push_str(&format!("{sampling}\n"));
    }
    out.push_str(&format!("chapter: {}\n", s.chapter));
    terminal(&out)
}
