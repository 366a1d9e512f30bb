//! What a run may do beyond its files: nothing. A child of lab that lab started as root gives
//! up every capability before `execve` (empty permitted, effective and inheritable sets, and
//! the `NOROOT` securebits, so executing as user 0 grants none back, capabilities(7)
//! "Capabilities and execution of programs by root"), sets `no_new_privs` (a setuid program,
//! or one with file capabilities, left in /tmp by a build runs with the run's rights,
//! prctl(2)), and takes a group of its own (`nogroup`).
//!
//! The group is what keeps the run out of other processes' views, another run's included: `/proc/PID/root`, `cwd`,
//! `fd`, `environ` and `mem` of a process are open to a caller without `CAP_SYS_PTRACE` only
//! when its user *and group* IDs are the target's (ptrace(2), "Ptrace access mode checking").
//! A run keeps user 0, so it still reads what root reads (tools under /root included), but it
//! can no longer step through lab's `/proc/PID/root` into lab's own view of the files, where
//! the record is writable, nor through any other process of root's.
//!
//! Signals need the same user, not the same group: kill(2) lets a process without
//! `CAP_KILL` signal another when its real or effective user ID is the target's real or saved
//! one. While runs execute, lab's real and saved user IDs are [`SHIELD_USER`], its effective
//! one stays 0 (so it keeps every capability, capabilities(7) "Effect of user ID changes on
//! capabilities"), and each run starts with user 0 as all three: a run can no longer stop lab
//! (`kill -STOP $PPID`) or end its session (`kill -TERM $PPID`). Runs share user 0 among
//! themselves; what keeps one from signalling another (`--jobs`, `--duet`) is the Landlock
//! scope each run restricts itself to (see `landlock`).
//!
//! Where lab is not root there is nothing to give up but `no_new_privs`, which Landlock needs
//! anyway, and runs share lab's user.

/// `_LINUX_CAPABILITY_VERSION_3` (linux/capability.h): capability sets of 64 bits, as two
/// 32-bit halves.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// securebits (linux/securebits.h): `SECBIT_NOROOT`, `SECBIT_NO_SETUID_FIXUP` and
/// `SECBIT_NO_CAP_AMBIENT_RAISE` set, `SECBIT_KEEP_CAPS` clear, each locked so that neither
/// the run nor its children can change them.
const SECUREBITS: libc::c_ulong =
    (1 << 0) | (1 << 1) | (1 << 2) | (1 << 3) | (1 << 5) | (1 << 6) | (1 << 7);

/// The group a build executes in: `nogroup` on Debian, `nobody` on Fedora (65534 both).
pub(crate) const BUILD_GROUP: libc::gid_t = 65534;

/// The first of the groups runs execute in, one per run started (a million in turn), above
/// the IDs systems give to users and groups: no file or process but the run's has its group.
const FIRST_RUN_GROUP: libc::gid_t = 0x7000_0000;

/// The user ID lab's real and saved IDs take while runs execute: no process has it (user IDs
/// above 2³⁰ are not handed out), so no run has the ID kill(2) asks of a signal to lab.
const SHIELD_USER: libc::uid_t = 0x6FFF_FFFF;

/// Whether this process is lab itself, one session to a process, which may change its real
/// user ID while runs execute ([`shield_from_runs`]); a program that drives sessions as a
/// library (a test harness whose other threads start processes meanwhile) keeps its own.
static SHIELD_WANTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks that runs may not signal this process while they execute ([`SignalShield`]): for the
/// `lab` binary, whose threads start nothing but runs while runs execute.
pub fn shield_from_runs() {
    SHIELD_WANTED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Whether lab's real and saved user IDs are [`SHIELD_USER`] now.
static SHIELDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// While it lives, runs cannot signal lab: lab's real and saved user IDs are [`SHIELD_USER`]
/// (see the module's notes). Raised only where [`shield_from_runs`] asked for it and lab runs
/// as user 0 in all three IDs; a second one raised while the first lives does nothing.
pub(crate) struct SignalShield {
    raised: bool,
}

impl SignalShield {
    pub(crate) fn raise() -> SignalShield {
        let (mut real, mut effective, mut saved) = (1, 1, 1);
        // SAFETY: getresuid writes three integers we own; setresuid changes this process's
        // credentials, in every thread (glibc applies it process-wide).
        let raised = SHIELD_WANTED.load(std::sync::atomic::Ordering::SeqCst)
            && unsafe {
                libc::getresuid(&mut real, &mut effective, &mut saved) == 0
                    && (real, effective, saved) == (0, 0, 0)
                    && libc::setresuid(SHIELD_USER, libc::uid_t::MAX, SHIELD_USER) == 0
            };
        SHIELDED.store(raised, std::sync::atomic::Ordering::SeqCst);
        SignalShield { raised }
    }
}

impl Drop for SignalShield {
    fn drop(&mut self) {
        if self.raised {
            // SAFETY: as in `raise`; the effective ID 0 may set the others back.
            unsafe { libc::setresuid(0, libc::uid_t::MAX, 0) };
            SHIELDED.store(false, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

/// Gives a child started under a [`SignalShield`] user 0 as its real and saved IDs again, as
/// lab had before the shield: its programs run as root's always did (a real ID other than
/// the effective one would put them in secure-execution mode, ld.so(8)).
///
/// The system call itself, not glibc's wrapper: in a child of `clone(CLONE_VM)` the wrapper
/// would take lab's threads for the child's and change their IDs as well (it applies an ID
/// change to every thread of the process, nptl(7)).
///
/// # Safety
/// Only in a freshly started child, before it gives up its capabilities.
pub(crate) unsafe fn unshield_in_child() -> bool {
    // SAFETY: one system call with integer arguments, on this process.
    !SHIELDED.load(std::sync::atomic::Ordering::Relaxed)
        || unsafe { libc::syscall(libc::SYS_setresuid, 0, 0, 0) == 0 }
}

/// How many runs have been given a group.
static RUNS_GROUPED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A group for the next run to start, no other run's.
pub(crate) fn next_run_group() -> libc::gid_t {
    let n = RUNS_GROUPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    FIRST_RUN_GROUP + n % 1_000_000
}

/// Gives up every privilege but the capabilities themselves (see
/// [`give_up_capabilities_in_child`], the last step before `execve`), in a child between
/// `fork` and `execve`: system calls only. `false` when a step failed (the child must not run
/// then).
///
/// # Safety
/// Only in a freshly started child: the calls change this process's credentials.
pub(crate) unsafe fn drop_in_child(group: libc::gid_t) -> bool {
    // SAFETY: each call acts on the calling process only, with integer arguments or a pointer
    // to a local array.
    unsafe {
        if libc::geteuid() == 0 {
            let groups = [group];
            // System calls, not glibc's wrappers, as in `unshield_in_child`.
            let credentials = unshield_in_child()
                && libc::syscall(libc::SYS_setgroups, 1, groups.as_ptr()) == 0
                && libc::syscall(libc::SYS_setresgid, group, group, group) == 0
                && libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) == 0;
            if !credentials {
                return false;
            }
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
                0,
                0,
                0,
            );
        }
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    }
}

/// Gives up what [`drop_in_child`] leaves for the last step before `execve`: the child's
/// capabilities, which it still needs to open its perf counters on itself. `false` when the
/// step failed (the child must not run then). Nothing to do where lab is not root.
///
/// # Safety
/// Only in a freshly started child, after [`drop_in_child`]: it changes this process's
/// credentials.
pub(crate) unsafe fn give_up_capabilities_in_child() -> bool {
    // SAFETY: geteuid has no preconditions; clear_capabilities acts on this process.
    unsafe { libc::geteuid() != 0 || clear_capabilities() }
}

/// Empties this process's permitted, effective and inheritable capability sets with one
/// `capset(2)`. With `no_new_privs` set, `execve` grants no capability the process did not
/// hold (capabilities(7), "Transformation of capabilities during execve()": a gain is
/// intersected with the old permitted set), and `SECBIT_NOROOT` gives user 0 none: from an
/// empty permitted set, no program the run executes — one with file capabilities included —
/// gains any. One system call, where emptying the bounding set took one per capability
/// (about 25 µs a run, inside the timed interval).
///
/// # Safety
/// Only in a freshly started child: it changes this process's credentials.
unsafe fn clear_capabilities() -> bool {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let header = Header {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let none = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a header and two data structs of the layout version 3 defines.
    unsafe { libc::syscall(libc::SYS_capset, &header, none.as_ptr()) == 0 }
}

/// Makes lab itself undumpable: its `/proc/PID` files (`root`, `cwd`, `fd`, `mem`, `environ`)
/// are then open only to a process with `CAP_SYS_PTRACE`, which no run has. Children get
/// their own dumpable flag back at `execve`.
pub(crate) fn guard_own_proc_files() {
    // SAFETY: prctl with integer arguments; it changes a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    fn status_field(status: &str, field: &str) -> String {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// `/proc/self/status` as `program` (a copy of cat) prints it in a child that gave up its
    /// privileges.
    fn status_after_drop(program: &std::path::Path) -> String {
        let mut command = Command::new(program);
        command.arg("/proc/self/status");
        // SAFETY: drop_in_child makes only system calls.
        unsafe {
            command.pre_exec(|| {
                if super::drop_in_child(super::BUILD_GROUP)
                    && super::give_up_capabilities_in_child()
                {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        String::from_utf8_lossy(&command.output().unwrap().stdout).into_owned()
    }

    #[test]
    fn a_program_with_file_capabilities_gains_none_in_a_child() {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let dir = tempfile::tempdir().unwrap();
        let cat = dir.path().join("cat");
        std::fs::copy("/bin/cat", &cat).unwrap();
        let set = Command::new("setcap")
            .args(["cap_dac_read_search,cap_net_raw+ep"])
            .arg(&cat)
            .status();
        if !root || !set.is_ok_and(|s| s.success()) {
            eprintln!("skipped: needs root and setcap");
            return;
        }
        let status = status_after_drop(&cat);
        assert_eq!(status_field(&status, "CapEff:"), "0000000000000000");
        assert_eq!(status_field(&status, "CapPrm:"), "0000000000000000");
    }

    #[test]
    fn a_child_has_no_capability_and_cannot_gain_one() {
        let status = status_after_drop(std::path::Path::new("cat"));
        assert_eq!(status_field(&status, "NoNewPrivs:"), "1");
        assert_eq!(status_field(&status, "CapEff:"), "0000000000000000");
        assert_eq!(status_field(&status, "CapPrm:"), "0000000000000000");
        assert_eq!(status_field(&status, "CapAmb:"), "0000000000000000");
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            assert_eq!(status_field(&status, "CapInh:"), "0000000000000000");
            let gid = status_field(&status, "Gid:");
            assert!(gid.split_whitespace().all(|g| g == "65534"), "{gid}");
        }
    }
}
