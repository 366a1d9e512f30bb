//! Cell selectors in checks (`a = { variant = "x", threads = 2 }`): every key must name the
//! variant or a declared parameter value, and a selector must name exactly one cell.

use super::{Ctx, Result};
use crate::config::model::{CellScope, CellSelector, ParamValue};
use std::collections::BTreeMap;
use toml::Spanned;

impl Ctx<'_> {
    /// A selector that must name exactly one cell.
    pub(super) fn cell(
        &self,
        field: &str,
        raw: Option<&Spanned<BTreeMap<String, toml::Value>>>,
    ) -> Result<CellSelector> {
        let Some(raw) = raw else {
            return Err(self.missing(field, "e.g. { variant = \"fast\", threads = 2 }"));
        };
        let selector = self.selector(field, raw)?;
        if selector.variant.is_none() && self.exp.variants.len() > 1 {
            return Err(self.loc.hinted(
                raw.span(),
                &self.key(field),
                "this names several cells",
                "add variant = \"NAME\"",
            ));
        }
        if let Some(p) = self
            .exp
            .params
            .iter()
            .find(|p| p.values.len() > 1 && !selector.params.contains_key(&p.name))
        {
            let msg = format!(
                "this names several cells: `{}` has {} values",
                p.name,
                p.values.len()
            );
            return Err(self.loc.hinted(
                raw.span(),
                &self.key(field),
                msg,
                format!("add {} = VALUE", p.name),
            ));
        }
        Ok(selector)
    }

    pub(super) fn selector(
        &self,
        field: &str,
        raw: &Spanned<BTreeMap<String, toml::Value>>,
    ) -> Result<CellSelector> {
        let key = self.key(field);
        let mut selector = CellSelector {
            variant: None,
            params: BTreeMap::new(),
        };
        for (name, value) in raw.get_ref() {
            if name == "variant" {
                let v = value
                    .as_str()
                    .ok_or_else(|| self.loc.error(raw.span(), &key, "variant must be a string"))?;
                if self.exp.variant(v).is_none() {
                    return Err(self.unknown_variant(v, raw.span(), field));
                }
                selector.variant = Some(v.to_string());
                continue;
            }
            let Some(param) = self.exp.param(name) else {
                return Err(self.loc.hinted(
                    raw.span(),
                    &format!("{key}.{name}"),
                    "not a parameter",
                    "a cell is named by `variant` and parameters declared in [params]",
                ));
            };
            let value = toml_to_param(value).ok_or_else(|| {
                self.loc.error(
                    raw.span(),
                    &format!("{key}.{name}"),
                    "a parameter value must be a number or a string",
                )
            })?;
            let Some(declared) = param.values.iter().find(|v| **v == value) else {
                let values: Vec<String> = param.values.iter().map(|v| v.to_string()).collect();
                return Err(self.loc.hinted(
                    raw.span(),
                    &format!("{key}.{name}"),
                    format!("{value} is not a value of `{name}`"),
                    format!("values: {}", values.join(", ")),
                ));
            };
            selector.params.insert(name.clone(), declared.clone());
        }
        Ok(selector)
    }
}

impl Ctx<'_> {
    /// `cells = { variant = "x" | ["x", …], PARAM = v | [v, …] }`: the cells a check judges.
    /// Every name must be declared and the scope must hold at least one planned cell.
    pub(super) fn scope(&self) -> Result<Option<CellScope>> {
        let Some(raw) = self.raw.cells.as_ref() else {
            return Ok(None);
        };
        let key = self.key("cells");
        let mut scope = CellScope {
            variants: Vec::new(),
            params: BTreeMap::new(),
        };
        for (name, value) in raw.get_ref() {
            let items: Vec<&toml::Value> = match value {
                toml::Value::Array(list) => list.iter().collect(),
                single => vec![single],
            };
            if items.is_empty() {
                return Err(self.loc.error(
                    raw.span(),
                    &format!("{key}.{name}"),
                    "an empty list selects no cell",
                ));
            }
            for item in items {
                let one = BTreeMap::from([(name.clone(), item.clone())]);
                let selector = self.selector("cells", &toml::Spanned::new(raw.span(), one))?;
                match selector.variant {
                    Some(v) => scope.variants.push(v),
                    None => scope
                        .params
                        .entry(name.clone())
                        .or_default()
                        .extend(selector.params.into_values()),
                }
            }
        }
        Ok(Some(scope))
    }
}

fn toml_to_param(value: &toml::Value) -> Option<ParamValue> {
    match value {
        toml::Value::Integer(i) => Some(ParamValue::Int(*i)),
        toml::Value::Float(f) => Some(ParamValue::Float(*f)),
        toml::Value::String(s) => Some(ParamValue::Text(s.clone())),
        _ => None,
    }
}
