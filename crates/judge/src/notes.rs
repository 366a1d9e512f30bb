//! What an experiment's notes quote, worked out before they are rendered: the cells of the
//! built-in metrics they name (the analysis leaves those out) and the ratios between cells they
//! ask for, so that rendering only looks values up and formats them. A selector such as
//! `"nonfair threads=2"` names one cell ([`find_cell`]).

use crate::analysis::{Analysis, CellStats, cell_stats_of};
use crate::checks::{CheckResult, ratio_of};
use lab_config::plan::CellKey;
use lab_config::{Experiment, Metric, ParamValue};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// What notes.md asks for, read from its text before it is rendered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Wanted {
    /// Every string the notes' expressions and statements quote: the metrics named among them.
    pub strings: BTreeSet<String>,
    /// Every `ratio(a="…", b="…", metric="…")` the notes write, in order.
    pub ratios: Vec<RatioWanted>,
}

/// One ratio the notes ask for, by its two selectors and its metric (`None`: the first one).
#[derive(Debug, Clone, PartialEq)]
pub struct RatioWanted {
    pub a: String,
    pub b: String,
    pub metric: Option<String>,
}

/// A ratio of medians with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioValue {
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
}

/// Two cells and a metric: which ratio.
type RatioKey = (String, CellKey, CellKey);

/// The values the notes quote beyond the analysis.
#[derive(Debug, Clone, Default)]
pub struct Quoted {
    /// Cells of the built-in metrics the notes name that the analysis did not compute.
    builtin: Vec<CellStats>,
    /// Each wanted ratio, or why the session cannot give it.
    ratios: BTreeMap<RatioKey, Result<RatioValue, String>>,
}

impl Quoted {
    /// The session's cells, then those of the built-in metrics the notes name.
    pub fn cells<'a>(&'a self, analysis: &'a Analysis) -> Vec<&'a CellStats> {
        analysis.cells.iter().chain(&self.builtin).collect()
    }

    /// The ratio of `a` to `b` in `metric`; `None` when the notes did not ask for it.
    pub fn ratio(
        &self,
        metric: &str,
        a: &CellStats,
        b: &CellStats,
    ) -> Option<&Result<RatioValue, String>> {
        self.ratios
            .get(&(metric.to_string(), a.cell.clone(), b.cell.clone()))
    }
}

/// Works out what the notes quote: the built-in metrics' cells, then every ratio whose cells
/// the session has. A reference that names nothing is left for rendering to report where it
/// is written.
pub fn quote(
    exp: &Experiment,
    analysis: &Analysis,
    checks: &[CheckResult],
    wanted: &Wanted,
) -> Quoted {
    let mut quoted = Quoted {
        builtin: builtin_cells(exp, analysis, &wanted.strings),
        ratios: BTreeMap::new(),
    };
    let cells = quoted.cells(analysis);
    let pairs: BTreeMap<RatioKey, (&CellStats, &CellStats, String)> = wanted
        .ratios
        .iter()
        .filter_map(|r| {
            let metric = metric_name(exp, r.metric.as_deref()).ok()?;
            let a = find_cell(exp, &cells, &r.a, &metric).ok()?;
            let b = find_cell(exp, &cells, &r.b, &metric).ok()?;
            let key = (metric.clone(), a.cell.clone(), b.cell.clone());
            Some((key, (a, b, metric)))
        })
        .collect();
    // One seeded stream per ratio, named by its cells: the same interval in any order.
    let ratios = pairs
        .into_par_iter()
        .map(|(key, (a, b, metric))| {
            let value = decided_ratio(exp, checks, a, b, &metric).map_or_else(
                || {
                    let label = format!("notes/{metric}/{}/{}", a.cell, b.cell);
                    ratio_of(a, b, analysis.resampling, &label).map(|(ratio, ci)| RatioValue {
                        ratio,
                        lo: ci.lo,
                        hi: ci.hi,
                    })
                },
                Ok,
            );
            (key, value)
        })
        .collect();
    quoted.ratios = ratios;
    quoted
}

/// Statistics of the built-in metrics the notes quote but the analysis did not compute.
fn builtin_cells(
    exp: &Experiment,
    analysis: &Analysis,
    strings: &BTreeSet<String>,
) -> Vec<CellStats> {
    let missing: Vec<&Metric> = exp
        .metrics
        .iter()
        .filter(|m| m.is_builtin() && strings.contains(&m.name))
        .filter(|m| !analysis.cells.iter().any(|c| c.metric == m.name))
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    cell_stats_of(
        exp,
        &missing,
        &analysis.cell_keys,
        &analysis.runs,
        analysis.resampling,
    )
}

/// The ratio a check decided on for the same two cells and metric, so that the prose and the
/// checks table show one interval, not two draws of it.
fn decided_ratio(
    exp: &Experiment,
    checks: &[CheckResult],
    a: &CellStats,
    b: &CellStats,
    metric: &str,
) -> Option<RatioValue> {
    checks.iter().find_map(|c| {
        let r = c.ratio.as_ref()?;
        let same_metric = exp
            .checks
            .iter()
            .any(|s| s.name == c.name && s.kind.metric() == Some(metric));
        (same_metric && r.a == a.label && r.b == b.label).then_some(RatioValue {
            ratio: r.ratio,
            lo: r.lo,
            hi: r.hi,
        })
    })
}

/// The numeric metric a reference names, or the experiment's first one when it names none.
pub fn metric_name(exp: &Experiment, named: Option<&str>) -> Result<String, String> {
    let name = match named {
        Some(n) => n.to_string(),
        None => exp
            .primary_metric()
            .map(|m| m.name.clone())
            .ok_or_else(|| "the experiment has no numeric metric".to_string())?,
    };
    match exp.metric(&name) {
        Some(m) if !m.text => Ok(name),
        Some(_) => Err(format!(
            "metric `{name}` is text; cells have statistics only for numeric metrics"
        )),
        None => Err(format!(
            "no metric named `{name}`; metrics: {}",
            exp.metrics
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The cell a selector names; `Ok(None)` when lab.toml declares it but this session did not
/// run it.
pub fn find_run<'c>(
    exp: &Experiment,
    cells: &[&'c CellStats],
    selector: &str,
    metric: &str,
) -> Result<Option<&'c CellStats>, String> {
    match find_cell(exp, cells, selector, metric) {
        Ok(cell) => Ok(Some(cell)),
        Err(_) if declares(exp, selector) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether lab.toml declares the cell a selector names, in any profile.
fn declares(exp: &Experiment, selector: &str) -> bool {
    let mut words = selector.split_whitespace();
    let variant = words.next().unwrap_or("");
    exp.variant(variant).is_some()
        && words.all(|w| {
            w.split_once('=').is_some_and(|(k, v)| {
                exp.declared_values
                    .get(k)
                    .is_some_and(|values| values.contains(&ParamValue::Text(v.to_string())))
            })
        })
}

/// The one cell of `metric` a selector string like "nonfair threads=2" names.
pub fn find_cell<'c>(
    exp: &Experiment,
    cells: &[&'c CellStats],
    selector: &str,
    metric: &str,
) -> Result<&'c CellStats, String> {
    let mut words = selector.split_whitespace();
    let variant = words.next().unwrap_or("");
    let wanted: Vec<(&str, &str)> = words.filter_map(|w| w.split_once('=')).collect();
    let matches: Vec<&CellStats> = cells
        .iter()
        .copied()
        .filter(|c| c.metric == metric && c.cell.variant == variant)
        .filter(|c| {
            wanted
                .iter()
                .all(|(k, v)| c.cell.params.get(*k) == Some(&ParamValue::Text(v.to_string())))
        })
        .collect();
    match at_head_revision(exp, matches, &wanted).as_slice() {
        [one] => Ok(one),
        [] => Err(format!(
            "no cell matches \"{selector}\" (metric `{metric}`); cells look like \"{}\"",
            cells.first().map_or(String::new(), |c| c.label.clone())
        )),
        many => Err(format!(
            "\"{selector}\" matches {} cells; name every parameter that varies",
            many.len()
        )),
    }
}

/// In a session across revisions, a selector that names no `rev` reads the head revision (the
/// code as it is now); elsewhere the matches are left as they are.
fn at_head_revision<'c>(
    exp: &Experiment,
    matches: Vec<&'c CellStats>,
    wanted: &[(&str, &str)],
) -> Vec<&'c CellStats> {
    let head = exp
        .param(lab_config::REV_PARAM)
        .and_then(|p| p.values.last());
    match head {
        Some(head) if matches.len() > 1 && !wanted.iter().any(|(k, _)| *k == "rev") => matches
            .into_iter()
            .filter(|c| c.cell.params.get(lab_config::REV_PARAM) == Some(head))
            .collect(),
        _ => matches,
    }
}
