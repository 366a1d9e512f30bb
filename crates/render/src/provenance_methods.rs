//! How each kind of number on a chapter's provenance page was computed, in words: the runs
//! it reads (a check's, those of the look it was decided at) and its method with its
//! parameters.

use super::Rendered;
use super::numbers::{Number, RatioSource, Statistic, Subject};
use lab_config::format::{grouped, level, p_value, percent, significant};
use lab_findings::analysis::{Analysis, CellStats};
use lab_findings::checks::multiplicity::{ALPHA, Multiplicity};
use std::collections::{HashMap, HashSet};

/// Run ids named one by one before the rest are counted.
const RUNS_NAMED: usize = 40;

/// The analysis's cells by label and metric, and by label alone (the first of its metrics).
pub(super) struct Cells<'a> {
    by_metric: HashMap<(&'a str, &'a str), &'a CellStats>,
    by_label: HashMap<&'a str, &'a CellStats>,
}

impl<'a> Cells<'a> {
    pub(super) fn of(analysis: &'a Analysis) -> Cells<'a> {
        let mut cells = Cells {
            by_metric: HashMap::new(),
            by_label: HashMap::new(),
        };
        for c in &analysis.cells {
            let key = (c.label.as_str(), c.metric.as_str());
            cells.by_metric.entry(key).or_insert(c);
            cells.by_label.entry(c.label.as_str()).or_insert(c);
        }
        cells
    }

    pub(super) fn get(&self, label: &str, metric: Option<&str>) -> Option<&'a CellStats> {
        match metric {
            Some(m) => self.by_metric.get(&(label, m)).copied(),
            None => self.by_label.get(label).copied(),
        }
    }
}

pub(super) fn ratio_runs(
    item: &Rendered,
    cells: &Cells,
    a: &str,
    b: &str,
    metric: Option<&str>,
    from: &RatioSource,
) -> String {
    let check = match from {
        RatioSource::Compared(other) => {
            return format!("this session's runs of the cell and those of session {other}");
        }
        RatioSource::Check(name) => item.findings.checks.iter().find(|c| c.name == *name),
        RatioSource::Notes => None,
    };
    let side = |label: &str| cell_runs_read(cells, label, metric, check);
    format!("{}; over {}", side(a), side(b))
}

/// The median of one cell of a check's ratio: the runs of it the check read, and how.
pub(super) fn side_derivation(item: &Rendered, cells: &Cells, number: &Number) -> (String, String) {
    let Subject::Side {
        check,
        side,
        cell,
        metric,
    } = &number.what
    else {
        return (String::new(), String::new());
    };
    let found = item.findings.checks.iter().find(|c| c.name == *check);
    let runs = cell_runs_read(cells, cell, Some(metric), found);
    let method = format!(
        "the median of these runs' values, as check \"{check}\" read it: its ratio's {side}"
    );
    (runs, method)
}

/// [`runs_read`] of the cell labelled `label`, or that it has no runs.
fn cell_runs_read(
    cells: &Cells,
    label: &str,
    metric: Option<&str>,
    check: Option<&lab_findings::checks::CheckResult>,
) -> String {
    cells
        .get(label, metric)
        .map_or_else(|| format!("no runs of {label}"), |c| runs_read(c, check))
}

/// The runs of cell `c` that `check` read: those of its runs it names (a sampled session's
/// check reads the runs of the look it was decided at), or every run of the cell.
fn runs_read(c: &CellStats, check: Option<&lab_findings::checks::CheckResult>) -> String {
    let named: HashSet<&str> = check.map_or_else(HashSet::new, |k| {
        k.runs.iter().map(String::as_str).collect()
    });
    let read: Vec<&str> = c
        .run_ids
        .iter()
        .map(|id| id.as_str())
        .filter(|id| named.contains(id))
        .collect();
    if read.is_empty() {
        return runs_of(c);
    }
    runs_named(&c.label, &read)
}

/// "the 40 valid, non-warm-up runs of nonfair threads=2 (r0003, r0011, …)".
pub(super) fn runs_of(c: &CellStats) -> String {
    let all: Vec<&str> = c.run_ids.iter().map(|id| id.as_str()).collect();
    runs_named(&c.label, &all)
}

/// [`runs_of`] for the runs `ids` of the cell labelled `label`.
fn runs_named(label: &str, ids: &[&str]) -> String {
    let named: Vec<&str> = ids.iter().take(RUNS_NAMED).copied().collect();
    let more = ids.len().saturating_sub(RUNS_NAMED);
    let rest = if more > 0 {
        format!(" and {} more", grouped(more as u64))
    } else {
        String::new()
    };
    format!(
        "the {} valid, non-warm-up run{} of {label} in runs.csv ({}{rest})",
        grouped(ids.len() as u64),
        if ids.len() == 1 { "" } else { "s" },
        named.join(", ")
    )
}

/// "{resamples} resamples, seed {seed}".
fn resampling(analysis: &Analysis) -> String {
    format!(
        "{} resamples, seed {}",
        grouped(analysis.resampling.resamples as u64),
        analysis.resampling.seed
    )
}

pub(super) fn cell_method(
    analysis: &Analysis,
    c: Option<&CellStats>,
    statistic: Statistic,
) -> String {
    let at = level(analysis.resampling.level);
    let stages = match c {
        Some(c) if c.machines.is_some() => "machines, then runs, then each run's values",
        Some(c) if c.runs.iter().any(|r| r.len() > 1) => "runs, then each run's values",
        _ => "runs",
    };
    match statistic {
        Statistic::Median => format!(
            "the median of the runs' values; {at} percentile bootstrap interval resampling {stages}, {}",
            resampling(analysis)
        ),
        Statistic::Mean => format!(
            "the mean of the runs' values; {at} BCa bootstrap interval of the mean of the run means, {}",
            resampling(analysis)
        ),
        Statistic::OrderCi => order_method(c),
        Statistic::Cv => "the standard deviation of the runs' values over their mean".into(),
        Statistic::Runs => "the runs counted".into(),
        Statistic::Min => "the smallest of the runs' values".into(),
        Statistic::Max => "the largest of the runs' values".into(),
        Statistic::P50 | Statistic::P90 | Statistic::P99 | Statistic::P999 => {
            percentile_method(analysis, statistic)
        }
        Statistic::Values => "every value the runs recorded, counted".into(),
        Statistic::ValuesMax => "the largest value the runs recorded".into(),
        Statistic::ModeLow | Statistic::ModeHigh => mode_method(c, statistic),
        Statistic::Drift => drift_method(c),
    }
}

/// The drift's method: the slope, and the trend test that called for it.
fn drift_method(c: Option<&CellStats>) -> String {
    let test = c
        .and_then(|c| c.drift.as_ref())
        .map_or_else(String::new, |d| {
            format!(
                ": S = {}, z = {}, {}",
                significant(d.test.s, 3),
                significant(d.test.z, 3),
                p_value(d.test.p_value)
            )
        });
    format!(
        "the Theil–Sen slope of the runs' values (each run's mean) against their positions in \
         the execution order, the median of the slopes between every two runs (Sen 1968); \
         shown because the Mann–Kendall test finds a trend at 5%, two-sided, with ties \
         corrected (Kendall 1975){test}"
    )
}

/// A mode's method: which group of the split, and the dip test that called for it.
fn mode_method(c: Option<&CellStats>, statistic: Statistic) -> String {
    let (side, at) = match statistic {
        Statistic::ModeLow => ("lower", 0),
        _ => ("higher", 1),
    };
    let dip = c.and_then(|c| c.modes.as_ref());
    let share = dip
        .and_then(|d| d.modes.get(at))
        .map_or_else(String::new, |m| {
            format!(", which holds {} of them", percent(m.share))
        });
    let test = dip.map_or_else(String::new, |d| {
        format!(
            ": dip {} over the critical value {}",
            significant(d.dip, 3),
            significant(d.critical, 3)
        )
    });
    format!(
        "the median of the {side} of two groups of the runs' values, split where the squared \
         deviations from each group's mean sum least{share}; the runs are split because \
         Hartigan's dip test found a second mode (Hartigan and Hartigan 1985){test}"
    )
}

/// The order-statistic interval's method, with the coverage it reached.
fn order_method(c: Option<&CellStats>) -> String {
    let reached = c
        .and_then(|c| c.exact_median_ci.as_ref())
        .map_or_else(String::new, |e| format!(", here {}", percent(e.coverage)));
    format!(
        "the median of the runs' values; the narrowest symmetric interval between two of their \
         order statistics whose binomial coverage is at least {} (Le Boudec 2010, Thm 2.1){reached}",
        level_of(c)
    )
}

/// The requested level of a cell's order-statistic interval.
fn level_of(c: Option<&CellStats>) -> String {
    c.and_then(|c| c.exact_median_ci.as_ref())
        .map_or_else(String::new, |e| level(e.interval.level))
}

/// A tail percentile's method: which quantile of every value, and its interval.
fn percentile_method(analysis: &Analysis, statistic: Statistic) -> String {
    let p = match statistic {
        Statistic::P50 => "0.5",
        Statistic::P90 => "0.9",
        Statistic::P99 => "0.99",
        _ => "0.999",
    };
    format!(
        "the type-7 {p}-quantile of every value the runs recorded; {} percentile bootstrap \
         interval resampling the values where there are at least 1/(1 − {p}) of them, {}",
        level(analysis.resampling.level),
        resampling(analysis)
    )
}

/// The runs and method of the ρ the check `name` decided on.
pub(super) fn correlation_derivation(
    item: &Rendered,
    metric: &str,
    with: &str,
    name: &str,
) -> (String, String) {
    let found = item
        .findings
        .checks
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| c.correlation.as_ref());
    let runs = found.map_or_else(String::new, |r| {
        format!(
            "the {} valid runs with both {metric} and {with}, in {} cells",
            grouped(r.points as u64),
            r.cells
        )
    });
    let at = found.map_or_else(String::new, |r| format!("{} ", level(r.level)));
    let method = format!(
        "Spearman's rank correlation of the runs' {metric} with their {with} (each run's \
         median of its values); {at}percentile bootstrap interval resampling runs within each \
         cell, {}, as check \"{name}\" decided on it",
        resampling(item.analysis)
    );
    (runs, method)
}

pub(super) fn ratio_method(item: &Rendered, from: &RatioSource) -> String {
    let analysis = item.analysis;
    let how = format!(
        "the ratio of the two medians; bootstrap interval of the ratio, {}",
        resampling(analysis)
    );
    match from {
        RatioSource::Check(name) => {
            let at = item
                .findings
                .checks
                .iter()
                .find(|c| c.name == *name)
                .and_then(|c| c.ratio.as_ref())
                .map_or_else(String::new, |r| format!(" at {}", level(r.level)));
            format!("{how}{at}, as check \"{name}\" decided on it")
        }
        RatioSource::Compared(other) => {
            format!("this session's median over that of session {other}; {how}")
        }
        RatioSource::Notes => format!("{how}, at {}", level(analysis.resampling.level)),
    }
}

/// The checks and method of one figure of the multiplicity sentence (Bonferroni's
/// inequality; Šidák 1967, JASA 62:626).
pub(super) fn multiplicity_derivation(item: &Rendered, figure: &str) -> (String, String) {
    let Some(m) = Multiplicity::of(&item.findings.checks) else {
        return (String::new(), String::new());
    };
    let k = m.decided.len();
    let names: Vec<String> = m.decided.iter().map(|n| format!("\"{n}\"")).collect();
    let checks = format!(
        "the {k} hypothesis checks decided ({} passed): {}",
        m.passed,
        names.join(", ")
    );
    let alpha = percent(ALPHA);
    let method = match figure {
        "sidak" => format!(
            "1 − (1 − α)^k with α = {alpha} and k = {k}: the chance that at least one of k \
             independent checks passes when none holds (Šidák)"
        ),
        "per-check" => format!(
            "1 − α/k with α = {alpha} and k = {k}: the confidence that keeps the chance of any \
             false pass among the k within α (Bonferroni)"
        ),
        _ => format!(
            "k × α with α = {alpha} and k = {k}, at most 100%: the chance that at least one of \
             k checks passes when none holds, whatever their dependence (Bonferroni's \
             inequality)"
        ),
    };
    (checks, method)
}

/// The runs and method of the level look `look` read its intervals at: repeated confidence
/// intervals (Jennison & Turnbull 1989, JRSS B 51(3):305–361) with the error rate spent by the
/// Lan–DeMets Pocock-type function (Lan & DeMets 1983, Biometrika 70(3):659–663).
pub(super) fn look_derivation(item: &Rendered, what: &Subject) -> (String, String) {
    let &Subject::Look {
        look,
        runs_per_cell: runs,
        before,
        max,
    } = what
    else {
        return (String::new(), String::new());
    };
    let cells = item
        .looks
        .iter()
        .find(|s| s.look == look)
        .map_or(0, |s| s.cells.len());
    let planned = format!(
        "the runs planned up to look {look}: {runs} per cell in the {cells} cells the goal \
         depends on"
    );
    let method = format!(
        "1 − (α(t) − α(t′)): α(t) − α(t′) is the share of the error rate α = 5% this look \
         spends, α(t) = α · ln(1 + (e − 1) · t) (Lan–DeMets, Pocock type), t = {runs}/{max} \
         the runs per cell by this look over the most the session could take, and \
         t′ = {before}/{max} by the look before; so that over all looks the chance that any \
         interval misses stays within α (the union bound over the looks' repeated confidence \
         intervals)"
    );
    (planned, method)
}

/// The runs and method of a cell's median in one session of the History page.
pub(super) fn session_derivation(cell: &str, session: &str, runs: usize) -> (String, String) {
    (
        format!(
            "the {runs} valid, non-warm-up run{} of {cell} in session {session}'s runs.csv",
            if runs == 1 { "" } else { "s" }
        ),
        format!(
            "the median of the runs' values in session {session}, judged by the lab.toml it ran \
             with, as the history read it"
        ),
    )
}

/// How the bounds of a ratio undisturbed are found (see lab-judge's `checks::disturbance`).
pub(super) fn undisturbed_method(analysis: &Analysis) -> String {
    format!(
        "each run's value moved to the end of the range its waiting for a CPU allows, every \
         run of one cell to the end that lowers the ratio and of the other to the end that \
         raises it, and the reverse; the ratio's interval read on both, from the same \
         bootstrap draws as the measured one ({}); the bounds are the low end of the one and \
         the high end of the other",
        resampling(analysis)
    )
}

/// The runs and method of a compared cell's median in the session before.
pub(super) fn before_derivation(cell: &str, session: &str) -> (String, String) {
    (
        format!("the valid, non-warm-up runs of {cell} in session {session}'s runs.csv"),
        format!("the median of the runs' values in session {session}, as the comparison read it"),
    )
}
