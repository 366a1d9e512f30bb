//! A bootstrap ratio or a percentile as an [`Estimate`], the shape every interval result takes
//! on its way to text.

use super::bootstrap::RatioEstimate;
use super::percentiles::PercentileEstimate;
pub use lab_basis::Estimate;

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
