//! The signal masks and dispositions around a run's start: every signal blocked while the
//! child shares lab's memory, and the few whose disposition lab or the runtime changed set back
//! to their default before `execve`.

use std::sync::OnceLock;

pub(super) fn full_signal_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data, initialised by sigfillset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        set
    }
}

/// Signals the Rust runtime changes before `main`: SIGPIPE ignored, SIGSEGV and SIGBUS caught
/// for stack overflows.
const CHANGED_BY_RUNTIME: [libc::c_int; 3] = [libc::SIGPIPE, libc::SIGSEGV, libc::SIGBUS];

/// The signals a run's process must set back to their default action before `execve`: those
/// caught or ignored when the first run was prepared, and those lab's stopping handlers
/// ([`super::super::interrupt`]) or the Rust runtime may change whatever was found then. Every other
/// signal already has its default action, so setting it again, as a `sigaction` call in the
/// timed interval of every run, would change nothing (29 calls took about 7 µs a run here).
pub(super) fn signals_to_reset() -> &'static [libc::c_int] {
    static SIGNALS: OnceLock<Vec<libc::c_int>> = OnceLock::new();
    SIGNALS.get_or_init(|| {
        let mut signals: Vec<libc::c_int> = caught_or_ignored()
            .into_iter()
            .chain(super::super::interrupt::HANDLED)
            .chain(CHANGED_BY_RUNTIME)
            .collect();
        signals.sort_unstable();
        signals.dedup();
        signals
    })
}

/// The standard signals caught or ignored in this process now.
pub(super) fn caught_or_ignored() -> Vec<libc::c_int> {
    (1..libc::SIGRTMIN())
        .filter(|&s| has_changed_disposition(s))
        .collect()
}

/// Whether `signal` is caught or ignored in this process. SIGKILL and SIGSTOP cannot be, and
/// the signals the C library keeps for itself (32 and 33 with glibc) cannot be read or set
/// through it: neither is ever counted.
fn has_changed_disposition(signal: libc::c_int) -> bool {
    if signal == libc::SIGKILL || signal == libc::SIGSTOP {
        return false;
    }
    // SAFETY: sigaction with a null new action only reads the disposition into `current`.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction != libc::SIG_DFL
    }
}

pub(super) fn empty_signal_set() -> libc::sigset_t {
    // SAFETY: as above, by sigemptyset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        set
    }
}
