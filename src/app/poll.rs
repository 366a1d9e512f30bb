//! Where `lab book --serve` cannot be told of changes by the kernel: why, and the fix, said
//! once; then the once-a-second look at every modification time under experiments/ and data/
//! that lab used before it had notifications. Modification times also say what changed when
//! notifications were lost (the kernel's queue overflowed).

use super::changes::{Change, Pending, change_inside};
use super::rebuild::{rebuild, session_running};
use crate::layout::Layout;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// How far a file's modification time may lag the clock (the kernel stamps files with a
/// coarser clock than it reads out).
const MTIME_SLACK: Duration = Duration::from_secs(1);
/// How often the fallback looks for changed inputs.
const POLL: Duration = Duration::from_secs(1);

/// The warning that the kernel will not report changes: why, what it costs, and the fix.
pub(super) fn fallback_notice(layout: &Layout, failure: &notify::Error) -> String {
    let (reason, fix) = match &failure.kind {
        notify::ErrorKind::MaxFilesWatch => (
            "the limit of inotify watches is reached".to_string(),
            watch_limit_hint(
                sysctl("fs/inotify/max_user_watches"),
                watches_needed(layout),
            ),
        ),
        notify::ErrorKind::Io(e) if e.raw_os_error() == Some(libc::EMFILE) => (
            "the limit of inotify instances is reached".to_string(),
            format!(
                "raise it with `sudo sysctl fs.inotify.max_user_instances={}`, then restart \
                 `lab book --serve`",
                sysctl("fs/inotify/max_user_instances").map_or(1024, |n| n * 2)
            ),
        ),
        _ => (
            failure.to_string(),
            "the file system may not support inotify (some network and FUSE mounts do not): \
             serve from a local disk to make an idle server cost nothing"
                .to_string(),
        ),
    };
    format!(
        "warning: `lab book --serve` cannot be told of changes by the kernel: {reason}; it \
         looks for them once a second instead, which costs CPU over a large data/ folder\n  \
         hint: {fix}"
    )
}

/// How to raise the inotify watch limit `limit` so that `needed` more watches fit.
fn watch_limit_hint(limit: Option<u64>, needed: u64) -> String {
    let needs = format!(
        "lab needs {needed} watches here (one for each folder under experiments/ and data/)"
    );
    let Some(limit) = limit else {
        return format!(
            "{needs}: raise the limit with `sudo sysctl fs.inotify.max_user_watches=N`"
        );
    };
    let raised = (limit + needed).next_power_of_two();
    format!(
        "{needs}, and all of this user's programs share a limit of {limit}: raise it with \
         `sudo sysctl fs.inotify.max_user_watches={raised}` (and in /etc/sysctl.d/ to keep it), \
         then restart `lab book --serve`"
    )
}

/// A number under /proc/sys.
fn sysctl(key: &str) -> Option<u64> {
    std::fs::read_to_string(Path::new("/proc/sys").join(key))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The watches lab takes: the project folder, experiments/, data/ and every folder in them.
fn watches_needed(layout: &Layout) -> u64 {
    [layout.experiments(), layout.data()]
        .iter()
        .map(|tree| folders_in(tree))
        .sum::<u64>()
        + 1
}

fn folders_in(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    1 + entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| folders_in(&e.path()))
        .sum::<u64>()
}

/// The fallback: a rebuild of every chapter whenever the newest modification time under
/// experiments/ and data/ moves, looked at once a second, which stats every file (over a
/// 100,000-run session's logs, about a fifth of a CPU).
pub(super) fn poll(layout: &Layout, quiet: bool, mut seen: Option<SystemTime>) -> ! {
    loop {
        std::thread::sleep(POLL);
        let now = newest_input(layout);
        if now == seen || session_running(layout) {
            continue;
        }
        seen = now;
        rebuild(layout, &Pending::Everything, quiet);
    }
}

/// The latest modification time under experiments/ and data/.
pub(super) fn newest_input(layout: &Layout) -> Option<SystemTime> {
    [layout.experiments(), layout.data()]
        .iter()
        .filter_map(|d| newest_in(d))
        .max()
}

fn newest_in(dir: &Path) -> Option<SystemTime> {
    let mut newest = std::fs::metadata(dir).and_then(|m| m.modified()).ok();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let time = if path.is_dir() {
            newest_in(&path)
        } else {
            entry.metadata().and_then(|m| m.modified()).ok()
        };
        newest = newest.max(time);
    }
    newest
}

/// What changed at `since` or later by modification times (give or take the kernel's
/// coarser clock): each experiment folder under experiments/ and data/ holding a newer file is
/// that experiment's change; a tree whose own entries changed is everyone's.
pub(super) fn changed_since(layout: &Layout, since: SystemTime) -> Vec<Change> {
    let since = since - MTIME_SLACK;
    let mut changes = Vec::new();
    for tree in [layout.experiments(), layout.data()] {
        let modified = std::fs::metadata(&tree).and_then(|m| m.modified());
        if modified.is_ok_and(|m| m >= since) {
            changes.push(Change::Everything);
        }
        for entry in std::fs::read_dir(&tree).into_iter().flatten().flatten() {
            if newest_in(&entry.path()).is_some_and(|m| m >= since) {
                changes.push(change_inside(layout, &entry.path()));
            }
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watch_limit_hint_raises_it_past_what_lab_needs() {
        let hint = watch_limit_hint(Some(8192), 40_000);
        assert!(hint.contains("lab needs 40000 watches here"), "{hint}");
        assert!(hint.contains("a limit of 8192"), "{hint}");
        assert!(
            hint.contains("`sudo sysctl fs.inotify.max_user_watches=65536`"),
            "{hint}"
        );
        let unknown = watch_limit_hint(None, 3);
        assert!(
            unknown.contains("fs.inotify.max_user_watches=N"),
            "{unknown}"
        );
    }

    #[test]
    fn the_watches_needed_are_the_project_both_trees_and_every_folder_in_them() {
        let root = tempfile::tempdir().unwrap();
        for dir in ["experiments/a/templates", "data/a/s1/logs", "data/a/s2"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        std::fs::write(root.path().join("data/a/s1/logs/r1.out"), "").unwrap();
        // the project; experiments, a, templates; data, a, s1, logs, s2
        assert_eq!(watches_needed(&Layout::new(root.path())), 9);
    }

    /// Sets the modification time of every file and folder under `dir` to an hour ago.
    fn age(dir: &Path) {
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                age(&entry.path());
            }
            let file = std::fs::File::open(entry.path()).unwrap();
            file.set_modified(hour_ago).unwrap();
        }
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    }

    #[test]
    fn after_lost_events_what_changed_is_read_from_modification_times() {
        use super::super::changes::Owner;
        let root = tempfile::tempdir().unwrap();
        for dir in ["experiments/a", "experiments/b", "data/a/s1", "data/b/s1"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        std::fs::write(root.path().join("data/b/s1/runs.csv"), "").unwrap();
        for tree in ["experiments", "data"] {
            age(&root.path().join(tree));
        }
        let layout = Layout::new(root.path());
        let since = SystemTime::now();
        assert_eq!(changed_since(&layout, since), vec![]);
        std::fs::write(root.path().join("data/b/s1/runs.csv"), "run").unwrap();
        assert_eq!(
            changed_since(&layout, since),
            vec![Change::Chapter(Owner::Data("b".into()))]
        );
        std::fs::create_dir(root.path().join("experiments/c")).unwrap();
        assert!(changed_since(&layout, since).contains(&Change::Everything));
    }
}
