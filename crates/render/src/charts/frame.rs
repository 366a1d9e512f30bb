//! The frame around a plot: the title on top, the legend beside the plot (wide) or under
//! it (narrow), and the axis titles, all fitted to the room the rendition has.

use std::ops::Range;

use super::ChartError;
use super::legend::{self, Legend, LegendEntry};
use super::points::{self, Area, Overlay};
use super::style::{HEIGHT, LABEL, Size, TITLE};
use super::text::{self, Align, Anchor, Fitted, Text};

/// Space above and below the title.
const TITLE_PAD: i32 = 9;
/// Left and right margin the title keeps from the canvas edges.
const TITLE_MARGIN: i32 = 12;
/// Height of the plot (axes included) in the narrow rendition.
pub(super) const NARROW_PLOT: i32 = 300;
/// Room between the plot and a legend under it.
const LEGEND_GAP: i32 = 4;

/// A chart title, wrapped to two lines across the canvas.
pub(super) struct Title {
    full: String,
    fitted: Fitted,
    width: i32,
}

impl Title {
    pub(super) fn new(title: &str, size: Size) -> Title {
        let width = size.width() as i32;
        let room = f64::from(width - 2 * TITLE_MARGIN);
        Title {
            full: title.to_string(),
            fitted: text::fit(title, TITLE, room, 2),
            width,
        }
    }

    /// Pixels the title takes at the top of the canvas.
    pub(super) fn height(&self) -> i32 {
        2 * TITLE_PAD + self.fitted.line_count() as i32 * TITLE.line_height()
    }

    pub(super) fn draw(&self, overlay: &mut Overlay) {
        let first_line = TITLE_PAD + TITLE.line_height() / 2;
        overlay.text(
            Text::fitted(
                (self.width / 2, first_line),
                TITLE,
                &self.fitted,
                &self.full,
            )
            .anchor(Anchor::Middle)
            .align(Align::FirstLine),
        );
    }
}

/// Where the title, plot and legend of a chart with a legend go on the canvas.
pub(super) struct Framed {
    pub width: u32,
    pub height: u32,
    title: Title,
    legend: Legend,
    legend_at: (i32, i32),
    /// Left, top, width, height of the plot's area (axes and their labels included).
    plot: (i32, i32, i32, i32),
}

impl Framed {
    /// Lays out a chart whose legend lists `names`.
    pub(super) fn new(size: Size, title: &str, names: &[&str]) -> Framed {
        let title = Title::new(title, size);
        let top = title.height();
        let width = size.width() as i32;
        match size {
            Size::Wide => {
                let legend = Legend::column(names, legend::COLUMN_TEXT);
                let height = (HEIGHT as i32).max(top + legend.height + 30);
                Framed {
                    width: width as u32,
                    height: height as u32,
                    legend_at: (width - legend.width, top + 10),
                    plot: (0, top, width - legend.width, height - top),
                    title,
                    legend,
                }
            }
            Size::Narrow => {
                let legend = Legend::rows(names, width);
                let legend_top = top + NARROW_PLOT + LEGEND_GAP;
                Framed {
                    width: width as u32,
                    height: (legend_top + legend.height + 12) as u32,
                    legend_at: (0, legend_top),
                    plot: (0, top, width, NARROW_PLOT),
                    title,
                    legend,
                }
            }
        }
    }

    /// The part of `root` the plot (with its axes) is drawn in.
    pub(super) fn plot_area<'a>(&self, root: &Area<'a>) -> Area<'a> {
        let (x, y, w, h) = self.plot;
        root.clone()
            .shrink((x, y), (w.max(1) as u32, h.max(1) as u32))
    }

    /// Width of the plot's area, axes included.
    pub(super) fn plot_width(&self) -> i32 {
        self.plot.2
    }

    /// Draws the title and the legend.
    pub(super) fn draw(
        &self,
        root: &Area<'_>,
        overlay: &mut Overlay,
        entries: &[LegendEntry<'_>],
    ) -> Result<(), ChartError> {
        self.title.draw(overlay);
        self.legend.draw(root, overlay, self.legend_at, entries)
    }
}

/// The plotting rectangle of a chart in canvas pixels (inside the axes).
pub(super) struct PlotBox {
    pub x: Range<i32>,
    pub y: Range<i32>,
}

impl PlotBox {
    pub(super) fn of(range: (Range<i32>, Range<i32>)) -> PlotBox {
        PlotBox {
            x: range.0,
            y: range.1,
        }
    }

    /// Writes the x axis title under the tick labels, shortened to the plot's width.
    pub(super) fn x_title(&self, overlay: &mut Overlay, title: &str) {
        let room = f64::from(self.x.end - self.x.start);
        let fitted = text::fit(title, LABEL, room, 1);
        let at = ((self.x.start + self.x.end) / 2, self.y.end + 33);
        overlay.text(Text::fitted(at, LABEL, &fitted, title).anchor(Anchor::Middle));
    }

    /// Writes the y axis title, turned to read upwards, at the left edge of the
    /// `label_area` pixels left of the plot; shortened to the plot's height.
    pub(super) fn y_title(&self, overlay: &mut Overlay, title: &str, label_area: i32) {
        let room = f64::from(self.y.end - self.y.start);
        let fitted = text::fit(title, LABEL, room, 1);
        let at = (
            self.x.start - label_area + 9,
            (self.y.start + self.y.end) / 2,
        );
        overlay.text(
            Text::fitted(at, LABEL, &fitted, title)
                .anchor(Anchor::Middle)
                .rotate(-90),
        );
    }
}

/// Renders a titled placeholder when nothing in the input can be plotted, so a
/// report page shows why the chart is empty instead of failing.
pub(super) fn empty_chart(title: &str, why: &str, size: Size) -> Result<String, ChartError> {
    let heading = Title::new(title, size);
    let height = heading.height() + 100;
    points::render(size.width(), height as u32, |_| {
        let mut overlay = Overlay::default();
        heading.draw(&mut overlay);
        let middle = (size.width() as i32 / 2, heading.height() + 50);
        overlay.text(
            Text::line(middle, LABEL, why)
                .anchor(Anchor::Middle)
                .align(Align::Center),
        );
        Ok(overlay)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::style::{NARROW_WIDTH, WIDTH};

    #[test]
    fn empty_chart_renders() {
        for size in [Size::Wide, Size::Narrow] {
            let svg = empty_chart("t <x>", "no data", size).unwrap();
            assert!(svg.contains("no data") && svg.contains("t &lt;x&gt;"));
            assert!(svg.contains(&format!("width=\"{}\"", size.width())));
        }
    }

    #[test]
    fn narrow_frames_put_the_legend_under_the_plot() {
        let names = ["nonfair", "fair", "spin"];
        let f = Framed::new(Size::Narrow, "mops by threads", &names);
        assert_eq!(f.width, NARROW_WIDTH);
        assert!(f.legend_at.1 >= f.plot.1 + f.plot.3);
        assert!(f.height as i32 >= f.legend_at.1 + f.legend.height);
        let w = Framed::new(Size::Wide, "mops by threads", &names);
        assert_eq!((w.width, w.height), (WIDTH, HEIGHT));
        assert_eq!(w.plot.2 + w.legend.width, WIDTH as i32);
    }

    #[test]
    fn long_titles_wrap() {
        let long = "a rather long metric name that goes on by a rather long parameter name";
        assert!(
            Title::new(long, Size::Narrow).height() > Title::new("short", Size::Narrow).height()
        );
    }
}
