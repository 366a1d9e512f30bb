//! Metrics derived per run from two others (`of` / `per`): both must exist and be numbers, and
//! no derived metric may depend on itself; units, direction and whether it is counted follow
//! from the two it divides unless lab.toml says otherwise.

use super::error::{ConfigError, Locator};
use super::model::{Extractor, Metric};
use super::raw::RawMetric;
use std::collections::BTreeMap;
use toml::Spanned;

type Result<T> = std::result::Result<T, ConfigError>;

/// The extractor of a metric declaring `of` and `per`, or `None` when it declares neither.
pub(crate) fn extractor(
    m: &Spanned<RawMetric>,
    key: &str,
    loc: &Locator,
) -> Result<Option<Extractor>> {
    let raw = m.get_ref();
    match (&raw.of, &raw.per) {
        (None, None) => Ok(None),
        (Some(of), Some(per)) if raw.json.is_none() && raw.regex.is_none() => {
            Ok(Some(Extractor::Derived {
                of: of.get_ref().clone(),
                per: per.get_ref().clone(),
            }))
        }
        (Some(_), Some(_)) => Err(loc.hinted(
            m.span(),
            key,
            "a metric computed from `of` and `per` reads nothing from the output",
            "remove `json` or `regex`, or `of` and `per`",
        )),
        (Some(given), None) | (None, Some(given)) => Err(loc.hinted(
            given.span(),
            key,
            "`of` and `per` go together",
            "write e.g. of = \"voluntary_cs\", per = \"ops\": the run's voluntary_cs divided by its ops",
        )),
    }
}

/// Checks every derived metric against the others and fills in what it inherits from them.
pub(crate) fn resolve(
    metrics: &mut [Metric],
    raw: &BTreeMap<String, Spanned<RawMetric>>,
    loc: &Locator,
) -> Result<()> {
    for (name, m) in raw {
        let (Some(of), Some(per)) = (&m.get_ref().of, &m.get_ref().per) else {
            continue;
        };
        let key = format!("metric.{name}");
        operand(metrics, name, of, &format!("{key}.of"), loc)?;
        operand(metrics, name, per, &format!("{key}.per"), loc)?;
        if let Some(cycle) = cycle_from(metrics, name) {
            let msg = format!("`{name}` depends on itself: {}", cycle.join(" → "));
            let hint = "derive from metrics the run prints or lab measures";
            return Err(loc.hinted(of.span(), &key, msg, hint));
        }
    }
    // In dependency order, so that a metric derived from a derived one inherits what that one
    // inherited.
    for name in super::model::dependency_order(metrics) {
        inherit(metrics, &name, &raw[&name]);
    }
    Ok(())
}

/// `operand` names a numeric metric other than `name`.
fn operand(
    metrics: &[Metric],
    name: &str,
    operand: &Spanned<String>,
    key: &str,
    loc: &Locator,
) -> Result<()> {
    let wanted = operand.get_ref();
    let Some(found) = metrics.iter().find(|m| m.name == *wanted) else {
        let mut known: Vec<&str> = metrics
            .iter()
            .filter(|m| !m.text && m.name != name)
            .map(|m| m.name.as_str())
            .collect();
        known.sort_unstable();
        let msg = format!("no metric `{wanted}`");
        let hint = format!("name one of: {}", known.join(", "));
        return Err(loc.hinted(operand.span(), key, msg, hint));
    };
    if found.text {
        let msg = format!("`{wanted}` is text; only numbers can be divided");
        let hint = "name a numeric metric";
        return Err(loc.hinted(operand.span(), key, msg, hint));
    }
    Ok(())
}

/// The chain of metrics that leads from `start` back to itself, if one does.
fn cycle_from(metrics: &[Metric], start: &str) -> Option<Vec<String>> {
    let mut path = vec![start.to_string()];
    walk(metrics, start, start, &mut path).then_some(path)
}

fn walk(metrics: &[Metric], start: &str, at: &str, path: &mut Vec<String>) -> bool {
    let Some((of, per)) = metrics
        .iter()
        .find(|m| m.name == at)
        .and_then(Metric::operands)
    else {
        return false;
    };
    for next in [of, per] {
        path.push(next.to_string());
        if next == start {
            return true;
        }
        // A metric already on the path closes a cycle that does not pass `start`: it is
        // reported from its own members.
        if !path[..path.len() - 1].iter().any(|p| p == next) && walk(metrics, start, next, path) {
            return true;
        }
        path.pop();
    }
    false
}

/// Unit `<of unit>/<per name>`, `of`'s direction, optional when either is, and counted when
/// both are: a ratio with a timing in it depends on how busy the machine was.
fn inherit(metrics: &mut [Metric], name: &str, raw: &Spanned<RawMetric>) {
    let raw = raw.get_ref();
    let find = |n: &str| metrics.iter().find(|m| m.name == n).cloned();
    let Some(m) = find(name) else { return };
    let Some((Some(of), Some(per))) = m.operands().map(|(o, p)| (find(o), find(p))) else {
        return;
    };
    let Some(target) = metrics.iter_mut().find(|m| m.name == name) else {
        return;
    };
    if raw.unit.is_none() {
        target.unit = if of.unit.is_empty() {
            format!("1/{}", per.name)
        } else {
            format!("{}/{}", of.unit, per.name)
        };
    }
    if raw.better.is_none() {
        target.better = of.better;
    }
    target.optional = raw.optional || of.optional || per.optional;
    target.count = raw.count || (of.count && per.count);
}
