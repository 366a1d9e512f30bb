//! `steady`: every run reaches a steady state within its first `within` iterations (Barrett,
//! Bolz-Tereick, Killick, Mount & Tratt, "Virtual Machine Warmup Blows Hot and Cold", OOPSLA
//! 2017: runs that never settle, or settle late, make a mean of "steady" iterations describe a
//! moving target). Each valid measured run's iterations are classified by the analysis (outlier
//! iterations left out, PELT changepoints, §4.3 states); a run passes when its steady segment
//! starts at most `within` iterations into the run. A run fails when it settled later, or when
//! it was still changing after iteration `within` (no steady state). A run too short to show a
//! steady state that began by iteration `within` (its final quarter, where a change means "no
//! steady state", starts before it) cannot be judged: with no failure, such runs make the check
//! inconclusive, or not run when no run could be judged.

use super::shape::{Check, Context, Declared, Description, Outcome as Decided};
use crate::analysis::{CellStats, MIN_ITERATIONS_FOR_STEADY_STATE, RunSteadiness, SteadyStates};
use lab_config::CheckKind;
use lab_findings::checks::Verdict;
use lab_stats::SteadyState;

/// Runs named in one clause of a reading before "and N more".
const NAMED_RUNS: usize = 6;
/// Clauses (runs of one cell with one outcome) in a reading before "and N more runs".
const NAMED_GROUPS: usize = 4;

/// What one run shows about `within`. Iterations count from the run's first printed value,
/// the metric's declared `warmup_iterations` included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Its steady segment starts at this iteration, within the limit.
    Settled(usize),
    /// Its steady segment starts at this iteration, beyond the limit.
    SettledLate(usize),
    /// No steady state: it last changed at this iteration, beyond the limit.
    StillChanging(usize),
    /// It printed this many iterations: too few to tell.
    TooShort(usize),
}

impl Outcome {
    fn fails(self) -> bool {
        matches!(self, Outcome::SettledLate(_) | Outcome::StillChanging(_))
    }

    fn describe(self) -> String {
        match self {
            Outcome::Settled(at) => format!("settled at iteration {at}"),
            Outcome::SettledLate(at) => format!("settled only at iteration {at}"),
            Outcome::StillChanging(at) => {
                format!("reached no steady state: still changing at iteration {at}")
            }
            Outcome::TooShort(n) => format!("printed {n} iterations"),
        }
    }
}

/// One run's outcome, with the names the reading gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RunOutcome {
    pub run: String,
    pub cell: String,
    pub outcome: Outcome,
}

/// Iterations a run must print for a steady state that began at iteration `within` to be told
/// apart from a late change: past the declared `skip`, the steady start must fall before the
/// final quarter (Barrett et al. 2017 §4.3), and the classification needs
/// [`MIN_ITERATIONS_FOR_STEADY_STATE`].
pub(super) fn needed_iterations(skip: usize, within: usize) -> usize {
    let classified = within.saturating_sub(skip) * 4 / 3 + 1;
    skip + classified.max(MIN_ITERATIONS_FOR_STEADY_STATE)
}

/// The outcome of one classified run whose metric skipped `skip` declared warm-up iterations.
pub(super) fn judge_run(record: &RunSteadiness, skip: usize, within: usize) -> Outcome {
    let printed = skip + record.iterations;
    if record.iterations < MIN_ITERATIONS_FOR_STEADY_STATE {
        return Outcome::TooShort(printed);
    }
    match (record.state, record.steady_start, record.last_change) {
        (SteadyState::NoSteadyState, _, Some(at)) if skip + at > within => {
            Outcome::StillChanging(skip + at)
        }
        (SteadyState::NoSteadyState, _, _) | (_, None, _) => Outcome::TooShort(printed),
        (_, Some(start), _) if skip + start <= within => Outcome::Settled(skip + start),
        (_, Some(start), _) => Outcome::SettledLate(skip + start),
    }
}

/// A declared `steady` check.
pub(super) struct Steady<'a> {
    pub metric: &'a str,
    pub within: usize,
}

/// Every run's outcome and the verdict over them.
pub(super) struct Settling {
    outcomes: Vec<RunOutcome>,
    /// The declared warm-up iterations of the metric.
    skip: usize,
    verdict: Verdict,
}

impl Settling {
    fn failed(&self) -> Vec<&RunOutcome> {
        self.outcomes.iter().filter(|o| o.outcome.fails()).collect()
    }

    fn short(&self) -> Vec<&RunOutcome> {
        self.outcomes
            .iter()
            .filter(|o| matches!(o.outcome, Outcome::TooShort(_)))
            .collect()
    }
}

impl Decided for Settling {
    fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The runs that failed, or with none the runs too short to tell when others settled.
    fn runs(&self) -> Vec<String> {
        let named = match self.verdict {
            Verdict::Fail => self.failed(),
            Verdict::Inconclusive => self.short(),
            _ => Vec::new(),
        };
        named.iter().map(|o| o.run.clone()).collect()
    }
}

impl<'a> Declared<'a> for Steady<'a> {
    fn of(cx: &Context<'a>) -> Option<Self> {
        let CheckKind::Steady { metric, within } = &cx.spec.kind else {
            return None;
        };
        Some(Steady {
            metric,
            within: *within,
        })
    }
}

impl<'a> Check<'a> for Steady<'_> {
    type Outcome = Settling;
    const KIND: &'static str = "steady";

    fn decide(&self, cx: &Context<'a>) -> Result<Settling, String> {
        let skip = cx.warmup(self.metric);
        let outcomes: Vec<RunOutcome> = cx
            .in_scope()
            .into_iter()
            .filter(|c| c.metric == self.metric)
            .flat_map(|c| cell_outcomes(c, skip, self.within))
            .collect();
        self.settle(outcomes, skip)
    }

    fn describe(&self, s: &Settling) -> Description {
        let within = self.within;
        let needed = needed_iterations(s.skip, within);
        let (failed, short) = (s.failed(), s.short());
        let reading = match s.verdict {
            Verdict::Fail => format!(
                "{} of {} did not settle within {within} iterations: {}",
                failed.len(),
                runs(s.outcomes.len()),
                list(&failed)
            ),
            Verdict::NotRun => too_short_reading(&short, needed),
            Verdict::Inconclusive => format!(
                "{} settled within {within} iterations, but {}",
                runs(s.outcomes.len() - short.len()),
                too_short_reading(&short, needed)
            ),
            Verdict::Pass | Verdict::AtThreshold => pass_reading(&s.outcomes, within),
        };
        Description {
            evidence: evidence(&s.outcomes, s.skip, within),
            reading,
            ratio: None,
        }
    }
}

impl Steady<'_> {
    /// The verdict over every judged run: any failure fails; with none, runs too short to tell
    /// make it inconclusive, or not run when no run could be told.
    pub(super) fn settle(
        &self,
        outcomes: Vec<RunOutcome>,
        skip: usize,
    ) -> Result<Settling, String> {
        if outcomes.is_empty() {
            return Err(format!(
                "no valid run reported `{}`; the check needs runs printing at least {} \
                 iterations of it",
                self.metric,
                needed_iterations(skip, self.within)
            ));
        }
        let failed = outcomes.iter().any(|o| o.outcome.fails());
        let short = outcomes
            .iter()
            .filter(|o| matches!(o.outcome, Outcome::TooShort(_)))
            .count();
        let verdict = if failed {
            Verdict::Fail
        } else if short == outcomes.len() {
            Verdict::NotRun
        } else if short > 0 {
            Verdict::Inconclusive
        } else {
            Verdict::Pass
        };
        Ok(Settling {
            outcomes,
            skip,
            verdict,
        })
    }
}

/// Every run of a cell, judged; runs whose metric printed too few iterations for any
/// classification count as too short.
fn cell_outcomes(cell: &CellStats, skip: usize, within: usize) -> Vec<RunOutcome> {
    let named = |(run, outcome): (&compact_str::CompactString, Outcome)| RunOutcome {
        run: run.to_string(),
        cell: cell.label.clone(),
        outcome,
    };
    match &cell.steady {
        Some(SteadyStates { runs, .. }) if runs.len() == cell.run_ids.len() => cell
            .run_ids
            .iter()
            .zip(runs.iter().map(|r| judge_run(r, skip, within)))
            .map(named)
            .collect(),
        _ => cell
            .run_ids
            .iter()
            .zip(cell.runs.iter().map(|v| Outcome::TooShort(skip + v.len())))
            .map(named)
            .collect(),
    }
}

/// "1 run", "3 runs".
fn runs(k: usize) -> String {
    format!("{k} run{}", if k == 1 { "" } else { "s" })
}

/// "runs r0004, r0007 (jit) reached no steady state: still changing at iteration 88; …": runs
/// with the same outcome in the same cell share one clause.
fn list(outcomes: &[&RunOutcome]) -> String {
    let mut groups: Vec<(&str, Outcome, Vec<&str>)> = Vec::new();
    for o in outcomes {
        match groups
            .iter_mut()
            .find(|(cell, outcome, _)| *cell == o.cell && *outcome == o.outcome)
        {
            Some((_, _, runs)) => runs.push(&o.run),
            None => groups.push((&o.cell, o.outcome, vec![&o.run])),
        }
    }
    let mut parts: Vec<String> = groups
        .iter()
        .take(NAMED_GROUPS)
        .map(|(cell, outcome, runs)| format!("{} ({cell}) {}", run_names(runs), outcome.describe()))
        .collect();
    let hidden: usize = groups.iter().skip(NAMED_GROUPS).map(|g| g.2.len()).sum();
    if hidden > 0 {
        parts.push(format!("and {} more", runs(hidden)));
    }
    parts.join("; ")
}

/// "run r0001", "runs r0001, r0002", "runs r0001, …, r0006 and 3 more".
fn run_names(ids: &[&str]) -> String {
    match ids.len() {
        1 => format!("run {}", ids[0]),
        n if n <= NAMED_RUNS => format!("runs {}", ids.join(", ")),
        n => format!(
            "runs {} and {} more",
            ids[..NAMED_RUNS].join(", "),
            n - NAMED_RUNS
        ),
    }
}

fn too_short_reading(short: &[&RunOutcome], needed: usize) -> String {
    let printed: Vec<usize> = short
        .iter()
        .filter_map(|o| match o.outcome {
            Outcome::TooShort(n) => Some(n),
            _ => None,
        })
        .collect();
    let (lo, hi) = (
        printed.iter().min().copied().unwrap_or(0),
        printed.iter().max().copied().unwrap_or(0),
    );
    let range = if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    };
    let (verb, they) = if short.len() == 1 {
        ("is", "it prints")
    } else {
        ("are", "they print")
    };
    format!(
        "{} {verb} too short to tell ({they} {range} iterations; the check needs at least \
         {needed} per run): {}",
        runs(short.len()),
        list(short)
    )
}

fn pass_reading(outcomes: &[RunOutcome], within: usize) -> String {
    let latest = outcomes
        .iter()
        .filter_map(|o| match o.outcome {
            Outcome::Settled(at) => Some((at, o)),
            _ => None,
        })
        .max_by_key(|(at, _)| *at);
    match latest {
        Some((at, o)) => format!(
            "every run settled within {within} iterations ({}; the latest at iteration {at}, \
             run {} in {})",
            runs(outcomes.len()),
            o.run,
            o.cell
        ),
        None => format!("every run settled within {within} iterations"),
    }
}

/// The counts behind the verdict.
fn evidence(outcomes: &[RunOutcome], skip: usize, within: usize) -> String {
    let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|o| f(&o.outcome)).count();
    let mut text = format!(
        "{}: {} settled by iteration {within}, {} settled later, {} reached no steady \
         state, {} too short to tell; steady state after Barrett et al. (2017), outliers left \
         out of the changepoints",
        runs(outcomes.len()),
        count(|o| matches!(o, Outcome::Settled(_))),
        count(|o| matches!(o, Outcome::SettledLate(_))),
        count(|o| matches!(o, Outcome::StillChanging(_))),
        count(|o| matches!(o, Outcome::TooShort(_))),
    );
    if skip > 0 {
        text.push_str(&format!(
            "; iterations counted from the first printed, {skip} declared warm-up iterations \
             included"
        ));
    }
    text
}

#[cfg(test)]
#[path = "steady_tests.rs"]
mod tests;
