//! `order`: results must not depend on when a run executed or on the run before it (seed 003:
//! heap context, warm caches and drift made position a hidden variable). Each valid measured
//! run's value becomes a residual relative to its cell's mean (value / mean − 1), so all cells
//! pool. The mean, not the median: when carry-over splits a cell into two groups, the median
//! sits inside the larger group and hides the effect, while the mean stays between them. Two tests, Holm-adjusted (Holm 1979) and failed below `alpha`:
//! - trend: Mann–Kendall (Mann 1945; Kendall 1975) on residuals in execution order, sized by the
//!   Theil–Sen slope (Sen 1968);
//! - carry-over: Kruskal–Wallis (Kruskal & Wallis 1952) on residuals grouped by the variant of
//!   the run that executed immediately before (any cell, warm-ups included).

use super::verdict::{CheckResult, Verdict};
use crate::analysis::RunView;
use crate::config::{CheckSpec, Experiment};
use crate::format::{percent, significant};
use crate::stats::{self, KruskalWallis, MannKendall};
use std::collections::BTreeMap;

/// Fewest residuals for the trend test.
pub const MIN_ORDER_RUNS: usize = 8;
/// Fewest residuals in a predecessor group for the carry-over test (which needs two groups).
pub const MIN_GROUP_RUNS: usize = 2;

/// A residual: the run and its relative deviation from its cell's mean.
struct Residual<'a> {
    run: &'a RunView,
    value: f64,
}

pub fn check(
    spec: &CheckSpec,
    exp: &Experiment,
    metric: &str,
    alpha: f64,
    runs: &[RunView],
) -> CheckResult {
    let base = CheckResult::new(&spec.name, "order", spec.class, Verdict::NotRun);
    let skip = exp.metric(metric).map_or(0, |m| m.warmup_iterations);
    let residuals = residuals(runs, metric, skip);
    let Some(trend) = (residuals.len() >= MIN_ORDER_RUNS)
        .then(|| trend(&residuals))
        .flatten()
    else {
        return base.reading(format!(
            "{} valid runs with a cell to compare against; the trend test needs {MIN_ORDER_RUNS}",
            residuals.len()
        ));
    };
    let groups = by_predecessor(runs, &residuals);
    let carry = carry_over(&groups);
    let adjusted = stats::holm(&[
        trend.0.p_value,
        carry.as_ref().map_or(f64::NAN, |k| k.p_value),
    ]);
    let (trend_fails, carry_fails) = (adjusted[0] < alpha, adjusted[1] < alpha);
    let verdict = if trend_fails || carry_fails {
        Verdict::Fail
    } else {
        Verdict::Pass
    };
    let evidence = evidence(residuals.len(), &trend, carry.as_ref(), &groups, &adjusted);
    let reading = if carry_fails {
        carry_reading(&groups, adjusted[1])
    } else if trend_fails {
        format!(
            "values drift {} per 100 runs in execution order (Mann–Kendall, adjusted p = {})",
            signed_percent(trend.1 * 100.0),
            p(adjusted[0])
        )
    } else {
        let carry_text = if carry.is_some() {
            format!(
                "nor on the previous run's variant (adjusted p = {})",
                p(adjusted[1])
            )
        } else {
            "(carry-over not tested: it needs two predecessor variants with 2 runs each)"
                .to_string()
        };
        format!(
            "no dependence on execution position (adjusted p = {}) {carry_text}",
            p(adjusted[0])
        )
    };
    let runs = if verdict == Verdict::Fail {
        residuals.iter().map(|r| r.run.id.clone()).collect()
    } else {
        Vec::new()
    };
    CheckResult { verdict, ..base }
        .evidence(evidence)
        .reading(reading)
        .runs(runs)
}

/// Residuals of every valid measured run whose cell has at least two such runs, in execution
/// order. A run with several values is represented by their median.
fn residuals<'a>(runs: &'a [RunView], metric: &str, skip: usize) -> Vec<Residual<'a>> {
    let values: Vec<(&RunView, f64)> = runs
        .iter()
        .filter(|r| !r.warmup && r.is_valid())
        .filter_map(|r| {
            Some(r.numbers(metric, skip))
                .filter(|v| !v.is_empty())
                .map(|v| (r, stats::median(&v)))
        })
        .collect();
    let mut by_cell: BTreeMap<&crate::plan::CellKey, Vec<f64>> = BTreeMap::new();
    for (r, v) in &values {
        by_cell.entry(&r.cell).or_default().push(*v);
    }
    let means: BTreeMap<_, f64> = by_cell
        .into_iter()
        .filter(|(_, v)| v.len() >= 2)
        .map(|(c, v)| (c, v.iter().sum::<f64>() / v.len() as f64))
        .collect();
    values
        .into_iter()
        .filter_map(|(run, v)| {
            means
                .get(&run.cell)
                .filter(|m| **m > 0.0)
                .map(|m| Residual {
                    run,
                    value: v / m - 1.0,
                })
        })
        .collect()
}

/// Mann–Kendall on residuals in execution order, with the Theil–Sen slope per run position.
fn trend(residuals: &[Residual]) -> Option<(MannKendall, f64)> {
    let ys: Vec<f64> = residuals.iter().map(|r| r.value).collect();
    let xs: Vec<f64> = residuals.iter().map(|r| r.run.position as f64).collect();
    Some((
        stats::mann_kendall(&ys)?,
        stats::theil_sen_slope(&xs, &ys).unwrap_or(0.0),
    ))
}

/// Residuals grouped by the variant of the run one position earlier.
fn by_predecessor(runs: &[RunView], residuals: &[Residual]) -> BTreeMap<String, Vec<f64>> {
    let variant_at: BTreeMap<usize, &str> = runs
        .iter()
        .map(|r| (r.position, r.cell.variant.as_str()))
        .collect();
    let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in residuals {
        if let Some(v) = r
            .run
            .position
            .checked_sub(1)
            .and_then(|p| variant_at.get(&p))
        {
            groups.entry(v.to_string()).or_default().push(r.value);
        }
    }
    groups
}

/// Kruskal–Wallis over the predecessor groups with enough runs, when there are two or more.
fn carry_over(groups: &BTreeMap<String, Vec<f64>>) -> Option<KruskalWallis> {
    let usable: Vec<Vec<f64>> = groups
        .values()
        .filter(|g| g.len() >= MIN_GROUP_RUNS)
        .cloned()
        .collect();
    if usable.len() < 2 {
        return None;
    }
    // All residuals tied (a deterministic metric): no evidence of any difference.
    Some(stats::kruskal_wallis(&usable).unwrap_or(KruskalWallis {
        h: 0.0,
        df: usable.len() - 1,
        p_value: 1.0,
    }))
}

fn evidence(
    n: usize,
    trend: &(MannKendall, f64),
    carry: Option<&KruskalWallis>,
    groups: &BTreeMap<String, Vec<f64>>,
    adjusted: &[f64],
) -> String {
    let (mk, slope) = trend;
    let mut text = format!(
        "{n} runs, residual = value / cell mean − 1; trend: Mann–Kendall τ = {:.3}, p = {} (Holm-adjusted {}), Theil–Sen {} per 100 runs",
        mk.tau,
        p(mk.p_value),
        p(adjusted[0]),
        signed_percent(slope * 100.0)
    );
    match carry {
        Some(k) => text.push_str(&format!("; carry-over: Kruskal–Wallis by the previous run's variant H = {:.2}, df = {}, p = {} (Holm-adjusted {})", k.h, k.df, p(k.p_value), p(adjusted[1]))),
        None => text.push_str(&format!("; carry-over not tested: needs 2 predecessor variants with {MIN_GROUP_RUNS} runs each")),
    }
    let medians: Vec<String> = groups
        .iter()
        .map(|(v, g)| {
            format!(
                "after {v}: {} (n = {})",
                signed_percent(stats::median(g)),
                g.len()
            )
        })
        .collect();
    text.push_str(&format!("; median residual {}", medians.join(", ")));
    text
}

fn carry_reading(groups: &BTreeMap<String, Vec<f64>>, adjusted: f64) -> String {
    let mut medians: Vec<(&String, f64)> =
        groups.iter().map(|(v, g)| (v, stats::median(g))).collect();
    medians.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (low, high) = (medians[0], medians[medians.len() - 1]);
    format!(
        "runs right after a `{}` run sat {} from their cell mean, right after `{}` {}: the previous run changes the result (adjusted p = {})",
        low.0,
        signed_percent(low.1),
        high.0,
        signed_percent(high.1),
        p(adjusted)
    )
}

fn signed_percent(x: f64) -> String {
    if x >= 0.0 {
        format!("+{}", percent(x))
    } else {
        format!("−{}", percent(-x))
    }
}

fn p(x: f64) -> String {
    if x < 1e-4 {
        "< 0.0001".into()
    } else {
        significant(x, 2)
    }
}
