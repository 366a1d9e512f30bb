//! Session-start calibration: the timer's granularity and read cost, and the cost of spawning
//! an empty process, so runs too short to time can be recognised.

use super::clock;
use super::measure::{RunRequest, Runner};
use lab_store::{Calibration, StartUpCost};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// How many empty processes are spawned to measure spawn cost.
const SPAWN_SAMPLES: usize = 30;

/// How many back-to-back clock reads measure a read's cost: a mean of 20,000 reads is exact
/// to well under a nanosecond (the two reads that bound them add at most 2 × 40 ns / 20,000)
/// and takes under a millisecond of the session's start, where 100,000 took 2 to 4 ms.
const CLOCK_READS: u32 = 20_000;

/// Measures the clock and the spawn cost through `runner`, writing throw-away logs to `scratch`.
pub fn calibrate(runner: &mut dyn Runner, scratch: &Path) -> Calibration {
    let walls = spawn_walls(runner, scratch, &["true".to_string()]);
    let at = |q: usize| walls[(walls.len() - 1) * q / 4];
    Calibration {
        timer_reported_resolution_ns: clock::reported_resolution_ns(),
        timer_granularity_ns: clock::observed_granularity_ns(1_000),
        timer_read_ns: clock::read_cost_ns(CLOCK_READS),
        spawn_median_ns: at(2),
        spawn_iqr_ns: at(3) - at(1),
        spawn_mad_ns: Some(mad(&walls, at(2))),
        spawn_samples: SPAWN_SAMPLES,
        start_up: None,
    }
}

/// What starting `argv` (a command with nothing to do, as `sh -c ''`) costs through `runner`.
pub fn start_up_cost(runner: &mut dyn Runner, scratch: &Path, argv: &[String]) -> StartUpCost {
    let walls = spawn_walls(runner, scratch, argv);
    let median = walls[(walls.len() - 1) / 2];
    StartUpCost {
        argv: argv.to_vec(),
        median_ns: median,
        mad_ns: mad(&walls, median),
        samples: walls.len(),
    }
}

/// The undisturbed wall times of `SPAWN_SAMPLES` runs of `argv`, sorted.
fn spawn_walls(runner: &mut dyn Runner, scratch: &Path, argv: &[String]) -> Vec<u64> {
    let env = BTreeMap::new();
    let (out, err) = (
        scratch.join("calibration.out"),
        scratch.join("calibration.err"),
    );
    let request = RunRequest {
        argv,
        env: std::borrow::Cow::Borrowed(&env),
        cwd: scratch,
        cpus: None,
        timeout: Duration::from_secs(10),
        stdin: None,
        stdout: &out,
        stderr: &err,
        held_output: None,
        counters: &[],
    };
    let mut walls: Vec<u64> = (0..SPAWN_SAMPLES)
        .map(|_| undisturbed_wall(&runner.run(&request)))
        .collect();
    walls.sort_unstable();
    let _ = std::fs::remove_file(out);
    let _ = std::fs::remove_file(err);
    walls
}

/// A spawn's wall time less the time its process waited for a CPU others had: the spawn's own
/// cost and noise, which a busy machine would otherwise inflate into a timing floor no run
/// could clear (56 ms beside other work, against 2–4 ms on a quiet machine). Each run's own
/// waiting is weighed in the verdicts; the floor guards against what waiting does not explain.
fn undisturbed_wall(m: &super::measure::Measurement) -> u64 {
    let waited = m.wait.map_or(0, |w| w.ns);
    m.wall_ns.saturating_sub(waited).max(1)
}

/// The median absolute deviation of sorted `walls` around their `median`.
fn mad(walls: &[u64], median: u64) -> u64 {
    let mut deviations: Vec<u64> = walls.iter().map(|w| w.abs_diff(median)).collect();
    deviations.sort_unstable();
    deviations[(deviations.len() - 1) / 2]
}
