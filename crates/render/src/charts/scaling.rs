//! Scaling chart: the metric against a benchmark parameter (e.g. threads), one
//! line per variant through the medians, CI error bars and every raw run.

use plotters::coord::ranged1d::{DefaultFormatting, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::ChartError;
use super::axis::{self, Ticked, Ticks, ValueAxis};
use super::frame::{self, Framed, PlotBox};
use super::legend::LegendEntry;
use super::points::{self, Area, Overlay};
use super::style::{self, FONT_TICK, Marker, Size};
use super::text::Text;

/// Input for [`scaling_svg`].
#[derive(Clone, Debug, Default)]
pub struct ScalingChart {
    pub title: String,
    pub x_label: String,
    /// Includes the unit, e.g. "throughput (Mops/s)".
    pub y_label: String,
    /// Draw the x axis in log2 scale (thread counts 1, 2, 4, …).
    pub log_x: bool,
    pub series: Vec<Series>,
    /// Vertical rules across the plot with a word at their top (a step in a history).
    pub marks: Vec<XMark>,
}

/// A vertical rule at `x` labelled `label`, drawn in `color`.
#[derive(Clone, Debug)]
pub struct XMark {
    pub x: f64,
    pub label: String,
    pub color: RGBColor,
}

/// One variant: a line through its medians.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<SeriesPoint>,
}

/// One cell of a variant: parameter value, median, CI and every run's value.
#[derive(Clone, Debug, Default)]
pub struct SeriesPoint {
    pub x: f64,
    /// Median over runs.
    pub center: f64,
    /// Lower bound of the confidence interval.
    pub lo: f64,
    /// Upper bound of the confidence interval.
    pub hi: f64,
    /// Every run's value.
    pub raw: Vec<f64>,
}

/// A point that survived filtering (non-finite values and, on a log axis,
/// non-positive x are dropped). One with no value at all is a cell with no valid run: the
/// line breaks there and a cross marks it.
struct Cell {
    x: f64,
    center: Option<f64>,
    ci: Option<(f64, f64)>,
    raw: Vec<f64>,
}

impl Cell {
    fn is_missing(&self) -> bool {
        self.center.is_none() && self.ci.is_none() && self.raw.is_empty()
    }
}

/// What marks a cell with no valid run, beside its cross.
const MISSING: &str = "no valid run";

/// Raw runs of a cell spread over this many pixels so equal values stay visible.
const JITTER_PX: i32 = 10;
/// Largest horizontal offset between variants at the same x, so error bars do not coincide.
const DODGE_PX: f64 = 6.0;
const RAW_DIAMETER: u32 = 4;
const RAW_OPACITY: f64 = 0.5;

/// Margin plotters keeps around the plot, in pixels.
const MARGIN: i32 = 10;

/// Renders a scaling chart as SVG in the given rendition.
pub fn scaling_svg(c: &ScalingChart, size: Size) -> Result<String, ChartError> {
    let cells: Vec<Vec<Cell>> = c.series.iter().map(|s| prepare(s, c.log_x)).collect();
    // A y extent exists only if some cell survived filtering, so `xs` is not empty.
    let Some((y_lo, y_hi)) = y_extent(&cells) else {
        return frame::empty_chart(&c.title, "no data", size);
    };
    let xs = distinct_xs(&cells);
    let y = ValueAxis::new(y_lo, y_hi);
    let names: Vec<&str> = c.series.iter().map(|s| s.name.as_str()).collect();
    let frame = Framed::new(size, &c.title, &names);
    let (lo, hi, ticks) = x_axis(&xs, c.log_x);
    let plot_px = f64::from(frame.plot_width() - 2 * MARGIN - y.label_area());
    let ticks = ticks.spaced(axis::pixel_scale(lo, hi, plot_px, c.log_x));
    points::render(frame.width, frame.height, |root| {
        let chart = Chart {
            c,
            frame: &frame,
            cells: &cells,
            y: &y,
            x_ticks: &ticks,
        };
        if c.log_x {
            let x = (lo..hi).log_scale().base(2.0);
            chart.draw(root, Ticked::<LogCoord<f64>>::new(x, ticks.values.clone()))
        } else {
            chart.draw(
                root,
                Ticked::<RangedCoordf64>::new(lo..hi, ticks.values.clone()),
            )
        }
    })
}

/// Everything a scaling chart draws from, worked out before drawing.
struct Chart<'a> {
    c: &'a ScalingChart,
    frame: &'a Framed,
    cells: &'a [Vec<Cell>],
    y: &'a ValueAxis,
    x_ticks: &'a Ticks,
}

fn prepare(s: &Series, log_x: bool) -> Vec<Cell> {
    let mut cells: Vec<Cell> = s
        .points
        .iter()
        .filter(|p| p.x.is_finite() && (!log_x || p.x > 0.0))
        .map(|p| Cell {
            x: p.x,
            center: p.center.is_finite().then_some(p.center),
            ci: (p.lo.is_finite() && p.hi.is_finite()).then_some((p.lo.min(p.hi), p.lo.max(p.hi))),
            raw: p.raw.iter().copied().filter(|v| v.is_finite()).collect(),
        })
        .collect();
    // The line must go left to right whatever order the caller used.
    cells.sort_by(|a, b| a.x.total_cmp(&b.x));
    cells
}

fn distinct_xs(cells: &[Vec<Cell>]) -> Vec<f64> {
    let mut xs: Vec<f64> = cells.iter().flatten().map(|c| c.x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}

/// y extent over medians, CIs and raw runs, always including 0: throughput-like
/// metrics read as proportions, and a cropped axis would exaggerate differences.
fn y_extent(cells: &[Vec<Cell>]) -> Option<(f64, f64)> {
    let vals = cells.iter().flatten().flat_map(|c| {
        let ci = c.ci.map(|(l, h)| [l, h]).into_iter().flatten();
        c.center.into_iter().chain(ci).chain(c.raw.iter().copied())
    });
    axis::extent(vals).map(|(lo, hi)| (lo.min(0.0), hi.max(0.0)))
}

/// x range with padding, and ticks at the actual parameter values when few.
fn x_axis(xs: &[f64], log: bool) -> (f64, f64, Ticks) {
    let (min, max) = (xs[0], xs[xs.len() - 1]);
    let few = xs.len() <= 12;
    if log {
        let pad = if max > min {
            2f64.powf((max / min).log2() * 0.06)
        } else {
            2.0
        };
        let ticks = if few {
            xs.to_vec()
        } else {
            axis::log2_ticks(min, max)
        };
        (min / pad, max * pad, Ticks::exact(ticks))
    } else {
        let pad = if max > min {
            (max - min) * 0.05
        } else {
            min.abs().max(1.0) * 0.5
        };
        let ticks = if few {
            Ticks::exact(xs.to_vec())
        } else {
            let (t, step) = axis::nice_ticks(min, max, 8);
            let inside = |v: &f64| *v >= min - pad && *v <= max + pad;
            Ticks::even(t.into_iter().filter(inside).collect(), step)
        };
        (min - pad, max + pad, ticks)
    }
}

impl Chart<'_> {
    fn draw<X>(&self, root: &Area<'_>, x: X) -> Result<Overlay, ChartError>
    where
        X: Ranged<ValueType = f64, FormatOption = DefaultFormatting>,
    {
        let (c, y) = (self.c, self.y);
        let plot_area = self.frame.plot_area(root);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(MARGIN)
            .x_label_area_size(44)
            .y_label_area_size(y.label_area())
            .build_cartesian_2d(x, y.coord())?;
        chart
            .configure_mesh()
            .x_label_formatter(&|v| self.x_ticks.label(*v))
            .y_label_formatter(&|v| y.label(*v))
            .label_style(style::font(FONT_TICK))
            .bold_line_style(style::GRID)
            .light_line_style(TRANSPARENT)
            .axis_style(style::AXIS)
            .draw()?;
        let mut overlay = Overlay::default();
        let plot = PlotBox::of(chart.plotting_area().get_pixel_range());
        plot.x_title(&mut overlay, &c.x_label);
        plot.y_title(&mut overlay, &c.y_label, y.label_area());
        let map = |x: f64, y: f64| chart.backend_coord(&(x, y));
        draw_marks(&mut overlay, &c.marks, &plot, &map);
        let dodge = dodge_px(self.cells, &map);
        let n = self.cells.len() as f64;
        for (i, series) in self.cells.iter().enumerate() {
            let off = ((i as f64 - (n - 1.0) / 2.0) * dodge).round() as i32;
            draw_series(root, &mut overlay, series, i, off, &map)?;
        }
        let entries: Vec<LegendEntry> = c
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| LegendEntry {
                name: &s.name,
                color: style::series_color(i),
                marker: Marker::for_series(i),
                line: true,
            })
            .collect();
        self.frame.draw(root, &mut overlay, &entries)?;
        Ok(overlay)
    }
}

/// The vertical rules of [`ScalingChart::marks`], each labelled at the top of the plot.
fn draw_marks(
    overlay: &mut Overlay,
    marks: &[XMark],
    plot: &PlotBox,
    map: &impl Fn(f64, f64) -> (i32, i32),
) {
    for m in marks.iter().filter(|m| m.x.is_finite()) {
        let x = map(m.x, 0.0).0;
        if x < plot.x.start || x > plot.x.end {
            continue;
        }
        overlay.segment((x, plot.y.start), (x, plot.y.end), m.color, 1);
        overlay.text(
            Text::line((x + 3, plot.y.start + 12), style::TICK, &m.label)
                .color(m.color)
                .halo(),
        );
    }
}

/// Offset between variants: at most [`DODGE_PX`], less when x values sit close together.
fn dodge_px(cells: &[Vec<Cell>], map: &impl Fn(f64, f64) -> (i32, i32)) -> f64 {
    let mut px: Vec<i32> = cells.iter().flatten().map(|c| map(c.x, 0.0).0).collect();
    px.sort_unstable();
    px.dedup();
    let gap = px.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(i32::MAX) as f64;
    DODGE_PX.min(gap / (cells.len() as f64 + 1.0))
}

/// Series `i`: its medians joined by a line, its missing cells crossed, its intervals, its
/// markers and its raw values, each point moved `off` pixels sideways.
fn draw_series(
    root: &Area<'_>,
    overlay: &mut Overlay,
    cells: &[Cell],
    i: usize,
    off: i32,
    map: &impl Fn(f64, f64) -> (i32, i32),
) -> Result<(), ChartError> {
    let color = style::series_color(i);
    let at = |x: f64, y: f64| {
        let (px, py) = map(x, y);
        (px + off, py)
    };
    // The line joins neighbouring medians only: it breaks at a cell with none.
    for stretch in cells.split(|c| c.center.is_none()) {
        let joined: Vec<(i32, i32)> = stretch
            .iter()
            .filter_map(|c| c.center.map(|m| at(c.x, m)))
            .collect();
        root.draw(&PathElement::new(joined, color.stroke_width(2)))?;
    }
    cross_missing(overlay, cells, i, color, &at);
    for c in cells {
        if let Some((lo, hi)) = c.ci {
            draw_interval(root, at(c.x, hi), at(c.x, lo), color)?;
        }
    }
    for p in cells.iter().filter_map(|c| c.center.map(|m| at(c.x, m))) {
        style::draw_marker(root, Marker::for_series(i), p, 4, color)?;
    }
    overlay.begin_series(color, RAW_DIAMETER, RAW_OPACITY);
    for c in cells {
        for (k, v) in c.raw.iter().enumerate() {
            let (px, py) = at(c.x, *v);
            overlay.point((px + points::jitter(k, JITTER_PX), py));
        }
    }
    Ok(())
}

/// A cross at each cell of series `i` with no value, labelled as missing.
fn cross_missing(
    overlay: &mut Overlay,
    cells: &[Cell],
    i: usize,
    color: RGBColor,
    at: &impl Fn(f64, f64) -> (i32, i32),
) {
    for (x, y) in cells
        .iter()
        .filter(|c| c.is_missing())
        .map(|c| at(c.x, 0.0))
    {
        overlay.segment((x - 4, y - 4), (x + 4, y + 4), color, 2);
        overlay.segment((x - 4, y + 4), (x + 4, y - 4), color, 2);
        let label_y = y - 8 - 11 * i as i32;
        overlay.text(
            Text::line((x + 6, label_y), style::TICK, MISSING)
                .color(color)
                .halo(),
        );
    }
}

/// An interval from `top` to `bottom`, with a short tick at each end.
fn draw_interval(
    root: &Area<'_>,
    top: (i32, i32),
    bottom: (i32, i32),
    color: RGBColor,
) -> Result<(), ChartError> {
    let s = color.stroke_width(1);
    root.draw(&PathElement::new(vec![top, bottom], s))?;
    root.draw(&PathElement::new(
        vec![(top.0 - 3, top.1), (top.0 + 3, top.1)],
        s,
    ))?;
    root.draw(&PathElement::new(
        vec![(bottom.0 - 3, bottom.1), (bottom.0 + 3, bottom.1)],
        s,
    ))?;
    Ok(())
}

#[cfg(test)]
#[path = "scaling_tests.rs"]
mod tests;
