//! Reading other benchmark harnesses' result files.

pub mod formats;
pub mod machines;
pub mod names;
