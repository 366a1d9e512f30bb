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
pub fn become_subreaper() {
    // SAFETY: prctl with integer arguments only; it changes a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
}

/// Kills and reaps every process left in process group `group` or re-parented to lab, and
/// returns their command names, sorted.
pub fn reap_leftovers(group: libc::pid_t) -> Vec<String> {
    let me = std::process::id() as libc::pid_t;
    let mut names: Vec<(libc::pid_t, String)> = Vec::new();
    for round in 0..ROUNDS {
        let found = leftovers(me, group);
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
/// to it.
fn leftovers(me: libc::pid_t, group: libc::pid_t) -> Vec<Leftover> {
    let subreaper = is_subreaper();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|&pid| pid != me)
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (name, state, ppid, pgrp) = parse_stat(&stat)?;
            let orphan = subreaper && ppid == me;
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

/// (comm, state, ppid, pgrp) from a `/proc/PID/stat` line; comm may hold spaces and parens.
fn parse_stat(stat: &str) -> Option<(String, char, libc::pid_t, libc::pid_t)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let mut rest = stat.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgrp = rest.next()?.parse().ok()?;
    Some((name, state, ppid, pgrp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        assert_eq!(
            parse_stat("4242 (my (odd) prog) S 1 4242 4242 0 -1"),
            Some(("my (odd) prog".to_string(), 'S', 1, 4242))
        );
        assert_eq!(parse_stat("garbage"), None);
    }
}
