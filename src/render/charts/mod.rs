//! SVG charts for lab reports: scaling curves, per-cell strip plots, run-order
//! drift plots and forest plots of check ratios.
//!
//! Every chart takes a plain input struct and a [`Size`] (the wide rendition, or a narrow
//! one laid out for a phone) and returns the SVG document as a `String`. Output is deterministic (same input → byte-identical SVG: no RNG,
//! no hash ordering, no timestamps), user text is XML-escaped, and raw runs are
//! drawn as one compact `<path>` per series so that 10,000 runs stay under
//! 200 KB. Non-finite values are skipped; input with nothing to plot renders a
//! titled "no data" placeholder rather than failing.
//!
//! Every number a chart prints comes from [`crate::format`]; text is measured with real font
//! metrics ([`metrics`]) and wrapped or shortened to fit, with the full text as a tooltip.
//! Presentation (sizes, fonts, palette, verdict colours, markers) lives in [`style`].

pub mod style;

mod axis;
mod forest;
mod frame;
mod legend;
mod metrics;
mod order;
mod points;
mod scaling;
mod strip;
mod text;

pub use forest::{ForestChart, ForestRow, Verdict, forest_svg};
pub use order::{OrderPoint, RunOrderChart, run_order_svg};
pub use scaling::{ScalingChart, Series, SeriesPoint, scaling_svg};
pub use strip::{StripCell, StripChart, strip_svg};
pub use style::Size;

/// Why a chart could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// plotters failed while drawing; its error is kept as text because the
    /// backend error type is generic over the backend.
    #[error("chart drawing failed: {0}")]
    Draw(String),
    /// The input is contradictory (not merely empty or degenerate).
    #[error("invalid chart input: {0}")]
    Invalid(String),
    /// The SVG produced by plotters did not have the expected shape.
    #[error("unexpected SVG output: {0}")]
    Svg(String),
}

impl<E: std::error::Error + Send + Sync> From<plotters::drawing::DrawingAreaErrorKind<E>>
    for ChartError
{
    fn from(e: plotters::drawing::DrawingAreaErrorKind<E>) -> Self {
        ChartError::Draw(e.to_string())
    }
}
