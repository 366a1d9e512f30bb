//! The serde mirror of `lab.toml`: every table denies unknown keys, values keep their spans.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A whole `lab.toml` as written, before validation.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    pub experiment: RawExperiment,
    pub build: Option<RawBuild>,
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<Vec<RawParamValue>>>,
    #[serde(default, rename = "variant")]
    pub variants: Vec<RawVariant>,
    #[serde(default, rename = "metric")]
    pub metrics: BTreeMap<String, Spanned<RawMetric>>,
    #[serde(default, rename = "profile")]
    pub profiles: BTreeMap<String, Spanned<RawProfile>>,
    #[serde(default, rename = "check")]
    pub checks: Vec<Spanned<RawCheck>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    pub title: String,
    pub hypothesis: String,
    pub repetitions: Option<Spanned<u32>>,
    pub order: Option<RawOrder>,
    pub seed: Option<u64>,
    pub timeout: Option<Spanned<String>>,
    pub warmup_runs: Option<u32>,
    /// The largest plan lab accepts (default [`crate::config::MAX_RUNS`]).
    pub max_runs: Option<Spanned<u64>>,
    /// Commands whose output is recorded in the manifest, e.g. `[["java", "-version"]]`.
    #[serde(default)]
    pub versions: Vec<Spanned<Vec<String>>>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RawOrder {
    Shuffled,
    Sequential,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBuild {
    pub run: Spanned<Vec<String>>,
    #[serde(default)]
    pub inputs: Vec<String>,
    #[serde(default)]
    pub outputs: Vec<String>,
}

/// A parameter value: an integer, a float or a string.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawParamValue {
    Int(i64),
    Float(f64),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    pub name: Spanned<String>,
    pub run: Spanned<Vec<String>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cpus: Option<Spanned<String>>,
    pub label: Option<String>,
    /// Restricts some parameters to a subset of their values for this variant.
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<Vec<RawParamValue>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMetric {
    pub json: Option<String>,
    pub regex: Option<Spanned<String>>,
    pub unit: Option<String>,
    pub better: Option<RawBetter>,
    #[serde(default)]
    pub text: bool,
    pub warmup_iterations: Option<u32>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RawBetter {
    Higher,
    Lower,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    pub repetitions: Option<u32>,
    pub warmup_runs: Option<u32>,
    pub timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<Vec<RawParamValue>>>,
}

/// One `[[check]]`; which keys are allowed depends on `kind` and is validated later.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCheck {
    pub name: Spanned<String>,
    pub kind: Spanned<String>,
    pub class: Option<Spanned<String>>,
    pub metric: Option<Spanned<String>>,
    pub expect: Option<Spanned<RawExpect>>,
    pub tolerance: Option<Spanned<String>>,
    pub margin: Option<Spanned<String>>,
    pub a: Option<Spanned<BTreeMap<String, toml::Value>>>,
    pub b: Option<Spanned<BTreeMap<String, toml::Value>>>,
    pub limit: Option<Spanned<f64>>,
    pub fraction: Option<Spanned<f64>>,
    pub calibration: Option<Spanned<BTreeMap<String, toml::Value>>>,
    pub along: Option<Spanned<String>>,
    pub variant: Option<Spanned<String>>,
    pub reference: Option<Spanned<String>>,
    pub max_cv: Option<Spanned<String>>,
    pub factor: Option<Spanned<f64>>,
    pub alpha: Option<Spanned<f64>>,
}

/// `expect` is an expression (`"a < 0.5 * b"`), a template (`"{seconds}"`) or a number.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawExpect {
    Number(f64),
    Text(String),
}
