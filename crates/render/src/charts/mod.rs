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
//! Every number a chart prints comes from [`lab_config::format`]; text is measured with real font
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
pub use scaling::{ScalingChart, Series, SeriesPoint, XMark, scaling_svg};
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

#[cfg(test)]
mod gallery {
    //! Every chart in both renditions, written to `$CHART_GALLERY` for a look by eye:
    //! `CHART_GALLERY=/tmp/g cargo test --lib render::charts::gallery -- --ignored`.

    use super::*;

    const VARIANTS: [&str; 4] = ["nonfair", "fair", "spin", "treiber stack with backoff"];
    const THREADS: [f64; 5] = [1.0, 2.0, 4.0, 8.0, 16.0];

    fn runs(centre: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|k| centre * (0.93 + 0.14 * ((k * 7 % 11) as f64 / 10.0)))
            .collect()
    }

    fn scaling() -> ScalingChart {
        let series = VARIANTS
            .iter()
            .enumerate()
            .map(|(i, name)| Series {
                name: name.to_string(),
                points: THREADS
                    .iter()
                    .map(|&x| {
                        let centre = 40.0e6 * (1.0 + i as f64) / (1.0 + x * 0.3 * i as f64);
                        SeriesPoint {
                            x,
                            center: centre,
                            lo: if x == 16.0 { f64::NAN } else { centre * 0.95 },
                            hi: if x == 16.0 { f64::NAN } else { centre * 1.06 },
                            raw: runs(centre, 7),
                        }
                    })
                    .collect(),
            })
            .collect();
        ScalingChart {
            title: "mops by threads".into(),
            x_label: "threads".into(),
            y_label: "mops (ops/s)".into(),
            log_x: true,
            series,
            marks: vec![XMark {
                x: 3.0,
                label: "regression".into(),
                color: style::VERDICT_FAIL,
            }],
        }
    }

    fn strip() -> StripChart {
        let cells = VARIANTS
            .iter()
            .enumerate()
            .flat_map(|(g, name)| {
                THREADS.iter().map(move |&t| {
                    let centre = 30.0 + 10.0 * g as f64 - t;
                    StripCell {
                        label: format!("{name} threads={t}"),
                        group: g,
                        values: runs(centre, 12),
                        median: centre,
                        lo: centre * 0.97,
                        hi: centre * 1.04,
                        disturbed: Vec::new(),
                    }
                })
            })
            .collect();
        StripChart {
            title: "every run, mops".into(),
            y_label: "mops (Mops/s)".into(),
            cells,
        }
    }

    fn order() -> RunOrderChart {
        let points = (0..200)
            .map(|i| OrderPoint {
                position: i + 1,
                value: 1.0 + ((i * 37 % 23) as f64 - 11.0) / 200.0 + i as f64 / 4000.0,
                series: i % 4,
                relative: true,
            })
            .collect();
        RunOrderChart {
            title: "mops in execution order".into(),
            y_label: "mops (Mops/s)".into(),
            series_names: VARIANTS.iter().map(|s| s.to_string()).collect(),
            points,
        }
    }

    fn forest() -> ForestChart {
        let row = |label: &str, ratio: f64, threshold: f64, verdict| ForestRow {
            label: label.into(),
            ratio,
            lo: ratio * 0.9,
            hi: ratio * 1.5,
            threshold: Some(threshold),
            verdict,
        };
        ForestChart {
            title: "ratios decided by checks".into(),
            x_label: "ratio a / b".into(),
            rows: vec![
                row(
                    "non-fair at 2 threads is under half of 1 thread",
                    0.384,
                    0.5,
                    Verdict::Pass,
                ),
                row(
                    "Treiber keeps at least a tenth of its one-thread throughput at 16 threads",
                    0.08,
                    0.1,
                    Verdict::Fail,
                ),
                row("spin beats fair", 1.02, 1.1, Verdict::Inconclusive),
                ForestRow {
                    lo: f64::NAN,
                    hi: f64::NAN,
                    ..row("ticket lock scales", f64::NAN, 1.0, Verdict::NotRun)
                },
            ],
        }
    }

    /// Hostile and oversized text everywhere text goes.
    fn hostile<T>(mut chart: T, retitle: impl Fn(&mut T, &str)) -> T {
        retitle(
            &mut chart,
            "<script>alert('x')</script> & a title long enough that even the wide chart \
             must wrap it, with a \u{1b}[31m terminal escape and 漢字 🦀",
        );
        chart
    }

    #[test]
    #[ignore = "writes files for a look by eye"]
    fn write_gallery() {
        let Some(dir) = std::env::var_os("CHART_GALLERY") else {
            return;
        };
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (size, suffix) in [(Size::Wide, ""), (Size::Narrow, "-narrow")] {
            let charts = [
                ("scaling", scaling_svg(&scaling(), size)),
                ("strip", strip_svg(&strip(), size)),
                ("order", run_order_svg(&order(), size)),
                ("forest", forest_svg(&forest(), size)),
            ];
            for (name, svg) in charts {
                std::fs::write(dir.join(format!("{name}{suffix}.svg")), svg.unwrap()).unwrap();
            }
            let name = |c: &mut ScalingChart, t: &str| {
                c.title = t.into();
                c.series[3].name = format!("{t} {t}");
                c.y_label = t.into();
            };
            let svg = scaling_svg(&hostile(scaling(), name), size).unwrap();
            std::fs::write(dir.join(format!("hostile-scaling{suffix}.svg")), svg).unwrap();
            let label = |c: &mut StripChart, t: &str| {
                c.title = t.into();
                c.cells[0].label = t.into();
            };
            let svg = strip_svg(&hostile(strip(), label), size).unwrap();
            std::fs::write(dir.join(format!("hostile-strip{suffix}.svg")), svg).unwrap();
            let row = |c: &mut ForestChart, t: &str| {
                c.title = t.into();
                c.rows[2].label = t.into();
                c.x_label = t.into();
            };
            let svg = forest_svg(&hostile(forest(), row), size).unwrap();
            std::fs::write(dir.join(format!("hostile-forest{suffix}.svg")), svg).unwrap();
        }
    }
}
