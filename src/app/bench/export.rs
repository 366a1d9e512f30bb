//! hyperfine's export files written from a `lab bench` session, in hyperfine 1.20's own shapes
//! so that scripts and documents reading them keep working: `--export-json` in the 1.x layout
//! (seconds, one entry per timed run in `times`, `memory_usage_byte` and `exit_codes`,
//! `parameters` as `{"NAME": "VALUE"}`), `--export-csv` as its columns, and its markup tables,
//! `--export-markdown`, `--export-asciidoc` and `--export-orgmode`: one table in three
//! syntaxes ([`markup`]), shaped by [`Markup`] as hyperfine's `--time-unit`, `--sort` and
//! `--reference` shape it. Only valid timed runs are written, as hyperfine writes only the runs
//! it timed. A figure of no runs is never invented: a command with no timed run has `null` for
//! its mean and the rest in JSON, empty fields in CSV and a dash in the tables.

mod markup;
#[cfg(test)]
mod tests;

use super::figures::{Timed, mean, median, range, sd};
use super::output::Report;
pub(super) use super::shown::{SortOrder, TimeUnit};
use markup::Syntax;
use serde::Serialize;
use std::collections::BTreeMap;

/// What the "Relative" column divides each mean by.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) enum RelativeTo {
    /// The fastest mean over every command and parameter set: hyperfine's choice when no
    /// `--reference` is given.
    #[default]
    Fastest,
    /// The mean of the command of this label at the same parameter values (`--reference`);
    /// a ratio below 1 is faster than the reference.
    Reference(String),
}

impl RelativeTo {
    /// The column's header.
    fn header(&self) -> &'static str {
        match self {
            RelativeTo::Fastest => "Relative to fastest",
            RelativeTo::Reference(_) => "Relative to reference",
        }
    }
}

/// How a markup table is shaped; the default is hyperfine's without options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Markup {
    /// The unit of every time; None picks the one that suits the first command's mean.
    pub unit: Option<TimeUnit>,
    /// The order of the rows.
    pub sort: SortOrder,
    /// What the "Relative" column divides each mean by.
    pub relative_to: RelativeTo,
}

/// hyperfine's `--export-json` layout, the commands in the report's order.
pub(super) fn json(report: &Report) -> String {
    let results = report.timed.iter().map(JsonResult::of).collect();
    let mut text =
        serde_json::to_string_pretty(&JsonExport { results }).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    text
}

/// hyperfine's `--export-csv` columns: command, mean, stddev, median, user, system, min, max,
/// then one `parameter_NAME` column per parameter (those of the first command, as hyperfine
/// names them).
pub(super) fn csv(report: &Report) -> String {
    let names: Vec<&String> = report
        .timed
        .first()
        .map(|t| t.params.keys().collect())
        .unwrap_or_default();
    let header = [
        "command", "mean", "stddev", "median", "user", "system", "min", "max",
    ]
    .map(String::from)
    .into_iter()
    .chain(names.iter().map(|n| format!("parameter_{n}")));
    let mut writer = csv::Writer::from_writer(Vec::new());
    let _ = writer.write_record(header.collect::<Vec<_>>());
    for t in &report.timed {
        let _ = writer.write_record(csv_record(t, &names));
    }
    String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// hyperfine's `--export-markdown` table.
pub(super) fn markdown(report: &Report, options: &Markup) -> String {
    markup::table(report, options, Syntax::Markdown)
}

/// hyperfine's `--export-asciidoc` table.
pub(super) fn asciidoc(report: &Report, options: &Markup) -> String {
    markup::table(report, options, Syntax::Asciidoc)
}

/// hyperfine's `--export-orgmode` table.
pub(super) fn orgmode(report: &Report, options: &Markup) -> String {
    markup::table(report, options, Syntax::Orgmode)
}

/// hyperfine's summary figures of a command that has timed runs, in seconds.
struct Figures {
    mean: f64,
    /// None for a single run, as hyperfine leaves it.
    stddev: Option<f64>,
    median: f64,
    user: f64,
    system: f64,
    min: f64,
    max: f64,
}

impl Figures {
    /// The figures of `t`'s timed runs; none when it has none.
    fn of(t: &Timed) -> Option<Figures> {
        if t.times.is_empty() {
            return None;
        }
        let (min, max) = range(&t.times);
        Some(Figures {
            mean: mean(&t.times),
            stddev: (t.times.len() > 1).then(|| sd(&t.times)),
            median: median(&t.times),
            user: mean(&t.user),
            system: mean(&t.system),
            min,
            max,
        })
    }
}

/// hyperfine's `--export-json` document (1.x, which its 2.0 still reads and lab imports).
#[derive(Serialize)]
struct JsonExport<'a> {
    results: Vec<JsonResult<'a>>,
}

/// One entry of `results`, its fields in hyperfine's order.
#[derive(Serialize)]
struct JsonResult<'a> {
    command: &'a str,
    mean: Option<f64>,
    stddev: Option<f64>,
    median: Option<f64>,
    user: Option<f64>,
    system: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    times: &'a [f64],
    memory_usage_byte: &'a [u64],
    exit_codes: &'a [Option<i32>],
    /// Left out for a command without parameters, as hyperfine leaves it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<&'a BTreeMap<String, String>>,
}

impl<'a> JsonResult<'a> {
    fn of(t: &'a Timed) -> JsonResult<'a> {
        let f = Figures::of(t);
        let figure = |pick: fn(&Figures) -> f64| f.as_ref().map(pick);
        JsonResult {
            command: &t.command,
            mean: figure(|f| f.mean),
            stddev: f.as_ref().and_then(|f| f.stddev),
            median: figure(|f| f.median),
            user: figure(|f| f.user),
            system: figure(|f| f.system),
            min: figure(|f| f.min),
            max: figure(|f| f.max),
            times: &t.times,
            memory_usage_byte: &t.memory_bytes,
            exit_codes: &t.exit_codes,
            parameters: (!t.params.is_empty()).then_some(&t.params),
        }
    }
}

/// One command's CSV row; its figures empty when it has no timed run.
fn csv_record(t: &Timed, names: &[&String]) -> Vec<String> {
    let figures = Figures::of(t).map_or_else(Default::default, |f| {
        // hyperfine writes 0 for the spread of a single run.
        let stddev = f.stddev.unwrap_or(0.0);
        [f.mean, stddev, f.median, f.user, f.system, f.min, f.max].map(|x| x.to_string())
    });
    std::iter::once(t.command.clone())
        .chain(figures)
        .chain(
            names
                .iter()
                .map(|n| t.params.get(*n).cloned().unwrap_or_default()),
        )
        .collect()
}
