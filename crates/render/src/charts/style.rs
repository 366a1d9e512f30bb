//! Presentation shared by every chart: sizes, fonts, palette, verdict colours, markers.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::metrics;

/// Canvas width of the wide rendition in pixels; fits the content column of an mdBook page.
pub const WIDTH: u32 = 720;
/// Canvas width of the narrow rendition: a phone's content column (a 400 px screen less margins).
pub const NARROW_WIDTH: u32 = 340;
/// Default canvas height in pixels.
pub const HEIGHT: u32 = 480;

/// Which rendition of a chart to draw. Pages show charts at `max-width: 100%`, so a wide
/// chart on a phone would shrink its text to a few pixels; the narrow one is laid out for
/// that width instead, and no rendition sets text smaller than [`FONT_TICK`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// [`WIDTH`] pixels wide, legends to the right of the plot.
    Wide,
    /// [`NARROW_WIDTH`] pixels wide, legends under the plot, labels wrapped, as tall as needed.
    Narrow,
}

impl Size {
    /// Canvas width in pixels.
    pub fn width(self) -> u32 {
        match self {
            Size::Wide => WIDTH,
            Size::Narrow => NARROW_WIDTH,
        }
    }
}

/// Font sizes in CSS pixels, a deliberately small scale so charts look alike. The smallest,
/// [`FONT_TICK`], is the floor for every text in every rendition.
pub const FONT_TITLE: f64 = 16.0;
pub const FONT_LABEL: f64 = 12.5;
pub const FONT_TICK: f64 = 11.0;
pub const FONT_LEGEND: f64 = 12.0;
/// Liberation Sans and Arial are metric-compatible with Helvetica, whose widths
/// [`super::metrics`] uses to lay text out; so text takes the room it was given. (The value
/// goes into a double-quoted XML attribute: it must not contain `"`.)
pub const FONT_FAMILY: &str = "Liberation Sans, Arial, Helvetica, sans-serif";

/// Measuring faces of the font sizes above.
pub const TITLE: Face = Face::regular(FONT_TITLE);
pub const LABEL: Face = Face::regular(FONT_LABEL);
pub const TICK: Face = Face::regular(FONT_TICK);
pub const LEGEND: Face = Face::regular(FONT_LEGEND);

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

/// Verdict colours, the same in every chart (points, bars and verdict words). The report
/// page's CSS uses the same values, so a verdict looks the same in text and in charts.
pub const VERDICT_PASS: RGBColor = RGBColor(0x1A, 0x7F, 0x37);
/// See [`VERDICT_PASS`].
pub const VERDICT_FAIL: RGBColor = RGBColor(0xCF, 0x22, 0x2E);
/// See [`VERDICT_PASS`].
pub const VERDICT_INCONCLUSIVE: RGBColor = RGBColor(0x9A, 0x67, 0x00);
/// See [`VERDICT_PASS`].
pub const VERDICT_NOT_RUN: RGBColor = RGBColor(0x6E, 0x77, 0x81);
/// See [`VERDICT_PASS`].
pub const VERDICT_AT_THRESHOLD: RGBColor = RGBColor(0x08, 0x69, 0xDA);

/// `#RRGGBB` of a colour, as SVG attributes and CSS write it.
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_and_colours_cycle() {
        assert_eq!(series_color(9), PALETTE[1]);
        assert_ne!(Marker::for_series(0), Marker::for_series(1));
        assert_eq!(Marker::for_series(8), Marker::for_series(0));
    }

    #[test]
    fn verdict_colours_are_the_page_colours() {
        let hexes = [
            VERDICT_PASS,
            VERDICT_FAIL,
            VERDICT_INCONCLUSIVE,
            VERDICT_NOT_RUN,
        ]
        .map(hex);
        assert_eq!(hexes, ["#1A7F37", "#CF222E", "#9A6700", "#6E7781"]);
    }

    #[test]
    fn sizes_have_their_widths() {
        assert_eq!(Size::Wide.width(), 720);
        assert_eq!(Size::Narrow.width(), 340);
    }

    #[test]
    fn font_sizes_come_out_exact() {
        for px in [FONT_TITLE, FONT_LABEL, FONT_TICK, FONT_LEGEND] {
            assert_eq!(backend_size(px) / 1.24, px);
        }
    }
}

/// Size and weight of a piece of text, enough to measure it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Face {
    /// Font size in CSS pixels.
    pub px: f64,
    pub bold: bool,
}

impl Face {
    pub const fn regular(px: f64) -> Face {
        Face { px, bold: false }
    }

    pub const fn bold(px: f64) -> Face {
        Face { px, bold: true }
    }

    /// Width of `text` in pixels.
    pub fn width(self, text: &str) -> f64 {
        metrics::width(text, self.px, self.bold)
    }

    /// Distance between the baselines of two lines of this face.
    pub fn line_height(self) -> i32 {
        (self.px * 1.25).round() as i32
    }
}
