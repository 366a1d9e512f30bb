//! A run owns its whole process tree. Lab is the child subreaper of everything it starts
//! (PR_SET_CHILD_SUBREAPER, Linux 3.4), so a process a run leaves behind, even one that
//! called `setsid` to leave the run's process group, is re-parented to lab when its parent
//! exits, instead of to PID 1. After each run lab kills every such process and every member
//! left in the run's group, reaps them, and reports their names: the run is flagged, never
//! silently followed by a run that shares the machine with its leftovers.

use std::time::Duration;

/// How many rounds of kill-and-reap are tried: each round frees the next generation.
const ROUNDS: usize = 50;

/// Makes lab the subreaper of its descendants. Harmless to call more than once.
pub(crate) fn become_subreaper() {
    // SAFETY: prctl with integer arguments only; it changes a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
}

/// [`reap_leftovers`] for the only run executing, whose leader lab has reaped: when the
/// machine created no process or thread between `forks_before` and `forks_after` (read after
/// the leader was reaped) beyond the `lab_created` ones lab made for the run, the run cannot
/// have left anything, and /proc is not read. A process the run left behind was created
/// before its leader ended, so it is counted in `forks_after`.
pub(crate) fn reap_leftovers_alone(
    group: libc::pid_t,
    forks_before: Option<u64>,
    forks_after: Option<u64>,
    lab_created: u64,
) -> Vec<String> {
    let created = forks_before
        .zip(forks_after)
        .map(|(before, after)| after.saturating_sub(before));
    if created.is_some_and(|n| n <= lab_created) {
        return Vec::new();
    }
    reap_leftovers(group, forks_before)
}

/// Kills and reaps every process left in process group `group` or re-parented to lab, and
/// returns their command names, sorted. `forks_before` is the machine's count of created
/// processes read before the run was spawned: it bounds which PIDs its descendants can hold.
pub(crate) fn reap_leftovers(group: libc::pid_t, forks_before: Option<u64>) -> Vec<String> {
    let me = std::process::id() as libc::pid_t;
    let mut names: Vec<(libc::pid_t, String)> = Vec::new();
    for round in 0..ROUNDS {
        let found = leftovers(me, group, forks_before);
        if found.is_empty() {
            break;
        }
        for p in &found {
            if !p.zombie {
                // SAFETY: signalling a process that is our child or in the group we created.
                unsafe { libc::kill(p.pid, libc::SIGKILL) };
                if !names.iter().any(|(pid, _)| *pid == p.pid) {
                    names.push((p.pid, p.name.clone()));
                }
            }
        }
        // Only the processes found are reaped: other children of lab are left to their owners.
        for p in found.iter().filter(|p| p.ppid == me) {
            let mut status = 0;
            // SAFETY: waiting for one child of ours, with a valid status pointer.
            unsafe { libc::waitpid(p.pid, &mut status, if p.zombie { 0 } else { libc::WNOHANG }) };
        }
        if round > 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let mut names: Vec<String> = names.into_iter().map(|(_, n)| n).collect();
    names.sort();
    names
}

/// A process left behind by a run.
struct Leftover {
    pid: libc::pid_t,
    ppid: libc::pid_t,
    name: String,
    zombie: bool,
}

/// Whether lab is a subreaper now: only then is a child of lab an orphan of the run (lab
/// starts no other process while a session runs, but the runs executing beside it under
/// `--jobs`, whose groups are registered; a process that left its run's group during such a
/// session is counted against the first run to end after it was orphaned).
fn is_subreaper() -> bool {
    let mut flag: libc::c_int = 0;
    // SAFETY: PR_GET_CHILD_SUBREAPER writes one int through the pointer given.
    let r = unsafe {
        libc::prctl(
            libc::PR_GET_CHILD_SUBREAPER,
            &mut flag as *mut libc::c_int,
            0,
            0,
            0,
        )
    };
    r == 0 && flag != 0
}

/// Processes in process group `group`, and, while lab is a subreaper, processes re-parented
/// to it. Only PIDs a descendant of the run can hold are read.
fn leftovers(me: libc::pid_t, group: libc::pid_t, forks_before: Option<u64>) -> Vec<Leftover> {
    let subreaper = is_subreaper();
    // SAFETY: getsid(0) has no preconditions.
    let own_session = unsafe { libc::getsid(0) };
    // Where runs are born in a PID namespace, their orphans go to its init, not to lab.
    let inits = super::isolation::pid_inits();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let pids: Vec<libc::pid_t> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|&pid| pid != me && !super::isolation::is_guard(pid))
        .filter(|pid| !inits.contains(pid))
        .collect();
    let window = Window::of(group, forks_before);
    pids.into_iter()
        .filter(|&pid| window.holds(pid))
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (name, state, ppid, pgrp, session) = parse_stat(&stat)?;
            // A run's leftover is in the run's group, or left it with setsid; a child of lab
            // in lab's own session is lab's (or, in a test process, another test's), not the
            // run's orphan.
            let adopted = (subreaper && ppid == me) || inits.contains(&ppid);
            let orphan = adopted && session != own_session;
            // With `--jobs`, the runs executing beside this one are not its leftovers.
            let beside = pgrp != group && super::running::is_registered(pgrp);
            ((orphan || pgrp == group) && !beside).then_some(Leftover {
                pid,
                ppid,
                name,
                zombie: state == 'Z',
            })
        })
        .collect()
}

/// PIDs below this are never handed out again once the counter wraps (RESERVED_PIDS,
/// include/linux/pid.h).
const RESERVED_PIDS: u64 = 300;

/// The PIDs a run's descendants can hold. Linux hands PIDs out cyclically, each after the
/// last one given (`alloc_pid`, kernel/pid.c), so a process created after the run was
/// spawned holds a PID at most `created + live + RESERVED_PIDS` past the run's own, counting
/// round `pid_max`: `created` PIDs handed out since, `live` PIDs in use (threads hold them too) skipped on the way,
/// and the reserved low PIDs skipped at a wrap. Without the counters, every PID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    first: u64,
    span: u64,
    pid_max: u64,
}

impl Window {
    fn of(run: libc::pid_t, forks_before: Option<u64>) -> Window {
        let pid_max = pid_max();
        let created = match (forks_before, super::machine::forks()) {
            (Some(before), Some(now)) => now.saturating_sub(before),
            _ => pid_max,
        };
        Window::spanning(run, created, live_threads().unwrap_or(pid_max), pid_max)
    }

    fn spanning(run: libc::pid_t, created: u64, live: u64, pid_max: u64) -> Window {
        Window {
            first: u64::try_from(run).unwrap_or(0),
            span: created.saturating_add(live).saturating_add(RESERVED_PIDS),
            pid_max,
        }
    }

    fn holds(&self, pid: libc::pid_t) -> bool {
        let Ok(pid) = u64::try_from(pid) else {
            return false;
        };
        if self.span >= self.pid_max {
            return true;
        }
        (pid + self.pid_max - self.first % self.pid_max) % self.pid_max <= self.span
    }
}

/// Threads alive on the machine now (each holds a PID): the total of the fourth field of
/// `/proc/loadavg`, "running/total" (proc(5)).
fn live_threads() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace()
        .nth(3)?
        .split_once('/')?
        .1
        .parse()
        .ok()
}

/// The largest PID plus one (`/proc/sys/kernel/pid_max`), read once; Linux's 64-bit
/// ceiling where it cannot be read, so that the window then covers every PID.
fn pid_max() -> u64 {
    static PID_MAX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PID_MAX.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(4_194_304)
    })
}

/// (comm, state, ppid, pgrp, session) from a `/proc/PID/stat` line; comm may hold spaces and
/// parens.
fn parse_stat(stat: &str) -> Option<(String, char, libc::pid_t, libc::pid_t, libc::pid_t)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let mut rest = stat.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgrp = rest.next()?.parse().ok()?;
    let session = rest.next()?.parse().ok()?;
    Some((name, state, ppid, pgrp, session))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_follows_the_pid_counter_round_its_wrap() {
        // 10 processes created among 100 live ones: 410 PIDs past the run's own.
        let w = Window::spanning(1000, 10, 100, 32_768);
        assert!(w.holds(1000) && w.holds(1410));
        assert!(!w.holds(999) && !w.holds(1411) && !w.holds(5));
        // A run spawned near pid_max: its descendants' PIDs wrap to the low ones.
        let w = Window::spanning(32_700, 10, 100, 32_768);
        assert!(w.holds(32_767) && w.holds(300) && w.holds(342));
        assert!(!w.holds(343) && !w.holds(32_699));
        // More processes created than PIDs exist: every PID.
        let w = Window::spanning(1000, 40_000, 100, 32_768);
        assert!(w.holds(1) && w.holds(999));
    }

    #[test]
    fn stat_lines_with_odd_names_parse() {
        assert_eq!(
            parse_stat("4242 (my (odd) prog) S 1 4242 4242 0 -1"),
            Some(("my (odd) prog".to_string(), 'S', 1, 4242, 4242))
        );
        assert_eq!(parse_stat("garbage"), None);
    }
}
