//! A PID namespace for a project's sessions, with a `/proc` of its own in the mount namespaces
//! its runs and builds see. A run then finds in `/proc` only the session's processes: neither
//! lab, nor lab's parents, nor the rest of the machine. Its parent, lab, lives outside, so
//! `$PPID` is 0 and `/proc/$PPID/…` names nothing, and no PID it can write reaches lab.
//!
//! One namespace for the session, not one per run: inside a run's own namespace the run would
//! be PID 1, so every concurrent run would have `$$` = 1 (temporary files named by PID collide),
//! and the kernel would ignore the signals it sends itself without a handler (`abort()`).
//! bubblewrap (`bwrap --unshare-pid --proc /proc`) would give each run that namespace, at the
//! price of an exec before each timed program; the runs' own `setns` here costs two system
//! calls. Signals between the session's runs are already scoped by Landlock (see `landlock`),
//! and `/proc/PID/{root,cwd,fd,environ}` of another run needs its group ID (see `privileges`).
//!
//! The namespace's first process, its init, is a fork of lab that makes system calls only: it
//! mounts the `/proc`, reaps the orphans of runs (a process whose parent ends is re-parented to
//! the init of its namespace, never to a subreaper outside it: `find_new_reaper`,
//! kernel/exit.c), and ends when lab closes its pipe or dies. Its end kills every process left
//! in the namespace (pid_namespaces(7)).

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// A session's PID namespace, held open by its init.
pub(crate) struct PidNamespace {
    namespace: File,
    init: libc::pid_t,
    /// Lab's end of the pipe the init waits on: the init ends when it is closed.
    #[expect(dead_code, reason = "held open for the init, never written")]
    alive: OwnedFd,
}

impl PidNamespace {
    /// Makes a PID namespace whose init mounts its `/proc` in each mount namespace of
    /// `mounts`, or says why it could not.
    pub(crate) fn make(mounts: &[RawFd]) -> Result<PidNamespace, String> {
        let mounts = mounts.to_vec();
        // unshare(CLONE_NEWPID) changes where the calling thread's children are born: a thread
        // of its own, which ends once the init is started.
        std::thread::spawn(move || start_init(&mounts))
            .join()
            .map_err(|_| "the thread starting its init panicked".to_string())?
    }

    /// The init's PID, as lab sees it.
    pub(crate) fn init(&self) -> libc::pid_t {
        self.init
    }

    /// The namespace's descriptor, for [`Born::inside`].
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.namespace.as_raw_fd()
    }
}

impl Drop for PidNamespace {
    fn drop(&mut self) {
        let mut status = 0;
        // SAFETY: SIGKILL to our own child, the init, which ends the namespace with it, then
        // reaping it. Its pipe closes after, with `alive`.
        unsafe {
            libc::kill(self.init, libc::SIGKILL);
            libc::waitpid(self.init, &mut status, 0);
        }
    }
}

/// Where the calling thread's children are born: in a session's PID namespace while a
/// [`Born`] is held, in lab's own again after.
pub(crate) struct Born {
    _private: (),
}

impl Born {
    /// Has the calling thread's next children born in the namespace of `namespace`.
    pub(crate) fn inside(namespace: RawFd) -> io::Result<Born> {
        // The descriptor of lab's own namespace is opened first, so that leaving cannot fail
        // for want of it.
        own_namespace()?;
        // SAFETY: setns on a namespace descriptor; it changes this thread's children only.
        if unsafe { libc::setns(namespace, libc::CLONE_NEWPID) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Born { _private: () })
    }
}

impl Drop for Born {
    fn drop(&mut self) {
        if let Ok(own) = own_namespace() {
            // SAFETY: as in `inside`: back to lab's own namespace, an ancestor of the other.
            unsafe { libc::setns(own.as_raw_fd(), libc::CLONE_NEWPID) };
        }
    }
}

/// Lab's own PID namespace, opened once.
fn own_namespace() -> io::Result<&'static File> {
    static OWN: OnceLock<Result<File, String>> = OnceLock::new();
    OWN.get_or_init(|| File::open("/proc/self/ns/pid").map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| io::Error::other(e.clone()))
}

/// On a thread of its own: a new PID namespace for this thread's children, and its init.
fn start_init(mounts: &[RawFd]) -> Result<PidNamespace, String> {
    let (alive_read, alive_write) = pipe()?;
    let (status_read, status_write) = pipe()?;
    let init = Init {
        mounts,
        alive: alive_read.as_raw_fd(),
        alive_other_end: alive_write.as_raw_fd(),
        status: status_write.as_raw_fd(),
        status_other_end: status_read.as_raw_fd(),
        proc_source: c"proc",
        proc_target: c"/proc",
        name: c"lab-init",
    };
    // SAFETY: unshare with a flag only; it changes where this thread's children are born.
    if unsafe { libc::unshare(libc::CLONE_NEWPID) } != 0 {
        return Err(errno_text("unshare(CLONE_NEWPID)"));
    }
    // SAFETY: the child makes system calls only, on memory prepared above (see `Init::run`).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(errno_text("fork"));
    }
    if pid == 0 {
        init.run();
    }
    drop(alive_read);
    drop(status_write);
    let status = read_status(&status_read);
    let namespace = File::open(format!("/proc/{pid}/ns/pid"));
    match (status, namespace) {
        (0, Ok(namespace)) => Ok(PidNamespace {
            namespace,
            init: pid,
            alive: alive_write,
        }),
        (errno, namespace) => {
            // SAFETY: SIGKILL to the init just forked, then reaping it.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
            Err(match namespace {
                Err(e) => format!("/proc/{pid}/ns/pid: {e}"),
                Ok(_) => format!(
                    "its init could not mount /proc: {}",
                    io::Error::from_raw_os_error(errno)
                ),
            })
        }
    }
}

/// What the init works with, prepared before the fork.
struct Init<'a> {
    mounts: &'a [RawFd],
    alive: RawFd,
    alive_other_end: RawFd,
    status: RawFd,
    status_other_end: RawFd,
    proc_source: &'static std::ffi::CStr,
    proc_target: &'static std::ffi::CStr,
    name: &'static std::ffi::CStr,
}

impl Init<'_> {
    /// The init, in the child of `fork`: system calls only (lab has other threads, whose locks
    /// the child may hold copies of). Reports 0 or an errno on `status`, then reaps orphans
    /// until lab's end of `alive` closes.
    fn run(&self) -> ! {
        // SAFETY: each call is async-signal-safe and acts on this process only.
        unsafe {
            libc::close(self.alive_other_end);
            libc::close(self.status_other_end);
            libc::prctl(libc::PR_SET_NAME, self.name.as_ptr(), 0, 0, 0);
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
            let mut status: i32 = 0;
            for &mount in self.mounts {
                if libc::setns(mount, libc::CLONE_NEWNS) != 0 || self.mount_proc() != 0 {
                    status = *libc::__errno_location();
                    break;
                }
            }
            libc::write(self.status, (&raw const status).cast(), 4);
            libc::close(self.status);
            if status != 0 {
                libc::_exit(1);
            }
            // Every descriptor but its pipe from lab goes: a fork holds copies of lab's, among
            // them the pipes of other projects' inits, which must close when lab does.
            let alive = self.alive as libc::c_uint;
            if alive > 0 {
                libc::syscall(libc::SYS_close_range, 0, alive - 1, 0);
            }
            libc::syscall(libc::SYS_close_range, alive + 1, libc::c_uint::MAX, 0);
            self.reap_until_lab_is_gone()
        }
    }

    /// Mounts a `/proc` of this namespace on `/proc`.
    ///
    /// # Safety
    /// In the init only.
    unsafe fn mount_proc(&self) -> libc::c_int {
        // SAFETY: mount(2) with NUL-terminated strings.
        unsafe {
            libc::mount(
                self.proc_source.as_ptr(),
                self.proc_target.as_ptr(),
                self.proc_source.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            )
        }
    }

    /// Waits on `alive` and on SIGCHLD, reaping every child that ended, until `alive` reads
    /// end of file (lab closed it, or died); then ends, and the namespace with it.
    fn reap_until_lab_is_gone(&self) -> ! {
        // SAFETY: signal masks, a signalfd, poll and waitpid: system calls on this process.
        unsafe {
            let mut children = std::mem::zeroed::<libc::sigset_t>();
            libc::sigemptyset(&mut children);
            libc::sigaddset(&mut children, libc::SIGCHLD);
            libc::sigprocmask(libc::SIG_BLOCK, &children, std::ptr::null_mut());
            let ended = libc::signalfd(-1, &children, libc::SFD_NONBLOCK);
            let mut fds = [
                libc::pollfd {
                    fd: self.alive,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: ended,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let mut info = [0u8; 128];
            loop {
                while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
                if libc::poll(fds.as_mut_ptr(), 2, -1) < 0 {
                    continue;
                }
                if fds[0].revents != 0 {
                    libc::_exit(0);
                }
                while libc::read(ended, info.as_mut_ptr().cast(), info.len()) > 0 {}
            }
        }
    }
}

/// A pipe, both ends closed on exec: no program lab starts holds the init alive.
fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(errno_text("pipe2"));
    }
    // SAFETY: both descriptors were just made and are owned here alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The init's report: 0 when its `/proc`s are mounted, else the errno; `EIO` where it ended
/// without one.
fn read_status(from: &OwnedFd) -> i32 {
    let mut status = [0u8; 4];
    // SAFETY: reading into a buffer of the length given.
    let read = unsafe { libc::read(from.as_raw_fd(), status.as_mut_ptr().cast(), 4) };
    if read == 4 {
        i32::from_ne_bytes(status)
    } else {
        libc::EIO
    }
}

fn errno_text(what: &str) -> String {
    format!("{what}: {}", io::Error::last_os_error())
}
