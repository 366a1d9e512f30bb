//! Forest chart: one row per check with its ratio, CI, threshold and verdict on
//! a log-scale axis with a reference line at 1.
//!
//! The wide rendition puts check names in a column left of the plot and verdicts right
//! of it; the narrow one stacks each row: name, then verdict and numbers, then the bar.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::ChartError;
use super::axis::{self, Ticked, Ticks};
use super::frame::{self, PlotBox, Title};
use super::points::{self, Area, Overlay};
use super::style::{self, FONT_TICK, LABEL, Marker, Size, TICK};
use super::text::{self, Align, Anchor, Face, Fitted, Text};

/// Input for [`forest_svg`].
#[derive(Clone, Debug, Default)]
pub struct ForestChart {
    pub title: String,
    /// E.g. "ratio a / b".
    pub x_label: String,
    pub rows: Vec<ForestRow>,
}

/// One check.
#[derive(Clone, Debug)]
pub struct ForestRow {
    pub label: String,
    pub ratio: f64,
    /// Lower bound of the confidence interval of the ratio.
    pub lo: f64,
    /// Upper bound of the confidence interval of the ratio.
    pub hi: f64,
    /// The ratio the check compares against, drawn as a dashed tick on the row.
    pub threshold: Option<f64>,
    pub verdict: Verdict,
}

/// Outcome of a check; the caller maps its own check results to this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Inconclusive,
    NotRun,
    /// A comparison of two sessions: better beyond the noise band.
    Faster,
    /// Worse beyond the noise band.
    Slower,
    /// Within the noise band.
    NoChange,
    /// A check's interval wholly within its margin of the threshold.
    AtThreshold,
}

impl Verdict {
    /// The word shown next to the row, so the verdict never depends on colour.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::NotRun => "NOT RUN",
            Verdict::Faster => "FASTER",
            Verdict::Slower => "SLOWER",
            Verdict::NoChange => "SAME",
            Verdict::AtThreshold => "AT THRESHOLD",
        }
    }

    /// The verdict colour (the page's too) and a distinct marker per verdict.
    fn look(self) -> (RGBColor, Marker) {
        match self {
            Verdict::Pass => (style::VERDICT_PASS, Marker::Circle),
            Verdict::Fail => (style::VERDICT_FAIL, Marker::Cross),
            Verdict::Inconclusive => (style::VERDICT_INCONCLUSIVE, Marker::Diamond),
            Verdict::NotRun => (style::VERDICT_NOT_RUN, Marker::HollowCircle),
            Verdict::Faster => (style::VERDICT_PASS, Marker::Circle),
            Verdict::Slower => (style::VERDICT_FAIL, Marker::Cross),
            Verdict::NoChange => (style::VERDICT_NOT_RUN, Marker::Diamond),
            Verdict::AtThreshold => (style::VERDICT_AT_THRESHOLD, Marker::Diamond),
        }
    }
}

/// Face of verdict words.
const VERDICT: Face = Face::bold(style::FONT_LABEL);
/// Margin plotters keeps around the plot, in pixels.
const MARGIN: i32 = 10;
/// Height of the x axis with its tick labels and title.
const X_AXIS_PX: i32 = 44;
/// Narrowest plot strip between the label and verdict columns of the wide rendition.
const MIN_PLOT_PX: i32 = 320;
/// Narrowest and widest the label column of the wide rendition may be.
const LABEL_COLUMN: (i32, i32) = (150, 300);
/// Lines a check name may take.
const LABEL_LINES: usize = 2;
/// Room between a text column and the plot.
const COLUMN_GAP: i32 = 10;
/// Room around the row's bar in the narrow rendition, below the texts.
const NARROW_BAR_PX: i32 = 24;

/// The key under the axis, so the marks need no caption in the surrounding text.
const KEY: [&str; 4] = [
    "point: ratio",
    "bar: its interval",
    "dashed tick: threshold",
    "grey line: 1 (no difference)",
];
const KEY_SEPARATOR: &str = " · ";

/// Renders a forest chart as SVG in the given rendition.
pub fn forest_svg(c: &ForestChart, size: Size) -> Result<String, ChartError> {
    if c.rows.is_empty() {
        return frame::empty_chart(&c.title, "no checks", size);
    }
    let layout = Layout::new(c, size);
    points::render(layout.width as u32, layout.height() as u32, |root| {
        draw(root, c, &layout)
    })
}

/// Where everything goes, worked out before drawing.
struct Layout {
    size: Size,
    width: i32,
    title: Title,
    /// Check names fitted to their room.
    labels: Vec<Fitted>,
    /// Width of the label column (wide) or 0 (narrow: names sit above the bars).
    left_w: i32,
    /// Width of the widest verdict word plus a gap.
    word_w: i32,
    /// Width of the verdict column (wide) or 0.
    right_w: i32,
    row_px: i32,
    range: (f64, f64),
    ticks: Ticks,
    key: Vec<String>,
}

impl Layout {
    fn new(c: &ForestChart, size: Size) -> Layout {
        let width = size.width() as i32;
        let word_w = widest(c.rows.iter().map(|r| r.verdict.word()), VERDICT) + 8;
        let summaries: Vec<String> = c.rows.iter().map(summary).collect();
        let nums = widest(summaries.iter().map(String::as_str), LABEL);
        let (left_w, right_w, label_room) = match size {
            Size::Wide => {
                let right_w = COLUMN_GAP + word_w + nums + 6;
                let room = width - 2 * MARGIN - right_w - MIN_PLOT_PX - COLUMN_GAP;
                let room = room.clamp(LABEL_COLUMN.0, LABEL_COLUMN.1);
                (None, right_w, room)
            }
            Size::Narrow => (Some(0), 0, width - 2 * MARGIN - 8),
        };
        let labels: Vec<Fitted> = c
            .rows
            .iter()
            .map(|r| text::fit(&r.label, LABEL, f64::from(label_room), LABEL_LINES))
            .collect();
        let lines = labels.iter().map(Fitted::line_count).max().unwrap_or(1) as i32;
        let left_w = left_w.unwrap_or_else(|| {
            let widest = labels.iter().map(|l| l.width(LABEL)).fold(0.0, f64::max);
            widest.ceil() as i32 + COLUMN_GAP + 6
        });
        let row_px = match size {
            Size::Wide => 28 + (lines - 1) * LABEL.line_height(),
            Size::Narrow => (lines + 1) * LABEL.line_height() + NARROW_BAR_PX + 4,
        };
        let range = x_extent(&c.rows);
        let plot_px = f64::from(width - 2 * MARGIN - left_w - right_w);
        let ticks = Ticks::exact(axis::log_ticks(range.0, range.1))
            .spaced(axis::pixel_scale(range.0, range.1, plot_px, true));
        let key = key_lines(f64::from(width - 24));
        Layout {
            size,
            width,
            title: Title::new(&c.title, size),
            labels,
            left_w,
            word_w,
            right_w,
            row_px,
            range,
            ticks,
            key,
        }
    }

    /// Height of the plot with its x axis.
    fn body_height(&self) -> i32 {
        self.labels.len() as i32 * self.row_px + X_AXIS_PX + 2 * MARGIN
    }

    fn key_height(&self) -> i32 {
        self.key.len() as i32 * TICK.line_height() + 8
    }

    fn height(&self) -> i32 {
        self.title.height() + self.body_height() + self.key_height()
    }
}

/// The key's items on as few lines no wider than `width` as they go, never split.
fn key_lines(width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for item in KEY {
        match lines.last_mut() {
            Some(line) if TICK.width(&format!("{line}{KEY_SEPARATOR}{item}")) <= width => {
                line.push_str(KEY_SEPARATOR);
                line.push_str(item);
            }
            _ => lines.push(item.to_string()),
        }
    }
    lines
}

/// Width of the widest of `texts` in `face`, in whole pixels.
fn widest<'a>(texts: impl Iterator<Item = &'a str>, face: Face) -> i32 {
    texts.map(|t| face.width(t)).fold(0.0, f64::max).ceil() as i32
}

fn positive(v: f64) -> Option<f64> {
    (v.is_finite() && v > 0.0).then_some(v)
}

/// Range over every positive finite ratio, CI bound and threshold, always
/// including 1, widened so end markers are not cut.
fn x_extent(rows: &[ForestRow]) -> (f64, f64) {
    let vals = rows
        .iter()
        .flat_map(|r| [Some(r.ratio), Some(r.lo), Some(r.hi), r.threshold])
        .flatten()
        .filter_map(positive)
        // Beyond this a ratio is meaningless, and padding it would overflow to ∞.
        .map(|v| v.clamp(1e-200, 1e200));
    let (lo, hi) = vals.fold((1.0f64, 1.0f64), |(l, h), v| (l.min(v), h.max(v)));
    // At least ±5% around 1 so an all-1.0 input still has a readable axis.
    let (lo, hi) = (lo.min(0.95), hi.max(1.05));
    let pad = (hi / lo).powf(0.05);
    (lo / pad, hi * pad)
}

/// The numbers next to the verdict: the ratio and its CI, `0.384 [0.344, 0.583]`.
fn summary(r: &ForestRow) -> String {
    use lab_config::format::{ratio, ratio_interval};
    match positive(r.ratio) {
        Some(v) if r.lo.is_finite() && r.hi.is_finite() => ratio_interval(v, r.lo, r.hi),
        Some(v) => ratio(v),
        None => "–".into(),
    }
}

/// Pixel geometry of one row: the band it owns and the height its bar is drawn at.
struct RowBox {
    top: i32,
    bottom: i32,
    bar: i32,
}

fn draw(root: &Area<'_>, c: &ForestChart, l: &Layout) -> Result<Overlay, ChartError> {
    let mut overlay = Overlay::default();
    l.title.draw(&mut overlay);
    let body = root.clone().shrink(
        (0, l.title.height()),
        (l.width as u32, l.body_height() as u32),
    );
    let (lo, hi) = l.range;
    let n = c.rows.len();
    let mut chart = ChartBuilder::on(&body)
        .margin(MARGIN)
        .x_label_area_size(X_AXIS_PX)
        .y_label_area_size(l.left_w)
        .right_y_label_area_size(l.right_w)
        .build_cartesian_2d(
            Ticked::<LogCoord<f64>>::new((lo..hi).log_scale(), l.ticks.values.clone()),
            Ticked::<RangedCoordf64>::new(-0.5..n as f64 - 0.5, Vec::new()),
        )?;
    chart
        .configure_mesh()
        .x_label_formatter(&|v| l.ticks.label(*v))
        .label_style(style::font(FONT_TICK))
        .bold_line_style(style::GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(style::AXIS)
        .draw()?;
    let plot = PlotBox::of(chart.plotting_area().get_pixel_range());
    plot.x_title(&mut overlay, &format!("{} (log scale)", c.x_label));
    let px = |v: f64| chart.backend_coord(&(v.clamp(lo, hi), 0.0)).0;
    // Rows run top to bottom in input order.
    let row_box = |i: usize| {
        let y = (n - 1 - i) as f64;
        let top = chart.backend_coord(&(lo, y + 0.5)).1;
        let bottom = chart.backend_coord(&(lo, y - 0.5)).1;
        let bar = match l.size {
            Size::Wide => (top + bottom) / 2,
            Size::Narrow => bottom - NARROW_BAR_PX / 2,
        };
        RowBox { top, bottom, bar }
    };
    draw_bands(root, n, &plot, &row_box)?;
    root.draw(&PathElement::new(
        vec![(px(1.0), plot.y.start), (px(1.0), plot.y.end)],
        style::AXIS.stroke_width(1),
    ))?;
    for (i, r) in c.rows.iter().enumerate() {
        let b = row_box(i);
        draw_row(root, r, &b, &px, l.size)?;
        match l.size {
            Size::Wide => wide_texts(&mut overlay, r, &l.labels[i], &b, &plot, l.word_w),
            Size::Narrow => narrow_texts(&mut overlay, r, &l.labels[i], &b, &plot, l.word_w),
        }
    }
    draw_key(&mut overlay, l);
    Ok(overlay)
}

/// The key under the plot: what the marks and words mean.
fn draw_key(overlay: &mut Overlay, l: &Layout) {
    let key_top = l.title.height() + l.body_height() + TICK.line_height() / 2;
    let key = Fitted {
        lines: l.key.clone(),
        shortened: false,
    };
    overlay.text(
        Text::fitted((12, key_top), TICK, &key, "")
            .anchor(Anchor::Start)
            .align(Align::FirstLine),
    );
}

/// Faint bands on every other row so a row can be followed from label to verdict.
fn draw_bands(
    root: &Area<'_>,
    n: usize,
    plot: &PlotBox,
    row_box: &impl Fn(usize) -> RowBox,
) -> Result<(), ChartError> {
    for i in (1..n).step_by(2) {
        let b = row_box(i);
        let band = [(plot.x.start, b.top), (plot.x.end, b.bottom)];
        root.draw(&Rectangle::new(band, RGBColor(0xF4, 0xF4, 0xF4).filled()))?;
    }
    Ok(())
}

/// The threshold tick, the interval bar (only when there is an interval) and the ratio.
fn draw_row(
    root: &Area<'_>,
    r: &ForestRow,
    b: &RowBox,
    px: &impl Fn(f64) -> i32,
    size: Size,
) -> Result<(), ChartError> {
    let (color, marker) = r.verdict.look();
    let reach = match size {
        Size::Wide => (b.bottom - b.top) * 2 / 5,
        Size::Narrow => NARROW_BAR_PX / 2 - 2,
    };
    if let Some(t) = r.threshold.and_then(positive) {
        root.draw(&plotters::element::DashedPathElement::new(
            vec![(px(t), b.bar - reach), (px(t), b.bar + reach)],
            3,
            2,
            style::TEXT.stroke_width(2),
        ))?;
    }
    if let (Some(l), Some(h)) = (positive(r.lo), positive(r.hi)) {
        let (a, z) = (px(l.min(h)), px(l.max(h)));
        // A thick bar without caps: caps would merge with the marker on narrow CIs.
        root.draw(&PathElement::new(
            vec![(a, b.bar), (z, b.bar)],
            color.stroke_width(3),
        ))?;
    }
    if let Some(v) = positive(r.ratio) {
        style::draw_marker(root, marker, (px(v), b.bar), 5, color)?;
    }
    Ok(())
}

/// Wide rows: the name right-aligned left of the plot; verdict word (in the verdict
/// colour) and numbers right of it.
fn wide_texts(
    overlay: &mut Overlay,
    r: &ForestRow,
    label: &Fitted,
    b: &RowBox,
    plot: &PlotBox,
    word_w: i32,
) {
    let (color, _) = r.verdict.look();
    let left = (plot.x.start - COLUMN_GAP, b.bar);
    overlay.text(Text::fitted(left, LABEL, label, &r.label).anchor(Anchor::End));
    let word_x = plot.x.end + COLUMN_GAP;
    overlay.text(Text::line((word_x, b.bar), VERDICT, r.verdict.word()).color(color));
    overlay.text(Text::line((word_x + word_w, b.bar), LABEL, &summary(r)));
}

/// Narrow rows: the name across the top of the row, then the verdict and numbers, then
/// the bar; the texts get a white halo where they cross grid lines.
fn narrow_texts(
    overlay: &mut Overlay,
    r: &ForestRow,
    label: &Fitted,
    b: &RowBox,
    plot: &PlotBox,
    word_w: i32,
) {
    let (color, _) = r.verdict.look();
    let line = LABEL.line_height();
    let x = plot.x.start + 4;
    // Texts sit on the bar, so the room a shorter name leaves goes above it, between rows.
    let verdict_y = b.bar - NARROW_BAR_PX / 2 - line / 2 + 2;
    let first = verdict_y - label.line_count() as i32 * line;
    overlay.text(
        Text::fitted((x, first), LABEL, label, &r.label)
            .align(Align::FirstLine)
            .halo(),
    );
    overlay.text(
        Text::line((x, verdict_y), VERDICT, r.verdict.word())
            .color(color)
            .halo(),
    );
    overlay.text(Text::line((x + word_w, verdict_y), LABEL, &summary(r)).halo());
}

#[cfg(test)]
#[path = "forest_tests.rs"]
mod tests;
