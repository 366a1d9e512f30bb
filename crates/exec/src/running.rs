//! The process groups of runs executing at the same time (`lab run --jobs N`). A stop signal
//! kills every registered group from the handler itself, since the thread it lands on waits
//! for one run only; a run's clean-up of what it left behind spares the groups of the runs
//! still executing beside it; and spawning is serialised with that clean-up, so a run just
//! started is never taken for a leftover of another.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard};

/// At most one run per CPU executes at once, and CPU sets hold at most `CPU_SETSIZE` CPUs.
const SLOTS: usize = libc::CPU_SETSIZE as usize;

/// Registered process group ids; 0 marks a free slot.
static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// Held while a run is spawned and registered, and while a finished run's leftovers are
/// looked for and killed.
static SPAWNING: Mutex<()> = Mutex::new(());

/// Holds off other runs' spawns and clean-ups until dropped.
pub(crate) fn exclusive() -> MutexGuard<'static, ()> {
    SPAWNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Records that process group `pgid` belongs to a run now executing.
pub(crate) fn register(pgid: libc::pid_t) {
    for slot in &GROUPS {
        if slot
            .compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// Forgets `pgid` once its run is over.
pub(crate) fn unregister(pgid: libc::pid_t) {
    for slot in &GROUPS {
        if slot
            .compare_exchange(pgid, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// Whether `pgid` is the group of a run executing now.
pub(crate) fn is_registered(pgid: libc::pid_t) -> bool {
    pgid != 0 && GROUPS.iter().any(|s| s.load(Ordering::SeqCst) == pgid)
}

/// Kills every registered group. Async-signal-safe: atomic loads and `kill` only.
pub(crate) fn kill_all() {
    for slot in &GROUPS {
        let pgid = slot.load(Ordering::SeqCst);
        if pgid > 0 {
            // SAFETY: kill is async-signal-safe; the group is one lab created for a run.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_registered_and_forgotten() {
        // Numbers no real group of this test process has.
        register(-7);
        register(-8);
        assert!(is_registered(-7) && is_registered(-8));
        unregister(-7);
        assert!(!is_registered(-7) && is_registered(-8));
        unregister(-8);
        assert!(!is_registered(-8));
        assert!(!is_registered(0));
    }
}
