//! Reading other benchmark harnesses' result files.

pub mod formats;
pub mod lab_toml;
pub mod machines;
pub mod names;
