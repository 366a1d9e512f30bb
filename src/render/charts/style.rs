//! Presentation shared by every chart: sizes, fonts, palette, markers, legend, tick format.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Default canvas width in pixels; fits the content column of an mdBook page.
pub const WIDTH: u32 = 800;
/// Default canvas height in pixels.
pub const HEIGHT: u32 = 480;

/// Font sizes in CSS pixels, a deliberately small scale so charts look alike.
pub const FONT_TITLE: f64 = 16.0;
pub const FONT_LABEL: f64 = 12.5;
pub const FONT_TICK: f64 = 11.0;
pub const FONT_LEGEND: f64 = 12.0;
pub const FONT_FAMILY: &str = "sans-serif";

/// Text colour: near-black reads softer than pure black next to the data ink.
pub const TEXT: RGBColor = RGBColor(0x33, 0x33, 0x33);
/// Grid lines: light enough to recede behind the data.
pub const GRID: RGBColor = RGBColor(0xE4, 0xE4, 0xE4);
/// Axis lines and reference lines.
pub const AXIS: RGBColor = RGBColor(0x88, 0x88, 0x88);

/// Okabe–Ito colour-blind-safe palette. Ordered so the first series get the
/// colours that are most distinct from each other and from a white background;
/// yellow, which is weak on white, comes last.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0xF0, 0xE4, 0x42), // yellow
];

/// Colour of series `i`; wraps around the palette.
pub fn series_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// plotters' SVG backend writes `font-size = size / 1.24`, so sizes are
/// scaled up here to land on the intended CSS pixel size.
pub fn font(px: f64) -> TextStyle<'static> {
    TextStyle::from((FONT_FAMILY, backend_size(px)).into_font()).color(&TEXT)
}

/// `px × 1.24`, nudged by a few ulps so that the backend's division gives back
/// exactly `px` (otherwise the SVG says font-size="12.000000000000002"). Some
/// sizes (13, 15) have no such value; the sizes above are chosen to have one.
fn backend_size(px: f64) -> f64 {
    let v = px * 1.24;
    (0..4i64)
        .flat_map(|d| [d, -d])
        .map(|d| f64::from_bits((v.to_bits() as i64 + d) as u64))
        .find(|c| c / 1.24 == px)
        .unwrap_or(v)
}

/// Bold variant of [`font`], for words that carry a verdict.
pub fn font_bold(px: f64) -> TextStyle<'static> {
    TextStyle::from((FONT_FAMILY, backend_size(px), FontStyle::Bold).into_font()).color(&TEXT)
}

/// Estimated width in pixels of `text` at `px`; the SVG backend cannot measure
/// glyphs, so this average-advance estimate drives layout (margins, legend width).
pub fn text_width(text: &str, px: f64) -> i32 {
    (text.chars().count() as f64 * px * 0.58).ceil() as i32
}

/// [`text_width`] for bold text, whose glyphs run about 15% wider.
pub fn bold_text_width(text: &str, px: f64) -> i32 {
    (text.chars().count() as f64 * px * 0.68).ceil() as i32
}

/// Shortens user text that would otherwise push the layout apart.
pub fn ellipsize(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// Marker shapes; series `i` gets `Marker::for_series(i)` so colour is not the only cue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
    Plus,
    HollowCircle,
}

impl Marker {
    pub fn for_series(i: usize) -> Marker {
        const ALL: [Marker; 8] = [
            Marker::Circle,
            Marker::Square,
            Marker::TriangleUp,
            Marker::Diamond,
            Marker::TriangleDown,
            Marker::Cross,
            Marker::Plus,
            Marker::HollowCircle,
        ];
        ALL[i % ALL.len()]
    }
}

/// Draws `marker` centred on pixel `(x, y)` of `area` with radius `r`.
pub fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    marker: Marker,
    (x, y): (i32, i32),
    r: i32,
    color: RGBColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let fill = color.filled();
    let poly = |pts: Vec<(i32, i32)>| -> Vec<(i32, i32)> {
        pts.into_iter().map(|(dx, dy)| (x + dx, y + dy)).collect()
    };
    match marker {
        Marker::Circle => area.draw(&Circle::new((x, y), r, fill)),
        Marker::HollowCircle => {
            area.draw(&Circle::new((x, y), r, WHITE.filled()))?;
            area.draw(&Circle::new((x, y), r, color.stroke_width(2)))
        }
        Marker::Square => area.draw(&Rectangle::new(
            [(x - r + 1, y - r + 1), (x + r - 1, y + r - 1)],
            fill,
        )),
        Marker::TriangleUp => area.draw(&Polygon::new(
            poly(vec![(0, -r - 1), (r + 1, r), (-r - 1, r)]),
            fill,
        )),
        Marker::TriangleDown => area.draw(&Polygon::new(
            poly(vec![(0, r + 1), (r + 1, -r), (-r - 1, -r)]),
            fill,
        )),
        Marker::Diamond => area.draw(&Polygon::new(
            poly(vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)]),
            fill,
        )),
        Marker::Cross => {
            let s = color.stroke_width(3);
            area.draw(&PathElement::new(poly(vec![(-r, -r), (r, r)]), s))?;
            area.draw(&PathElement::new(poly(vec![(-r, r), (r, -r)]), s))
        }
        Marker::Plus => {
            let s = color.stroke_width(3);
            area.draw(&PathElement::new(poly(vec![(-r - 1, 0), (r + 1, 0)]), s))?;
            area.draw(&PathElement::new(poly(vec![(0, -r - 1), (0, r + 1)]), s))
        }
    }
}

/// One legend entry: a series name with its colour and marker.
pub struct LegendEntry<'a> {
    pub name: &'a str,
    pub color: RGBColor,
    pub marker: Marker,
    /// Whether a line sample is drawn behind the marker (for line charts).
    pub line: bool,
}

/// Width the legend column needs for `names` (marker, gap, longest name).
pub fn legend_width(names: &[&str]) -> i32 {
    let longest = names
        .iter()
        .map(|n| text_width(&ellipsize(n, LEGEND_MAX_CHARS), FONT_LEGEND))
        .max()
        .unwrap_or(0);
    if names.is_empty() {
        0
    } else {
        16 + 28 + 8 + longest + 12
    }
}

const LEGEND_MAX_CHARS: usize = 28;

/// Draws a vertical legend into `area` (which lies outside the plot, so it never covers data).
pub fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    top: i32,
    entries: &[LegendEntry<'_>],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = font(FONT_LEGEND).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, e) in entries.iter().enumerate() {
        let y = top + 10 + i as i32 * 22;
        let (x0, x1) = (16, 44);
        if e.line {
            area.draw(&PathElement::new(
                vec![(x0, y), (x1, y)],
                e.color.stroke_width(2),
            ))?;
        }
        draw_marker(area, e.marker, ((x0 + x1) / 2, y), 4, e.color)?;
        area.draw_text(&ellipsize(e.name, LEGEND_MAX_CHARS), &style, (x1 + 8, y))?;
    }
    Ok(())
}

/// Formats a tick label with three significant digits and k/M/G/T suffixes:
/// 0.2 → "0.2", 8.4 → "8.4", 19.5 → "19.5", 1234 → "1.23k", 3.4e6 → "3.4M".
pub fn format_tick(v: f64) -> String {
    format_sig(v, 3)
}

/// Like [`format_tick`] with `sig` significant digits; axes use it with enough
/// digits to tell neighbouring ticks apart (e.g. 100.2 vs 100.4).
pub fn format_sig(v: f64, sig: u32) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "NaN".into()
        } else if v > 0.0 {
            "∞".into()
        } else {
            "-∞".into()
        };
    }
    if v == 0.0 {
        return "0".into();
    }
    const SUFFIX: [&str; 5] = ["", "k", "M", "G", "T"];
    let sig = sig.clamp(1, 12) as i32;
    let mut tier = 0usize;
    let mut scaled = v;
    // Rounding is done before choosing the tier so 999 960 becomes "1M", not "1000k".
    while tier + 1 < SUFFIX.len() && round_sig(scaled, sig).abs() >= 1000.0 {
        scaled /= 1000.0;
        tier += 1;
    }
    let scaled = round_sig(scaled, sig);
    if tier == 0 && scaled.abs() < 1e-3 {
        return trim_exp(&format!("{:.*e}", (sig - 1).max(0) as usize, scaled));
    }
    let magnitude = scaled.abs().log10().floor() as i32;
    let decimals = (sig - 1 - magnitude).max(0) as usize;
    format!(
        "{}{}",
        trim_zeros(&format!("{scaled:.decimals$}")),
        SUFFIX[tier]
    )
}

fn round_sig(v: f64, sig: i32) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let magnitude = v.abs().log10().floor() as i32;
    let factor = 10f64.powi(sig - 1 - magnitude);
    (v * factor).round() / factor
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        let t = s.trim_end_matches('0').trim_end_matches('.');
        if t == "-0" { "0".into() } else { t.into() }
    } else {
        s.into()
    }
}

fn trim_exp(s: &str) -> String {
    match s.split_once('e') {
        Some((m, e)) => format!("{}e{}", trim_zeros(m), e),
        None => s.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_tick_pinned_cases() {
        let cases = [
            (0.2, "0.2"),
            (8.4, "8.4"),
            (8.400000001, "8.4"),
            (19.5, "19.5"),
            (30.7, "30.7"),
            (0.0, "0"),
            (16.0, "16"),
            (125.0, "125"),
            (1234.0, "1.23k"),
            (1200.0, "1.2k"),
            (12000.0, "12k"),
            (3.4e6, "3.4M"),
            (999_960.0, "1M"),
            (-2500.0, "-2.5k"),
            (0.05, "0.05"),
            (0.001234, "0.00123"),
            (0.0001234, "1.23e-4"),
            (f64::NAN, "NaN"),
        ];
        for (v, want) in cases {
            assert_eq!(format_tick(v), want, "format_tick({v})");
        }
    }

    #[test]
    fn markers_and_colours_cycle() {
        assert_eq!(series_color(9), PALETTE[1]);
        assert_ne!(Marker::for_series(0), Marker::for_series(1));
        assert_eq!(Marker::for_series(8), Marker::for_series(0));
    }

    #[test]
    fn font_sizes_come_out_exact() {
        for px in [FONT_TITLE, FONT_LABEL, FONT_TICK, FONT_LEGEND] {
            assert_eq!(backend_size(px) / 1.24, px);
        }
    }

    #[test]
    fn ellipsize_keeps_short_text() {
        assert_eq!(ellipsize("abc", 5), "abc");
        assert_eq!(ellipsize("abcdefgh", 5), "abcd…");
    }
}
