//! The few items of lab's statistics that the layers below the judgement use too: an interval
//! and a point estimate with its interval (printed by `lab-config`'s formats), the seeded
//! random streams (a plan's layout and heap shifts, every resample of an analysis), and the
//! standard error of a median (a manifest's start-up constant). Kept apart from `lab-stats`
//! so that a change to the statistics rebuilds only what judges and renders, not the
//! configuration, the store and the runner.

mod estimate;
mod median_error;
pub mod rng;

pub use estimate::{Estimate, Interval};
pub use median_error::median_standard_error;
pub use rng::{Generator, Stream, stream, stream_of};
