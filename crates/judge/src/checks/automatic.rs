//! The automatic checks' verdicts on a session: each judged on every finished run (warm-ups
//! included) from the problems the validity stage recorded, or not run where the record lacks
//! what it needs.

use crate::analysis::RunView;
use crate::validity::automatic;
use lab_config::CheckClass;
use lab_findings::checks::{CheckResult, Verdict};
use lab_store::Calibration;

/// The runs a valid re-run repeats: busy runs whose measurement was taken again (sessions
/// recorded before lab kept disturbed runs' timings ran them again). Found once, so that
/// judging each busy run is a lookup, not a scan of every run.
fn rerun_validly(runs: &[RunView]) -> std::collections::HashSet<&str> {
    runs.iter()
        .filter(|r| r.is_valid())
        .filter_map(|r| r.repeats.as_deref())
        .collect()
}

/// "; the busiest run, r0042, lost 12.0% of its wall time to others (140 of 140 runs judged)".
fn busiest(runs: &[RunView]) -> String {
    let judged: Vec<&RunView> = runs.iter().filter(|r| r.busy_share.is_some()).collect();
    let Some(top) = judged.iter().max_by(|a, b| {
        a.busy_share
            .partial_cmp(&b.busy_share)
            .unwrap_or(std::cmp::Ordering::Equal)
    }) else {
        return String::new();
    };
    format!(
        "; the busiest run, {}, lost {} of its wall time to others ({} of {} runs judged)",
        top.id,
        lab_config::format::percent(top.busy_share.unwrap_or(0.0)),
        judged.len(),
        runs.len()
    )
}

/// The automatic checks, one result each, judged on every finished run (warm-ups included).
/// `calibration` is the session's; without one, runs cannot be judged too short to time. An
/// imported session (`imported` names the tool) is judged only on what its files record:
/// metrics, and exits where `exits_recorded`.
pub fn automatic_results(
    runs: &[RunView],
    calibration: Option<&Calibration>,
    imported: Option<&str>,
    exits_recorded: bool,
) -> Vec<CheckResult> {
    automatic::CHECK_NAMES
        .iter()
        .map(|name| match (*name, imported) {
            (automatic::REPORTED | automatic::CONFIG_ECHO, _) | (_, None) => {
                judged_automatic(name, runs, calibration)
            }
            (automatic::EXITED, Some(_)) if exits_recorded => {
                judged_automatic(name, runs, calibration)
            }
            (_, Some(tool)) => automatic_not_run(
                name,
                &format!("lab did not run these processes: {tool} measured them, and its files do not record this"),
            ),
        })
        .collect()
}

/// An automatic check judged on runs lab ran itself, or not run where the record lacks what
/// it needs.
fn judged_automatic(
    name: &'static str,
    runs: &[RunView],
    calibration: Option<&Calibration>,
) -> CheckResult {
    match name {
        automatic::TOO_SHORT if calibration.is_none() => automatic_not_run(
            name,
            "the session recorded no calibration of spawn cost and timer",
        ),
        automatic::CONFIG_ECHO if !runs.iter().any(|r| r.echoed_config) => automatic_not_run(
            name,
            "no run printed a `config` object; print {\"config\": {...}} to have it checked",
        ),
        automatic::QUIET if !runs.iter().any(|r| r.busy_share.is_some()) => automatic_not_run(
            name,
            "no run recorded what else the machine did (a session recorded before lab measured it, or /proc/stat could not be read)",
        ),
        automatic::APART if runs.iter().all(|r| r.overlapped.is_empty()) => automatic_not_run(
            name,
            "every run executed alone, so none could share a CPU with another",
        ),
        _ => automatic_result(name, runs, calibration),
    }
}

/// Marks the automatic check `name` among `results` not run, for `why`.
pub(super) fn not_run_where(results: &mut [CheckResult], name: &str, why: &str) {
    for result in results.iter_mut().filter(|r| r.name == name) {
        *result = automatic_not_run(name, why);
    }
}

fn automatic_not_run(name: &str, why: &str) -> CheckResult {
    let mut result =
        CheckResult::new(name, "automatic", CheckClass::Validity, Verdict::NotRun).reading(why);
    result.automatic = true;
    result
}

/// The runs that failed one automatic check, and how many busy runs were measured again.
struct Failures<'a> {
    name: &'a str,
    runs: &'a [RunView],
    failing: Vec<(&'a RunView, &'a String)>,
    replaced: usize,
}

impl<'a> Failures<'a> {
    /// The runs that recorded `name` among their failed checks, with the problem each had. A
    /// busy run that ran again on a quiet machine does not count against `QUIET`.
    fn of(name: &'a str, runs: &'a [RunView]) -> Self {
        let failing: Vec<(&RunView, &String)> = runs
            .iter()
            .flat_map(|r| {
                r.failed_checks
                    .iter()
                    .zip(&r.problems)
                    .filter(|(c, _)| c.as_str() == name)
                    .map(move |(_, p)| (r, p))
            })
            .collect();
        let (failing, replaced): (Vec<_>, Vec<_>) = if name == automatic::QUIET {
            let rerun = rerun_validly(runs);
            failing
                .into_iter()
                .partition(|(r, _)| !rerun.contains(r.repeats.as_deref().unwrap_or(r.id.as_str())))
        } else {
            (failing, Vec::new())
        };
        Failures {
            name,
            runs,
            failing,
            replaced: replaced.len(),
        }
    }

    fn verdict(&self) -> Verdict {
        match (self.runs.is_empty(), self.failing.is_empty()) {
            (true, _) => Verdict::NotRun,
            (false, true) => Verdict::Pass,
            (false, false) => Verdict::Fail,
        }
    }

    fn evidence(&self, calibration: Option<&Calibration>) -> String {
        let (name, runs) = (self.name, self.runs);
        let mut evidence = match self.failing.len() {
            0 => format!("none of {} runs failed", runs.len()),
            k => format!("{k} of {} runs failed", runs.len()),
        };
        if let Some(c) = calibration.filter(|_| name == automatic::TOO_SHORT) {
            evidence.push_str(&too_short_evidence(runs, c));
        }
        if name == automatic::QUIET {
            evidence.push_str(&busiest(runs));
        }
        if name == automatic::CONFIG_ECHO {
            evidence.push_str(&format!(
                "; {} runs echoed a configuration",
                runs.iter().filter(|r| r.echoed_config).count()
            ));
        }
        evidence
    }

    fn reading(&self) -> String {
        let (failing, replaced) = (&self.failing, self.replaced);
        let first = match failing.first() {
            None if replaced > 0 => {
                return format!(
                    "{replaced} run{} on a busy machine ran again on a quiet one; the quiet runs are the measurements",
                    if replaced == 1 { "" } else { "s" }
                );
            }
            None => return format!("all {} runs", self.runs.len()),
            Some((run, problem)) if failing.len() == 1 => format!("run {}: {problem}", run.id),
            Some((run, problem)) => {
                format!("run {}: {problem}, and {} more", run.id, failing.len() - 1)
            }
        };
        match self.discarded_timings() {
            0 => first,
            n => format!(
                "timings of {n} run{} discarded ({}); their outputs were judged. {first}",
                if n == 1 { "" } else { "s" },
                self.discard_reason()
            ),
        }
    }

    /// Failing runs of this check whose timing alone was discarded.
    fn discarded_timings(&self) -> usize {
        let mut ids: Vec<&str> = self
            .failing
            .iter()
            .filter(|(r, _)| r.timing_discarded())
            .map(|(r, _)| r.id.as_str())
            .collect();
        ids.dedup();
        ids.len()
    }

    fn discard_reason(&self) -> &'static str {
        match self.name {
            automatic::QUIET => "machine busy",
            automatic::TOO_SHORT => "too short to time",
            automatic::APART => "a CPU shared with a run beside it",
            _ => "a system suspend",
        }
    }
}

/// "; FLOOR; spawn noise is 1.2% of the shortest valid run (0.501 s)".
fn too_short_evidence(runs: &[RunView], c: &Calibration) -> String {
    let mut evidence = format!("; {}", automatic::describe_floor(c));
    let shortest = runs
        .iter()
        .filter(|r| r.problems.is_empty())
        .map(|r| lab_config::units::Seconds(r.wall_s).nanos().0)
        .min();
    if let Some(shortest) = shortest {
        evidence.push_str(&format!(
            "; spawn noise is {} of the shortest valid run ({})",
            lab_config::format::percent(automatic::spawn_noise_share(shortest, c)),
            lab_config::format::seconds(lab_config::units::Nanos(shortest).seconds().0)
        ));
    }
    evidence
}

fn automatic_result(
    name: &str,
    runs: &[RunView],
    calibration: Option<&Calibration>,
) -> CheckResult {
    let failures = Failures::of(name, runs);
    let mut result = CheckResult::new(name, "automatic", CheckClass::Validity, failures.verdict())
        .evidence(failures.evidence(calibration))
        .reading(failures.reading());
    result.automatic = true;
    result.runs = failures.failing.iter().map(|(r, _)| r.id.clone()).collect();
    result.runs.dedup();
    result
}
