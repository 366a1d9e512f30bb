//! The results tables of a chapter: one row per cell, every interval formatted once, here.

use crate::analysis::{Analysis, CellStats};
use crate::config::Experiment;
use crate::format::{percent, significant, value};
use serde::Serialize;

#[derive(Serialize)]
pub struct Table {
    pub metric: String,
    pub unit: String,
    /// The parameters that take several values: one column each.
    pub params: Vec<String>,
    pub rows: Vec<TableRow>,
}

#[derive(Serialize)]
pub struct TableRow {
    pub variant: String,
    pub params: Vec<String>,
    pub median: String,
    pub exact: String,
    pub mean: String,
    pub shape: String,
    pub n: usize,
    pub cv: String,
    pub range: String,
    pub excluded: usize,
}

#[derive(Serialize)]
pub struct PercentileRow {
    pub metric: String,
    pub cell: String,
    pub n: usize,
    pub p50: String,
    pub p90: String,
    pub p99: String,
    pub p999: String,
    pub max: String,
}

pub fn tables(exp: &Experiment, analysis: &Analysis) -> Vec<Table> {
    exp.analysed_metrics()
        .into_iter()
        .map(|m| Table {
            metric: m.name.clone(),
            unit: m.unit.clone(),
            params: varying(exp).iter().map(|p| p.to_string()).collect(),
            rows: analysis
                .cells
                .iter()
                .filter(|c| c.metric == m.name)
                .map(|c| table_row(exp, c))
                .collect(),
        })
        .collect()
}

/// Names of the parameters that take more than one value.
fn varying(exp: &Experiment) -> Vec<String> {
    exp.params
        .iter()
        .filter(|p| p.values.len() > 1)
        .map(|p| p.name.clone())
        .collect()
}

fn table_row(exp: &Experiment, c: &CellStats) -> TableRow {
    let number = |x: f64| significant(x, 3);
    let median = match (&c.summary, &c.median_ci) {
        (Some(s), Some(ci)) => format!(
            "{} [{}, {}]",
            number(s.median),
            number(ci.lo),
            number(ci.hi)
        ),
        (Some(s), None) => number(s.median),
        _ => "no valid run".into(),
    };
    TableRow {
        exact: c.exact_median_ci.as_ref().map_or("–".into(), |e| {
            format!(
                "[{}, {}] ({})",
                number(e.interval.lo),
                number(e.interval.hi),
                percent(e.coverage)
            )
        }),
        mean: match (&c.summary, &c.mean_ci) {
            (Some(s), Some(ci)) => {
                format!("{} [{}, {}]", number(s.mean), number(ci.lo), number(ci.hi))
            }
            (Some(s), None) => number(s.mean),
            _ => "–".into(),
        },
        shape: shape_note(c),
        variant: c.cell.variant.clone(),
        params: varying(exp)
            .iter()
            .map(|p| c.cell.params.get(p).cloned().unwrap_or_default())
            .collect(),

        median,
        n: c.n,
        cv: c
            .summary
            .as_ref()
            .filter(|s| s.n > 1 && s.cv.is_finite())
            .map_or("–".into(), |s| percent(s.cv)),
        range: c.summary.as_ref().map_or("–".into(), |s| {
            format!("{}–{}", number(s.min), number(s.max))
        }),
        excluded: c.invalid_runs,
    }
}

/// What the modality, drift and steady-state analyses found in a cell, in a few words.
fn shape_note(c: &CellStats) -> String {
    let mut notes = Vec::new();
    if let Some(dip) = c.modes.as_ref().filter(|d| d.second_mode_detected) {
        let modes: Vec<String> = dip
            .modes
            .iter()
            .map(|m| format!("{} ({})", significant(m.median, 3), percent(m.share)))
            .collect();
        notes.push(format!("{} modes: {}", dip.modes.len(), modes.join(", ")));
    }
    if let Some(drift) = c.drift.as_ref().filter(|d| d.test.p_value < 0.05) {
        notes.push(format!(
            "drift: {} per run position (Mann–Kendall p = {})",
            significant(drift.slope_per_position, 2),
            significant(drift.test.p_value, 2)
        ));
    }
    if let Some(steady) = &c.steady {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for state in &steady.states {
            let name = format!("{state:?}").to_lowercase();
            match counts.iter_mut().find(|(n, _)| *n == name) {
                Some((_, k)) => *k += 1,
                None => counts.push((name, 1)),
            }
        }
        let parts: Vec<String> = counts.iter().map(|(n, k)| format!("{k} {n}")).collect();
        notes.push(format!(
            "runs: {}{}",
            parts.join(", "),
            if steady.consistent {
                ""
            } else {
                " (inconsistent)"
            }
        ));
    }
    if let Some(d) = c
        .design_effect
        .as_ref()
        .filter(|d| d.naive_ci_understatement > 1.5)
    {
        notes.push(format!(
            "pooling iterations would understate the CI {}×",
            significant(d.naive_ci_understatement, 2)
        ));
    }
    notes.join("; ")
}

pub fn percentile_rows(exp: &Experiment, analysis: &Analysis) -> Vec<PercentileRow> {
    let show = |e: &crate::stats::PercentileEstimate, unit: &str| match &e.ci {
        Some(ci) => format!(
            "{} [{}, {}]",
            value(e.value, unit),
            significant(ci.lo, 3),
            significant(ci.hi, 3)
        ),
        None => value(e.value, unit),
    };
    analysis
        .cells
        .iter()
        .filter_map(|c| {
            let p = c.percentiles.as_ref()?;
            let unit = exp.metric(&c.metric).map_or("", |m| m.unit.as_str());
            Some(PercentileRow {
                metric: c.metric.clone(),
                cell: c.label.clone(),
                n: p.n,
                p50: show(&p.p50, unit),
                p90: show(&p.p90, unit),
                p99: show(&p.p99, unit),
                p999: show(&p.p999, unit),
                max: value(p.max, unit),
            })
        })
        .collect()
}
