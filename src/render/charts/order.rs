//! Run-order chart: each run's value against its execution position, coloured
//! by series, so drift, warm-up and order effects become visible.

use std::collections::BTreeMap;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::ChartError;
use super::axis::{self, Ticked, ValueAxis};
use super::points::{self, Area, Cap, Overlay};
use super::style::{self, FONT_LABEL, FONT_TICK, LegendEntry, Marker};

/// Input for [`run_order_svg`].
#[derive(Clone, Debug, Default)]
pub struct RunOrderChart {
    pub title: String,
    /// Includes the unit, e.g. "throughput (Mops/s)"; rewritten for relative charts.
    pub y_label: String,
    /// Legend names; `OrderPoint::series` indexes this.
    pub series_names: Vec<String>,
    pub points: Vec<OrderPoint>,
}

/// One run.
#[derive(Clone, Debug, Default)]
pub struct OrderPoint {
    /// Execution position, 1-based.
    pub position: usize,
    /// The metric, or when `relative` is set the metric already divided by its
    /// cell median (the caller knows the cells; this chart only labels it).
    pub value: f64,
    pub series: usize,
    pub relative: bool,
}

const POINT_DIAMETER: u32 = 5;
const POINT_OPACITY: f64 = 0.75;

/// Renders a run-order chart as SVG. Mixing relative and absolute points is an error.
pub fn run_order_svg(c: &RunOrderChart) -> Result<String, ChartError> {
    let pts: Vec<&OrderPoint> = c.points.iter().filter(|p| p.value.is_finite()).collect();
    let relative = pts.first().is_some_and(|p| p.relative);
    if pts.iter().any(|p| p.relative != relative) {
        return Err(ChartError::Invalid(
            "run-order points mix relative and absolute values".into(),
        ));
    }
    if pts.is_empty() {
        return points::empty_chart(&c.title, "no data");
    }
    let y_label = if relative {
        relative_label(&c.y_label)
    } else {
        c.y_label.clone()
    };
    points::render(style::WIDTH, style::HEIGHT, |root| {
        draw(root, c, &pts, relative, &y_label)
    })
}

/// "throughput (Mops/s)" → "throughput ÷ cell median": the ratio has no unit.
fn relative_label(y_label: &str) -> String {
    let base = match y_label
        .trim_end()
        .strip_suffix(')')
        .and_then(|s| s.rsplit_once(" ("))
    {
        Some((name, _unit)) => name,
        None => y_label.trim_end(),
    };
    let base = if base.is_empty() { "value" } else { base };
    format!("{base} ÷ cell median")
}

/// Legend entries as (series index, name): every named series, plus "series N"
/// for indices used by points but not named (only those, however large N is).
fn names(c: &RunOrderChart, pts: &[&OrderPoint]) -> Vec<(usize, String)> {
    let mut used: Vec<usize> = pts.iter().map(|p| p.series).collect();
    used.sort_unstable();
    used.dedup();
    let named = c.series_names.iter().cloned().enumerate();
    let unnamed = used.into_iter().filter(|i| *i >= c.series_names.len());
    named
        .chain(unnamed.map(|i| (i, format!("series {i}"))))
        .collect()
}

/// Alternating caps give a second cue besides colour: even series are dots, odd ones squares.
fn cap_of(series: usize) -> (Cap, Marker) {
    // A match rather than `is_multiple_of`, which is newer than the crate's MSRV (1.85).
    match series % 2 {
        0 => (Cap::Round, Marker::Circle),
        _ => (Cap::Square, Marker::Square),
    }
}

/// The x axis: positions 1..=max with nice integer ticks and a little padding.
struct PositionAxis {
    ticks: Vec<f64>,
    sig: u32,
    range: (f64, f64),
}

fn position_axis(pts: &[&OrderPoint]) -> PositionAxis {
    let max_pos = pts.iter().map(|p| p.position).max().unwrap_or(1).max(1) as f64;
    let (mut ticks, step) = axis::nice_ticks(0.0, max_pos, 8);
    // Positions are whole numbers: never tick between them.
    if step < 1.0 {
        ticks = (1..=max_pos as usize).map(|v| v as f64).collect();
    }
    let pad = (max_pos * 0.02).max(0.5);
    let sig = axis::sig_for_step(max_pos, step.max(1.0));
    PositionAxis {
        ticks,
        sig,
        range: (1.0 - pad, max_pos + pad),
    }
}

fn draw(
    root: &Area<'_>,
    c: &RunOrderChart,
    pts: &[&OrderPoint],
    relative: bool,
    y_label: &str,
) -> Result<Overlay, ChartError> {
    let body = root.titled(&c.title, style::font(style::FONT_TITLE))?;
    let names = names(c, pts);
    let name_refs: Vec<&str> = names.iter().map(|(_, n)| n.as_str()).collect();
    let (w, _) = body.dim_in_pixel();
    let (plot_area, legend_area) =
        body.split_horizontally(w as i32 - style::legend_width(&name_refs));
    let x = position_axis(pts);
    let (lo, hi) = axis::extent(pts.iter().map(|p| p.value)).unwrap_or((0.0, 1.0));
    // The reference value 1 must be on a relative axis so drift reads against it.
    let (lo, hi) = if relative {
        (lo.min(1.0), hi.max(1.0))
    } else {
        (lo, hi)
    };
    let y = ValueAxis::new(lo, hi);
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(10)
        .x_label_area_size(44)
        .y_label_area_size(y.label_area())
        .build_cartesian_2d(
            Ticked::<RangedCoordf64>::new(x.range.0..x.range.1, x.ticks.clone()),
            y.coord(),
        )?;
    chart
        .configure_mesh()
        .x_desc("execution position")
        .y_desc(y_label)
        .x_label_formatter(&|v| style::format_sig(*v, x.sig))
        .y_label_formatter(&|v| y.label(*v))
        .label_style(style::font(FONT_TICK))
        .axis_desc_style(style::font(FONT_LABEL))
        .bold_line_style(style::GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(style::AXIS)
        .draw()?;
    let map = |px: f64, py: f64| chart.backend_coord(&(px, py));
    if relative {
        let (a, b) = (map(x.range.0, 1.0), map(x.range.1, 1.0));
        let style = style::AXIS.stroke_width(1);
        root.draw(&plotters::element::DashedPathElement::new(
            vec![a, b],
            6,
            4,
            style,
        ))?;
    }
    let entries: Vec<LegendEntry> = names
        .iter()
        .map(|(i, n)| LegendEntry {
            name: n,
            color: style::series_color(*i),
            marker: cap_of(*i).1,
            line: false,
        })
        .collect();
    style::draw_legend(&legend_area, 10, &entries)?;
    Ok(point_layer(pts, &map))
}

/// One point path per series, in series order.
fn point_layer(pts: &[&OrderPoint], map: &impl Fn(f64, f64) -> (i32, i32)) -> Overlay {
    let mut by_series: BTreeMap<usize, Vec<(i32, i32)>> = BTreeMap::new();
    for p in pts {
        by_series
            .entry(p.series)
            .or_default()
            .push(map(p.position as f64, p.value));
    }
    let mut overlay = Overlay::default();
    for (s, px) in by_series {
        overlay.begin_series(style::series_color(s), POINT_DIAMETER, POINT_OPACITY);
        overlay.set_cap(cap_of(s).0);
        px.into_iter().for_each(|p| overlay.point(p));
    }
    overlay
}

#[cfg(test)]
mod tests {
    use super::super::points::count_marks as marks;
    use super::*;

    fn chart(n: usize, relative: bool) -> RunOrderChart {
        let points = (0..n)
            .map(|i| OrderPoint {
                position: i + 1,
                value: 10.0 + (i % 97) as f64 * 0.1 + (i / 1000) as f64,
                series: i % 4,
                relative,
            })
            .collect();
        RunOrderChart {
            title: "drift".into(),
            y_label: "throughput (Mops/s)".into(),
            series_names: vec![
                "nonfair".into(),
                "fair".into(),
                "spin".into(),
                "<script>alert(1)</script>".into(),
            ],
            points,
        }
    }

    #[test]
    fn names_escaped_and_present() {
        let svg = run_order_svg(&chart(40, false)).unwrap();
        for name in [
            "nonfair",
            "fair",
            "spin",
            "&lt;script&gt;alert(1)&lt;/script&gt;",
        ] {
            assert!(svg.contains(name), "{name} missing");
        }
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("throughput (Mops/s)"));
    }

    #[test]
    fn one_mark_per_run_when_pixels_differ() {
        let c = RunOrderChart {
            points: (0..6)
                .map(|i| OrderPoint {
                    position: i + 1,
                    value: i as f64 * 10.0,
                    series: i % 2,
                    relative: false,
                })
                .collect(),
            ..chart(0, false)
        };
        let svg = run_order_svg(&c).unwrap();
        assert_eq!(marks(&svg), 6);
        assert_eq!(
            svg.matches("<path fill=\"none\" stroke=\"#").count(),
            2,
            "one path per series"
        );
    }

    #[test]
    fn ten_thousand_points_stay_small_and_deterministic() {
        let c = chart(10_000, false);
        let svg = run_order_svg(&c).unwrap();
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
        assert_eq!(svg, run_order_svg(&c).unwrap());
    }

    #[test]
    fn relative_labels_and_mixing() {
        let svg = run_order_svg(&chart(20, true)).unwrap();
        assert!(svg.contains("throughput ÷ cell median"));
        let mut mixed = chart(20, true);
        mixed.points[3].relative = false;
        assert!(matches!(run_order_svg(&mixed), Err(ChartError::Invalid(_))));
        assert_eq!(relative_label("ns/op"), "ns/op ÷ cell median");
    }

    #[test]
    fn degenerate_input_does_not_panic() {
        assert!(run_order_svg(&chart(0, false)).unwrap().contains("no data"));
        let mut c = chart(3, false);
        c.points.iter_mut().for_each(|p| p.value = 5.0);
        assert!(run_order_svg(&c).is_ok());
        c.points[0].value = f64::NAN;
        c.points[1].series = 1_000_000; // unnamed series gets a placeholder name
        let svg = run_order_svg(&c).unwrap();
        assert!(svg.contains("series 1000000") && !svg.contains("series 999999"));
        c.series_names.clear();
        c.points.truncate(1);
        assert!(run_order_svg(&c).is_ok());
    }
}
