//! Cells lined up along one parameter, for the checks that walk a parameter axis (`distinct`,
//! `scaling`): one series per variant and setting of the other parameters.

use crate::analysis::CellStats;
use lab_config::{Experiment, ParamValue};
use std::collections::BTreeMap;

/// The cells of `metric` (of `variant` only, when given) grouped by everything but `along`,
/// each series ordered as `along`'s values are declared. Series come in plan order.
pub(super) fn along<'a>(
    exp: &Experiment,
    cells: &'a [CellStats],
    metric: &str,
    along: &str,
    variant: Option<&str>,
) -> Vec<Vec<&'a CellStats>> {
    let Some(param) = exp.param(along) else {
        return Vec::new();
    };
    let rank = |c: &CellStats| {
        c.cell
            .params
            .get(along)
            .and_then(|v| param.values.iter().position(|p| p == v))
    };
    let mut groups: Vec<(String, BTreeMap<&String, &ParamValue>, Vec<&CellStats>)> = Vec::new();
    for cell in cells.iter().filter(|c| {
        c.metric == metric && variant.is_none_or(|v| c.cell.variant == v) && rank(c).is_some()
    }) {
        let rest: BTreeMap<&String, &ParamValue> = cell
            .cell
            .params
            .iter()
            .filter(|(k, _)| k.as_str() != along)
            .collect();
        match groups
            .iter_mut()
            .find(|(v, r, _)| *v == cell.cell.variant && *r == rest)
        {
            Some(group) => group.2.push(cell),
            None => groups.push((cell.cell.variant.clone(), rest, vec![cell])),
        }
    }
    groups
        .into_iter()
        .map(|(_, _, mut series)| {
            series.sort_by_key(|c| rank(c));
            series
        })
        .filter(|s| s.len() >= 2)
        .collect()
}
