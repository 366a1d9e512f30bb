//! The machine checked before a session starts, as pyperf's `system show` does: the frequency
//! governor, turbo boost, how busy the CPUs are and which processes keep them busy. Each finding
//! is a line to print; none stops the session (the per-run guard judges each run).

use std::collections::BTreeMap;
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
    let processes_before = process_ticks();
    std::thread::sleep(WATCH);
    let after = super::machine::sample(cpus)?;
    let processes_after = process_ticks();
    let load = super::machine::between(&before, &after, super::machine::tick_ns());
    let share = load.busy_ns as f64 / load.capacity_ns.max(1) as f64;
    if share <= BUSY_WARNING {
        return None;
    }
    let tick_share = super::machine::tick_ns() as f64 / WATCH.as_nanos() as f64;
    let mut busiest: Vec<(f64, String)> = processes_after
        .iter()
        .filter_map(|(pid, (name, ticks))| {
            let earlier = processes_before.get(pid).map_or(0, |(_, t)| *t);
            let used = ticks.saturating_sub(earlier) as f64 * tick_share;
            (used > PROCESS_WARNING && *pid != std::process::id()).then(|| {
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
        "the CPUs lab may use are {:.0}% busy before the session{}: runs during which others take more than the experiment's max_busy are invalid and run again",
        share * 100.0,
        if named.is_empty() {
            String::new()
        } else {
            format!(" ({})", named.join(", "))
        }
    ))
}

/// CPU ticks (user + system) of every process, by pid, with its command name.
fn process_ticks() -> BTreeMap<u32, (String, u64)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            parse_stat(&stat).map(|entry| (pid, entry))
        })
        .collect()
}

/// The command name and utime + stime of a `/proc/PID/stat` line (proc(5): fields 2, 14, 15;
/// the name is in parentheses and may itself hold spaces or parentheses).
fn parse_stat(stat: &str) -> Option<(String, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = crate::format::terminal(&stat[open + 1..close]);
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    // After the name, field 3 (state) is index 0, so utime (14) is 11 and stime (15) is 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((name, utime + stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_awkward_names() {
        let line =
            "812 (java (main) x) S 1 812 812 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 30 0 1 1 1";
        assert_eq!(parse_stat(line), Some(("java (main) x".to_string(), 281)));
        assert_eq!(parse_stat("1 (init"), None);
    }

    #[test]
    fn governor_and_turbo_findings() {
        let found = system_check(&[usize::MAX], Some("powersave"), Some("on"));
        assert!(found[0].contains("\"powersave\""), "{found:?}");
        assert!(found[1].starts_with("turbo boost is on"));
        assert!(system_check(&[usize::MAX], Some("performance"), Some("off")).is_empty());
    }
}
