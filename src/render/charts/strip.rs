//! Strip chart: one column per cell with every run as a jittered point and the
//! median with its CI, so spread and bimodality are visible at a glance.

use std::collections::BTreeMap;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::ChartError;
use super::axis::{self, Ticked, ValueAxis};
use super::points::{self, Area, Overlay};
use super::style::{self, FONT_LABEL, FONT_TICK};

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
}

/// Category labels longer than this are shortened so the rotated labels fit.
const LABEL_MAX_CHARS: usize = 22;
const POINT_DIAMETER: u32 = 4;
const POINT_OPACITY: f64 = 0.55;
/// Share of a column's width used by the point jitter, the CI box and the median bar.
/// The bar is wider than the jitter so its ends stay visible under dense points.
const JITTER_SHARE: f64 = 0.4;
const BOX_SHARE: f64 = 0.6;
const BAR_SHARE: f64 = 0.7;

/// Renders a strip chart as SVG.
pub fn strip_svg(c: &StripChart) -> Result<String, ChartError> {
    let all = c
        .cells
        .iter()
        .flat_map(|k| k.values.iter().chain([&k.median, &k.lo, &k.hi]));
    let Some((lo, hi)) = axis::extent(all.copied()) else {
        return points::empty_chart(&c.title, "no data");
    };
    let width = style::WIDTH.max(120 + 30 * c.cells.len() as u32);
    let labels: Vec<String> = c
        .cells
        .iter()
        .map(|k| style::ellipsize(&k.label, LABEL_MAX_CHARS))
        .collect();
    let longest = labels
        .iter()
        .map(|l| style::text_width(l, FONT_TICK))
        .max()
        .unwrap_or(0);
    // Labels are rotated 45°, so their vertical extent is width × sin 45°.
    let label_area = (longest as f64 * 0.71) as u32 + 18;
    let y = ValueAxis::new(lo, hi);
    points::render(width, style::HEIGHT + label_area - 40, |root| {
        draw(root, c, &labels, &y, label_area)
    })
}

fn draw(
    root: &Area<'_>,
    c: &StripChart,
    labels: &[String],
    y: &ValueAxis,
    label_area: u32,
) -> Result<Overlay, ChartError> {
    let body = root.titled(&c.title, style::font(style::FONT_TITLE))?;
    let n = c.cells.len();
    // The first rotated label reaches left of its column; leave room for it.
    let col_w = (body.dim_in_pixel().0 as i32 - y.label_area()) / n as i32;
    let first_reach = labels.first().map_or(0, |l| {
        (style::text_width(l, FONT_TICK) as f64 * 0.71) as i32 - col_w / 2
    });
    let mut chart = ChartBuilder::on(&body)
        .margin(10)
        .x_label_area_size(label_area)
        .y_label_area_size(y.label_area().max(first_reach))
        .build_cartesian_2d(
            Ticked::<RangedCoordf64>::new(-0.5..n as f64 - 0.5, Vec::new()),
            y.coord(),
        )?;
    chart
        .configure_mesh()
        .y_desc(c.y_label.as_str())
        .y_label_formatter(&|v| y.label(*v))
        .label_style(style::font(FONT_TICK))
        .axis_desc_style(style::font(FONT_LABEL))
        .bold_line_style(style::GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(style::AXIS)
        .draw()?;
    let map = |x: f64, y: f64| chart.backend_coord(&(x, y));
    let col_px = map(1.0, 0.0).0 - map(0.0, 0.0).0;
    draw_separators(root, c, &map, y.range)?;
    let mut overlay = Overlay::default();
    let mut by_group: BTreeMap<usize, Vec<(i32, i32)>> = BTreeMap::new();
    for (i, cell) in c.cells.iter().enumerate() {
        draw_summary(root, &mut overlay, cell, i as f64, &map, col_px)?;
        let pts = by_group.entry(cell.group).or_default();
        let values = cell.values.iter().filter(|v| v.is_finite());
        for (k, v) in values.enumerate() {
            let (x, y) = map(i as f64, *v);
            pts.push((
                x + points::jitter(k, (col_px as f64 * JITTER_SHARE) as i32),
                y,
            ));
        }
    }
    for (group, pts) in by_group {
        overlay.begin_series(style::series_color(group), POINT_DIAMETER, POINT_OPACITY);
        pts.into_iter().for_each(|p| overlay.point(p));
    }
    let axis_y = map(0.0, y.range.0).1;
    for (i, label) in labels.iter().enumerate() {
        let (x, _) = map(i as f64, y.range.0);
        overlay.text((x + 4, axis_y + 10), -45, "end", FONT_TICK, label);
    }
    Ok(overlay)
}

/// Light vertical lines between groups, so variants read as blocks.
fn draw_separators(
    root: &Area<'_>,
    c: &StripChart,
    map: &impl Fn(f64, f64) -> (i32, i32),
    (y0, y1): (f64, f64),
) -> Result<(), ChartError> {
    for (i, pair) in c.cells.windows(2).enumerate() {
        if pair[0].group != pair[1].group {
            let x = i as f64 + 0.5;
            root.draw(&PathElement::new(
                vec![map(x, y0), map(x, y1)],
                style::AXIS.mix(0.5).stroke_width(1),
            ))?;
        }
    }
    Ok(())
}

/// The CI as a translucent box under the points, and the median as a dark bar
/// on top of them (wider than the point cloud) so dense runs cannot hide it.
fn draw_summary(
    root: &Area<'_>,
    overlay: &mut Overlay,
    cell: &StripCell,
    x: f64,
    map: &impl Fn(f64, f64) -> (i32, i32),
    col_px: i32,
) -> Result<(), ChartError> {
    let color = style::series_color(cell.group);
    let half = |share: f64| (col_px as f64 * share / 2.0).round() as i32;
    if cell.lo.is_finite() && cell.hi.is_finite() {
        let (cx, top) = map(x, cell.lo.max(cell.hi));
        let (_, bottom) = map(x, cell.lo.min(cell.hi));
        let b = half(BOX_SHARE);
        root.draw(&Rectangle::new(
            [(cx - b, top), (cx + b, bottom.max(top + 1))],
            color.mix(0.2).filled(),
        ))?;
        root.draw(&Rectangle::new(
            [(cx - b, top), (cx + b, bottom.max(top + 1))],
            color.mix(0.6).stroke_width(1),
        ))?;
    }
    if cell.median.is_finite() {
        let (cx, y) = map(x, cell.median);
        let b = half(BAR_SHARE);
        overlay.segment((cx - b, y), (cx + b, y), style::TEXT, 2);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(label: &str, group: usize, values: Vec<f64>) -> StripCell {
        StripCell {
            label: label.into(),
            group,
            values,
            median: 10.0,
            lo: 9.0,
            hi: 11.0,
        }
    }

    fn chart(cells: Vec<StripCell>) -> StripChart {
        StripChart {
            title: "runs".into(),
            y_label: "throughput (Mops/s)".into(),
            cells,
        }
    }

    /// Point marks: zero-length segments inside the round-capped point paths.
    fn marks(svg: &str) -> usize {
        svg.lines()
            .filter(|l| l.contains("stroke-linecap=\"round\""))
            .map(|l| l.matches("h0").count())
            .sum()
    }

    #[test]
    fn every_distinct_run_is_one_mark() {
        // Distinct values far apart in y cannot share a pixel.
        let c = chart(vec![
            cell("a t=1", 0, vec![1.0, 50.0, 100.0]),
            cell("b t=1", 1, vec![1.0, 50.0]),
        ]);
        let svg = strip_svg(&c).unwrap();
        assert_eq!(marks(&svg), 5);
        assert!(svg.contains("a t=1") && svg.contains("b t=1"));
        // One path per group, not one element per point.
        assert_eq!(svg.matches("stroke-linecap=\"round\"").count(), 2);
    }

    #[test]
    fn ten_thousand_points_stay_small() {
        let cells = (0..24)
            .map(|i| {
                let values = (0..417)
                    .map(|k| 10.0 + (k % 2) as f64 * 8.0 + (k as f64 * 0.37).sin())
                    .collect();
                cell(&format!("variant{} t={}", i / 6, i % 6), i / 6, values)
            })
            .collect();
        let svg = strip_svg(&chart(cells)).unwrap();
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
        assert!(marks(&svg) > 1000);
    }

    #[test]
    fn deterministic_and_escaped() {
        let c = chart(vec![cell("<script>alert(1)</script>", 0, vec![1.0, 2.0])]);
        let a = strip_svg(&c).unwrap();
        assert_eq!(a, strip_svg(&c).unwrap());
        // Long labels are shortened (to 22 chars) before escaping.
        assert!(a.contains("&lt;script&gt;alert(1)&lt;/scr…"));
        assert!(!a.contains("<script>"));
    }

    #[test]
    fn degenerate_input_does_not_panic() {
        assert!(strip_svg(&chart(vec![])).unwrap().contains("no data"));
        let nan = StripCell {
            label: "x".into(),
            group: 0,
            values: vec![f64::NAN],
            median: f64::NAN,
            lo: f64::NAN,
            hi: f64::NAN,
        };
        assert!(strip_svg(&chart(vec![nan])).is_ok());
        // Equal values are spread by the jitter, so all five remain visible.
        let svg = strip_svg(&chart(vec![cell("flat", 3, vec![10.0; 5])])).unwrap();
        assert_eq!(marks(&svg), 5);
    }

    #[test]
    fn extreme_values_do_not_panic() {
        let huge = cell("huge", 0, vec![-1e308, 1e308, f64::INFINITY]);
        assert!(strip_svg(&chart(vec![huge])).is_ok());
        let tiny = cell("tiny", 0, vec![5e-324, 0.0]);
        assert!(
            strip_svg(&chart(vec![StripCell {
                median: 0.0,
                lo: 0.0,
                hi: 0.0,
                ..tiny
            }]))
            .is_ok()
        );
    }
}
