//! hyperfine's markup tables, one table in three syntaxes (Markdown, AsciiDoc, Emacs
//! org-mode): per command and parameter set its mean ± σ, min and max in one time unit, and
//! its mean relative to the fastest result or to the reference's at the same parameter values,
//! the ratio's ± by first-order propagation of the two means' spreads. The options ([`Markup`])
//! and the entry points are the parent's.

use super::{Figures, Markup, RelativeTo, SortOrder, TimeUnit};
use crate::app::bench::figures::{Timed, mean};
use crate::app::bench::output::Report;
use lab_config::template::placeholders;
use lab_config::units::Seconds;

/// What a table shows where there is no figure: a command with no timed run, or no reference
/// result to compare with.
const NONE: &str = "—";

/// The markup languages a table is written in, each as hyperfine writes it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Syntax {
    Markdown,
    Asciidoc,
    Orgmode,
}

impl Syntax {
    /// What comes before the header row: AsciiDoc's column alignments (the command left, the
    /// figures right) and table delimiter.
    fn opening(self) -> &'static str {
        match self {
            Syntax::Asciidoc => "[cols=\"<,>,>,>,>\"]\n|===",
            Syntax::Markdown | Syntax::Orgmode => "",
        }
    }

    /// What comes between the header row and the rows; Markdown's holds the alignments.
    fn divider(self) -> &'static str {
        match self {
            Syntax::Markdown => "|:---|---:|---:|---:|---:|\n",
            Syntax::Asciidoc => "",
            Syntax::Orgmode => "|--+--+--+--+--|\n",
        }
    }

    /// What comes after the last row.
    fn closing(self) -> &'static str {
        match self {
            Syntax::Asciidoc => "|===\n",
            Syntax::Markdown | Syntax::Orgmode => "",
        }
    }

    /// One row, with hyperfine's spacing: AsciiDoc puts each cell on its own line and a blank
    /// line between rows.
    fn row(self, cells: &[String; 5]) -> String {
        match self {
            Syntax::Markdown => format!("| {} |\n", cells.join(" | ")),
            Syntax::Asciidoc => format!("\n| {} \n", cells.join(" \n| ")),
            Syntax::Orgmode => format!("| {}  |  {} |\n", cells[0], cells[1..].join(" |  ")),
        }
    }

    /// A command set as code, its `|` escaped so that it cannot end the cell (as hyperfine
    /// does in every syntax). A backtick becomes `'` where backticks delimit the code.
    fn code(self, command: &str) -> String {
        let command = command.replace('|', "\\|");
        match self {
            Syntax::Markdown | Syntax::Asciidoc => format!("`{}`", command.replace('`', "'")),
            Syntax::Orgmode => format!("={command}="),
        }
    }
}

/// The table of `report`'s commands in `syntax`.
pub(super) fn table(report: &Report, options: &Markup, syntax: Syntax) -> String {
    let unit = options.unit.unwrap_or_else(|| unit_of(&report.timed));
    let symbol = unit.short_name();
    let header = [
        "Command".to_string(),
        format!("Mean [{symbol}]"),
        format!("Min [{symbol}]"),
        format!("Max [{symbol}]"),
        options.relative_to.header().to_string(),
    ];
    let mut out = format!("{}{}", syntax.opening(), syntax.row(&header));
    out.push_str(syntax.divider());
    for t in ordered(&report.timed, options.sort) {
        let relative = relative(t, &report.timed, &options.relative_to);
        out.push_str(&syntax.row(&cells(t, unit, syntax, relative)));
    }
    out.push_str(syntax.closing());
    out
}

/// hyperfine's unit when none is asked for: the one that suits the first command's mean (the
/// first that has timed runs, as here a command may have none); seconds when none has.
fn unit_of(timed: &[Timed]) -> TimeUnit {
    timed
        .iter()
        .find(|t| !t.times.is_empty())
        .map_or(TimeUnit::Second, |t| TimeUnit::of(Seconds(mean(&t.times))))
}

/// The rows in `sort`'s order: as given, or by mean with the commands of no timed run last
/// (a stable sort, so that equal means keep the order they were given in).
fn ordered(timed: &[Timed], sort: SortOrder) -> Vec<&Timed> {
    let mut rows: Vec<&Timed> = timed.iter().collect();
    match sort {
        SortOrder::Auto | SortOrder::Command => {}
        SortOrder::MeanTime => {
            let key = |t: &Timed| Figures::of(t).map_or(f64::INFINITY, |f| f.mean);
            rows.sort_by(|a, b| key(a).total_cmp(&key(b)));
        }
    }
    rows
}

/// One command's cells: its name, mean ± σ (the mean alone for a single run), min, max and
/// `relative`.
fn cells(t: &Timed, unit: TimeUnit, syntax: Syntax, relative: String) -> [String; 5] {
    let command = syntax.code(&named(t));
    let Some(f) = Figures::of(t) else {
        return [command, NONE.into(), NONE.into(), NONE.into(), relative];
    };
    let value = |x: f64| unit.format_value(Seconds(x));
    let mean = match f.stddev {
        Some(s) => format!("{} ± {}", value(f.mean), value(s)),
        None => value(f.mean),
    };
    [command, mean, value(f.min), value(f.max), relative]
}

/// The command as hyperfine names it in a table: with the parameters its label does not show
/// appended, `cmd (n = 10, m = 2)`, so that the rows of different values stay apart.
fn named(t: &Timed) -> String {
    let shown = placeholders(&t.label).unwrap_or_default();
    let unused: Vec<String> = t
        .params
        .iter()
        .filter(|(name, _)| !shown.contains(name))
        .map(|(name, value)| format!("{name} = {value}"))
        .collect();
    if unused.is_empty() {
        t.command.clone()
    } else {
        format!("{} ({})", t.command, unused.join(", "))
    }
}

/// `t`'s mean divided by its baseline's, to two decimals. The baseline's own row reads `1.00`
/// with no spread; a dash where there is nothing to divide (no timed run on either side, or a
/// mean of zero).
fn relative(t: &Timed, timed: &[Timed], to: &RelativeTo) -> String {
    let Some(base) = baseline(t, timed, to) else {
        return NONE.into();
    };
    if std::ptr::eq(t, base) {
        return "1.00".into();
    }
    let (Some(f), Some(b)) = (Figures::of(t), Figures::of(base)) else {
        return NONE.into();
    };
    if f.mean == 0.0 || b.mean == 0.0 {
        return NONE.into();
    }
    let ratio = f.mean / b.mean;
    // First-order propagation of uncertainty for a quotient of independent values (covariance
    // taken as 0): σ_r = r·√((σ_a/a)² + (σ_b/b)²), as hyperfine's relative_speed.rs computes it.
    // A single run has no σ, and then neither has the ratio.
    match (f.stddev, b.stddev) {
        (Some(sa), Some(sb)) => {
            let spread = ratio * ((sa / f.mean).powi(2) + (sb / b.mean).powi(2)).sqrt();
            format!("{ratio:.2} ± {spread:.2}")
        }
        _ => format!("{ratio:.2}"),
    }
}

/// What `t` is compared with: the fastest result over every command and parameter set (the
/// first of equal means), or the reference's result at `t`'s parameter values; only results
/// with timed runs count.
fn baseline<'a>(t: &Timed, timed: &'a [Timed], to: &RelativeTo) -> Option<&'a Timed> {
    let mut measured = timed.iter().filter(|r| !r.times.is_empty());
    match to {
        RelativeTo::Fastest => measured.min_by(|a, b| mean(&a.times).total_cmp(&mean(&b.times))),
        RelativeTo::Reference(label) => {
            measured.find(|r| &r.label == label && r.params == t.params)
        }
    }
}
