//! The few items of lab's statistics that the layers beside it use too: an interval and a
//! point estimate with its interval (printed by `lab-config`'s formats), the seeded random
//! streams (a plan's layout and heap shifts, every resample of an analysis), the standard error
//! of a median (a manifest's start-up constant), and the records the statistics return (a
//! summary, percentiles, each test's result), which the judged results hold and the book
//! prints. Kept apart from `lab-stats` so that a change to the statistics rebuilds only what
//! judges, not the configuration, the store, the runner or the book.

mod estimate;
mod median_error;
pub mod results;
pub mod rng;

pub use estimate::{Estimate, Interval};
pub use median_error::median_standard_error;
pub use results::{
    DesignEffect, DipTest, MachineEffect, MannKendall, MedianCi, Mode, PercentileEstimate,
    Percentiles, SteadyState, Summary,
};
pub use rng::{Generator, Stream, stream, stream_of};
