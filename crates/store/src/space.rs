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
    Some(writable(&stat))
}

/// [`free_bytes`] on the file system holding the open file `file`: no path to look up, and
/// the same answer whatever has since been put at the file's path.
pub fn free_bytes_at(file: &std::fs::File) -> Option<u64> {
    use std::os::fd::AsRawFd;
    // SAFETY: fstatvfs fills the zeroed struct through a valid pointer, on an open descriptor.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatvfs(file.as_raw_fd(), &mut stat) } != 0 {
        return None;
    }
    Some(writable(&stat))
}

/// The bytes `stat` leaves this process to write.
fn writable(stat: &libc::statvfs) -> u64 {
    // SAFETY: geteuid has no preconditions.
    let blocks = if unsafe { libc::geteuid() } == 0 {
        stat.f_bfree
    } else {
        stat.f_bavail
    };
    blocks.saturating_mul(stat.f_frsize)
}

/// Why a file system with `free` bytes left counts as full: less than one block is left.
/// `None` while there is room (or where the space cannot be told).
pub fn full(free: Option<u64>) -> Option<u64> {
    free.filter(|free| *free < MIN_FREE)
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
            format!(" ({} free there)", lab_config::format::memory(f as f64))
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
        assert_eq!(full(free_bytes(dir.path())), None);
        assert_eq!(free_bytes(Path::new("/no/such/folder")), None);
    }

    #[test]
    fn an_open_file_tells_the_room_of_its_file_system_whatever_its_path_now_holds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.csv");
        let file = std::fs::File::create(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let at = free_bytes_at(&file).unwrap();
        let by_path = free_bytes(dir.path()).unwrap();
        // The same file system, read twice: equal but for what another writer did between.
        assert!(at.abs_diff(by_path) < 64 << 20, "{at} against {by_path}");
        assert_eq!(full(Some(4095)), Some(4095));
        assert_eq!(full(Some(4096)), None);
        assert_eq!(full(None), None);
    }
}
