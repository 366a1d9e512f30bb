//! Who used the CPUs beside a session: every process's CPU time (utime + stime of
//! `/proc/PID/stat`) read when the session's runs start and again when they end. The
//! processes that used the most in between, lab's own runs aside, are named in the manifest,
//! so that a verdict withheld for a busy machine can say what kept it busy.

use lab_store::Disturber;
use std::collections::BTreeMap;

/// A process that used less of a CPU than this over the session is not named.
const LEAST_SHARE: f64 = 0.05;
/// The most processes named.
const MOST_NAMED: usize = 5;
/// A process that used less CPU time than this is not named however short the session:
/// `/proc/PID/stat` counts in clock ticks (10 ms), too coarse to share out less.
const LEAST_CPU_S: f64 = 0.1;

/// Every process's CPU time at one moment.
pub struct Watch {
    started: std::time::Instant,
    ticks: BTreeMap<Process, (String, u64)>,
}

/// A process, told apart from a later one with the same pid by when it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Process {
    pub pid: u32,
    started: u64,
}

/// Starts watching the machine's processes.
pub fn watch() -> Watch {
    Watch {
        started: std::time::Instant::now(),
        ticks: process_ticks(),
    }
}

impl Watch {
    /// The processes that used the most CPU time since the watch started, busiest first:
    /// those that used at least [`LEAST_SHARE`] of a CPU, at most [`MOST_NAMED`] of them.
    pub fn busiest(&self) -> Vec<Disturber> {
        let seconds = self.started.elapsed().as_secs_f64().max(1e-3);
        let tick_s = super::machine::tick_ns() as f64 / 1e9;
        let me = std::process::id();
        let mut used: Vec<Disturber> = process_ticks()
            .into_iter()
            .filter(|(process, _)| process.pid != me)
            .filter_map(|(process, (name, ticks))| {
                let before = self.ticks.get(&process).map_or(0, |(_, t)| *t);
                let cpu_s = ticks.saturating_sub(before) as f64 * tick_s;
                (cpu_s >= LEAST_CPU_S && cpu_s / seconds >= LEAST_SHARE).then_some(Disturber {
                    pid: process.pid,
                    name,
                    cpu_s,
                    share: cpu_s / seconds,
                })
            })
            .collect();
        used.sort_by(|a, b| b.cpu_s.total_cmp(&a.cpu_s).then(a.pid.cmp(&b.pid)));
        used.truncate(MOST_NAMED);
        used
    }
}

/// CPU ticks (user + system) of every process, with its command name.
pub(crate) fn process_ticks() -> BTreeMap<Process, (String, u64)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (name, ticks, started) = parse_stat(&stat)?;
            Some((Process { pid, started }, (name, ticks)))
        })
        .collect()
}

/// The command name, utime + stime and start time of a `/proc/PID/stat` line (proc(5):
/// fields 2, 14, 15 and 22; the name is in parentheses and may itself hold spaces or
/// parentheses).
fn parse_stat(stat: &str) -> Option<(String, u64, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = lab_config::format::terminal(&stat[open + 1..close]);
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    // After the name, field 3 (state) is index 0, so utime (14) is 11, stime (15) is 12 and
    // starttime (22) is 19.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    let started: u64 = fields.get(19).and_then(|f| f.parse().ok()).unwrap_or(0);
    Some((name, utime + stime, started))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_awkward_names() {
        let line =
            "812 (java (main) x) S 1 812 812 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 30 0 1 1 1";
        assert_eq!(
            parse_stat(line),
            Some(("java (main) x".to_string(), 281, 1))
        );
        assert_eq!(parse_stat("1 (init"), None);
    }

    #[test]
    fn a_busy_process_beside_the_watch_is_named_and_an_idle_one_is_not() {
        let mut busy = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .expect("start a busy loop");
        let mut idle = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("start an idle process");
        let watch = watch();
        std::thread::sleep(std::time::Duration::from_millis(600));
        let found = watch.busiest();
        for child in [&mut busy, &mut idle] {
            let _ = child.kill();
            let _ = child.wait();
        }
        let busy_one = found.iter().find(|d| d.pid == busy.id());
        let busy_one = busy_one.unwrap_or_else(|| panic!("the busy loop is named: {found:?}"));
        assert_eq!(busy_one.name, "sh");
        assert!(busy_one.share > 0.3, "{busy_one:?}");
        assert!(found.iter().all(|d| d.pid != idle.id()), "{found:?}");
    }
}
