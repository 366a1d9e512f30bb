//! Reading other benchmark harnesses' result files.

pub mod formats;
