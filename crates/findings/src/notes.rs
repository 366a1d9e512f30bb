//! What an experiment's notes quote, worked out before they are rendered, and how a
//! reference in them finds its cell: a selector such as `"nonfair threads=2"` names one cell
//! ([`find_cell`]).

use crate::analysis::{Analysis, CellStats};
use lab_config::plan::CellKey;
use lab_config::{Experiment, ParamValue};
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

/// A metric and two cells: which ratio.
pub type RatioKey = (String, CellKey, CellKey);

/// The values the notes quote beyond the analysis.
#[derive(Debug, Clone, Default)]
pub struct Quoted {
    /// Cells of the built-in metrics the notes name that the analysis did not compute.
    builtin: Vec<CellStats>,
    /// Each wanted ratio, or why the session cannot give it.
    ratios: BTreeMap<RatioKey, Result<RatioValue, String>>,
}

impl Quoted {
    /// The cells of the built-in metrics the notes name, before any ratio is worked out.
    pub fn new(builtin: Vec<CellStats>) -> Quoted {
        Quoted {
            builtin,
            ratios: BTreeMap::new(),
        }
    }

    /// The same, with each wanted ratio or why the session cannot give it.
    pub fn with_ratios(self, ratios: BTreeMap<RatioKey, Result<RatioValue, String>>) -> Quoted {
        Quoted { ratios, ..self }
    }

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

    /// Every ratio the notes asked for that the session could give, in key order.
    pub fn ratios(&self) -> impl Iterator<Item = (&RatioKey, &RatioValue)> {
        self.ratios
            .iter()
            .filter_map(|(key, value)| value.as_ref().ok().map(|v| (key, v)))
    }
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
