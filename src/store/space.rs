//! Free space where a session is written: a full disk is lab's failure, never the
//! benchmark's. A run whose output went to a file system that filled up may have failed, or
//! been cut short, because of it: it is not recorded, the session stops, and `--resume` runs
//! it again once there is room.

use std::path::Path;

/// Bytes a writer like this lab process may still write on the file system holding `path`
/// (root may use the blocks reserved for it; others may not); `None` where it cannot be told.
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct through a valid pointer, with a valid path.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    // SAFETY: geteuid has no preconditions.
    let blocks = if unsafe { libc::geteuid() } == 0 {
        stat.f_bfree
    } else {
        stat.f_bavail
    };
    Some(blocks.saturating_mul(stat.f_frsize))
}

/// Why the file system holding `dir` counts as full: less than one block is left. `None`
/// while there is room (or where the space cannot be told).
pub fn full(dir: &Path) -> Option<u64> {
    let free = free_bytes(dir)?;
    (free < MIN_FREE).then_some(free)
}

/// Below this much room a run's output or lab's next row may not fit.
const MIN_FREE: u64 = 4096;

/// What a session of `runs` runs is likely to write: its rows, values and logs.
pub fn likely_bytes(runs: usize) -> u64 {
    (runs as u64).saturating_mul(BYTES_PER_RUN)
}

/// A run's row (about 400 bytes), a few values, and two logs of a few kilobytes each (a
/// file takes at least one 4 KiB block).
const BYTES_PER_RUN: u64 = 12 * 1024;

/// An error for a failed write to `path`, with the free space left where it lives.
pub fn write_failed(path: &Path, error: impl std::fmt::Display) -> anyhow::Error {
    let free = path
        .parent()
        .and_then(free_bytes)
        .map_or_else(String::new, |f| {
            format!(" ({} free there)", crate::format::memory(f as f64))
        });
    anyhow::anyhow!("cannot write {}: {error}{free}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_with_room_is_not_full() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(dir.path()).is_some_and(|f| f > 0));
        assert_eq!(full(dir.path()), None);
        assert_eq!(free_bytes(Path::new("/no/such/folder")), None);
    }
}
