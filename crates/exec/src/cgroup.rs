//! A cgroup of its own for each run, where the kernel's unified hierarchy lets lab make one
//! beside itself (with `LAB_RUN_CGROUPS=1`): the CPU pressure of that group (PSI `some` of its `cpu.pressure`) is the
//! time the run's own tasks waited for a CPU, to the microsecond, whatever else ran. Where no
//! group can be made (no cgroup2 mount, no write access), runs are judged by the machine-wide
//! pressure instead. Groups are made once and reused by the runs that follow; a session
//! removes them when it ends, and removes those a killed lab left behind when it starts.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// A cgroup one run at a time is moved into: the child writes `0` (itself) into
/// `cgroup.procs` before `execve`, so every process and thread of the run is counted.
#[derive(Debug)]
pub(crate) struct RunGroup {
    dir: PathBuf,
    procs: File,
    pressure: File,
}

/// Groups made by this lab process and free for the next run.
static FREE: Mutex<Vec<RunGroup>> = Mutex::new(Vec::new());
/// How many groups this lab process has made, for their names.
static MADE: Mutex<usize> = Mutex::new(0);

/// The variable that turns the per-run cgroups on: joining a group costs the run's child a
/// cgroup migration inside the timed interval, which on some kernels takes milliseconds and
/// varies, so that a no-op run looks longer than the calibration allows. Off by default: runs
/// are judged by the machine-wide pressure, bounded by others' CPU time.
pub(crate) const ENABLE_VAR: &str = "LAB_RUN_CGROUPS";

impl RunGroup {
    /// A group for the next run when `LAB_RUN_CGROUPS=1` asks for one and lab can make it.
    pub(crate) fn take_if_enabled() -> Option<RunGroup> {
        if std::env::var_os(ENABLE_VAR).is_some_and(|v| v == "1") {
            Self::take()
        } else {
            None
        }
    }

    /// A free group, made when none is free; `None` where lab cannot make one.
    pub(crate) fn take() -> Option<RunGroup> {
        if let Some(group) = FREE.lock().ok()?.pop() {
            return Some(group);
        }
        let parent = parent()?;
        let mut made = MADE.lock().ok()?;
        let dir = parent.join(format!("{PREFIX}{}-{}", std::process::id(), *made));
        *made += 1;
        std::fs::create_dir(&dir).ok()?;
        let opened = (|| {
            let procs = File::options().write(true).open(dir.join("cgroup.procs"))?;
            let pressure = File::open(dir.join("cpu.pressure"))?;
            std::io::Result::Ok((procs, pressure))
        })();
        match opened {
            Ok((procs, pressure)) => Some(RunGroup {
                dir,
                procs,
                pressure,
            }),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// The descriptor the child writes itself into.
    pub(crate) fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// Microseconds some task of the group has waited for a CPU since the group was made.
    pub(crate) fn waited_us(&mut self) -> Option<u64> {
        use std::io::{Read, Seek};
        let mut text = String::new();
        self.pressure.rewind().ok()?;
        self.pressure.read_to_string(&mut text).ok()?;
        super::machine::psi_some_total(&text)
    }

    /// Returns the group for the next run.
    pub(crate) fn give_back(self) {
        if let Ok(mut free) = FREE.lock() {
            free.push(self);
        }
    }
}

/// The name every group lab makes starts with, followed by lab's PID and a number.
const PREFIX: &str = "lab-run-";

/// Removes this process's free groups: at the end of a session. A group that still holds a
/// process (none should: lab kills what a run leaves behind) stays until the next start.
pub(crate) fn remove_all() {
    let Ok(mut free) = FREE.lock() else {
        return;
    };
    for group in free.drain(..) {
        let _ = std::fs::remove_dir(&group.dir);
    }
}

/// Removes the empty groups that lab processes no longer running left behind.
pub(crate) fn remove_stale() {
    let Some(parent) = parent() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// The folder of lab's own cgroup in the unified hierarchy, when lab may make groups in it:
/// found once from `/proc/self/cgroup` (its `0::` line) and `/proc/self/mountinfo` (the
/// cgroup2 mount), and tried by making and removing one group.
fn parent() -> Option<&'static Path> {
    static PARENT: OnceLock<Option<PathBuf>> = OnceLock::new();
    PARENT
        .get_or_init(|| {
            let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
            let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
            let dir = own_group_dir(&mounts, &own)?;
            let probe = dir.join(format!("{PREFIX}{}-probe", std::process::id()));
            std::fs::create_dir(&probe).ok()?;
            let usable = probe.join("cpu.pressure").exists()
                && File::options()
                    .write(true)
                    .open(probe.join("cgroup.procs"))
                    .is_ok();
            let _ = std::fs::remove_dir(&probe);
            usable.then_some(dir)
        })
        .as_deref()
}

/// The cgroup2 mount point joined with lab's path in that hierarchy.
fn own_group_dir(mountinfo: &str, cgroup: &str) -> Option<PathBuf> {
    super::isolation::group_dir(mountinfo, cgroup, "cgroup2", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_dir_joins_the_cgroup2_mount_and_the_own_path() {
        let mounts = "30 25 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let own = "1:cpu:/\n0::/user.slice/user-1000.slice\n";
        assert_eq!(
            own_group_dir(mounts, own),
            Some(PathBuf::from(
                "/sys/fs/cgroup/unified/user.slice/user-1000.slice"
            ))
        );
        assert_eq!(
            own_group_dir(mounts, "0::/\n"),
            Some(PathBuf::from("/sys/fs/cgroup/unified/"))
        );
        assert_eq!(
            own_group_dir("41 31 0:38 / /x rw - ext4 /dev/vda rw\n", own),
            None
        );
        assert_eq!(own_group_dir(mounts, "1:cpu:/\n"), None);
    }

    #[test]
    fn a_group_counts_the_waiting_of_what_joined_it() {
        let Some(mut group) = RunGroup::take() else {
            eprintln!("skipped: lab cannot make cgroups here");
            return;
        };
        assert_eq!(
            group.waited_us(),
            Some(0),
            "a new group has waited for nothing"
        );
        let dir = group.dir.clone();
        group.give_back();
        let again = RunGroup::take().expect("the free group comes back");
        assert_eq!(again.dir, dir, "groups are reused");
        again.give_back();
        remove_all();
        assert!(!dir.exists(), "removed at the end");
    }
}
