//! The chapter's figures and tables numbered in the order a reader meets them on the page,
//! each with the anchor that notes link to with `fig(name=…)` and `table(name=…)`.
//!
//! A figure is named by its chart file without `.svg` (`mops-by-threads`), a table by what it
//! holds: `checks`, `comparison`, `results-METRIC` and `percentiles`. Names are lab.toml
//! identifiers (letters, digits, `_`, `-`, `.`), so an anchor is one as it stands.

use super::escape::html_line;
use super::figures::{Figure, Place, figure_anchor};
use super::tables::Table;

/// The numbers of a chapter's figures and tables.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Numbering {
    /// Figure names, Figure 1 first.
    figures: Vec<String>,
    /// Table names, Table 1 first.
    tables: Vec<String>,
}

/// What the page shows, in the order the chapter template lays it out.
pub(crate) struct Page<'a> {
    /// The chapter's own charts: the one under the answer first, then the chart sections.
    pub figures: &'a [Figure],
    /// The charts the notes show with `chart(file=…)`, in the order their text names them;
    /// the notes come after the first chart and before the chart sections.
    pub notes_charts: &'a [String],
    /// The chart of the comparison with the previous session.
    pub compared_figure: Option<&'a Figure>,
    /// Whether the comparison's table is shown.
    pub comparison: bool,
    pub results: &'a [Table],
    /// Whether the percentiles table is shown.
    pub percentiles: bool,
}

/// The name of the table of a metric's results.
pub(crate) fn results_table(metric: &str) -> String {
    format!("results-{metric}")
}

impl Numbering {
    pub(crate) fn of(page: &Page) -> Numbering {
        let own: Vec<&str> = page.figures.iter().map(Figure::name).collect();
        let shown_in_notes = page
            .notes_charts
            .iter()
            .filter_map(|file| file.strip_suffix(".svg"))
            .filter(|name| own.contains(name));
        let in_page_order = own
            .iter()
            .copied()
            .take(1)
            .chain(shown_in_notes)
            .chain(own.iter().copied())
            .chain(page.compared_figure.map(Figure::name));
        let mut figures: Vec<String> = Vec::new();
        for name in in_page_order {
            if !figures.iter().any(|f| f == name) {
                figures.push(name.to_string());
            }
        }
        let mut tables = vec!["checks".to_string()];
        if page.comparison {
            tables.push("comparison".into());
        }
        tables.extend(
            page.results
                .iter()
                .filter(|t| t.summary.is_none())
                .map(|t| results_table(&t.metric)),
        );
        if page.percentiles {
            tables.push("percentiles".into());
        }
        Numbering { figures, tables }
    }

    pub(crate) fn figure(&self, name: &str) -> Option<usize> {
        self.figures.iter().position(|f| f == name).map(|i| i + 1)
    }

    pub(crate) fn table(&self, name: &str) -> Option<usize> {
        self.tables.iter().position(|t| t == name).map(|i| i + 1)
    }

    /// Where the chapter lays out `figure`: its number, and the anchor.
    pub(crate) fn place(&self, figure: &Figure) -> Option<Place> {
        self.figure(figure.name()).map(|number| Place {
            number,
            anchored: true,
        })
    }

    /// Each results table with its caption line.
    pub(crate) fn caption_results(&self, tables: &mut [Table]) {
        for table in tables {
            let unit = if table.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", table.unit)
            };
            let says = format!("{}{unit} in each cell.", table.metric);
            table.caption = self.table_caption(&results_table(&table.metric), &says);
        }
    }

    /// The link "Figure 3" to the figure `name`, or why there is none.
    pub(crate) fn figure_link(&self, name: &str) -> Result<String, String> {
        let number = self
            .figure(name)
            .ok_or_else(|| unknown("figure", name, &self.figures))?;
        Ok(link(&figure_anchor(name), &format!("Figure {number}")))
    }

    /// The link "Table 2" to the table `name`, or why there is none.
    pub(crate) fn table_link(&self, name: &str) -> Result<String, String> {
        let number = self
            .table(name)
            .ok_or_else(|| unknown("table", name, &self.tables))?;
        Ok(link(&table_anchor(name), &format!("Table {number}")))
    }

    /// The caption line above a table: its number, bold, and what it holds; the anchor notes
    /// link to. Empty for a table the numbering does not hold.
    pub(crate) fn table_caption(&self, name: &str, says: &str) -> String {
        self.table(name).map_or_else(String::new, |n| {
            format!(
                "<p class=\"lab-caption\" id=\"{}\"><strong>Table {n}.</strong> {}</p>",
                html_line(&table_anchor(name)),
                html_line(says)
            )
        })
    }
}

/// Why a name is not one of the chapter's figures or tables, with the names it has.
fn unknown(kind: &str, name: &str, names: &[String]) -> String {
    format!("no {kind} named \"{name}\"; {kind}s: {}", names.join(", "))
}

pub(crate) fn table_anchor(name: &str) -> String {
    format!("table-{name}")
}

/// A link to a numbered figure or table: `<a href="#figure-NAME">Figure 3</a>`.
fn link(anchor: &str, label: &str) -> String {
    format!(
        "<a href=\"#{}\">{}</a>",
        html_line(anchor),
        html_line(label)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(stem: &str) -> Figure {
        Figure {
            file: format!("{stem}.svg"),
            narrow_file: format!("{stem}-narrow.svg"),
            heading: stem.into(),
            alt: String::new(),
            caption: String::new(),
            svg: String::new(),
            narrow_svg: String::new(),
        }
    }

    #[test]
    fn figures_are_numbered_where_the_reader_first_meets_them() {
        let own = [figure("lead"), figure("a"), figure("b"), figure("c")];
        let compared = figure("compared");
        let numbering = Numbering::of(&Page {
            figures: &own,
            notes_charts: &["c.svg".into(), "lead.svg".into(), "unknown.svg".into()],
            compared_figure: Some(&compared),
            comparison: true,
            results: &[],
            percentiles: true,
        });
        assert_eq!(numbering.figures, ["lead", "c", "a", "b", "compared"]);
        assert_eq!(numbering.figure("a"), Some(3));
        assert_eq!(numbering.figure("unknown"), None);
        assert_eq!(numbering.tables, ["checks", "comparison", "percentiles"]);
        assert_eq!(
            numbering.table_caption("percentiles", "Tails <of> runs."),
            "<p class=\"lab-caption\" id=\"table-percentiles\"><strong>Table 3.</strong> Tails &lt;of&gt; runs.</p>"
        );
        assert_eq!(numbering.table_caption("results-x", "…"), "");
    }
}
