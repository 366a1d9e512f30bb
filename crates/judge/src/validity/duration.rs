//! `duration` as a validity rule: each run took what it asked for, within a tolerance (seed 000,
//! traps 2 and 3: GC pauses stretched 2 s runs by 0.8 s; a sleeping laptop made runs look short
//! and slow). Runs outside the tolerance are invalid, unless they overshot by no more than the
//! machine held them back: those keep their timings and the verdict is withheld, since a busy
//! machine could explain them. The check's verdict is built from this judgement by the checks
//! stage.

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
    /// Runs past the tolerance by no more than they waited for a CPU others had: the machine
    /// could explain them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub held_back: Vec<HeldBack>,
}

/// A run that overshot its request by no more than the machine held it back.
#[derive(Debug, Clone, Serialize)]
pub struct HeldBack {
    pub run: String,
    pub measured: f64,
    pub requested: f64,
    /// Seconds it waited for a CPU others had.
    pub waited: f64,
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
    let mut held_back = Vec::new();
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
        if (measured - requested).abs() <= tolerance * requested {
            continue;
        }
        let waited = waited_s(run);
        if measured > requested && measured - waited <= requested * (1.0 + tolerance) {
            held_back.push(HeldBack {
                run: run.id.clone(),
                measured,
                requested,
                waited,
            });
            continue;
        }
        let reason = format!(
            "took {} for a {} request (outside ±{:.1}%)",
            seconds(measured),
            seconds(requested),
            tolerance * 100.0
        );
        run.exclude(&spec.name, reason);
        outside.push((run.id.clone(), measured, requested));
    }
    DurationJudgement {
        spec_index,
        tolerance,
        metric: metric.map(str::to_string),
        judged,
        outside,
        held_back,
    }
}

/// Seconds the run waited for a CPU others had, where the session weighs its runs' waiting
/// (`RunView::slowed`): a run can overshoot by that much through no fault of its own. Waiting
/// never makes a run short.
fn waited_s(run: &RunView) -> f64 {
    if run.slowed > 0.0 {
        run.busy_share.unwrap_or(0.0) * run.wall_s
    } else {
        0.0
    }
}

fn requested_seconds(expect: &str, params: &BTreeMap<String, ParamValue>) -> Option<f64> {
    substitute(expect, params).trim().parse().ok()
}

#[cfg(test)]
#[path = "duration_tests.rs"]
mod tests;
