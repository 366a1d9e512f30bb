//! A confidence interval, and a point estimate with its interval: the shape every interval
//! result takes on its way to text.

use serde::Serialize;

/// A two-sided confidence interval with its nominal level (e.g. 0.95).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    pub level: f64,
}

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
