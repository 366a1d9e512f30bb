//! Cell selectors in checks (`a = { variant = "x", threads = 2 }`): every key must name the
//! variant or a declared parameter value, and a selector must name exactly one cell.

use super::{Ctx, Result};
use crate::model::{CellScope, CellSelector, CellSet, ParamValue};
use crate::raw::RawCells;
use std::collections::BTreeMap;
use std::ops::Range;
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
    /// `cells = { variant = "x" | ["x", …], PARAM = v | [v, …] }`, or a list of such tables:
    /// the cells a check judges. Every name must be declared.
    pub(super) fn scope(&self) -> Result<Option<CellScope>> {
        let Some(raw) = self.raw.cells.as_ref() else {
            return Ok(None);
        };
        let sets = match raw.get_ref() {
            RawCells::One(table) => vec![self.cell_set("cells", raw.span(), table)?],
            RawCells::Any(tables) if tables.is_empty() => {
                return Err(self.loc.error(
                    raw.span(),
                    &self.key("cells"),
                    "an empty list selects no cell",
                ));
            }
            RawCells::Any(tables) => tables
                .iter()
                .enumerate()
                .map(|(i, t)| self.cell_set(&format!("cells[{}]", i + 1), raw.span(), t))
                .collect::<Result<_>>()?,
        };
        Ok(Some(CellScope { sets }))
    }

    /// One table of `cells`: the variants and parameter values it names.
    fn cell_set(
        &self,
        field: &str,
        span: Range<usize>,
        table: &BTreeMap<String, toml::Value>,
    ) -> Result<CellSet> {
        let key = self.key(field);
        let mut set = CellSet {
            variants: Vec::new(),
            params: BTreeMap::new(),
        };
        for (name, value) in table {
            let items: Vec<&toml::Value> = match value {
                toml::Value::Array(list) => list.iter().collect(),
                single => vec![single],
            };
            if items.is_empty() {
                return Err(self.loc.error(
                    span,
                    &format!("{key}.{name}"),
                    "an empty list selects no cell",
                ));
            }
            for item in items {
                let one = BTreeMap::from([(name.clone(), item.clone())]);
                let selector = self.selector(field, &Spanned::new(span.clone(), one))?;
                match selector.variant {
                    Some(v) => set.variants.push(v),
                    None => set
                        .params
                        .entry(name.clone())
                        .or_default()
                        .extend(selector.params.into_values()),
                }
            }
        }
        Ok(set)
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
