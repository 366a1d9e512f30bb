//! A point estimate with its confidence interval, the shape every interval result takes on
//! its way to text.

use super::bootstrap::{Interval, RatioEstimate};
use super::percentiles::PercentileEstimate;

/// A point estimate and the interval around it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub point: f64,
    pub interval: Interval,
}

impl Estimate {
    pub fn new(point: f64, interval: Interval) -> Estimate {
        Estimate { point, interval }
    }

    /// Whether the interval has two finite bounds.
    pub fn is_bounded(&self) -> bool {
        self.interval.lo.is_finite() && self.interval.hi.is_finite()
    }
}

impl From<RatioEstimate> for Estimate {
    fn from(r: RatioEstimate) -> Estimate {
        Estimate::new(r.ratio, r.interval)
    }
}

impl PercentileEstimate {
    /// The percentile with its interval, where n was large enough for one.
    pub fn estimate(&self) -> Option<Estimate> {
        self.ci.map(|ci| Estimate::new(self.value, ci))
    }
}
