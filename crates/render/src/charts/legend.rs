//! Legends: which colour and marker is which series, as a column beside the plot (wide)
//! or as rows of entries under it (narrow). Names are wrapped to two lines and shortened
//! with a tooltip beyond that; the legend never covers data.

use plotters::prelude::*;

use super::ChartError;
use super::points::{Area, Overlay};
use super::style::{self, LEGEND, Marker};
use super::text::{self, Align, Anchor, Fitted, Text};

/// One legend entry: a series name with its colour and marker.
pub(super) struct LegendEntry<'a> {
    pub name: &'a str,
    pub color: RGBColor,
    pub marker: Marker,
    /// Whether a line sample is drawn behind the marker (for line charts).
    pub line: bool,
}

/// Inner padding of the legend, left and right.
const PAD: i32 = 12;
/// Width of the line sample and the marker on it.
const SAMPLE: i32 = 28;
/// Space between the sample and the name.
const GAP: i32 = 8;
/// Space between entries side by side.
const SPACING: i32 = 18;
/// Height of a one-line entry.
const ROW: i32 = 22;
/// Longest name a legend column shows on one line before wrapping it, in pixels.
pub(super) const COLUMN_TEXT: f64 = 170.0;
/// Lines a name may take.
const MAX_LINES: usize = 2;

/// Entries placed relative to the legend's top-left corner, and the room they take.
pub(super) struct Legend {
    items: Vec<Placed>,
    pub width: i32,
    pub height: i32,
}

struct Placed {
    /// Left end of the sample and the middle of the entry's first line.
    at: (i32, i32),
    text: Fitted,
}

impl Legend {
    /// One entry per row, names wrapped at `max_text` pixels: the legend beside a plot.
    pub(super) fn column(names: &[&str], max_text: f64) -> Legend {
        let fitted: Vec<Fitted> = names
            .iter()
            .map(|n| text::fit(n, LEGEND, max_text, MAX_LINES))
            .collect();
        let text_w = fitted.iter().map(|f| f.width(LEGEND)).fold(0.0, f64::max);
        let mut y = ROW / 2;
        let mut items = Vec::new();
        for text in fitted {
            let h = entry_height(&text);
            items.push(Placed { at: (PAD, y), text });
            y += h;
        }
        Legend::sized(
            items,
            PAD + SAMPLE + GAP + text_w.ceil() as i32 + PAD,
            y - ROW / 2,
        )
    }

    /// Entries side by side, starting a new row when the next would pass `width`: the
    /// legend under a plot. A name that needs two lines takes a row of its own.
    pub(super) fn rows(names: &[&str], width: i32) -> Legend {
        let room = width - 2 * PAD;
        let max_text = f64::from(room - SAMPLE - GAP);
        let mut items = Vec::new();
        let (mut x, mut y, mut row_h) = (0, ROW / 2, ROW);
        for name in names {
            let text = text::fit(name, LEGEND, max_text, MAX_LINES);
            let w = SAMPLE + GAP + text.width(LEGEND).ceil() as i32;
            let alone = text.line_count() > 1;
            if x > 0 && (alone || x + w > room) {
                y += row_h;
                (x, row_h) = (0, ROW);
            }
            row_h = row_h.max(entry_height(&text));
            items.push(Placed {
                at: (PAD + x, y),
                text,
            });
            x += w + SPACING;
            if alone {
                x = room;
            }
        }
        Legend::sized(items, width, y + row_h - ROW / 2)
    }

    fn sized(items: Vec<Placed>, width: i32, height: i32) -> Legend {
        if items.is_empty() {
            return Legend {
                items,
                width: 0,
                height: 0,
            };
        }
        Legend {
            items,
            width,
            height,
        }
    }

    /// Draws the entries with the legend's top-left corner at `origin` (canvas pixels):
    /// samples through plotters, names into `overlay`.
    pub(super) fn draw(
        &self,
        root: &Area<'_>,
        overlay: &mut Overlay,
        origin: (i32, i32),
        entries: &[LegendEntry<'_>],
    ) -> Result<(), ChartError> {
        for (placed, e) in self.items.iter().zip(entries) {
            let (x0, y) = (origin.0 + placed.at.0, origin.1 + placed.at.1);
            let x1 = x0 + SAMPLE;
            if e.line {
                root.draw(&PathElement::new(
                    vec![(x0, y), (x1, y)],
                    e.color.stroke_width(2),
                ))?;
            }
            style::draw_marker(root, e.marker, ((x0 + x1) / 2, y), 4, e.color)?;
            overlay.text(
                Text::fitted((x1 + GAP, y), LEGEND, &placed.text, e.name)
                    .anchor(Anchor::Start)
                    .align(Align::FirstLine),
            );
        }
        Ok(())
    }
}

fn entry_height(text: &Fitted) -> i32 {
    ROW + (text.line_count() as i32 - 1) * LEGEND.line_height()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_wraps_long_names_and_grows() {
        let names = [
            "fair",
            "a name long enough to need a second line in the legend",
        ];
        let l = Legend::column(&names, COLUMN_TEXT);
        assert_eq!(l.items[0].text.line_count(), 1);
        assert_eq!(l.items[1].text.line_count(), 2);
        assert_eq!(l.height, 2 * ROW + LEGEND.line_height());
        assert!(l.width <= PAD + SAMPLE + GAP + COLUMN_TEXT as i32 + PAD + 1);
        assert_eq!(Legend::column(&[], COLUMN_TEXT).width, 0);
    }

    #[test]
    fn rows_put_short_names_side_by_side() {
        let l = Legend::rows(&["nonfair", "fair", "spin", "ticket"], 360);
        assert!(l.items.iter().all(|p| p.at.1 == ROW / 2), "one row");
        assert_eq!(l.height, ROW);
        let many: Vec<String> = (0..12).map(|i| format!("variant number {i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let l = Legend::rows(&refs, 360);
        assert!(l.height > 3 * ROW);
        for p in &l.items {
            assert!(p.at.0 + SAMPLE + GAP + p.text.width(LEGEND) as i32 <= 360 - PAD);
        }
    }
}
