//! Strip chart: one column per cell with every run as a jittered point and the
//! median with its CI, so spread and bimodality are visible at a glance.
//!
//! The wide rendition stands the cells side by side with slanted labels under them; the
//! narrow one lays each cell out as a row (its label above its strip), values running
//! across, so that a phone shows as many cells as there are without squeezing them.

use std::collections::BTreeMap;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::ChartError;
use super::axis::{self, Ticked, Ticks, ValueAxis};
use super::frame::{self, PlotBox, Title};
use super::points::{self, Area, Overlay};
use super::style::{self, FONT_TICK, Size, TICK};
use super::text::{self, Align, Anchor, Fitted, Text};

/// Input for [`strip_svg`].
#[derive(Clone, Debug, Default)]
pub struct StripChart {
    pub title: String,
    /// Includes the unit, e.g. "throughput (Mops/s)".
    pub y_label: String,
    pub cells: Vec<StripCell>,
}

/// One column: all runs of one (variant, parameter) cell.
#[derive(Clone, Debug, Default)]
pub struct StripCell {
    /// Category label, e.g. "nonfair t=2".
    pub label: String,
    /// Colour index, e.g. the variant.
    pub group: usize,
    pub values: Vec<f64>,
    pub median: f64,
    /// Lower bound of the confidence interval of the median.
    pub lo: f64,
    /// Upper bound of the confidence interval of the median.
    pub hi: f64,
    /// Which of `values` came from runs the machine disturbed: drawn as squares.
    pub disturbed: Vec<bool>,
}

/// Longest a slanted cell label may be, in pixels, before it wraps or is shortened.
const LABEL_ROOM: f64 = 150.0;
/// Lines a cell label may take.
const LABEL_LINES: usize = 2;
/// sin 45°: how far a slanted label reaches down (and left) per pixel of its length.
const SLANT: f64 = std::f64::consts::FRAC_1_SQRT_2;
const POINT_DIAMETER: u32 = 4;
const POINT_OPACITY: f64 = 0.55;
/// Share of a column's width used by the point jitter, the CI box and the median bar.
/// The bar is wider than the jitter so its ends stay visible under dense points.
const JITTER_SHARE: f64 = 0.4;
const BOX_SHARE: f64 = 0.6;
const BAR_SHARE: f64 = 0.7;
/// Margin plotters keeps around the plot, in pixels.
const MARGIN: i32 = 10;
/// Height of a row's strip of points in the narrow rendition.
const NARROW_STRIP: i32 = 24;
/// Height of the value axis with its tick labels and title in the narrow rendition.
const NARROW_AXIS: i32 = 44;

/// Renders a strip chart as SVG in the given rendition.
pub fn strip_svg(c: &StripChart, size: Size) -> Result<String, ChartError> {
    let all = c
        .cells
        .iter()
        .flat_map(|k| k.values.iter().chain([&k.median, &k.lo, &k.hi]));
    let Some((lo, hi)) = axis::extent(all.copied()) else {
        return frame::empty_chart(&c.title, "no data", size);
    };
    match size {
        Size::Wide => wide(c, ValueAxis::new(lo, hi)),
        Size::Narrow => narrow(c, ValueAxis::with_target(lo, hi, 4)),
    }
}

/// Cells side by side, slanted labels under them.
fn wide(c: &StripChart, y: ValueAxis) -> Result<String, ChartError> {
    let n = c.cells.len() as i32;
    let width = (style::WIDTH as i32).max(120 + 30 * n);
    let title = Title::new(&c.title, Size::Wide);
    let col_px = (width - 2 * MARGIN - y.label_area()) / n;
    // Two slanted lines need a column wide enough to keep them clear of the next label
    // (glyphs fill less than their line, so a little less than two line heights will do).
    let lines = if f64::from(col_px) * SLANT >= 1.6 * f64::from(TICK.line_height()) {
        LABEL_LINES
    } else {
        1
    };
    let labels: Vec<Fitted> = c
        .cells
        .iter()
        .map(|k| text::fit(&k.label, TICK, LABEL_ROOM, lines))
        .collect();
    let longest = labels.iter().map(|l| l.width(TICK)).fold(0.0, f64::max);
    let depth = (lines as i32 - 1) * TICK.line_height();
    let label_area = ((longest + f64::from(depth)) * SLANT) as i32 + 18;
    let height = style::HEIGHT as i32 + label_area - 40;
    points::render(width as u32, height as u32, |root| {
        let mut overlay = Overlay::default();
        title.draw(&mut overlay);
        let body = root.clone().shrink(
            (0, title.height()),
            (width as u32, (height - title.height()) as u32),
        );
        let columns = Columns {
            labels: &labels,
            axis: &y,
            label_area,
        };
        columns.draw(root, &body, &mut overlay, c)?;
        Ok(overlay)
    })
}

/// The wide layout's fitted labels, value axis and the depth of the slanted labels.
struct Columns<'a> {
    labels: &'a [Fitted],
    axis: &'a ValueAxis,
    label_area: i32,
}

impl Columns<'_> {
    /// Builds the chart on `body` and draws the marks on `root` (in canvas pixels).
    fn draw(
        &self,
        root: &Area<'_>,
        body: &Area<'_>,
        overlay: &mut Overlay,
        c: &StripChart,
    ) -> Result<(), ChartError> {
        let (labels, y) = (self.labels, self.axis);
        let n = c.cells.len();
        // The first slanted label reaches left of its column; leave room for it.
        let col_w = (body.dim_in_pixel().0 as i32 - y.label_area()) / n as i32;
        let first_reach = labels
            .first()
            .map_or(0, |l| (l.width(TICK) * SLANT) as i32 - col_w / 2);
        let y_area = y.label_area().max(first_reach);
        let mut chart = ChartBuilder::on(body)
            .margin(MARGIN)
            .x_label_area_size(self.label_area)
            .y_label_area_size(y_area)
            .build_cartesian_2d(
                Ticked::<RangedCoordf64>::new(-0.5..n as f64 - 0.5, Vec::new()),
                y.coord(),
            )?;
        chart
            .configure_mesh()
            .y_label_formatter(&|v| y.label(*v))
            .label_style(style::font(FONT_TICK))
            .bold_line_style(style::GRID)
            .light_line_style(TRANSPARENT)
            .axis_style(style::AXIS)
            .draw()?;
        let plot = PlotBox::of(chart.plotting_area().get_pixel_range());
        plot.y_title(overlay, &c.y_label, y_area);
        let map = |x: f64, y: f64| chart.backend_coord(&(x, y));
        let col_px = map(1.0, 0.0).0 - map(0.0, 0.0).0;
        let place = |i: usize, v: f64, across: i32| {
            let (x, y) = map(i as f64, v);
            (x + across, y)
        };
        let strips = Strips {
            cells: &c.cells,
            place: &place,
            across_px: col_px,
        };
        strips.separators(root, |i| {
            let x = map(i as f64 + 0.5, 0.0).0;
            [(x, plot.y.start), (x, plot.y.end)]
        })?;
        strips.draw(root, overlay)?;
        for (i, (label, cell)) in labels.iter().zip(&c.cells).enumerate() {
            let x = map(i as f64, y.range.0).0;
            overlay.text(
                Text::fitted((x + 4, plot.y.end + 10), TICK, label, &cell.label)
                    .anchor(Anchor::End)
                    .rotate(-45),
            );
        }
        Ok(())
    }
}

/// One row per cell, its label above its strip, the values running across.
fn narrow(c: &StripChart, x: ValueAxis) -> Result<String, ChartError> {
    let width = style::NARROW_WIDTH as i32;
    let title = Title::new(&c.title, Size::Narrow);
    let room = f64::from(width - 2 * MARGIN - 8);
    let labels: Vec<Fitted> = c
        .cells
        .iter()
        .map(|k| text::fit(&k.label, TICK, room, LABEL_LINES))
        .collect();
    let lines = labels.iter().map(Fitted::line_count).max().unwrap_or(1) as i32;
    let row_px = lines * TICK.line_height() + NARROW_STRIP + 4;
    let body_h = c.cells.len() as i32 * row_px + NARROW_AXIS + 2 * MARGIN;
    let height = title.height() + body_h;
    let ticks = Ticks::even(x.ticks.clone(), x.step).spaced(axis::pixel_scale(
        x.range.0,
        x.range.1,
        f64::from(width - 2 * MARGIN),
        false,
    ));
    points::render(width as u32, height as u32, |root| {
        let mut overlay = Overlay::default();
        title.draw(&mut overlay);
        let body = root
            .clone()
            .shrink((0, title.height()), (width as u32, body_h as u32));
        let rows = Rows {
            labels: &labels,
            axis: &x,
            ticks: &ticks,
        };
        rows.draw(root, &body, &mut overlay, c)?;
        Ok(overlay)
    })
}

/// The narrow layout's fitted labels and value axis.
struct Rows<'a> {
    labels: &'a [Fitted],
    axis: &'a ValueAxis,
    ticks: &'a Ticks,
}

impl Rows<'_> {
    /// Builds the chart on `body` and draws the marks on `root` (in canvas pixels).
    fn draw(
        &self,
        root: &Area<'_>,
        body: &Area<'_>,
        overlay: &mut Overlay,
        c: &StripChart,
    ) -> Result<(), ChartError> {
        let n = c.cells.len();
        let x = self.axis;
        let mut chart = ChartBuilder::on(body)
            .margin(MARGIN)
            .x_label_area_size(NARROW_AXIS)
            .y_label_area_size(0)
            .build_cartesian_2d(
                Ticked::<RangedCoordf64>::new(x.range.0..x.range.1, self.ticks.values.clone()),
                Ticked::<RangedCoordf64>::new(-0.5..n as f64 - 0.5, Vec::new()),
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&|v| self.ticks.label(*v))
            .label_style(style::font(FONT_TICK))
            .bold_line_style(style::GRID)
            .light_line_style(TRANSPARENT)
            .axis_style(style::AXIS)
            .draw()?;
        let plot = PlotBox::of(chart.plotting_area().get_pixel_range());
        plot.x_title(overlay, &c.y_label);
        let map = |v: f64, row: f64| chart.backend_coord(&(v, row));
        // Row i runs from the top; its strip sits below its label.
        let row_y = |i: usize| (n - 1 - i) as f64;
        let strip_centre = |i: usize| map(x.range.0, row_y(i) - 0.5).1 - 2 - NARROW_STRIP / 2;
        let place = |i: usize, v: f64, across: i32| (map(v, 0.0).0, strip_centre(i) + across);
        let strips = Strips {
            cells: &c.cells,
            place: &place,
            across_px: NARROW_STRIP,
        };
        strips.separators(root, |i| {
            let y = map(x.range.0, row_y(i) - 0.5).1;
            [(plot.x.start, y), (plot.x.end, y)]
        })?;
        strips.draw(root, overlay)?;
        for (i, (label, cell)) in self.labels.iter().zip(&c.cells).enumerate() {
            let top = map(x.range.0, row_y(i) + 0.5).1;
            let at = (plot.x.start + 4, top + 2 + TICK.line_height() / 2);
            overlay.text(
                Text::fitted(at, TICK, label, &cell.label)
                    .align(Align::FirstLine)
                    .halo(),
            );
        }
        Ok(())
    }
}

/// The marks of every cell, in either orientation: `place(i, v, across)` is the pixel of
/// value `v` in cell `i`, moved `across` pixels across the cell's strip, which is
/// `across_px` wide.
struct Strips<'a, P: Fn(usize, f64, i32) -> (i32, i32)> {
    cells: &'a [StripCell],
    place: &'a P,
    across_px: i32,
}

impl<P: Fn(usize, f64, i32) -> (i32, i32)> Strips<'_, P> {
    /// CI boxes and median bars of every cell, then one point path per group.
    fn draw(&self, area: &Area<'_>, overlay: &mut Overlay) -> Result<(), ChartError> {
        let mut by_group: BTreeMap<(usize, bool), Vec<(i32, i32)>> = BTreeMap::new();
        let spread = (f64::from(self.across_px) * JITTER_SHARE) as i32;
        for (i, cell) in self.cells.iter().enumerate() {
            self.summary(area, overlay, i, cell)?;
            let values = cell
                .values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.is_finite());
            for (k, (at, v)) in values.enumerate() {
                let disturbed = cell.disturbed.get(at).copied().unwrap_or(false);
                let pts = by_group.entry((cell.group, disturbed)).or_default();
                pts.push((self.place)(i, *v, points::jitter(k, spread)));
            }
        }
        for ((group, disturbed), pts) in by_group {
            overlay.begin_series(style::series_color(group), POINT_DIAMETER, POINT_OPACITY);
            if disturbed {
                overlay.set_cap(points::Cap::Square);
            }
            pts.into_iter().for_each(|p| overlay.point(p));
        }
        Ok(())
    }

    /// Light lines between groups, so variants read as blocks; `line(i)` is the line
    /// between cells `i` and `i + 1`.
    fn separators(
        &self,
        area: &Area<'_>,
        line: impl Fn(usize) -> [(i32, i32); 2],
    ) -> Result<(), ChartError> {
        for (i, pair) in self.cells.windows(2).enumerate() {
            if pair[0].group != pair[1].group {
                area.draw(&PathElement::new(
                    line(i).to_vec(),
                    style::AXIS.mix(0.5).stroke_width(1),
                ))?;
            }
        }
        Ok(())
    }

    /// The CI as a translucent box under the points (only when there is an interval),
    /// and the median as a dark bar on top of them (wider than the point cloud) so dense
    /// runs cannot hide it.
    fn summary(
        &self,
        area: &Area<'_>,
        overlay: &mut Overlay,
        i: usize,
        cell: &StripCell,
    ) -> Result<(), ChartError> {
        let color = style::series_color(cell.group);
        let half = |share: f64| (f64::from(self.across_px) * share / 2.0).round() as i32;
        if cell.lo.is_finite() && cell.hi.is_finite() {
            let b = half(BOX_SHARE);
            let (a, z) = ((self.place)(i, cell.lo, -b), (self.place)(i, cell.hi, b));
            // At least one pixel thick, so a zero-width interval still shows.
            let corners = [
                (a.0.min(z.0), a.1.min(z.1)),
                (
                    a.0.max(z.0).max(a.0.min(z.0) + 1),
                    a.1.max(z.1).max(a.1.min(z.1) + 1),
                ),
            ];
            area.draw(&Rectangle::new(corners, color.mix(0.2).filled()))?;
            area.draw(&Rectangle::new(corners, color.mix(0.6).stroke_width(1)))?;
        }
        if cell.median.is_finite() {
            let b = half(BAR_SHARE);
            let (from, to) = (
                (self.place)(i, cell.median, -b),
                (self.place)(i, cell.median, b),
            );
            overlay.segment(from, to, style::TEXT, 2);
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "strip_tests.rs"]
mod tests;
