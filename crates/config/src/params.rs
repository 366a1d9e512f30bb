//! The parameter matrix of lab.toml: each parameter's values, checked (finite, printable,
//! none listed twice in any spelling) and typed, and the subsets variants restrict them to.

use super::error::{ConfigError, Locator};
use super::identifier::{IDENTIFIER_HINT, identifier_problem};
use super::model::{Param, ParamValue};
use super::raw::RawParamValue;
use std::collections::BTreeMap;
use toml::Spanned;

type Result<T> = std::result::Result<T, ConfigError>;

/// Every value each parameter takes in the file, with or without a profile.
pub(super) fn declared_values(
    base: &[Param],
    profiled: &[Param],
) -> BTreeMap<String, Vec<ParamValue>> {
    let mut all: BTreeMap<String, Vec<ParamValue>> = BTreeMap::new();
    for p in base.iter().chain(profiled) {
        let values = all.entry(p.name.clone()).or_default();
        for v in &p.values {
            if !values.contains(v) {
                values.push(v.clone());
            }
        }
    }
    all
}

fn convert_values(values: &[RawParamValue]) -> Vec<ParamValue> {
    values
        .iter()
        .map(|v| match v {
            RawParamValue::Int(i) => ParamValue::Int(*i),
            RawParamValue::Float(f) => ParamValue::Float(*f),
            RawParamValue::Text(s) => ParamValue::Text(s.clone()),
        })
        .collect()
}

pub(super) fn validate_params(
    raw: &BTreeMap<String, Spanned<Vec<RawParamValue>>>,
    loc: &Locator,
) -> Result<Vec<Param>> {
    let mut params = Vec::new();
    for (name, values) in raw {
        let key = format!("params.{name}");
        if let Some(why) = identifier_problem(name) {
            return Err(loc.hinted(
                values.span(),
                &key,
                format!("parameter name {name:?} {why}"),
                IDENTIFIER_HINT,
            ));
        }
        if let Some(why) = values.get_ref().iter().find_map(value_problem) {
            return Err(loc.error(values.span(), &key, why));
        }
        if values.get_ref().is_empty() {
            let hint = "give at least one value, or remove the parameter";
            return Err(loc.hinted(
                values.span(),
                &key,
                "empty list: the matrix has no cells",
                hint,
            ));
        }
        let converted = convert_values(values.get_ref());
        if let Some((first, again)) = first_duplicate(&converted) {
            return Err(loc.error(values.span(), &key, listed_twice(first, again)));
        }
        params.push(Param {
            name: name.clone(),
            values: converted,
        });
    }
    Ok(params)
}

/// The first value listed again, with its earlier listing (the same value, perhaps spelled
/// otherwise: 2 and 2.0, 1 and "1").
fn first_duplicate(values: &[ParamValue]) -> Option<(&ParamValue, &ParamValue)> {
    values
        .iter()
        .enumerate()
        .find_map(|(i, v)| values[..i].iter().find(|w| *w == v).map(|w| (w, v)))
}

fn listed_twice(first: &ParamValue, again: &ParamValue) -> String {
    let (a, b) = (toml_spelling(first), toml_spelling(again));
    if a == b {
        format!("the value {again} is listed twice")
    } else {
        format!("the value {again} is listed twice, as {a} and {b}")
    }
}

/// A value as lab.toml writes it: text quoted, floats with their decimal point.
fn toml_spelling(value: &ParamValue) -> String {
    match value {
        ParamValue::Int(i) => i.to_string(),
        ParamValue::Float(x) => format!("{x:?}"),
        ParamValue::Text(s) => format!("{s:?}"),
    }
}

pub(super) fn validate_restrictions(
    raw: &BTreeMap<String, Spanned<Vec<RawParamValue>>>,
    params: &[Param],
    key: &str,
    loc: &Locator,
) -> Result<BTreeMap<String, Vec<ParamValue>>> {
    let mut only = BTreeMap::new();
    for (name, values) in raw {
        let key = format!("{key}.params.{name}");
        let Some(param) = params.iter().find(|p| &p.name == name) else {
            return Err(loc.error(
                values.span(),
                &key,
                "this parameter is not declared in [params]",
            ));
        };
        let converted = convert_values(values.get_ref());
        if let Some(v) = converted.iter().find(|v| !param.values.contains(v)) {
            let msg = format!("{v} is not one of the values of `{name}` in [params]");
            return Err(loc.error(values.span(), &key, msg));
        }
        if converted.is_empty() {
            return Err(loc.error(
                values.span(),
                &key,
                "empty list: this variant would never run",
            ));
        }
        only.insert(name.clone(), converted);
    }
    Ok(only)
}

/// Why a parameter value cannot be used, if it cannot: numbers must be finite; text must hold
/// no control characters.
fn value_problem(value: &RawParamValue) -> Option<String> {
    match value {
        RawParamValue::Float(f) if !f.is_finite() => Some(format!(
            "{f} is not a finite number: parameters must be finite"
        )),
        RawParamValue::Text(t) if t.chars().any(char::is_control) => {
            Some(format!("{t:?} holds a control character"))
        }
        RawParamValue::Text(t) if t.len() > 256 => {
            Some("a text value is longer than 256 bytes".to_string())
        }
        _ => None,
    }
}
