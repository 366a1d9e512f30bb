//! Forest chart: one row per check with its ratio, CI, threshold and verdict on
//! a log-scale axis with a reference line at 1.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::ChartError;
use super::axis::{self, Ticked};
use super::points::{self, Area, Overlay};
use super::style::{self, FONT_LABEL, FONT_TICK, Marker};

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
}

impl Verdict {
    /// The word shown next to the row, so the verdict never depends on colour.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::NotRun => "NOT RUN",
        }
    }

    /// Okabe–Ito colours plus a distinct marker per verdict.
    fn look(self) -> (RGBColor, Marker) {
        match self {
            Verdict::Pass => (style::PALETTE[2], Marker::Circle),
            Verdict::Fail => (style::PALETTE[1], Marker::Cross),
            Verdict::Inconclusive => (style::PALETTE[0], Marker::Diamond),
            Verdict::NotRun => (RGBColor(0x99, 0x99, 0x99), Marker::HollowCircle),
        }
    }
}

const ROW_PX: u32 = 28;
const LABEL_MAX_CHARS: usize = 40;

/// Narrowest plot strip between the label and verdict columns.
const MIN_PLOT_PX: i32 = 400;
/// Height of the key line under the axis.
const KEY_PX: i32 = 22;

/// Renders a forest chart as SVG.
pub fn forest_svg(c: &ForestChart) -> Result<String, ChartError> {
    if c.rows.is_empty() {
        return points::empty_chart(&c.title, "no checks");
    }
    let layout = Layout::new(c);
    let width = (style::WIDTH as i32).max(layout.left_w + layout.right_w + MIN_PLOT_PX + 20) as u32;
    let height = 140 + ROW_PX * c.rows.len() as u32;
    points::render(width, height, |root| draw(root, c, &layout))
}

/// Column widths and the axis range, worked out before drawing.
struct Layout {
    labels: Vec<String>,
    left_w: i32,
    word_w: i32,
    right_w: i32,
    range: (f64, f64),
}

impl Layout {
    fn new(c: &ForestChart) -> Layout {
        let labels: Vec<String> = c
            .rows
            .iter()
            .map(|r| style::ellipsize(&r.label, LABEL_MAX_CHARS))
            .collect();
        let left_w = labels
            .iter()
            .map(|l| style::text_width(l, FONT_LABEL))
            .max()
            .unwrap_or(0)
            + 16;
        let word_w = c
            .rows
            .iter()
            .map(|r| style::bold_text_width(r.verdict.word(), FONT_LABEL))
            .max()
            .unwrap_or(0)
            + 10;
        let nums = c
            .rows
            .iter()
            .map(|r| style::text_width(&summary(r), FONT_LABEL))
            .max()
            .unwrap_or(0);
        Layout {
            labels,
            left_w,
            word_w,
            right_w: word_w + nums + 16,
            range: x_extent(&c.rows),
        }
    }
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

/// Text in the right column: the verdict word, then the ratio and its CI.
fn summary(r: &ForestRow) -> String {
    match positive(r.ratio) {
        Some(v) if r.lo.is_finite() && r.hi.is_finite() => {
            format!(
                "{} [{}, {}]",
                style::format_tick(v),
                style::format_tick(r.lo),
                style::format_tick(r.hi)
            )
        }
        Some(v) => style::format_tick(v),
        None => "–".into(),
    }
}

fn draw(root: &Area<'_>, c: &ForestChart, l: &Layout) -> Result<Overlay, ChartError> {
    let titled = root.titled(&c.title, style::font(style::FONT_TITLE))?;
    let (_, h) = titled.dim_in_pixel();
    let (body, foot) = titled.split_vertically(h as i32 - KEY_PX);
    let (lo, hi) = l.range;
    let n = c.rows.len();
    let mut chart = ChartBuilder::on(&body)
        .margin(10)
        .x_label_area_size(44)
        .y_label_area_size(l.left_w)
        .right_y_label_area_size(l.right_w)
        .build_cartesian_2d(
            Ticked::<LogCoord<f64>>::new((lo..hi).log_scale(), axis::log_ticks(lo, hi)),
            Ticked::<RangedCoordf64>::new(-0.5..n as f64 - 0.5, Vec::new()),
        )?;
    chart
        .configure_mesh()
        .x_desc(format!("{} (log scale)", c.x_label))
        .x_label_formatter(&|v| style::format_sig(*v, 3))
        .label_style(style::font(FONT_TICK))
        .axis_desc_style(style::font(FONT_LABEL))
        .bold_line_style(style::GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(style::AXIS)
        .draw()?;
    let map = |x: f64, y: f64| chart.backend_coord(&(x.clamp(lo, hi), y));
    // Rows run top to bottom in input order.
    let row_y = |i: usize| (n - 1 - i) as f64;
    draw_bands(root, n, &map, (lo, hi), &row_y)?;
    root.draw(&PathElement::new(
        vec![map(1.0, -0.5), map(1.0, n as f64 - 0.5)],
        style::AXIS.stroke_width(1),
    ))?;
    for (i, r) in c.rows.iter().enumerate() {
        draw_row(root, r, row_y(i), &map)?;
        draw_texts(
            root,
            r,
            &l.labels[i],
            map(lo, row_y(i)),
            map(hi, row_y(i)),
            l.word_w,
        )?;
    }
    // A key, so the marks need no caption in the surrounding text.
    let key = "point: ratio · bar: 95% CI · dashed tick: threshold · grey line: 1 (no difference)";
    let key_style = style::font(FONT_TICK).pos(Pos::new(HPos::Left, VPos::Center));
    foot.draw_text(key, &key_style, (12, KEY_PX / 2))?;
    Ok(Overlay::default())
}

/// Faint bands on every other row so a row can be followed from label to verdict.
fn draw_bands(
    root: &Area<'_>,
    n: usize,
    map: &impl Fn(f64, f64) -> (i32, i32),
    (lo, hi): (f64, f64),
    row_y: &impl Fn(usize) -> f64,
) -> Result<(), ChartError> {
    for i in (1..n).step_by(2) {
        let y = row_y(i);
        let band = [map(lo, y + 0.5), map(hi, y - 0.5)];
        root.draw(&Rectangle::new(band, RGBColor(0xF4, 0xF4, 0xF4).filled()))?;
    }
    Ok(())
}

fn draw_row(
    root: &Area<'_>,
    r: &ForestRow,
    y: f64,
    map: &impl Fn(f64, f64) -> (i32, i32),
) -> Result<(), ChartError> {
    let (color, marker) = r.verdict.look();
    if let Some(t) = r.threshold.and_then(positive) {
        let (a, b) = (map(t, y + 0.4), map(t, y - 0.4));
        root.draw(&plotters::element::DashedPathElement::new(
            vec![a, b],
            3,
            2,
            style::TEXT.stroke_width(2),
        ))?;
    }
    if let (Some(l), Some(h)) = (positive(r.lo), positive(r.hi)) {
        let (a, b) = (map(l.min(h), y), map(l.max(h), y));
        // A thick bar without caps: caps would merge with the marker on narrow CIs.
        root.draw(&PathElement::new(vec![a, b], color.stroke_width(3)))?;
    }
    if let Some(v) = positive(r.ratio) {
        style::draw_marker(root, marker, map(v, y), 5, color)?;
    }
    Ok(())
}

/// Row label on the left; verdict word (in the verdict colour) and numbers on the right.
fn draw_texts(
    root: &Area<'_>,
    r: &ForestRow,
    label: &str,
    left: (i32, i32),
    right: (i32, i32),
    word_w: i32,
) -> Result<(), ChartError> {
    let (color, _) = r.verdict.look();
    let at = |h| Pos::new(h, VPos::Center);
    root.draw_text(
        label,
        &style::font(FONT_LABEL).pos(at(HPos::Right)),
        (left.0 - 10, left.1),
    )?;
    let word = style::font_bold(FONT_LABEL)
        .color(&color)
        .pos(at(HPos::Left));
    root.draw_text(r.verdict.word(), &word, (right.0 + 12, right.1))?;
    root.draw_text(
        &summary(r),
        &style::font(FONT_LABEL).pos(at(HPos::Left)),
        (right.0 + 12 + word_w, right.1),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, ratio: f64, threshold: Option<f64>, verdict: Verdict) -> ForestRow {
        ForestRow {
            label: label.into(),
            ratio,
            lo: ratio * 0.95,
            hi: ratio * 1.05,
            threshold,
            verdict,
        }
    }

    fn chart(rows: Vec<ForestRow>) -> ForestChart {
        ForestChart {
            title: "checks".into(),
            x_label: "ratio a / b".into(),
            rows,
        }
    }

    #[test]
    fn rows_labels_and_verdicts_appear() {
        let c = chart(vec![
            row("spin vs nonfair t=1", 1.47, Some(1.1), Verdict::Pass),
            row("fair vs nonfair t=2", 0.024, Some(0.9), Verdict::Fail),
            row("treiber vs spin t=4", 0.64, None, Verdict::Inconclusive),
            row(
                "<script>alert(1)</script>",
                f64::NAN,
                Some(1.0),
                Verdict::NotRun,
            ),
        ]);
        let svg = forest_svg(&c).unwrap();
        for s in [
            "spin vs nonfair t=1",
            "PASS",
            "FAIL",
            "INCONCLUSIVE",
            "NOT RUN",
            "1.47 [1.4, 1.54]",
        ] {
            assert!(svg.contains(s), "{s} missing");
        }
        assert!(svg.contains("&lt;script&gt;") && !svg.contains("<script>"));
        assert!(svg.contains("ratio a / b (log scale)"));
        assert_eq!(svg, forest_svg(&c).unwrap());
    }

    #[test]
    fn x_extent_includes_one_and_thresholds() {
        let (lo, hi) = x_extent(&[row("a", 2.0, Some(3.0), Verdict::Pass)]);
        assert!(lo < 1.0 && hi > 3.0 * 1.05, "{lo} {hi}");
        let (lo, hi) = x_extent(&[row("a", -1.0, Some(0.0), Verdict::Fail)]);
        assert!(lo < 1.0 && hi > 1.0);
    }

    #[test]
    fn degenerate_input_does_not_panic() {
        assert!(forest_svg(&chart(vec![])).unwrap().contains("no checks"));
        let bad = ForestRow {
            label: "x".into(),
            ratio: 0.0,
            lo: -1.0,
            hi: f64::INFINITY,
            threshold: Some(f64::NAN),
            verdict: Verdict::Fail,
        };
        assert!(forest_svg(&chart(vec![bad])).is_ok());
        assert!(forest_svg(&chart(vec![row("one", 1.0, Some(1.0), Verdict::Pass)])).is_ok());
    }
}
