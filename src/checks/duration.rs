//! `duration`: each run took what it asked for, within a tolerance (seed 000, traps 2 and 3:
//! GC pauses stretched 2 s runs by 0.8 s; a sleeping laptop made runs look short and slow).
//! Runs outside the tolerance are excluded from every statistic.

use super::verdict::{CheckResult, Verdict};
use crate::analysis::RunView;
use crate::config::{CheckSpec, ParamValue, template::substitute};
use crate::format::seconds;
use std::collections::BTreeMap;

/// Judges every measured run and excludes those that missed the requested duration.
pub fn check(
    spec: &CheckSpec,
    expect: &str,
    tolerance: f64,
    metric: Option<&str>,
    runs: &mut [RunView],
) -> CheckResult {
    let mut outside: Vec<(String, f64, f64)> = Vec::new();
    let mut judged = 0;
    for run in runs.iter_mut().filter(|r| !r.warmup && r.is_valid()) {
        let Some(requested) = requested_seconds(expect, &run.cell.params) else {
            continue;
        };
        let measured = match metric {
            Some(m) => run.numbers(m, 0).first().copied(),
            None => Some(run.wall_s),
        };
        let Some(measured) = measured else { continue };
        judged += 1;
        if (measured - requested).abs() > tolerance * requested {
            let reason = format!(
                "took {} for a {} request (outside ±{:.1}%)",
                seconds(measured),
                seconds(requested),
                tolerance * 100.0
            );
            run.exclude(&spec.name, reason);
            outside.push((run.id.clone(), measured, requested));
        }
    }
    verdict(spec, judged, tolerance, metric, outside)
}

fn requested_seconds(expect: &str, params: &BTreeMap<String, String>) -> Option<f64> {
    let values: BTreeMap<String, ParamValue> = params
        .iter()
        .map(|(k, v)| (k.clone(), ParamValue::Text(v.clone())))
        .collect();
    substitute(expect, &values).trim().parse().ok()
}

fn verdict(
    spec: &CheckSpec,
    judged: usize,
    tolerance: f64,
    metric: Option<&str>,
    outside: Vec<(String, f64, f64)>,
) -> CheckResult {
    let source = metric.map_or_else(|| "wall time".to_string(), |m| format!("`{m}`"));
    let base = CheckResult::new(&spec.name, "duration", spec.class, Verdict::NotRun);
    if judged == 0 {
        return base.reading("no valid run to judge");
    }
    let verdict = if outside.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let evidence = format!(
        "{} of {judged} runs outside ±{:.1}% by {source}",
        outside.len(),
        tolerance * 100.0
    );
    let reading = match outside
        .iter()
        .max_by(|a, b| (a.1 - a.2).abs().total_cmp(&(b.1 - b.2).abs()))
    {
        None => format!("all {judged} runs lasted what they asked for"),
        Some((id, measured, requested)) => format!(
            "run {id} took {} for a {} request",
            seconds(*measured),
            seconds(*requested)
        ),
    };
    CheckResult { verdict, ..base }
        .evidence(evidence)
        .reading(reading)
        .runs(outside.into_iter().map(|o| o.0).collect())
}
