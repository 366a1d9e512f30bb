//! A pull request's answer where reviewers look: a Markdown comment that fits one screen
//! (a line per experiment, then each cell's ratio of head over merge-base with its interval,
//! folded), and the files the dashboards teams already run read: Bencher's metric format
//! and github-action-benchmark's custom JSON. Pure functions of the comparisons: the same
//! sessions give the same bytes.

use crate::escape::markdown;
use lab_config::format::{number, percent, ratio, ratio_bounds};
use lab_findings::bisect::short;
use lab_findings::compare::{CellChange, Change, Comparison};
use serde_json::{Map, Value, json};

/// How many cells the answer line names before it counts the rest.
const NAMED_CELLS: usize = 3;

/// A pull request measured: its head against its merge-base with the branch it goes into.
pub struct PullRequest<'a> {
    /// The branch the pull request goes into, as given (`main`).
    pub base: &'a str,
    pub base_commit: &'a str,
    pub head_commit: &'a str,
    /// Changes within ± this share count as the same.
    pub threshold: f64,
    /// Where the book is published: each experiment links to its chapter under it.
    pub url: Option<&'a str>,
    pub experiments: Vec<Measured<'a>>,
}

/// One experiment of a pull request.
pub struct Measured<'a> {
    pub name: &'a str,
    /// Its head revision compared with the merge-base, or why it was not measured.
    pub outcome: Result<&'a Comparison, String>,
    /// What measuring it used: "40 runs in 12 s on AMD EPYC 7B13 (2 CPUs)".
    pub used: Option<String>,
}

/// What an experiment's cells add up to, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Standing {
    Slower,
    Undecided,
    Faster,
    Same,
}

impl Standing {
    /// The worst of `c`'s cells: one slower cell makes the experiment slower; one cell more
    /// runs could decide leaves it undecided.
    pub fn of(c: &Comparison) -> Standing {
        c.cells
            .iter()
            .map(Standing::of_cell)
            .min()
            .unwrap_or(Standing::Undecided)
    }

    fn of_cell(x: &CellChange) -> Standing {
        match x.verdict {
            Change::Slower => Standing::Slower,
            Change::Inconclusive | Change::TooFewRuns => Standing::Undecided,
            Change::Faster => Standing::Faster,
            Change::Same => Standing::Same,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Standing::Slower => "slower",
            Standing::Undecided => "inconclusive",
            Standing::Faster => "faster",
            Standing::Same => "same",
        }
    }
}

/// The comment: a heading, a table of one row per experiment, then each measured
/// experiment's cells folded under `<details>`.
pub fn comment(pr: &PullRequest) -> String {
    let mut out = format!(
        "### lab: this pull request against `{}`\n\nThe head, `{}`, measured against `{}`, its merge-base with `{}`, their runs interleaved; a change within ±{} counts as the same.\n\n{}",
        markdown(pr.base),
        short(pr.head_commit),
        short(pr.base_commit),
        markdown(pr.base),
        percent(pr.threshold),
        if pr.url.is_some() {
            "| experiment | answer | chapter |\n|---|---|---|\n"
        } else {
            "| experiment | answer |\n|---|---|\n"
        }
    );
    for m in &pr.experiments {
        out.push_str(&answer_row(pr, m));
    }
    for m in &pr.experiments {
        if let Ok(c) = m.outcome {
            out.push_str(&details(m, c));
        }
    }
    out
}

/// The experiment's row: its name, its answer, a link to its chapter.
fn answer_row(pr: &PullRequest, m: &Measured) -> String {
    let answer = match &m.outcome {
        Ok(c) => answer(c),
        Err(why) => format!("not measured: {}", markdown(why)),
    };
    let chapter = match (pr.url, &m.outcome) {
        (Some(url), Ok(_)) => format!(" [chapter]({}/{}/) |", url.trim_end_matches('/'), m.name),
        (Some(_), Err(_)) => " |".to_string(),
        (None, _) => String::new(),
    };
    format!("| {} | {answer} |{chapter}\n", markdown(m.name))
}

/// "**slower**: work, 1.20× [1.17, 1.23]": the standing in bold, then the cells that make
/// it, or the count of cells where none stands out.
fn answer(c: &Comparison) -> String {
    let standing = Standing::of(c);
    let making: Vec<&CellChange> = c
        .cells
        .iter()
        .filter(|x| Standing::of_cell(x) == standing)
        .collect();
    let head = format!("**{}**", standing.word());
    match standing {
        Standing::Same => format!(
            "{head}: {} within ±{}",
            cells_count(c.cells.len()),
            percent(c.threshold)
        ),
        Standing::Undecided => format!(
            "{head}: {} of {} undecided; more runs could decide",
            making.len(),
            cells_count(c.cells.len())
        ),
        _ => format!("{head}: {}", named(&making)),
    }
}

fn cells_count(n: usize) -> String {
    if n == 1 {
        "1 cell".to_string()
    } else {
        format!("{n} cells")
    }
}

/// The first cells of `making`, each with its ratio, then how many more.
fn named(making: &[&CellChange]) -> String {
    let mut parts: Vec<String> = making
        .iter()
        .take(NAMED_CELLS)
        .map(|x| format!("{}, {}", markdown(&x.cell), ratio_text(x)))
        .collect();
    if making.len() > NAMED_CELLS {
        parts.push(format!("and {} more", making.len() - NAMED_CELLS));
    }
    parts.join("; ")
}

/// "1.20× [1.17, 1.23]", or why the cell has no ratio.
fn ratio_text(x: &CellChange) -> String {
    match (x.ratio, x.lo, x.hi) {
        (Some(r), Some(lo), Some(hi)) => format!("{}× {}", ratio(r), ratio_bounds(lo, hi)),
        _ => format!("too few runs ({} and {})", x.a_runs, x.b_runs),
    }
}

/// The experiment's cells folded: merge-base and head medians, the ratio and the verdict.
fn details(m: &Measured, c: &Comparison) -> String {
    let mut out = format!(
        "\n<details><summary>{}: {} per cell, head / merge-base</summary>\n\n| cell | merge-base | head | head / merge-base | verdict |\n|---|---|---|---|---|\n",
        markdown(m.name),
        markdown(&c.metric)
    );
    let median = |v: Option<f64>| v.map_or_else(|| "n/a".into(), |v| number(v, &c.unit));
    for x in &c.cells {
        out.push_str(&format!(
            "| {} | {} {unit} | {} {unit} | {} | {} |\n",
            markdown(&x.cell),
            median(x.a_median),
            median(x.b_median),
            ratio_text(x),
            markdown(&x.verdict_text(c.threshold)),
            unit = markdown(&c.unit)
        ));
    }
    if let Some(used) = &m.used {
        out.push_str(&format!("\n{}.\n", markdown(used)));
    }
    out.push_str("\n</details>\n");
    out
}

/// Bencher's metric format (BMF): per benchmark (`EXPERIMENT/CELL`), the head's median of the
/// compared metric under the metric's name, and the head / merge-base ratio with its interval
/// under `NAME-ratio`.
pub fn bencher_metrics(pr: &PullRequest) -> Value {
    let mut benchmarks = Map::new();
    for (name, c, x) in measured_cells(pr) {
        let mut measures = Map::new();
        if let Some(head) = x.b_median {
            measures.insert(slug(&c.metric), json!({ "value": head }));
        }
        if let (Some(r), Some(lo), Some(hi)) = (x.ratio, x.lo, x.hi) {
            measures.insert(
                format!("{}-ratio", slug(&c.metric)),
                json!({ "value": r, "lower_value": lo, "upper_value": hi }),
            );
        }
        if !measures.is_empty() {
            benchmarks.insert(format!("{name}/{}", x.cell), Value::Object(measures));
        }
    }
    Value::Object(benchmarks)
}

/// A measure's name as Bencher wants its slugs: lower case, a hyphen for anything else.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// github-action-benchmark's custom JSON of the cells whose metric is better `lower`
/// (`customSmallerIsBetter`) or `higher` (`customBiggerIsBetter`): the head's median, the
/// ratio against the merge-base as its range, and the verdict as its extra line.
pub fn github_benchmark(pr: &PullRequest, better: &str) -> Value {
    let entries = measured_cells(pr)
        .filter(|(_, c, _)| c.better == better)
        .filter_map(|(name, c, x)| {
            let head = x.b_median?;
            Some(json!({
                "name": format!("{name}/{}", x.cell),
                "unit": c.unit,
                "value": head,
                "range": format!("{} against {}", ratio_text(x), short(pr.base_commit)),
                "extra": format!("{}; {} and {} runs", x.verdict_text(c.threshold), x.a_runs, x.b_runs),
            }))
        })
        .collect();
    Value::Array(entries)
}

/// Every measured cell, with its experiment's name and comparison.
fn measured_cells<'a>(
    pr: &'a PullRequest,
) -> impl Iterator<Item = (&'a str, &'a Comparison, &'a CellChange)> {
    pr.experiments.iter().flat_map(|m| {
        m.outcome
            .iter()
            .flat_map(move |c| c.cells.iter().map(move |x| (m.name, *c, x)))
    })
}

#[cfg(test)]
#[path = "pull_request_tests.rs"]
mod tests;
