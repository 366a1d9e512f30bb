//! analysis.json: every statistic and verdict of a chapter. Up to [`RUNS_IN_FULL`] runs it
//! repeats each run and its values; past that it keeps the summaries and points at the raw
//! CSV files beside it, so a session of 100,000 runs gives a file of kilobytes, not 50 MB.

use anyhow::Result;
use lab_findings::analysis::{Analysis, CellStats};
use lab_findings::checks::CheckResult;
use lab_store::{RUNS, SAMPLES};
use serde::Serialize;

/// Sessions with more runs than this list them in data/runs.csv and data/samples.csv only.
pub const RUNS_IN_FULL: usize = 5_000;

/// What analysis.json holds: the analysis, every verdict, and the experiment's title.
#[derive(Serialize)]
struct ChapterRecord<'a> {
    title: &'a str,
    #[serde(flatten)]
    analysis: &'a Analysis,
    checks: &'a [CheckResult],
    multiplicity: &'a Option<String>,
}

/// The same fields for a large session: cells without their per-run lists, and the runs
/// reduced to a pointer at the raw data and the invalid ones.
#[derive(Serialize)]
struct SummaryRecord<'a> {
    title: &'a str,
    experiment: &'a str,
    session: &'a str,
    manifest: &'a lab_store::Manifest,
    resampling: &'a lab_findings::analysis::Resampling,
    counts: &'a lab_findings::analysis::Counts,
    cell_keys: &'a [lab_config::plan::CellKey],
    cells: Vec<serde_json::Value>,
    runs: RawRuns<'a>,
    checks: Vec<serde_json::Value>,
    multiplicity: &'a Option<String>,
}

/// Where the runs are, and the runs left out of the statistics with their reasons.
#[derive(Serialize)]
struct RawRuns<'a> {
    count: usize,
    runs_csv: String,
    samples_csv: String,
    invalid: Vec<&'a lab_findings::analysis::RunView>,
}

/// The text of analysis.json (pretty JSON, not yet made inert).
pub fn chapter_json(
    title: &str,
    analysis: &Analysis,
    checks: &[CheckResult],
    multiplicity: &Option<String>,
) -> Result<String> {
    if analysis.runs.len() <= RUNS_IN_FULL {
        let record = ChapterRecord {
            title,
            analysis,
            checks,
            multiplicity,
        };
        return Ok(serde_json::to_string_pretty(&record)?);
    }
    let record = SummaryRecord {
        title,
        experiment: &analysis.experiment,
        session: &analysis.session,
        manifest: &analysis.manifest,
        resampling: &analysis.resampling,
        counts: &analysis.counts,
        cell_keys: &analysis.cell_keys,
        cells: analysis
            .cells
            .iter()
            .map(cell_summary)
            .collect::<Result<_>>()?,
        runs: RawRuns {
            count: analysis.runs.len(),
            runs_csv: format!("data/{RUNS}"),
            samples_csv: format!("data/{SAMPLES}"),
            invalid: analysis.runs.iter().filter(|r| !r.is_valid()).collect(),
        },
        checks: checks.iter().map(check_summary).collect::<Result<_>>()?,
        multiplicity,
    };
    Ok(serde_json::to_string_pretty(&record)?)
}

/// Runs a check lists by id in a large session's analysis.json; beyond, it counts them.
const LISTED_RUNS: usize = 100;

/// A check with its list of runs replaced by their number when the list is long.
fn check_summary(check: &CheckResult) -> Result<serde_json::Value> {
    let mut value = serde_json::to_value(check)?;
    if let Some(map) = value
        .as_object_mut()
        .filter(|_| check.runs.len() > LISTED_RUNS)
    {
        map.remove("runs");
        map.insert("runs_count".into(), check.runs.len().into());
        map.insert("runs_csv".into(), format!("data/{RUNS}").into());
    }
    Ok(value)
}

/// A cell's statistics without the ids and positions of its runs (runs.csv has them).
fn cell_summary(cell: &CellStats) -> Result<serde_json::Value> {
    let mut value = serde_json::to_value(cell)?;
    if let Some(map) = value.as_object_mut() {
        map.remove("run_ids");
        map.remove("positions");
    }
    Ok(value)
}
