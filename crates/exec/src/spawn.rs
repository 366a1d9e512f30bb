//! Starting a run's process the way `posix_spawn` does: `clone(CLONE_VM | CLONE_VFORK)`, so
//! the child borrows lab's memory until it calls `execve` instead of copying lab's page tables
//! as `fork` would, and lab resumes only once the program is loaded. That copy and its undoing
//! were the dearest part of a trivial run, and they fell inside the timed interval. Unlike
//! `posix_spawn`, the child can also ask to die with lab (`PR_SET_PDEATHSIG`).
//!
//! Everything the child needs is prepared beforehand ([`prepare`], before the run's clock
//! starts): between `clone` and `execve` it only makes system calls on memory prepared here
//! (no allocation, no locks), as vfork(2) demands. The environment, built from lab's own for
//! each variant, is built once and kept for the session's next runs.

use signals::{empty_signal_set, full_signal_set, signals_to_reset};
use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Stack for the child until it calls `execve`: it only makes system calls.
const CHILD_STACK: usize = 64 * 1024;

/// What a run's process is started with.
pub(crate) struct Spawn<'a> {
    pub argv: &'a [String],
    /// Variables set on top of lab's own environment.
    pub env: &'a BTreeMap<String, String>,
    pub cwd: &'a Path,
    pub cpus: Option<libc::cpu_set_t>,
    /// The file the run reads as standard input; `None`: `/dev/null`.
    pub stdin: Option<File>,
    pub stdout: Output<'a>,
    pub stderr: Output<'a>,
    /// A `cgroup.procs` the child writes itself into before `execve`, when the run has a
    /// cgroup of its own.
    pub cgroup_procs: Option<RawFd>,
    /// The counters the child opens on itself just before `execve` and sends to lab.
    pub counters: Option<&'a mut super::counters::Prepared>,
}

/// Where a run's standard output or error goes: a file opened for this run, or one lab
/// keeps open from run to run.
pub(crate) enum Output<'a> {
    Own(File),
    Held(&'a File),
}

impl AsRawFd for Output<'_> {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Output::Own(file) => file.as_raw_fd(),
            Output::Held(file) => file.as_raw_fd(),
        }
    }
}

/// A started process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Started {
    pub pid: libc::pid_t,
    /// Whether it joined the cgroup it was given (false when none was given).
    pub in_cgroup: bool,
}

/// Everything the child reads, laid out before `clone`.
struct Prepared<'a> {
    program: CString,
    #[expect(dead_code, reason = "owns the strings argv_ptrs points into")]
    argv: Vec<CString>,
    argv_ptrs: Vec<*const libc::c_char>,
    #[expect(dead_code, reason = "owns the strings envp_ptrs points into")]
    environment: Arc<Environment>,
    envp_ptrs: Vec<*const libc::c_char>,
    cwd: CString,
    stdin: RawFd,
    #[expect(
        dead_code,
        reason = "owns the descriptor stdin names, when it is not /dev/null"
    )]
    input: Option<File>,
    stdout: Output<'a>,
    stderr: Output<'a>,
    cpus: Option<libc::cpu_set_t>,
    cgroup_procs: Option<RawFd>,
    counters: Option<&'a mut super::counters::Prepared>,
    /// The session's protection of the record (its mount namespace or Landlock ruleset),
    /// entered before `execve`.
    protection: Option<super::isolation::Protection>,
    /// The Landlock ruleset that scopes the child's signals to its own processes, if any.
    signal_scope: Option<RawFd>,
    /// The signals whose disposition the child sets back to the default.
    reset_signals: &'static [libc::c_int],
    /// Written by the child when it could not join its cgroup (the run goes on without it).
    cgroup_refused: bool,
    /// Written by the child when a step before `execve` fails: the errno.
    failed: i32,
}

/// A run's process laid out and ready to start: its arguments, environment, folder and
/// descriptors are prepared, so that [`Ready::start`] is `clone` and the child's few system
/// calls until `execve`, and preparing can happen before the clock starts.
pub(crate) struct Ready<'a>(Prepared<'a>);

/// Lays out everything the run's process is started with; an error is what starting it would
/// fail with (a program not found, not executable, an argument holding a NUL byte).
pub(crate) fn prepare(request: Spawn<'_>) -> io::Result<Ready<'_>> {
    let environment = environment(request.env)?;
    let program = resolve(&request.argv[0], &environment.path, request.cwd)?;
    let argv = request
        .argv
        .iter()
        .map(|a| c_string(a.as_bytes()))
        .collect::<io::Result<Vec<_>>>()?;
    // Entering the session's namespace moves the child to its root: the folder must be
    // absolute to mean the same there.
    let cwd = absolute(request.cwd)?;
    let protection =
        super::isolation::run_protection_for(&cwd, super::privileges::next_run_group());
    Ok(Ready(Prepared {
        program: c_string(program.as_os_str().as_bytes())?,
        argv_ptrs: null_terminated(&argv),
        argv,
        envp_ptrs: null_terminated(&environment.envp),
        environment,
        cwd: c_string(cwd.as_os_str().as_bytes())?,
        stdin: match &request.stdin {
            Some(file) => file.as_raw_fd(),
            None => dev_null()?,
        },
        input: request.stdin,
        stdout: request.stdout,
        stderr: request.stderr,
        cpus: request.cpus,
        cgroup_procs: request.cgroup_procs,
        counters: request.counters,
        protection,
        signal_scope: protection.and_then(|_| super::isolation::signal_scope()),
        reset_signals: signals_to_reset(),
        cgroup_refused: false,
        failed: 0,
    }))
}

impl Ready<'_> {
    /// Has the calling thread's next child born in the session's PID namespace, where the
    /// session has one: called before the run's clock starts, so that the `setns` is not
    /// timed, and handed to [`Ready::start`], which leaves the namespace once the child is
    /// started.
    pub(crate) fn born_inside(&self) -> io::Result<Option<super::pid_namespace::Born>> {
        self.0
            .protection
            .and_then(|p| p.pids)
            .map(super::pid_namespace::Born::inside)
            .transpose()
    }

    /// Starts the prepared process in its own process group and returns its PID; `born` is
    /// what [`Ready::born_inside`] gave.
    pub(crate) fn start(self, born: Option<super::pid_namespace::Born>) -> io::Result<Started> {
        let mut prepared = self.0;
        // The child writes its stack before reading it: no need to zero it.
        let mut stack: Vec<std::mem::MaybeUninit<u8>> = Vec::with_capacity(CHILD_STACK);
        // The stack grows down from its end, aligned to 16 bytes as the ABI requires.
        let top = (stack.as_mut_ptr() as usize + CHILD_STACK) & !15;
        let everything = full_signal_set();
        let mut previous = empty_signal_set();
        // SAFETY: blocking signals on this thread so that no handler of lab runs in the child
        // while it shares lab's memory; restored below.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &everything, &mut previous) };
        // SAFETY: the child runs `child` on its own stack with `prepared`, which outlives it:
        // CLONE_VFORK suspends this thread until the child has called execve or _exit.
        let pid = unsafe {
            libc::clone(
                child,
                top as *mut libc::c_void,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                (&mut prepared as *mut Prepared).cast(),
            )
        };
        let clone_error = io::Error::last_os_error();
        drop(born);
        // SAFETY: restoring this thread's mask as it was.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut()) };
        if pid < 0 {
            return Err(clone_error);
        }
        // SAFETY: the child has exec'd or exited: it no longer writes to `prepared`.
        let failed = unsafe { std::ptr::read_volatile(&prepared.failed) };
        if failed != 0 {
            reap(pid);
            return Err(io::Error::from_raw_os_error(failed));
        }
        // SAFETY: as above.
        let refused = unsafe { std::ptr::read_volatile(&prepared.cgroup_refused) };
        Ok(Started {
            pid,
            in_cgroup: prepared.cgroup_procs.is_some() && !refused,
        })
    }
}

/// Waits for a child that failed before `execve`.
fn reap(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: waiting for our own child with a valid status pointer.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    {}
}

/// A child's environment: lab's own with a variant's variables set on top, sorted by name.
struct Environment {
    /// `NAME=value` for each variable.
    envp: Vec<CString>,
    /// Its `PATH`, where programs are looked up.
    path: Option<OsString>,
}

/// How many environments [`environment`] keeps: a randomised layout pads each run's
/// environment differently, so a session may start more than one per variant.
const ENVIRONMENTS_KEPT: usize = 8;

/// The environment for a variant's variables `set`, built once and kept for the next runs: a
/// session starts the same few variants thousands of times, and copying lab's environment
/// into a new one was the dearest part of starting a run. lab never changes its own
/// environment, so a kept one stays what building it again would give.
fn environment(set: &BTreeMap<String, String>) -> io::Result<Arc<Environment>> {
    type Kept = Vec<(BTreeMap<String, String>, Arc<Environment>)>;
    static KEPT: Mutex<Kept> = Mutex::new(Vec::new());
    if let Some(found) = KEPT
        .lock()
        .ok()
        .and_then(|kept| kept.iter().find(|(k, _)| k == set).map(|(_, e)| e.clone()))
    {
        return Ok(found);
    }
    let built = Arc::new(build_environment(set)?);
    if let Ok(mut kept) = KEPT.lock() {
        if kept.len() == ENVIRONMENTS_KEPT {
            kept.remove(0);
        }
        kept.push((set.clone(), built.clone()));
    }
    Ok(built)
}

fn build_environment(set: &BTreeMap<String, String>) -> io::Result<Environment> {
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    for (k, v) in set {
        env.insert(k.into(), v.into());
    }
    let envp = env
        .iter()
        .map(|(k, v)| {
            let mut pair = k.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(v.as_bytes());
            c_string(&pair)
        })
        .collect::<io::Result<Vec<_>>>()?;
    Ok(Environment {
        envp,
        path: env.remove(OsStr::new("PATH")),
    })
}

/// `cwd` made absolute; a relative folder is taken from lab's own, which never changes
/// during a session, so the last answer is kept.
fn absolute(cwd: &Path) -> io::Result<PathBuf> {
    if cwd.is_absolute() {
        return std::path::absolute(cwd);
    }
    static LAST: Mutex<Option<(PathBuf, PathBuf)>> = Mutex::new(None);
    if let Some(found) = LAST.lock().ok().and_then(|last| {
        last.as_ref()
            .filter(|(relative, _)| relative == cwd)
            .map(|(_, found)| found.clone())
    }) {
        return Ok(found);
    }
    let found = std::path::absolute(cwd)?;
    if let Ok(mut last) = LAST.lock() {
        *last = Some((cwd.to_path_buf(), found.clone()));
    }
    Ok(found)
}

/// `/dev/null`, the standard input of every run, opened once (close-on-exec: a run gets it
/// only as its descriptor 0).
fn dev_null() -> io::Result<RawFd> {
    static DEV_NULL: OnceLock<File> = OnceLock::new();
    if let Some(file) = DEV_NULL.get() {
        return Ok(file.as_raw_fd());
    }
    let opened = File::open("/dev/null")?;
    Ok(DEV_NULL.get_or_init(|| opened).as_raw_fd())
}

/// The file `execve` should load for `program`, found as `execvp` would: a name with a slash
/// is used as given (relative to the run's folder), any other is looked up in the child's
/// `path`. A name found nowhere is "not found".
fn resolve(program: &str, path: &Option<OsString>, cwd: &Path) -> io::Result<PathBuf> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let path = path
        .clone()
        .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    // A session runs the same few programs thousands of times: each is looked up once.
    type Key = (String, OsString, PathBuf);
    static FOUND: Mutex<BTreeMap<Key, PathBuf>> = Mutex::new(BTreeMap::new());
    let key = (program.to_string(), path, cwd.to_path_buf());
    if let Some(found) = FOUND.lock().ok().and_then(|f| f.get(&key).cloned()) {
        return Ok(found);
    }
    let found = search_path(program, &key.1, cwd)?;
    if let Ok(mut cache) = FOUND.lock() {
        cache.insert(key, found.clone());
    }
    Ok(found)
}

/// The first executable `program` in the directories of `path`, relative ones taken from
/// `cwd`.
fn search_path(program: &str, path: &OsStr, cwd: &Path) -> io::Result<PathBuf> {
    let mut denied = false;
    for dir in std::env::split_paths(path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        // execve runs in the run's folder, so the path it gets is taken from there.
        let candidate = dir.join(program);
        match executable(&cwd.join(&candidate)) {
            Some(true) => return Ok(candidate),
            Some(false) => denied = true,
            None => {}
        }
    }
    Err(io::Error::from(if denied {
        io::ErrorKind::PermissionDenied
    } else {
        io::ErrorKind::NotFound
    }))
}

/// Some(true) for an executable regular file, Some(false) for a file that is not executable,
/// None when there is no file.
fn executable(path: &Path) -> Option<bool> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let Ok(c) = c_string(path.as_os_str().as_bytes()) else {
        return None;
    };
    // SAFETY: access with a valid NUL-terminated path.
    Some(unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0)
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "an argument or variable holds a NUL byte",
        )
    })
}

fn null_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// The child, between `clone` and `execve`: system calls only. Any failing step records its
/// errno for the parent and ends the child with status 127.
extern "C" fn child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `Prepared`, alive and not touched by the parent, which
    // is suspended until this function execs or exits.
    let p = unsafe { &mut *arg.cast::<Prepared>() };
    // SAFETY: each call below is async-signal-safe and acts on this process only.
    unsafe {
        // No handler of lab may run here: every caught or ignored signal gets its default
        // action back before signals are unblocked (exec would reset caught ones anyway).
        for &signal in p.reset_signals {
            libc::signal(signal, libc::SIG_DFL);
        }
        if let Some(fd) = p.cgroup_procs
            && libc::write(fd, b"0".as_ptr().cast(), 1) != 1
        {
            std::ptr::write_volatile(&mut p.cgroup_refused, true);
        }
        let steps_ok = super::privileges::unshield_in_child()
            && libc::setpgid(0, 0) == 0
            && libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == 0
            && p.protection
                .is_none_or(|entry| super::isolation::enter_in_child(entry))
            && p.signal_scope
                .is_none_or(|fd| super::landlock::restrict_in_child(fd))
            && p.cpus.as_ref().is_none_or(|set| {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) == 0
            })
            && redirect(p.stdin, 0)
            && redirect(p.stdout.as_raw_fd(), 1)
            && redirect(p.stderr.as_raw_fd(), 2)
            && libc::chdir(p.cwd.as_ptr()) == 0;
        if steps_ok {
            // Last, so that the counters' own opening is the only setup step they could see;
            // they start counting at the execve.
            if let Some(counters) = p.counters.as_deref_mut() {
                counters.open_in_child();
            }
        }
        // The capabilities go after the counters, which a root lab's child may need them to
        // open.
        let ready = steps_ok
            && (p.protection.is_none() || super::privileges::give_up_capabilities_in_child());
        if ready {
            let empty = empty_signal_set();
            libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::execve(
                p.program.as_ptr(),
                p.argv_ptrs.as_ptr(),
                p.envp_ptrs.as_ptr(),
            );
        }
        std::ptr::write_volatile(&mut p.failed, *libc::__errno_location());
        libc::_exit(127)
    }
}

/// Makes `fd` the child's descriptor `target`, open across `execve`.
///
/// # Safety
/// Only in the child: async-signal-safe calls on descriptors it owns.
unsafe fn redirect(fd: RawFd, target: RawFd) -> bool {
    if fd == target {
        // dup2 onto itself keeps close-on-exec: clear it instead.
        // SAFETY: fcntl on a valid descriptor.
        return unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } == 0;
    }
    // SAFETY: dup2 between valid descriptors.
    unsafe { libc::dup2(fd, target) == target }
}

#[path = "spawn_signals.rs"]
mod signals;

#[cfg(test)]
#[path = "spawn_tests.rs"]
mod tests;
