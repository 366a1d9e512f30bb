//! Test-only access to `tests/data/stats_reference.json` (written by
//! `scripts/stats_reference.py` with numpy/scipy/diptest).

use serde_json::Value;

/// The parsed reference file.
pub(crate) fn reference() -> Value {
    serde_json::from_str(include_str!("../tests/data/stats_reference.json"))
        .expect("tests/data/stats_reference.json is valid JSON")
}

/// A JSON array of numbers as a vector.
pub(crate) fn vecs(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}
