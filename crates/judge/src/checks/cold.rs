//! The automatic cold-state check: no timed run of a cell read from disk while the cell's other
//! runs did not.
//!
//! A run whose input was not in the page cache measures the disk as well as the program: its
//! cell then holds two measurements of different things, and its spread and median mix them.
//! `ru_inblock` and `ru_majflt` count that reading exactly (they are counters, not samples), so
//! a cell whose runs split into readers and non-readers is a fact, not an inference, and the
//! check fails rather than being inconclusive. Small reads are allowed: a run may page in a
//! shared library or a log's metadata evicted by the rest of the machine, so a run reads from
//! disk when it read more than [`READ_BYTES`] or took more than [`MAJOR_FAULTS`] major faults.
//! A cell whose every run read from disk (an `O_DIRECT` benchmark) is consistent and passes.
//! A run that read from disk but took no longer than the slowest of its cell's other runs did
//! not measure the disk (an interpreter paging in a few files it then ran from memory): the
//! counters say it read, its time says the reading did not matter, so it does not split the
//! cell. Warm-up runs are left out: warming the cache is what they are for.

use crate::analysis::{Analysis, RunView};
use lab_config::format::memory;
use lab_config::{CheckClass, Experiment};
use lab_findings::checks::{CheckResult, Verdict};

/// The check's name, as the report lists it.
pub const COLD: &str = "no run read from disk while its cell's others did not";

/// Bytes a run may read from block devices and still count as served from the cache: 1 MiB.
pub(super) const READ_BYTES: u64 = 1 << 20;

/// Major faults a run may take and still count as served from the cache.
pub(super) const MAJOR_FAULTS: u64 = 10;

/// Whether a run read from disk beyond the allowance.
pub(super) fn read_from_disk(run: &RunView) -> bool {
    run.usage.read_bytes.is_some_and(|b| b > READ_BYTES)
        || run.usage.major_faults.is_some_and(|f| f > MAJOR_FAULTS)
}

/// One cell whose timed runs split into runs that read from disk and runs that did not.
pub(super) struct Split<'a> {
    pub label: String,
    pub cold: Vec<&'a RunView>,
    pub warm: Vec<&'a RunView>,
    /// Whether every cold run is its cell's first timed run.
    pub first_only: bool,
}

/// The check's result; `None` when no run recorded what it read (sessions recorded before lab
/// kept the counters, imported ones): its report does not list the check.
pub(super) fn cold_result(exp: &Experiment, analysis: &Analysis) -> Option<CheckResult> {
    if !analysis.runs.iter().any(|r| r.usage.read_bytes.is_some()) {
        return None;
    }
    let splits: Vec<Split> = analysis
        .cell_keys
        .iter()
        .filter_map(|key| {
            let runs: Vec<&RunView> = analysis.timed_runs(key).collect();
            split(crate::analysis::cell_label(exp, key), &runs)
        })
        .collect();
    let timed = analysis.runs.iter().filter(|r| !r.warmup).count();
    Some(decided(&splits, timed))
}

/// The cell's timed runs split into readers that took longer than every non-reader and the
/// non-readers; `None` when no reader was slower.
pub(super) fn split<'a>(label: String, runs: &[&'a RunView]) -> Option<Split<'a>> {
    let (cold, warm): (Vec<&RunView>, Vec<&RunView>) =
        runs.iter().copied().partition(|r| read_from_disk(r));
    let slowest_warm = warm.iter().map(|r| r.wall_s).fold(f64::NAN, f64::max);
    let cold: Vec<&RunView> = cold
        .into_iter()
        .filter(|r| r.wall_s > slowest_warm)
        .collect();
    if cold.is_empty() || warm.is_empty() {
        return None;
    }
    let first = runs.iter().map(|r| r.position).min();
    let first_only = cold.len() == 1 && Some(cold[0].position) == first;
    Some(Split {
        label,
        cold,
        warm,
        first_only,
    })
}

/// Fails when some cell split; passes otherwise.
pub(super) fn decided(splits: &[Split], timed: usize) -> CheckResult {
    let verdict = if splits.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let reading = match splits.first() {
        None => format!(
            "no timed run read more than {} from disk or took more than {MAJOR_FAULTS} major faults, or every run of its cell did",
            memory(READ_BYTES as f64)
        ),
        Some(first) => failing_reading(first, splits),
    };
    let cold: usize = splits.iter().map(|s| s.cold.len()).sum();
    let evidence = format!(
        "{cold} of {timed} timed runs read from disk beside runs of their cell that did not (more than {} read or {MAJOR_FAULTS} major faults counts); {} cells split",
        memory(READ_BYTES as f64),
        splits.len()
    );
    let mut result = CheckResult::new(COLD, "automatic", CheckClass::Validity, verdict)
        .evidence(evidence)
        .reading(reading)
        .runs(
            splits
                .iter()
                .flat_map(|s| s.cold.iter().map(|r| r.id.clone()))
                .collect(),
        );
    result.automatic = true;
    result
}

/// "r0002 read 256 MiB from disk, the other 5 runs of `cold n=1` none: its input was not
/// cached; set warmup_runs = 1 (or prepare the cache)".
fn failing_reading(first: &Split, splits: &[Split]) -> String {
    let run = first.cold[0];
    let others = match first.warm.iter().filter_map(|r| r.usage.read_bytes).max() {
        Some(0) | None => "none".to_string(),
        Some(most) => format!("at most {}", memory(most as f64)),
    };
    let (n, s) = (
        first.warm.len(),
        if first.warm.len() == 1 { "" } else { "s" },
    );
    let mut reading = format!(
        "{} read {} from disk{}, the other {n} run{s} of `{}` {others}",
        run.id,
        memory(run.usage.read_bytes.unwrap_or(0) as f64),
        faults(run),
        first.label
    );
    let more = first.cold.len() - 1 + splits[1..].iter().map(|s| s.cold.len()).sum::<usize>();
    if more > 0 {
        let s = if more == 1 { "" } else { "s" };
        reading.push_str(&format!(", and {more} more such run{s}"));
    }
    reading.push_str(if splits.iter().all(|s| s.first_only) {
        ": its input was not cached; set warmup_runs = 1 (or prepare the cache)"
    } else {
        ": its input left the page cache between runs; prepare the cache in a `setup` hook, or give the machine memory to keep it"
    });
    reading
}

/// " (1,200 major faults)" where the run waited for pages, else nothing.
fn faults(run: &RunView) -> String {
    match run.usage.major_faults {
        Some(f) if f > MAJOR_FAULTS => format!(" ({f} major faults)"),
        _ => String::new(),
    }
}

#[cfg(test)]
#[path = "cold_tests.rs"]
pub(super) mod tests;
