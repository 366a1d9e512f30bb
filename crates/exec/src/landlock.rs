//! Landlock (landlock(7), Linux 5.13), the protection of the record where lab may not make a
//! mount namespace: an unprivileged process can restrict itself, and its children, to writing
//! beneath the folders a ruleset allows. Landlock only allows, it cannot deny beneath an
//! allowed folder, so a ruleset keeping `data/` read-only allows each entry beside it, and
//! each entry beside each of its parents, up to `/`. Entries made later directly in those
//! parents (the project folder, `/`, and so on) are not writable: that is the price.
//!
//! Each child calls `prctl(PR_SET_NO_NEW_PRIVS)` and `landlock_restrict_self` before `execve`;
//! the ruleset is made once per session.
//!
//! Since ABI 6 (Linux 6.12) a ruleset may also scope signals: a process in a Landlock domain
//! may signal only processes of that domain or of domains nested in it. Each run restricts
//! itself to [`signal_scope`], and each `landlock_restrict_self` makes a domain of its own, so
//! a run signals itself and what it started, but not a run beside it (`--jobs`, `--duet`),
//! not lab, and nothing else on the machine.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The write rights of ABI 1 (`LANDLOCK_ACCESS_FS_WRITE_FILE` and the removals and makings,
/// bits 1 and 4 to 12 of linux/landlock.h).
const WRITES_V1: u64 = (1 << 1) | (0b1_1111_1111 << 4);
/// `LANDLOCK_ACCESS_FS_REFER` (ABI 2): without it handled, every rename or link into another
/// folder is refused, even where writes are allowed.
const REFER: u64 = 1 << 13;
/// `LANDLOCK_ACCESS_FS_TRUNCATE` (ABI 3).
const TRUNCATE: u64 = 1 << 14;
/// The rights that apply to a file that is not a folder.
const FILE_RIGHTS: u64 = (1 << 1) | TRUNCATE;
/// `LANDLOCK_CREATE_RULESET_VERSION`.
const VERSION: u32 = 1;
/// `LANDLOCK_RULE_PATH_BENEATH`.
const PATH_BENEATH: libc::c_int = 1;

/// `struct landlock_ruleset_attr`, its first field only (ABI 1 size; the kernel takes it).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
}

/// `LANDLOCK_SCOPE_SIGNAL` (ABI 6).
const SCOPE_SIGNAL: u64 = 1 << 1;
/// The first ABI that scopes signals.
const SCOPES_ABI: i32 = 6;

/// `struct landlock_ruleset_attr` as ABI 6 lays it out: the access rights handled, for files
/// and for the network, and the scopes.
#[repr(C)]
struct ScopedAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// `struct landlock_path_beneath_attr`, packed as in linux/landlock.h.
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// A ruleset allowing writes everywhere but beneath the protected paths, with the ABI it
/// was made for.
pub(crate) struct Ruleset {
    fd: OwnedFd,
    pub abi: i32,
}

impl Ruleset {
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// The Landlock ABI of the running kernel, or why there is none.
fn abi() -> Result<i32, String> {
    // SAFETY: the version query reads no attribute.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            VERSION,
        )
    };
    if v < 1 {
        return Err(format!("no Landlock: {}", std::io::Error::last_os_error()));
    }
    Ok(v as i32)
}

/// The write rights a ruleset of `abi` handles.
fn handled(abi: i32) -> u64 {
    let mut rights = WRITES_V1;
    if abi >= 2 {
        rights |= REFER;
    }
    if abi >= 3 {
        rights |= TRUNCATE;
    }
    rights
}

/// A ruleset under which nothing beneath `protected` can be written, made, removed or
/// renamed, and everything else that exists now can.
pub(crate) fn protecting(protected: &[PathBuf]) -> Result<Ruleset, String> {
    let abi = abi()?;
    let rights = handled(abi);
    let fd = create_ruleset(&RulesetAttr {
        handled_access_fs: rights,
    })?;
    for path in writable_around(protected) {
        allow(&fd, &path, rights);
    }
    Ok(Ruleset { fd, abi })
}

/// A ruleset that handles no access right and scopes signals, or why the kernel has none.
pub(crate) fn signal_scope() -> Result<Ruleset, String> {
    let abi = abi()?;
    if abi < SCOPES_ABI {
        return Err(format!(
            "Landlock ABI {abi} cannot scope signals (ABI {SCOPES_ABI}, Linux 6.12)"
        ));
    }
    let fd = create_ruleset(&ScopedAttr {
        handled_access_fs: 0,
        handled_access_net: 0,
        scoped: SCOPE_SIGNAL,
    })?;
    Ok(Ruleset { fd, abi })
}

/// A new ruleset of `attr`, a `struct landlock_ruleset_attr` of some ABI's size.
fn create_ruleset<Attr>(attr: &Attr) -> Result<OwnedFd, String> {
    // SAFETY: the syscall reads `attr`, of the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            attr as *const Attr,
            std::mem::size_of::<Attr>(),
            0u32,
        )
    };
    if fd < 0 {
        return Err(format!(
            "landlock_create_ruleset: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: a new descriptor the kernel just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Allows `rights` beneath `path` (the file rights alone for a file that is no folder). A
/// path that cannot be opened or added stays unwritable: it only narrows what a run may do.
fn allow(ruleset: &OwnedFd, path: &Path, rights: u64) {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return;
    };
    // SAFETY: open(2) with a NUL-terminated path; O_PATH opens without reading.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return;
    }
    // SAFETY: a new descriptor, closed when this function returns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let allowed = if path.is_dir() {
        rights
    } else {
        rights & FILE_RIGHTS
    };
    let rule = PathBeneath {
        allowed_access: allowed,
        parent_fd: fd.as_raw_fd(),
    };
    // SAFETY: the syscall reads `rule` and the two descriptors, all alive.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            PATH_BENEATH,
            &rule as *const PathBeneath,
            0u32,
        );
    }
}

/// What a ruleset protecting `protected` allows: every entry of every folder that holds a
/// protected path (and of their parents up to `/`) that is neither protected nor itself such
/// a folder. Symbolic links are left out: a write through one lands where it points, which is
/// allowed or not on its own.
pub(crate) fn writable_around(protected: &[PathBuf]) -> Vec<PathBuf> {
    let protected: BTreeSet<&Path> = protected.iter().map(PathBuf::as_path).collect();
    let holders: BTreeSet<&Path> = protected
        .iter()
        .flat_map(|p| p.ancestors().skip(1))
        .collect();
    let mut writable = Vec::new();
    for holder in &holders {
        let Ok(entries) = std::fs::read_dir(holder) else {
            continue;
        };
        let mut here: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
            .map(|e| e.path())
            .filter(|p| !protected.contains(p.as_path()) && !holders.contains(p.as_path()))
            .collect();
        here.sort();
        writable.extend(here);
    }
    writable
}

/// Restricts the calling process to `ruleset`: in a child between `fork` and `execve`, system
/// calls only.
///
/// # Safety
/// Only in a freshly started child, with `ruleset` a Landlock ruleset descriptor.
pub(crate) unsafe fn restrict_in_child(ruleset: RawFd) -> bool {
    // SAFETY: prctl and landlock_restrict_self act on the calling process only.
    unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
            && libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for folder in [
            "proj/data/s",
            "proj/book/src",
            "proj/experiments/x",
            "other",
        ] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        }
        std::fs::write(dir.path().join("proj/lab.lock"), "").unwrap();
        std::os::unix::fs::symlink("/", dir.path().join("proj/root")).unwrap();
        dir
    }

    #[test]
    fn everything_beside_the_protected_paths_and_their_parents_is_allowed() {
        let dir = tree();
        let root = dir.path();
        let protected = [root.join("proj/data"), root.join("proj/book")];
        let writable = writable_around(&protected);
        let inside: Vec<_> = writable
            .iter()
            .filter_map(|p| p.strip_prefix(root).ok())
            .map(|p| p.display().to_string())
            .collect();
        // The temporary folder's own parents contribute their other entries too.
        assert_eq!(inside, ["other", "proj/experiments", "proj/lab.lock"]);
        assert!(
            writable
                .iter()
                .all(|p| !p.starts_with(root.join("proj/data")))
        );
        assert!(writable.contains(&PathBuf::from("/proc")), "{writable:?}");
        assert!(!writable.contains(&PathBuf::from("/")));
    }

    #[test]
    fn a_ruleset_of_a_newer_abi_handles_renames_and_truncation() {
        assert_eq!(handled(1), WRITES_V1);
        assert_eq!(handled(2), WRITES_V1 | REFER);
        assert_eq!(handled(7), WRITES_V1 | REFER | TRUNCATE);
        assert_eq!(WRITES_V1, 0x1ff2);
    }
}
