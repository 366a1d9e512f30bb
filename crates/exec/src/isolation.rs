//! Containment of runs and builds. A session's runs and builds see the project through mount
//! namespaces of their own, made once when the session starts, where the record (`data/`),
//! the book (`book/`, made first if missing, so that no run can make it a link), lab's own
//! executable and the cgroup file system are read-only: a run that tries to rewrite a row or
//! plant a chapter fails inside the run (EROFS), and it cannot leave its cgroup. Runs see
//! what the chapters trust in each experiment folder (its lab.toml, notes.md and templates/)
//! and lab's own folder (`.lab/`, with the worktrees of `--revs`) read-only as well; builds,
//! which write their outputs into `.lab/worktrees/`, do not. Each child enters its namespace
//! with `setns(2)` before `execve` (no copy of the mount table per run) and gives up every
//! privilege (see `privileges`), so it cannot remount, unmount or leave the namespace, nor
//! reach lab's view of the files through `/proc`. BenchExec's container mode (Beyer, Löwe
//! and Wendler, "Reliable benchmarking: requirements and solutions", STTT 2019) is the model.
//!
//! Where lab may not make a mount namespace (an unprivileged user), a Landlock ruleset made
//! once per session does the same for files: each child restricts itself to it before
//! `execve`, and a write beneath the record fails with EACCES (see `landlock`).
//!
//! Lab itself joins a cgroup made at its first session, so every process it starts, and
//! everything those start, is born inside it and cannot move out. A small guard outside the group waits
//! on a pipe only lab holds: when lab ends, however it ends (SIGKILL included), the pipe
//! closes and the guard kills whatever is still in the group (`cgroup.kill`, Linux 5.14) and
//! removes it. Where the kernel or lab's privileges allow neither, runs go as before (each in
//! its own process group, reaped by lab as their subreaper) and the manifest says why.

use super::landlock;
use super::pid_namespace::PidNamespace;
pub use lab_config::isolation::Wanted;
use lab_store::IsolationRecord;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The read-only mount namespace of each project a session of this process runs in, with how
/// many sessions hold it.
static NAMESPACES: Mutex<BTreeMap<PathBuf, Held>> = Mutex::new(BTreeMap::new());
/// The record of the containment the latest session entered, for its manifest.
static CURRENT: Mutex<Option<IsolationRecord>> = Mutex::new(None);
/// The cgroup this lab process lives in from its first session on, or why it has none.
static GROUP: OnceLock<Result<SessionGroup, String>> = OnceLock::new();
/// The Landlock ruleset each run restricts itself to so that it signals only its own
/// processes (see `landlock`), or why the kernel has none.
static SIGNAL_SCOPE: OnceLock<Result<landlock::Ruleset, String>> = OnceLock::new();

/// The ruleset scoping a run's signals, where the kernel can scope them.
pub(crate) fn signal_scope() -> Option<RawFd> {
    SIGNAL_SCOPE
        .get_or_init(landlock::signal_scope)
        .as_ref()
        .ok()
        .map(landlock::Ruleset::raw_fd)
}

/// What the manifest says of runs' signals: scoped, or why not.
fn signals_record(why: &mut Vec<String>) -> Option<String> {
    match SIGNAL_SCOPE.get_or_init(landlock::signal_scope) {
        Ok(ruleset) => Some(format!(
            "landlock scope (ABI {}): a run signals only its own processes",
            ruleset.abi
        )),
        Err(e) => {
            why.push(format!(
                "runs may signal each other and other processes: {e}"
            ));
            None
        }
    }
}

struct Held {
    guard: Guard,
    /// The namespace of runs, where the experiments are read-only too; `None` where the
    /// guard is Landlock's.
    runs: Option<File>,
    /// The PID namespace runs and builds are born in, with its own `/proc`; `None` where it
    /// could not be made.
    pids: Option<PidNamespace>,
    sessions: usize,
}

/// What keeps a project's record read-only for the children of its sessions.
enum Guard {
    /// A mount namespace where the record is mounted read-only.
    Namespace(File),
    /// A Landlock ruleset that allows no write beneath the record.
    Landlock(landlock::Ruleset),
}

/// How a child enters its session's protection: a descriptor to `setns` into, or a Landlock
/// ruleset to restrict itself to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Entry {
    Namespace(RawFd),
    Landlock(RawFd),
}

/// A child's protection, the group it gives up its privileges for (see `privileges`), and
/// the PID namespace it is born in, if any.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Protection {
    pub entry: Entry,
    pub group: libc::gid_t,
    pub pids: Option<RawFd>,
}

/// How a build (or any command but a run) starting in the absolute folder `cwd` is
/// protected: as the project holding `cwd`, else the only one this process holds, protects
/// it. `None` when no session is protected.
fn build_protection_for(cwd: &Path) -> Option<Protection> {
    held_for(cwd, |h| Protection {
        entry: match &h.guard {
            Guard::Namespace(file) => Entry::Namespace(file.as_raw_fd()),
            Guard::Landlock(ruleset) => Entry::Landlock(ruleset.raw_fd()),
        },
        group: super::privileges::BUILD_GROUP,
        pids: h.pids.as_ref().map(PidNamespace::raw_fd),
    })
}

/// [`build_protection_for`] a run, in group `group`: its namespace sees the experiments
/// read-only as well (calibration starts its empty process outside the project, hence the
/// only one held).
pub(crate) fn run_protection_for(cwd: &Path, group: libc::gid_t) -> Option<Protection> {
    held_for(cwd, |h| Protection {
        entry: match (&h.runs, &h.guard) {
            (Some(runs), _) => Entry::Namespace(runs.as_raw_fd()),
            (None, Guard::Namespace(file)) => Entry::Namespace(file.as_raw_fd()),
            (None, Guard::Landlock(ruleset)) => Entry::Landlock(ruleset.raw_fd()),
        },
        group,
        pids: h.pids.as_ref().map(PidNamespace::raw_fd),
    })
}

/// The inits of the PID namespaces this process holds: the parents of runs' orphans.
pub(crate) fn pid_inits() -> Vec<libc::pid_t> {
    NAMESPACES.lock().map_or(Vec::new(), |held| {
        held.values()
            .filter_map(|h| h.pids.as_ref().map(PidNamespace::init))
            .collect()
    })
}

/// `entry` of the protection held for the project holding `cwd`, else of the only one held.
fn held_for<T>(cwd: &Path, entry: impl Fn(&Held) -> T) -> Option<T> {
    let held = NAMESPACES.lock().ok()?;
    held.iter()
        .filter(|(project, _)| cwd.starts_with(project))
        .max_by_key(|(project, _)| project.as_os_str().len())
        .or_else(|| (held.len() == 1).then(|| held.iter().next()).flatten())
        .map(|(_, h)| entry(h))
}

/// What protects the runs lab starts now, for the manifest; `None` outside a session.
pub fn current_record() -> Option<IsolationRecord> {
    CURRENT.lock().ok()?.clone()
}

/// Whether `pid` is the session's guard.
pub(crate) fn is_guard(pid: libc::pid_t) -> bool {
    GROUP
        .get()
        .and_then(|g| g.as_ref().ok())
        .is_some_and(|g| i32::try_from(g.guard.id()) == Ok(pid))
}

/// The protections of a session, held while it runs.
pub struct Containment {
    record: IsolationRecord,
    /// The project whose namespace this session holds.
    project: Option<PathBuf>,
}

impl Containment {
    /// Sets up what `wanted` asks for around `project` (whose `data/` and `book/` are kept
    /// read-only); an error when `strict` cannot be had, naming why.
    pub fn enter(project: &Path, wanted: Wanted) -> Result<Containment, String> {
        if wanted == Wanted::None {
            let record = IsolationRecord::none("lab.toml sets isolation = \"none\"");
            return Ok(Containment::holding(record, None));
        }
        let project = std::path::absolute(project).map_err(|e| e.to_string())?;
        super::privileges::guard_own_proc_files();
        let protected = protected_paths(&project);
        let mut why = Vec::new();
        let held = hold_guard(&project, &protected, &mut why);
        let group = GROUP.get_or_init(SessionGroup::make);
        if let Err(e) = group {
            why.push(format!("no cgroup for the session: {e}"));
        }
        let signals = signals_record(&mut why);
        let born_inside = build_protection_for(&project).and_then(|p| p.pids);
        let pids = held.as_ref().and(born_inside).map(|_| {
            "the session's own PID namespace and /proc: runs see only the session's processes"
                .to_string()
        });
        let record = IsolationRecord {
            signals,
            pids,
            files: held.clone().unwrap_or_else(|| "none".to_string()),
            processes: group.as_ref().map_or("process group".to_string(), |g| {
                format!("cgroup {}", g.version)
            }),
            read_only: protected.iter().map(|p| relative_to(p, &project)).collect(),
            why,
        };
        let whole = held.is_some() && group.is_ok();
        let containment = Containment::holding(record, held.map(|_| project));
        if wanted == Wanted::Strict && !whole {
            return Err(format!(
                "isolation = \"strict\" cannot be had here: {}",
                containment.record.why.join("; ")
            ));
        }
        Ok(containment)
    }

    fn holding(record: IsolationRecord, project: Option<PathBuf>) -> Containment {
        if let Ok(mut current) = CURRENT.lock() {
            *current = Some(record.clone());
        }
        Containment { record, project }
    }
}

impl Drop for Containment {
    fn drop(&mut self) {
        if let Ok(mut current) = CURRENT.lock() {
            *current = None;
        }
        let (Some(project), Ok(mut held)) = (&self.project, NAMESPACES.lock()) else {
            return;
        };
        if let Some(h) = held.get_mut(project) {
            h.sessions -= 1;
            if h.sessions == 0 {
                held.remove(project);
            }
        }
    }
}

/// Takes a hold on what protects `project`'s record, made now when no session holds it: a
/// read-only mount namespace, else a Landlock ruleset. Returns what it is, for the manifest,
/// or `None` with the reasons pushed onto `why`.
fn hold_guard(project: &Path, protected: &[PathBuf], why: &mut Vec<String>) -> Option<String> {
    let Ok(mut held) = NAMESPACES.lock() else {
        why.push("no protection of files: a lock is poisoned".to_string());
        return None;
    };
    if let Some(h) = held.get_mut(project) {
        h.sessions += 1;
        return Some(h.guard.describe());
    }
    let mut runs = None;
    let mut pids = None;
    let guard = match read_only_namespace(protected) {
        Ok(namespace) => {
            runs = runs_namespace(project, protected, why);
            pids = pid_namespace(&namespace, runs.as_ref(), why);
            Guard::Namespace(namespace)
        }
        Err(e) => {
            why.push(format!("no mount namespace: {e}"));
            match landlock::protecting(protected) {
                Ok(ruleset) => Guard::Landlock(ruleset),
                Err(e) => {
                    why.push(e);
                    return None;
                }
            }
        }
    };
    let described = guard.describe();
    held.insert(
        project.to_path_buf(),
        Held {
            guard,
            runs,
            pids,
            sessions: 1,
        },
    );
    Some(described)
}

/// The namespace of runs: `protected`, what the chapters trust in each experiment folder and
/// lab's own folder read-only.
fn runs_namespace(project: &Path, protected: &[PathBuf], why: &mut Vec<String>) -> Option<File> {
    let mut paths = protected.to_vec();
    paths.extend(trusted_by_chapters(project));
    paths.push(project.join(".lab"));
    paths.retain(|p| p.exists());
    read_only_namespace(&paths)
        .map_err(|e| why.push(format!("runs may write the experiments' notes: {e}")))
        .ok()
}

/// The PID namespace of a project's runs and builds, with its `/proc` mounted in the mount
/// namespaces of both.
fn pid_namespace(
    builds: &File,
    runs: Option<&File>,
    why: &mut Vec<String>,
) -> Option<PidNamespace> {
    let mut mounts = vec![builds.as_raw_fd()];
    mounts.extend(runs.map(File::as_raw_fd));
    PidNamespace::make(&mounts)
        .map_err(|e| why.push(format!("runs see lab's processes: no PID namespace: {e}")))
        .ok()
}

/// What each experiment folder holds that lab reads as the author's: its lab.toml, its notes,
/// the references they cite and its templates. The rest stays writable: a run may keep a file
/// of its own there.
fn trusted_by_chapters(project: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(project.join("experiments")) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .flat_map(|e| {
            ["lab.toml", "notes.md", "references.bib", "templates"].map(|name| e.path().join(name))
        })
        .collect();
    paths.sort();
    paths
}

impl Guard {
    /// The manifest's name for it.
    fn describe(&self) -> String {
        match self {
            Guard::Namespace(_) => "mount namespace".to_string(),
            Guard::Landlock(ruleset) => format!("landlock (ABI {})", ruleset.abi),
        }
    }
}

/// What a run must not write: the record, the book, lab's state folder (the seals of closed
/// sessions), lab's own executable, the cgroup file system (so that nothing leaves the
/// session's group). Only those that exist.
fn protected_paths(project: &Path) -> Vec<PathBuf> {
    let (data, book) = (project.join("data"), project.join("book"));
    for folder in [&data, &book] {
        let _ = std::fs::create_dir_all(folder);
    }
    let mut paths = vec![data, book];
    // lab's own state folder, where the seals of closed sessions are kept.
    if let Some(state) = lab_store::seal::state_dir() {
        let _ = std::fs::create_dir_all(&state);
        paths.push(state);
    }
    if let Ok(exe) = std::env::current_exe() {
        paths.push(exe);
    }
    paths.push(PathBuf::from("/sys/fs/cgroup"));
    paths
        .into_iter()
        .filter_map(|p| std::path::absolute(&p).ok().filter(|p| p.exists()))
        .collect()
}

fn relative_to(path: &Path, project: &Path) -> String {
    let project = std::path::absolute(project).unwrap_or_else(|_| project.to_path_buf());
    match path.strip_prefix(&project) {
        Ok(rel) if path.is_dir() => format!("{}/", rel.display()),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// A mount namespace where each of `protected` is read-only, made on a thread of its own
/// (`unshare` changes only the calling thread's view) and kept alive by its descriptor.
fn read_only_namespace(protected: &[PathBuf]) -> Result<File, String> {
    let protected = protected.to_vec();
    std::thread::spawn(move || {
        // SAFETY: unshare with a flag only; it acts on this thread's file system view.
        if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
            return Err(errno_text("unshare(CLONE_NEWNS)"));
        }
        make_private()?;
        for path in &protected {
            bind_read_only(path)?;
        }
        File::open("/proc/thread-self/ns/mnt").map_err(|e| format!("/proc/thread-self/ns/mnt: {e}"))
    })
    .join()
    .map_err(|_| "the thread setting up the namespace panicked".to_string())?
}

/// Stops mounts made here from propagating back to lab's own namespace.
fn make_private() -> Result<(), String> {
    let root = c_path(Path::new("/"))?;
    // SAFETY: mount(2) with valid NUL-terminated strings or null where the call allows it.
    let r = unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(errno_text("making / private"));
    }
    Ok(())
}

/// Binds `path` onto itself and makes the bind (and every mount beneath it) read-only.
fn bind_read_only(path: &Path) -> Result<(), String> {
    let c = c_path(path)?;
    // SAFETY: as in make_private.
    let bound = unsafe {
        libc::mount(
            c.as_ptr(),
            c.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    };
    if bound != 0 {
        return Err(errno_text(&format!("binding {}", path.display())));
    }
    if set_read_only_recursively(&c) {
        return Ok(());
    }
    // Kernels before 5.12 have no mount_setattr: the top mount alone is made read-only.
    // SAFETY: as above.
    let remounted = unsafe {
        libc::mount(
            std::ptr::null(),
            c.as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY,
            std::ptr::null(),
        )
    };
    if remounted != 0 {
        return Err(errno_text(&format!("making {} read-only", path.display())));
    }
    Ok(())
}

/// `struct mount_attr` of mount_setattr(2).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: libc::c_int = 0x8000;

/// mount_setattr(2) with AT_RECURSIVE and MOUNT_ATTR_RDONLY on the mount at `path`.
fn set_read_only_recursively(path: &std::ffi::CStr) -> bool {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: the syscall reads `attr`, of the size given, and the NUL-terminated path.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    r == 0
}

fn c_path(path: &Path) -> Result<std::ffi::CString, String> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{} holds a NUL byte", path.display()))
}

fn errno_text(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// The cgroup lab and everything it starts live in from its first session on, and the guard
/// that empties and removes it once lab is gone (however it ends: the guard's pipe closes with
/// lab). lab never leaves it: a process born in it stays in it.
struct SessionGroup {
    version: &'static str,
    guard: Child,
}

/// The name of every session group, followed by lab's PID.
const PREFIX: &str = "lab-session-";

impl SessionGroup {
    /// Makes the group beside lab's own, starts its guard, and moves lab into it.
    fn make() -> Result<SessionGroup, String> {
        let (before, version) = own_group()?;
        remove_stale(&before);
        let dir = before.join(format!("{PREFIX}{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        let guard = match start_guard(&dir, version) {
            Ok(guard) => guard,
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                return Err(e);
            }
        };
        move_self(&dir)?;
        Ok(SessionGroup { version, guard })
    }
}

/// The folder of lab's own cgroup and its hierarchy's version: the unified hierarchy
/// (cgroup2) where it is mounted, else the v1 `pids` hierarchy.
fn own_group() -> Result<(PathBuf, &'static str), String> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
    if let Some(dir) = group_dir(&mounts, &own, "cgroup2", "") {
        return Ok((dir, "v2"));
    }
    group_dir(&mounts, &own, "cgroup", "pids")
        .map(|dir| (dir, "v1"))
        .ok_or_else(|| "neither a cgroup2 nor a v1 pids hierarchy is mounted".to_string())
}

/// The mount point of the hierarchy of file system type `fstype` (with `controller` among
/// its options, for v1) joined with lab's path in it from `/proc/self/cgroup`.
pub(super) fn group_dir(
    mountinfo: &str,
    cgroup: &str,
    fstype: &str,
    controller: &str,
) -> Option<PathBuf> {
    let mount = mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let mut fields = after.split_whitespace();
        let (kind, _source, options) = (fields.next()?, fields.next()?, fields.next()?);
        let wanted = kind == fstype
            && (controller.is_empty() || options.split(',').any(|o| o == controller));
        wanted.then(|| before.split_whitespace().nth(4))?
    })?;
    let path = cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let matches = if controller.is_empty() {
            controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == controller)
        };
        matches.then_some(path)
    })?;
    Some(Path::new(mount).join(path.trim().trim_start_matches('/')))
}

/// Starts the guard: a shell outside the group, in a process group of its own (the
/// terminal's Ctrl-C is not for it), blocked reading a pipe only lab holds.
fn start_guard(dir: &Path, version: &str) -> Result<Child, String> {
    let empty = if version == "v2" {
        r#"echo 1 > "$1/cgroup.kill""#
    } else {
        r#"while p=$(cat "$1/cgroup.procs") && [ -n "$p" ]; do kill -9 $p; sleep 0.01; done"#
    };
    // Groups nested in this one (a lab run by a run, or by a test) go too, deepest first.
    let script = format!(
        r#"read _; {empty}; i=0; while [ -d "$1" ] && [ $i -lt 500 ]; do find "$1" -depth -type d -exec rmdir {{}} + 2>/dev/null; sleep 0.01; i=$((i+1)); done"#
    );
    Command::new("/bin/sh")
        .args(["-c", &script, "lab-guard"])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start its guard (/bin/sh): {e}"))
}

/// Moves lab (every thread) into the group at `dir`.
fn move_self(dir: &Path) -> Result<(), String> {
    File::options()
        .write(true)
        .open(dir.join("cgroup.procs"))
        .and_then(|mut f| f.write_all(std::process::id().to_string().as_bytes()))
        .map_err(|e| format!("cannot move lab into {}: {e}", dir.display()))
}

/// SIGKILL to every process in the group at `dir` but lab.
fn kill_members_but_self(dir: &Path) {
    let me = std::process::id();
    for _ in 0..50 {
        let others: Vec<u32> = std::fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .filter(|&p| p != me)
            .collect();
        if others.is_empty() {
            return;
        }
        for pid in others {
            // SAFETY: kill(2) with a PID from the session's own group.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Removes the session groups of lab processes no longer running whose guard could not
/// (killed with the group of an outer lab before it was done), and the groups nested in them.
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let pid = entry
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            remove_with_nested(&entry.path());
        }
    }
}

/// Empties and removes the group at `dir` and every group nested in it, deepest first.
fn remove_with_nested(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_with_nested(&entry.path());
            }
        }
    }
    kill_members_but_self(dir);
    let _ = std::fs::remove_dir(dir);
}

/// Enters the session's protection: its namespace or its Landlock ruleset, giving up every
/// privilege that could undo it (see `privileges`). In a child between `fork` and `execve`,
/// system calls only.
///
/// # Safety
/// Only in a freshly started child, with a `protection` of [`run_protection_for`] or
/// [`build_protection_for`] while its session holds it.
pub(crate) unsafe fn enter_in_child(protection: Protection) -> bool {
    let group = protection.group;
    // SAFETY: setns and prctl act on the calling process only.
    unsafe {
        match protection.entry {
            Entry::Namespace(fd) => {
                libc::setns(fd, libc::CLONE_NEWNS) == 0 && super::privileges::drop_in_child(group)
            }
            Entry::Landlock(fd) => {
                super::privileges::drop_in_child(group) && landlock::restrict_in_child(fd)
            }
        }
    }
}

/// Starts `command` (a build, or any command lab starts outside a run) contained by its
/// session, in `dir` (entering the namespace moves a process to its root): in its mount
/// namespace and born in its PID namespace.
pub(crate) fn spawn_contained(command: &mut Command, dir: &Path) -> std::io::Result<Child> {
    let protection = std::path::absolute(dir)
        .ok()
        .and_then(|dir| Some((build_protection_for(&dir)?, c_path(&dir).ok()?)));
    let Some((protection, dir)) = protection else {
        return command.spawn();
    };
    // SAFETY: the closure makes only async-signal-safe system calls on memory made before.
    unsafe {
        command.pre_exec(move || {
            if enter_in_child(protection)
                && super::privileges::give_up_capabilities_in_child()
                && libc::chdir(dir.as_ptr()) == 0
            {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let _born = protection
        .pids
        .map(super::pid_namespace::Born::inside)
        .transpose()?;
    command.spawn()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_is_found_in_the_unified_hierarchy_or_else_in_pids() {
        let mounts = "30 25 0:26 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let own = "8:pids:/a\n0::/user.slice\n";
        assert_eq!(
            group_dir(mounts, own, "cgroup2", ""),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice"))
        );
        assert_eq!(
            group_dir(mounts, own, "cgroup", "pids"),
            Some(PathBuf::from("/sys/fs/cgroup/pids/a"))
        );
        let v1_only = "30 25 0:26 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
        assert_eq!(group_dir(v1_only, own, "cgroup2", ""), None);
        assert_eq!(group_dir(mounts, "1:cpu:/\n", "cgroup", "pids"), None);
    }

    #[test]
    fn paths_inside_the_project_are_recorded_relative_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        std::fs::create_dir(project.join("data")).unwrap();
        std::fs::write(project.join("lab"), "").unwrap();
        assert_eq!(relative_to(&project.join("data"), project), "data/");
        assert_eq!(relative_to(&project.join("lab"), project), "lab");
        assert_eq!(
            relative_to(Path::new("/sys/fs/cgroup"), project),
            "/sys/fs/cgroup"
        );
    }
}
