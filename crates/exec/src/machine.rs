//! What the rest of the machine did while a run ran, from counters the kernel keeps: CPU time
//! spent on the run's CPUs by anyone (`/proc/stat`), time a hypervisor stole, CPU pressure
//! stalls (`/proc/pressure/cpu`, and the run's own cgroup's) and thermal-throttle events. Read once before the spawn and
//! once after the wait, outside the timed interval; nothing here judges.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

/// Kernel counters at one instant, summed over a set of CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counters {
    /// Ticks the CPUs spent running anything (user, nice, system, irq, softirq).
    busy_ticks: u64,
    /// Ticks a hypervisor ran something else on these virtual CPUs.
    steal_ticks: u64,
    /// Every tick the CPUs counted, idle and iowait included.
    total_ticks: u64,
    /// Microseconds some task waited for a CPU, machine-wide (PSI), where the kernel has it.
    psi_some_us: Option<u64>,
    /// Thermal-throttle events of the CPUs, where the kernel exposes them.
    throttle_events: Option<u64>,
    /// Processes and threads created since boot, machine-wide (`processes` of `/proc/stat`).
    forks: Option<u64>,
}

impl Counters {
    /// Processes and threads created since boot when these counters were read.
    pub(crate) fn forks(&self) -> Option<u64> {
        self.forks
    }
}

/// How busy the machine was during one run: differences of [`Counters`], in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MachineLoad {
    /// CPU time spent on the run's CPUs by every process, the run's own included.
    pub busy_ns: u64,
    pub steal_ns: u64,
    /// CPU time the run's CPUs had to give: their ticks over the run.
    pub capacity_ns: u64,
    pub psi_some_us: Option<u64>,
    /// Microseconds some task of the run itself waited for a CPU (PSI of the run's own
    /// cgroup), where lab could give it one.
    pub own_psi_some_us: Option<u64>,
    pub throttle_events: Option<u64>,
}

/// The counters of `cpus` now, or `None` where `/proc/stat` cannot be read.
pub(crate) fn sample(cpus: &[usize]) -> Option<Counters> {
    let mut counters = with_proc("/proc/stat", |stat| {
        let mut counters = cpu_ticks(stat, cpus)?;
        counters.forks = forks_in(stat);
        Some(counters)
    })??;
    counters.psi_some_us = with_proc("/proc/pressure/cpu", psi_some_total).flatten();
    counters.throttle_events = throttle_events(cpus);
    Some(counters)
}

/// A file under /proc opened once, and the buffer its text is read into, kept from one read
/// to the next: a run reads `/proc/stat` and the pressure file between every two runs, and
/// allocating and clearing a buffer for each read cost more than the kernel's work.
struct ProcFile {
    file: std::fs::File,
    buffer: Vec<u8>,
}

/// What `parse` makes of the text of a file under /proc, read afresh from the start of a
/// descriptor opened once (the kernel writes the text anew at each read from offset 0);
/// `None` where the file cannot be read.
///
/// The files read here (`/proc/stat`, `/proc/pressure/cpu`) are single-record sequence files:
/// the kernel writes the whole text before the first `read` returns, so a read that leaves
/// room in the buffer returned all of it, and only a full buffer calls for another read (the
/// buffer then grows, and is kept grown).
fn with_proc<T>(path: &'static str, parse: impl FnOnce(&str) -> T) -> Option<T> {
    use std::io::{Read, Seek};
    static OPEN: Mutex<BTreeMap<&'static str, ProcFile>> = Mutex::new(BTreeMap::new());
    let mut open = OPEN.lock().ok()?;
    if !open.contains_key(path) {
        let file = std::fs::File::open(path).ok()?;
        let buffer = vec![0; 16 * 1024];
        open.insert(path, ProcFile { file, buffer });
    }
    let ProcFile { file, buffer } = open.get_mut(path)?;
    file.rewind().ok()?;
    let mut filled = 0;
    loop {
        if filled == buffer.len() {
            buffer.resize(2 * buffer.len(), 0);
        }
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => {
                filled += n;
                if filled < buffer.len() {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    std::str::from_utf8(&buffer[..filled]).ok().map(parse)
}

/// What happened between two samples, with `/proc/stat` ticks of `tick_ns` each.
pub(crate) fn between(before: &Counters, after: &Counters, tick_ns: u64) -> MachineLoad {
    let ticks = |a: u64, b: u64| b.saturating_sub(a).saturating_mul(tick_ns);
    let delta = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
    MachineLoad {
        busy_ns: ticks(before.busy_ticks, after.busy_ticks),
        steal_ns: ticks(before.steal_ticks, after.steal_ticks),
        capacity_ns: ticks(before.total_ticks, after.total_ticks),
        psi_some_us: delta(before.psi_some_us, after.psi_some_us),
        own_psi_some_us: None,
        throttle_events: delta(before.throttle_events, after.throttle_events),
    }
}

/// Nanoseconds per `/proc/stat` tick (USER_HZ, 100 on Linux).
pub(crate) fn tick_ns() -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        lab_config::units::NANOS_PER_SECOND / hz as u64
    } else {
        10_000_000
    }
}

/// Sums the `cpuN` lines of `/proc/stat` for `cpus` (all CPUs when empty). Columns: user nice
/// system idle iowait irq softirq steal guest guest_nice (proc(5)); guest time is already in
/// user, so it is not added again.
fn cpu_ticks(stat: &str, cpus: &[usize]) -> Option<Counters> {
    let mut counters = Counters::default();
    let mut found = false;
    for line in stat.lines() {
        let mut fields = line.split_whitespace();
        let Some(cpu) = fields.next().and_then(|n| n.strip_prefix("cpu")) else {
            continue;
        };
        let Ok(index) = cpu.parse::<usize>() else {
            continue;
        };
        if !cpus.is_empty() && !cpus.contains(&index) {
            continue;
        }
        let mut v = [0u64; 8];
        let mut parsed = 0;
        for (slot, field) in v.iter_mut().zip(fields) {
            let Ok(n) = field.parse() else { break };
            *slot = n;
            parsed += 1;
        }
        if parsed < 8 {
            continue;
        }
        found = true;
        counters.busy_ticks += v[0] + v[1] + v[2] + v[5] + v[6];
        counters.steal_ticks += v[7];
        counters.total_ticks += v.iter().sum::<u64>();
    }
    found.then_some(counters)
}

/// Processes and threads created since boot, now; `None` where `/proc/stat` cannot be read.
pub(crate) fn forks() -> Option<u64> {
    with_proc("/proc/stat", forks_in)?
}

/// The `processes` line of `/proc/stat` (proc(5)): every fork and clone since boot.
fn forks_in(stat: &str) -> Option<u64> {
    stat.lines()
        .find_map(|l| l.strip_prefix("processes "))?
        .trim()
        .parse()
        .ok()
}

/// `total=` of the `some` line of `/proc/pressure/cpu`.
pub(crate) fn psi_some_total(text: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with("some "))?
        .split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

/// Core and package throttle counts of `cpus`, where the kernel has them (Intel, bare metal).
/// Where the first look found no counter (virtual machines, AMD), none is looked for again.
fn throttle_events(cpus: &[usize]) -> Option<u64> {
    static EXPOSED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !*EXPOSED.get_or_init(|| throttle_counts(cpus).is_some()) {
        return None;
    }
    throttle_counts(cpus)
}

fn throttle_counts(cpus: &[usize]) -> Option<u64> {
    let root = Path::new("/sys/devices/system/cpu");
    let mut sum = None;
    for cpu in cpus {
        for file in ["core_throttle_count", "package_throttle_count"] {
            let path = root.join(format!("cpu{cpu}/thermal_throttle/{file}"));
            if let Some(n) = std::fs::read_to_string(path)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
            {
                sum = Some(sum.unwrap_or(0) + n);
            }
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  30 0 10 100 5 0 0 4 0 0\n\
                        cpu0 10 1 5 50 2 1 1 3 0 0\n\
                        cpu1 20 0 5 50 3 0 0 1 7 0\n\
                        intr 5 0 0\n\
                        processes 9041\n";

    #[test]
    fn proc_files_read_again_through_the_kept_buffer_give_fresh_counters() {
        let Some(first) = sample(&[]) else {
            return; // No /proc/stat here.
        };
        let forks = first.forks.expect("processes line");
        // A thread is a fork to the kernel: the second reading must see it.
        std::thread::spawn(|| {}).join().unwrap();
        let second = sample(&[]).expect("read again");
        assert!(second.forks.expect("processes line") > forks);
        assert!(second.total_ticks >= first.total_ticks);
        assert_eq!(
            with_proc("/proc/stat", |text| text.starts_with("cpu ")),
            Some(true)
        );
        assert_eq!(
            with_proc("/proc/stat", |text| text.ends_with('\n')),
            Some(true)
        );
    }

    #[test]
    fn forks_since_boot() {
        assert_eq!(forks_in(STAT), Some(9041));
        assert_eq!(cpu_ticks(STAT, &[]).map(|c| c.forks), Some(None));
        assert_eq!(forks_in("cpu 1 2 3\n"), None);
    }

    #[test]
    fn ticks_of_the_chosen_cpus() {
        let c = cpu_ticks(STAT, &[0]).unwrap();
        assert_eq!((c.busy_ticks, c.steal_ticks, c.total_ticks), (18, 3, 73));
        let both = cpu_ticks(STAT, &[]).unwrap();
        assert_eq!((both.busy_ticks, both.steal_ticks), (43, 4));
        assert_eq!(both.total_ticks, 73 + 79);
        assert!(cpu_ticks(STAT, &[5]).is_none());
    }

    #[test]
    fn pressure_and_deltas() {
        let psi = "some avg10=6.69 avg60=8.62 avg300=12.11 total=1911569437\n\
                   full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(psi_some_total(psi), Some(1_911_569_437));
        let before = Counters {
            busy_ticks: 100,
            steal_ticks: 1,
            total_ticks: 400,
            psi_some_us: Some(10),
            throttle_events: None,
            forks: None,
        };
        let after = Counters {
            busy_ticks: 250,
            steal_ticks: 3,
            total_ticks: 800,
            psi_some_us: Some(510),
            throttle_events: None,
            forks: None,
        };
        let load = between(&before, &after, 10_000_000);
        assert_eq!(load.busy_ns, 1_500_000_000);
        assert_eq!(load.steal_ns, 20_000_000);
        assert_eq!(load.capacity_ns, 4_000_000_000);
        assert_eq!(load.psi_some_us, Some(500));
        assert_eq!(load.throttle_events, None);
    }

    #[test]
    fn this_machine_has_counters() {
        let now = sample(&[]).expect("/proc/stat is readable on Linux");
        assert!(now.total_ticks > 0);
    }
}
