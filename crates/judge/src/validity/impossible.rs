//! The impossible-times rule of the validity stage: no value of a time metric a run printed
//! can exceed the time the run itself took, wall time or CPU time, whichever is larger.
//!
//! A run cannot measure more of its own time than passed while it ran. Per-operation times and
//! averages are smaller still; a CPU-time metric of a run on several threads may exceed its
//! wall time, but never its own user + system time, which lab measures with the run. So a
//! single printed value above max(wall, user + sys) is impossible, whatever the metric means,
//! and the usual cause is a unit: a program printing milliseconds where lab.toml says seconds.
//! Each value is judged alone, not their sum, so that a run printing one time per iteration
//! (or the same time twice) is not summed into a false alarm. The allowance covers the clocks
//! of the program and of lab starting at different instants and rounding: 1 ms plus 1%.

use super::automatic::Problem;
use lab_config::Metric;
use lab_config::units::seconds_per;
use std::collections::BTreeMap;

/// The allowance beyond the run's own time: this many seconds ...
pub const ALLOWANCE_S: f64 = 1e-3;
/// ... plus this share of it.
pub const ALLOWANCE_SHARE: f64 = 0.01;

/// The most seconds of its own time a run of `wall_s` wall time and `cpu_s` of CPU time can
/// report.
pub fn bound_s(wall_s: f64, cpu_s: f64) -> f64 {
    wall_s.max(cpu_s) * (1.0 + ALLOWANCE_SHARE) + ALLOWANCE_S
}

/// The first printed value of a time metric (values already read as plain numbers) that
/// exceeds [`bound_s`], as a problem of the run.
pub fn impossible_time(
    metrics: &[Metric],
    values: &BTreeMap<String, Vec<String>>,
    wall_s: f64,
    cpu_s: f64,
) -> Option<Problem> {
    let bound = bound_s(wall_s, cpu_s);
    metrics
        .iter()
        .filter(|m| m.is_printed() && !m.text)
        .find_map(|m| {
            let per = seconds_per(&m.unit)?;
            let value = values
                .get(&m.name)?
                .iter()
                .filter_map(|v| v.parse::<f64>().ok())
                .find(|v| v * per > bound)?;
            Some(Problem::ImpossibleTime {
                metric: m.name.clone(),
                value,
                unit: m.unit.clone(),
                wall_s,
                cpu_s,
            })
        })
}

/// The unit the value was probably printed in: the largest unit of time below the declared
/// one that brings it within the run's time, if any.
pub fn likely_unit(value: f64, unit: &str, wall_s: f64, cpu_s: f64) -> Option<&'static str> {
    let per = seconds_per(unit)?;
    ["s", "ms", "us", "ns"]
        .into_iter()
        .filter(|u| seconds_per(u).is_some_and(|p| p < per))
        .find(|u| seconds_per(u).is_some_and(|p| value * p <= bound_s(wall_s, cpu_s)))
}

/// "printed 2300 s of `time` in a run of 2.3 s wall time: the unit is probably ms, not s
/// (lab.toml says unit = "s")".
pub fn describe(value: f64, metric: &str, unit: &str, wall_s: f64, cpu_s: f64) -> String {
    use lab_config::format::{seconds, significant};
    let cpu = if cpu_s > wall_s {
        format!(" and {} of CPU time", seconds(cpu_s))
    } else {
        String::new()
    };
    let cause = match likely_unit(value, unit, wall_s, cpu_s) {
        Some(likely) => format!("the unit is probably {likely}, not {unit}"),
        None => "no unit of time brings it within the run, so it is not a time this run took"
            .to_string(),
    };
    format!(
        "printed {} {unit} of `{metric}` in a run of {} wall time{cpu}: {cause} (lab.toml says unit = {unit:?})",
        significant(value, 4),
        seconds(wall_s)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_the_larger_of_wall_and_cpu_time_with_an_allowance() {
        assert_eq!(bound_s(2.0, 0.5), 2.0 * 1.01 + 0.001);
        assert_eq!(bound_s(1.0, 3.0), 3.0 * 1.01 + 0.001);
        assert_eq!(bound_s(0.0, 0.0), 0.001);
    }

    #[test]
    fn milliseconds_declared_as_seconds_are_named() {
        assert_eq!(likely_unit(2300.0, "s", 2.3, 0.1), Some("ms"));
        assert_eq!(likely_unit(2_300_000.0, "ms", 2.3, 0.1), Some("us"));
        assert_eq!(likely_unit(1e15, "s", 2.3, 0.1), None);
        assert_eq!(
            describe(2300.0, "time", "s", 2.3, 0.1),
            "printed 2300 s of `time` in a run of 2.30 s wall time: the unit is probably ms, not s (lab.toml says unit = \"s\")"
        );
    }

    /// By simulation: 1,000 clean cells of 10 runs, each printing the time its own work took
    /// (its wall time less 0.2–3 ms of start-up and exit, read on a clock that may disagree
    /// with lab's by up to ±0.5 ms) and the CPU time of its 1–4 threads; none may be called
    /// impossible. The same values printed in milliseconds under `s` must all be caught once a
    /// run lasts 5 ms or more.
    #[test]
    fn clean_cells_raise_no_false_alarm_and_unit_slips_are_caught() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(54);
        let (mut false_alarms, mut slips_missed, mut judged) = (0, 0, 0);
        for _ in 0..1_000 {
            let typical = 0.005 * 10f64.powf(rng.r#gen::<f64>() * 3.0);
            for _ in 0..10 {
                let wall =
                    typical * (1.0 + 0.1 * lab_stats::rng::standard_normal(&mut rng)).max(0.5);
                let threads = f64::from(rng.gen_range(1..=4_u8)).min(2.0);
                let cpu = wall * threads * rng.gen_range(0.8..1.0);
                let own =
                    (wall - rng.gen_range(0.0002..0.003)).max(0.0) + rng.gen_range(-0.0005..0.0005);
                let cpu_printed = cpu * rng.gen_range(0.95..1.0);
                judged += 1;
                if own > bound_s(wall, cpu) || cpu_printed > bound_s(wall, cpu) {
                    false_alarms += 1;
                }
                if own * 1e3 <= bound_s(wall, cpu) {
                    slips_missed += 1;
                }
            }
        }
        assert_eq!(judged, 10_000);
        assert_eq!(false_alarms, 0, "false alarms in 10,000 clean runs");
        assert_eq!(slips_missed, 0, "unit slips missed in 10,000 runs");
    }
}
