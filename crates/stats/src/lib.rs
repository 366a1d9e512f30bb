//! Statistics library of `lab`: summaries, bootstrap and exact intervals, dip test, trend,
//! rank tests, multiple-comparison adjustment, outlier iterations, changepoints, steady-state
//! classification, periodic structure within runs, the levels of sequential looks, rank
//! correlation, and for runs nested in machines a three-stage bootstrap and the machine effect.
//!
//! Every method cites its source next to its implementation. All randomness comes from
//! explicitly seeded streams (see [`rng::stream_of`]). Functions never panic on
//! user data: empty input, NaN or too few values yield `None` or a documented value.

pub mod bootstrap;
pub mod changepoint;
#[cfg(test)]
mod coverage;
mod design;
pub mod dip;
mod estimate;
pub mod first_rank;
pub mod folding;
mod inversions;
pub mod kruskal;
pub mod machine_effect;
pub mod median_ci;
pub mod multiple;
pub mod nested;
#[cfg(test)]
mod nested_coverage;
pub mod outliers;
mod pelt_search;
pub mod percentiles;
pub mod periodogram;
mod ranks_below;
mod resample_sums;
pub mod rng;
pub mod sequential;
pub mod serial;
pub mod shift;
pub mod spearman;
pub mod steps;
pub mod summary;
mod theil_sen;
pub mod trend;
mod uniform;
mod window;
mod window_classes;
mod window_runs;

#[cfg(test)]
pub(crate) mod reference;

pub use bootstrap::{Interval, RatioEstimate, Statistic, bca_mean_ci, percentile_ci, ratio_ci};
pub use changepoint::{RunShape, Segment, SteadyState, classify, consistent, pelt};
pub use design::{DesignEffect, design_effect};
pub use dip::{DipTest, Mode, dip, dip_test};
pub use estimate::Estimate;
pub use folding::{Fold, fold};
pub use kruskal::{KruskalWallis, kruskal_wallis};
pub use machine_effect::{MachineEffect, machine_effect};
pub use median_ci::{MedianCi, exact_median_ci, paired_ratio_ci};
pub use multiple::holm;
pub use nested::{nested_percentile_ci, nested_ratio_ci};
pub use outliers::outliers;
pub use percentiles::{PercentileEstimate, Percentiles, latency_percentiles};
pub use periodogram::{PeriodTest, fisher_combined, fisher_g_test};
pub use rng::{Generator, Stream, stream, stream_of};
pub use serial::{
    LjungBox, SerialCorrelation, lag1_autocorrelation, ljung_box_lag1, wald_wolfowitz_serial,
};
pub use summary::{Summary, median, quantile_sorted, relative_half_width, summarize};
pub use trend::{MannKendall, mann_kendall, theil_sen_slope};
