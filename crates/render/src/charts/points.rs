//! Compact raw-point layer and SVG post-processing shared by the charts.
//!
//! plotters writes one `<circle>` per point (~70 bytes), which blows the size
//! budget at 10,000 runs. Instead every series' points become ONE `<path>` of
//! zero-length segments (`M x y h0`) with round caps and a stroke width equal to
//! the point diameter; identical pixels are emitted once. The layer (plus the
//! text the charts fit and draw themselves) is spliced in before `</svg>`.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::ChartError;
use super::style;
use super::text::Text;

/// The drawing surface every chart draws on.
pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Shape of the marks in a point path: round-capped zero-length segments (dots)
/// or butt-capped segments one diameter long (squares).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cap {
    Round,
    Square,
}

/// Points of one series, deduplicated by pixel, in first-seen order.
struct PointPath {
    color: RGBColor,
    cap: Cap,
    opacity: f64,
    diameter: u32,
    seen: BTreeSet<(i32, i32)>,
    order: Vec<(i32, i32)>,
}

/// A line drawn above the points (e.g. a median bar that dense points would hide).
struct Segment {
    from: (i32, i32),
    to: (i32, i32),
    color: RGBColor,
    width: u32,
}

/// Elements appended after plotters has written its SVG, in this order:
/// point paths, then segments, then text.
#[derive(Default)]
pub(super) struct Overlay {
    paths: Vec<PointPath>,
    segments: Vec<Segment>,
    texts: Vec<Text>,
}

impl Overlay {
    /// Starts a new point series; subsequent [`Overlay::point`] calls go into it.
    pub(super) fn begin_series(&mut self, color: RGBColor, diameter: u32, opacity: f64) {
        self.paths.push(PointPath {
            color,
            cap: Cap::Round,
            opacity,
            diameter,
            seen: BTreeSet::new(),
            order: Vec::new(),
        });
    }

    /// Sets the cap (dot or square) of the current series; a second cue besides colour.
    pub(super) fn set_cap(&mut self, cap: Cap) {
        if let Some(path) = self.paths.last_mut() {
            path.cap = cap;
        }
    }

    /// Adds a point at backend pixel `p` to the current series (dropping exact duplicates).
    pub(super) fn point(&mut self, p: (i32, i32)) {
        if let Some(path) = self.paths.last_mut()
            && path.seen.insert(p)
        {
            path.order.push(p);
        }
    }

    /// Adds a line segment drawn on top of the points.
    pub(super) fn segment(
        &mut self,
        from: (i32, i32),
        to: (i32, i32),
        color: RGBColor,
        width: u32,
    ) {
        self.segments.push(Segment {
            from,
            to,
            color,
            width,
        });
    }

    /// Adds a block of text, drawn above everything else; it is escaped on output.
    pub(super) fn text(&mut self, text: Text) {
        self.texts.push(text);
    }

    /// Number of point marks that will be drawn (after pixel deduplication).
    #[cfg(test)]
    pub(super) fn mark_count(&self) -> usize {
        self.paths.iter().map(|p| p.order.len()).sum()
    }

    fn to_svg(&self) -> String {
        let mut out = String::new();
        let thinned = self.thinned();
        for p in thinned.iter().filter(|p| !p.order.is_empty()) {
            let c = p.color;
            let _ = write!(
                out,
                r##"<path fill="none" stroke="#{:02X}{:02X}{:02X}" stroke-opacity="{}" stroke-width="{}" stroke-linecap="{}" d=""##,
                c.0,
                c.1,
                c.2,
                p.opacity,
                p.diameter,
                if p.cap == Cap::Round { "round" } else { "butt" }
            );
            for (x, y) in &p.order {
                match p.cap {
                    Cap::Round => {
                        let _ = write!(out, "M{x} {y}h0");
                    }
                    // Renderers disagree on square caps of zero-length segments
                    // (librsvg draws nothing), so a square is a butt-capped
                    // segment as long as the stroke is wide.
                    Cap::Square => {
                        let d = p.diameter as i32;
                        let _ = write!(out, "M{} {y}h{d}", x - d / 2);
                    }
                }
            }
            out.push_str("\"/>\n");
        }
        for g in &self.segments {
            let _ = writeln!(
                out,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}"/>"#,
                g.from.0,
                g.from.1,
                g.to.0,
                g.to.1,
                style::hex(g.color),
                g.width
            );
        }
        for t in &self.texts {
            t.write_svg(&mut out);
        }
        out
    }
}

impl Overlay {
    /// The point paths, merged onto a coarser pixel grid when they hold more than
    /// [`MAX_MARKS`] marks: the smallest grid (2 px, 3 px, …) that brings them under it, each
    /// kept mark at the centre of its cell. A cloud of 100,000 runs keeps its shape and the
    /// SVG stays small; every value is in the chapter's data/runs.csv. Charts under the limit
    /// are drawn exactly as before.
    fn thinned(&self) -> Vec<PointPath> {
        let total: usize = self.paths.iter().map(|p| p.order.len()).sum();
        let mut grid = 1;
        let mut paths = self.paths.iter().map(|p| p.on_grid(1)).collect::<Vec<_>>();
        if total <= MAX_MARKS {
            return paths;
        }
        while grid < MAX_GRID_PX {
            grid += 1;
            paths = self.paths.iter().map(|p| p.on_grid(grid)).collect();
            if paths.iter().map(|p| p.order.len()).sum::<usize>() <= MAX_MARKS {
                break;
            }
        }
        paths
    }
}

impl PointPath {
    /// This path with its points snapped to the centres of `grid`-pixel cells, one per cell.
    fn on_grid(&self, grid: i32) -> PointPath {
        let mut seen = BTreeSet::new();
        let mut order = Vec::new();
        for &(x, y) in &self.order {
            let snap = |v: i32| {
                if grid == 1 {
                    v
                } else {
                    v.div_euclid(grid) * grid + grid / 2
                }
            };
            let p = (snap(x), snap(y));
            if seen.insert(p) {
                order.push(p);
            }
        }
        PointPath {
            color: self.color,
            cap: self.cap,
            opacity: self.opacity,
            diameter: self.diameter,
            seen: BTreeSet::new(),
            order,
        }
    }
}

/// Point marks a chart draws one per pixel; beyond, points merge on a coarser grid.
pub(super) const MAX_MARKS: usize = 12_000;
/// The coarsest grid points merge on.
const MAX_GRID_PX: i32 = 12;

/// Deterministic jitter: the golden-ratio sequence spreads runs evenly across
/// `width` pixels whatever their count, with no RNG (output stays byte-identical).
pub(super) fn jitter(index: usize, width: i32) -> i32 {
    if width <= 0 {
        return 0;
    }
    let frac = (index as f64 * 0.618_033_988_749_895).fract();
    ((frac - 0.5) * width as f64).round() as i32
}

/// Renders a `width`×`height` SVG: `draw` paints through plotters and returns
/// the overlay, which is appended once plotters has closed its document.
pub(super) fn render<F>(width: u32, height: u32, draw: F) -> Result<String, ChartError>
where
    F: FnOnce(&Area<'_>) -> Result<Overlay, ChartError>,
{
    let mut svg = String::new();
    let overlay = {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let overlay = draw(&root)?;
        root.present()?;
        overlay
    };
    insert_before_close(svg, &overlay.to_svg())
}

/// Splices `extra` in before the final `</svg>`.
fn insert_before_close(mut svg: String, extra: &str) -> Result<String, ChartError> {
    let at = svg
        .rfind("</svg>")
        .ok_or_else(|| ChartError::Svg("plotters output has no closing </svg>".into()))?;
    svg.insert_str(at, extra);
    Ok(svg)
}

/// Point marks in an SVG: one `M` per mark inside the point paths (for tests).
#[cfg(test)]
pub(super) fn count_marks(svg: &str) -> usize {
    svg.lines()
        .filter(|l| l.contains("stroke-linecap="))
        .map(|l| l.matches('M').count())
        .sum()
}

/// Checks what every rendition promises: a narrow canvas no wider than a phone's column, a
/// `viewBox` matching the canvas, and no text smaller than the tick font (for tests). (A wide
/// strip chart of many cells grows wider than [`style::WIDTH`] to keep its columns apart.)
#[cfg(test)]
pub(super) fn assert_rendition(svg: &str, size: style::Size) {
    let head = &svg[..svg.find('>').expect("an <svg> tag")];
    let attr = |name: &str| -> String {
        let start = head.find(&format!(" {name}=\"")).expect(name) + name.len() + 3;
        head[start..].split('"').next().unwrap().to_string()
    };
    let (w, h) = (attr("width"), attr("height"));
    if size == style::Size::Narrow {
        assert!(
            w.parse::<u32>().unwrap() <= size.width(),
            "narrow chart is {w} wide"
        );
    }
    assert_eq!(attr("viewBox"), format!("0 0 {w} {h}"));
    let sizes = svg.split("font-size=\"").skip(1).map(|rest| {
        let v = rest.split('"').next().unwrap();
        v.parse::<f64>()
            .unwrap_or_else(|_| panic!("font-size {v:?}"))
    });
    let mut seen = 0;
    for px in sizes {
        assert!(px >= style::FONT_TICK, "{size:?} chart has {px} px text");
        seen += 1;
    }
    assert!(seen > 0, "no text at all");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_has_one_segment_per_distinct_pixel() {
        let mut o = Overlay::default();
        o.begin_series(style::PALETTE[0], 3, 0.5);
        for p in [(1, 2), (3, 4), (1, 2), (5, 6)] {
            o.point(p);
        }
        assert_eq!(o.mark_count(), 3);
        let svg = o.to_svg();
        assert_eq!(svg.matches("h0").count(), 3);
        assert_eq!(svg.matches("<path").count(), 1);
        assert!(svg.contains("M1 2h0M3 4h0M5 6h0"));
        assert!(svg.contains(r#"stroke-linecap="round""#));
    }

    #[test]
    fn overlay_text_is_escaped() {
        let mut o = Overlay::default();
        let hostile = "<script>alert(1)</script> & 'x'";
        o.text(Text::line((0, 0), style::TICK, hostile).rotate(-45));
        let svg = o.to_svg();
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &apos;x&apos;"));
        assert!(!svg.contains("<script>"));
    }

    #[test]
    fn jitter_is_bounded_and_deterministic() {
        for i in 0..100 {
            let j = jitter(i, 10);
            assert!((-5..=5).contains(&j));
            assert_eq!(j, jitter(i, 10));
        }
        assert_eq!(jitter(3, 0), 0);
    }

    #[test]
    fn overlay_lands_before_closing_tag() {
        let svg = render(100, 100, |_| {
            let mut o = Overlay::default();
            o.begin_series(style::PALETTE[1], 4, 1.0);
            o.point((10, 10));
            Ok(o)
        })
        .unwrap();
        let path_at = svg.find("M10 10h0").unwrap();
        assert!(path_at < svg.rfind("</svg>").unwrap());
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn a_cloud_past_the_limit_merges_on_a_grid_and_a_small_one_does_not() {
        let cloud = |n: i32| {
            let mut o = Overlay::default();
            o.begin_series(style::series_color(0), 5, 0.75);
            for i in 0..n {
                o.point((i % 1000, i / 1000));
            }
            o
        };
        let big = cloud(100_000);
        assert_eq!(big.mark_count(), 100_000);
        let kept: usize = big.thinned().iter().map(|p| p.order.len()).sum();
        assert!(kept <= MAX_MARKS && kept > MAX_MARKS / 4, "{kept}");
        assert!(big.to_svg().len() < 200_000, "{}", big.to_svg().len());
        let small = cloud(500);
        let kept: Vec<(i32, i32)> = small.thinned()[0].order.clone();
        assert_eq!(
            kept, small.paths[0].order,
            "under the limit every pixel stays"
        );
    }
}
