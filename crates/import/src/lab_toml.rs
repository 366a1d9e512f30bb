//! The lab.toml `lab import` writes for a new experiment, as serde structs the `toml` crate
//! serialises, so every value is written with its TOML type.

use lab_config::ParamValue;
use std::collections::BTreeMap;

/// A generated lab.toml, its tables in the order a reader meets them.
#[derive(serde::Serialize)]
pub struct GeneratedToml {
    pub experiment: ExperimentToml,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, Vec<toml::Value>>,
    pub variant: Vec<VariantToml>,
    pub metric: InOrder<MetricToml>,
}

/// Named tables written in this order (a map would sort them; the first metric is the one
/// charts and tables lead with).
pub struct InOrder<T>(pub Vec<(String, T)>);

impl<T: serde::Serialize> serde::Serialize for InOrder<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, table) in &self.0 {
            map.serialize_entry(name, table)?;
        }
        map.end()
    }
}

#[derive(serde::Serialize)]
pub struct ExperimentToml {
    pub title: String,
    pub hypothesis: &'static str,
    pub repetitions: usize,
    pub imported: &'static str,
}

#[derive(serde::Serialize)]
pub struct VariantToml {
    pub name: String,
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<toml::Table>,
}

#[derive(serde::Serialize)]
pub struct MetricToml {
    pub json: String,
    pub unit: String,
    pub better: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub count: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_iterations: Option<usize>,
}

/// A parameter value as TOML types it: integers stay integers, floats stay floats.
pub fn toml_value(v: &ParamValue) -> toml::Value {
    match v {
        ParamValue::Int(i) => toml::Value::Integer(*i),
        ParamValue::Float(x) => toml::Value::Float(*x),
        ParamValue::Text(t) => toml::Value::String(t.clone()),
    }
}
