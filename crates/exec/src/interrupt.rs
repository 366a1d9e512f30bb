//! Stopping by signal: runs live in their own process groups, so the terminal's SIGINT reaches
//! only lab. SIGINT, SIGTERM and SIGHUP all stop a session the same way: lab kills the running
//! group, keeps every finished run, and exits 128 + the signal (130, 143, 129). Once the runs
//! are over, the default actions return, so a signal stops the report at once (chapters are
//! swapped in whole, so nothing is left half-written).

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked lab to stop; 0 while none has.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signals lab catches while runs execute.
pub(super) const HANDLED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(signal: libc::c_int) {
    SIGNAL.store(signal, Ordering::SeqCst);
    // Runs executing side by side (`--jobs`) are each waited for by their own thread, which
    // the signal may not reach: their groups are killed here.
    super::running::kill_all();
}

/// Installs the handler, without SA_RESTART so a blocking wait returns.
pub(crate) fn install() {
    // SAFETY: the handler stores the signal in an atomic and sends SIGKILL with kill(2) to the
    // process groups registered in a fixed array of atomics (exec::running): atomic loads and
    // stores and kill(2) are async-signal-safe, and nothing in it allocates or takes a lock.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in HANDLED {
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Gives the signals their default actions back (end the process).
pub fn restore_default() {
    // SAFETY: resetting dispositions to SIG_DFL.
    unsafe {
        for signal in HANDLED {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
}

/// True once a signal asked lab to stop.
pub(crate) fn requested() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// The signal that stopped lab (SIGINT when none was recorded).
pub fn signal() -> i32 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => libc::SIGINT,
        s => s,
    }
}
