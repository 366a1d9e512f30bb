//! Run-order chart: each run's value against its execution position, coloured
//! by series, so drift, warm-up and order effects become visible.

use std::collections::BTreeMap;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::ChartError;
use super::axis::{self, Ticked, Ticks, ValueAxis};
use super::frame::{self, Framed, PlotBox};
use super::legend::LegendEntry;
use super::points::{self, Area, Cap, Overlay};
use super::style::{self, FONT_TICK, Marker, Size};

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
/// Margin plotters keeps around the plot, in pixels.
const MARGIN: i32 = 10;

/// Renders a run-order chart as SVG in the given rendition. Mixing relative and absolute
/// points is an error.
pub fn run_order_svg(c: &RunOrderChart, size: Size) -> Result<String, ChartError> {
    let pts: Vec<&OrderPoint> = c.points.iter().filter(|p| p.value.is_finite()).collect();
    let relative = pts.first().is_some_and(|p| p.relative);
    if pts.iter().any(|p| p.relative != relative) {
        return Err(ChartError::Invalid(
            "run-order points mix relative and absolute values".into(),
        ));
    }
    if pts.is_empty() {
        return frame::empty_chart(&c.title, "no data", size);
    }
    let y_label = if relative {
        relative_label(&c.y_label)
    } else {
        c.y_label.clone()
    };
    let names = names(c, &pts);
    let name_refs: Vec<&str> = names.iter().map(|(_, n)| n.as_str()).collect();
    let frame = Framed::new(size, &c.title, &name_refs);
    let y = value_axis(&pts, relative);
    let plot_px = f64::from(frame.plot_width() - 2 * MARGIN - y.label_area());
    let x = position_axis(&pts, size, plot_px);
    let chart = Chart {
        frame: &frame,
        names: &names,
        x: &x,
        y: &y,
        y_label: &y_label,
    };
    points::render(frame.width, frame.height, |root| chart.draw(root, &pts))
}

/// Everything a run-order chart draws from, worked out before drawing.
struct Chart<'a> {
    frame: &'a Framed,
    names: &'a [(usize, String)],
    x: &'a PositionAxis,
    y: &'a ValueAxis,
    y_label: &'a str,
}

/// The value axis; a relative one always shows 1, so drift reads against it.
fn value_axis(pts: &[&OrderPoint], relative: bool) -> ValueAxis {
    let (lo, hi) = axis::extent(pts.iter().map(|p| p.value)).unwrap_or((0.0, 1.0));
    if relative {
        ValueAxis::new(lo.min(1.0), hi.max(1.0))
    } else {
        ValueAxis::new(lo, hi)
    }
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
    if series.is_multiple_of(2) {
        (Cap::Round, Marker::Circle)
    } else {
        (Cap::Square, Marker::Square)
    }
}

/// The x axis: positions 1..=max with nice integer ticks and a little padding.
struct PositionAxis {
    ticks: Ticks,
    range: (f64, f64),
}

/// Position ticks for a plot `plot_px` wide: fewer in the narrow rendition, and never
/// so many that labels collide.
fn position_axis(pts: &[&OrderPoint], size: Size, plot_px: f64) -> PositionAxis {
    let max_pos = pts.iter().map(|p| p.position).max().unwrap_or(1).max(1) as f64;
    let target = match size {
        Size::Wide => 8,
        Size::Narrow => 5,
    };
    let (ticks, step) = axis::nice_ticks(0.0, max_pos, target);
    // Positions are whole numbers: never tick between them.
    let ticks = if step < 1.0 {
        Ticks::exact((1..=max_pos as usize).map(|v| v as f64).collect())
    } else {
        Ticks::even(ticks, step)
    };
    let pad = (max_pos * 0.02).max(0.5);
    let range = (1.0 - pad, max_pos + pad);
    PositionAxis {
        ticks: ticks.spaced(axis::pixel_scale(range.0, range.1, plot_px, false)),
        range,
    }
}

impl Chart<'_> {
    fn draw(&self, root: &Area<'_>, pts: &[&OrderPoint]) -> Result<Overlay, ChartError> {
        let (x, y) = (self.x, self.y);
        let plot_area = self.frame.plot_area(root);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(MARGIN)
            .x_label_area_size(44)
            .y_label_area_size(y.label_area())
            .build_cartesian_2d(
                Ticked::<RangedCoordf64>::new(x.range.0..x.range.1, x.ticks.values.clone()),
                y.coord(),
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&|v| x.ticks.label(*v))
            .y_label_formatter(&|v| y.label(*v))
            .label_style(style::font(FONT_TICK))
            .bold_line_style(style::GRID)
            .light_line_style(TRANSPARENT)
            .axis_style(style::AXIS)
            .draw()?;
        let plot = PlotBox::of(chart.plotting_area().get_pixel_range());
        let map = |px: f64, py: f64| chart.backend_coord(&(px, py));
        let relative = pts.first().is_some_and(|p| p.relative);
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
        let mut overlay = point_layer(pts, &map);
        plot.x_title(&mut overlay, "execution position");
        plot.y_title(&mut overlay, self.y_label, y.label_area());
        let entries: Vec<LegendEntry> = self
            .names
            .iter()
            .map(|(i, n)| LegendEntry {
                name: n,
                color: style::series_color(*i),
                marker: cap_of(*i).1,
                line: false,
            })
            .collect();
        self.frame.draw(root, &mut overlay, &entries)?;
        Ok(overlay)
    }
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

    fn wide(c: &RunOrderChart) -> Result<String, ChartError> {
        run_order_svg(c, Size::Wide)
    }

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
        let svg = wide(&chart(40, false)).unwrap();
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
        let svg = wide(&c).unwrap();
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
        let svg = wide(&c).unwrap();
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
        assert_eq!(svg, wide(&c).unwrap());
    }

    #[test]
    fn relative_labels_and_mixing() {
        let svg = wide(&chart(20, true)).unwrap();
        assert!(svg.contains("throughput ÷ cell median"));
        let mut mixed = chart(20, true);
        mixed.points[3].relative = false;
        assert!(matches!(wide(&mixed), Err(ChartError::Invalid(_))));
        assert_eq!(relative_label("ns/op"), "ns/op ÷ cell median");
    }

    #[test]
    fn degenerate_input_does_not_panic() {
        assert!(wide(&chart(0, false)).unwrap().contains("no data"));
        let mut c = chart(3, false);
        c.points.iter_mut().for_each(|p| p.value = 5.0);
        assert!(wide(&c).is_ok());
        c.points[0].value = f64::NAN;
        c.points[1].series = 1_000_000; // unnamed series gets a placeholder name
        let svg = wide(&c).unwrap();
        assert!(svg.contains("series 1000000") && !svg.contains("series 999999"));
        c.series_names.clear();
        c.points.truncate(1);
        assert!(wide(&c).is_ok());
    }

    #[test]
    fn both_renditions_fit_their_width_with_readable_text() {
        for relative in [false, true] {
            let c = chart(400, relative);
            for size in [Size::Wide, Size::Narrow] {
                let svg = run_order_svg(&c, size).unwrap();
                points::assert_rendition(&svg, size);
                assert!(svg.contains("execution position"));
            }
        }
    }
}
