//! `duration` as a validity rule: each run took what it asked for, within a tolerance (seed 000,
//! traps 2 and 3: GC pauses stretched 2 s runs by 0.8 s; a sleeping laptop made runs look short
//! and slow). Runs outside the tolerance are invalid; the check's verdict is built from this
//! judgement by the checks stage.

use super::RunView;
use lab_config::format::seconds;
use lab_config::{CheckSpec, ParamValue, template::substitute};
use serde::Serialize;
use std::collections::BTreeMap;

/// What one declared duration check found.
#[derive(Debug, Clone, Serialize)]
pub struct DurationJudgement {
    /// The check's index among the declared checks.
    pub spec_index: usize,
    pub tolerance: f64,
    pub metric: Option<String>,
    /// How many measured, otherwise valid runs had a requested duration to compare with.
    pub judged: usize,
    /// (run id, measured seconds, requested seconds) of every run outside the tolerance.
    pub outside: Vec<(String, f64, f64)>,
}

/// Judges every measured run and marks invalid those that missed the requested duration.
pub(super) fn judge(
    spec_index: usize,
    spec: &CheckSpec,
    expect: &str,
    tolerance: f64,
    metric: Option<&str>,
    runs: &mut [RunView],
) -> DurationJudgement {
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
    DurationJudgement {
        spec_index,
        tolerance,
        metric: metric.map(str::to_string),
        judged,
        outside,
    }
}

fn requested_seconds(expect: &str, params: &BTreeMap<String, ParamValue>) -> Option<f64> {
    substitute(expect, params).trim().parse().ok()
}
