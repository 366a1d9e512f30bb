//! The machine checked before a session starts, as pyperf's `system show` does: the frequency
//! governor, turbo boost, how busy the CPUs are and which processes keep them busy. Each finding
//! is a line to print; none stops the session (the per-run guard judges each run).

use std::time::Duration;

/// How long the CPUs are watched before a session.
const WATCH: Duration = Duration::from_millis(500);
/// A share of the CPUs busy before the session that deserves a warning.
const BUSY_WARNING: f64 = 0.10;
/// A process using more than this share of one CPU is named.
const PROCESS_WARNING: f64 = 0.05;

/// What would disturb the measurement, one line each; empty on a quiet, well-set machine.
pub fn system_check(cpus: &[usize], governor: Option<&str>, turbo: Option<&str>) -> Vec<String> {
    let mut findings = Vec::new();
    if let Some(g) = governor.filter(|g| *g != "performance") {
        findings.push(format!(
            "the CPU frequency governor is {g:?}: clock speed follows load, so runs vary (set \"performance\" for stable numbers)"
        ));
    }
    if turbo == Some("on") {
        findings.push(
            "turbo boost is on: the clock rises while the chip is cool and falls as it heats"
                .into(),
        );
    }
    findings.extend(busy_cpus(cpus));
    findings
}

/// "the CPUs lab may use are 46% busy before the session: java (pid 812) 91% of a CPU, …".
fn busy_cpus(cpus: &[usize]) -> Option<String> {
    let before = super::machine::sample(cpus)?;
    let processes_before = super::disturbers::process_ticks();
    std::thread::sleep(WATCH);
    let after = super::machine::sample(cpus)?;
    let processes_after = super::disturbers::process_ticks();
    let load = super::machine::between(&before, &after, super::machine::tick_ns());
    let share = load.busy_ns as f64 / load.capacity_ns.max(1) as f64;
    if share <= BUSY_WARNING {
        return None;
    }
    let tick_share = super::machine::tick_ns() as f64 / WATCH.as_nanos() as f64;
    let mut busiest: Vec<(f64, String)> = processes_after
        .iter()
        .filter_map(|(process, (name, ticks))| {
            let earlier = processes_before.get(process).map_or(0, |(_, t)| *t);
            let used = ticks.saturating_sub(earlier) as f64 * tick_share;
            let pid = process.pid;
            (used > PROCESS_WARNING && pid != std::process::id()).then(|| {
                (
                    used,
                    format!("{name} (pid {pid}) {:.0}% of a CPU", used * 100.0),
                )
            })
        })
        .collect();
    busiest.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let named: Vec<String> = busiest.into_iter().take(3).map(|(_, n)| n).collect();
    Some(format!(
        "the CPUs lab may use are {:.0}% busy before the session{}: each run's own waiting for a CPU is measured and weighed in every verdict",
        share * 100.0,
        if named.is_empty() {
            String::new()
        } else {
            format!(" ({})", named.join(", "))
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn governor_and_turbo_findings() {
        let found = system_check(&[usize::MAX], Some("powersave"), Some("on"));
        assert!(found[0].contains("\"powersave\""), "{found:?}");
        assert!(found[1].starts_with("turbo boost is on"));
        assert!(system_check(&[usize::MAX], Some("performance"), Some("off")).is_empty());
    }
}
