//! A bootstrap ratio as an [`Estimate`], the shape every interval result takes
//! on its way to text.

use super::bootstrap::RatioEstimate;
pub use lab_basis::Estimate;

impl From<RatioEstimate> for Estimate {
    fn from(r: RatioEstimate) -> Estimate {
        Estimate::new(r.ratio, r.interval)
    }
}
