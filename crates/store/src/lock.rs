//! One writer per experiment: an advisory `flock(2)` on `data/NAME/.lock`, holding the writer's
//! pid and command for the message a second writer gets. The kernel drops the lock when its
//! holder dies however it dies, so a stale lock cannot block anyone. A second, machine-wide
//! lock only warns: two sessions measuring on one machine at once disturb each other.

use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The experiment's lock file, inside its data folder.
pub const LOCK_FILE: &str = ".lock";

/// Held while a session of one experiment is written; released on drop or death.
#[derive(Debug)]
pub struct Lock {
    _file: File,
    pub path: PathBuf,
}

/// Who holds a lock that could not be taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub path: PathBuf,
    pub holder: String,
}

/// Takes the experiment's writer lock, or says who holds it.
pub fn lock_experiment(data_dir: &Path, what: &str) -> Result<std::result::Result<Lock, Held>> {
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    take(&data_dir.join(LOCK_FILE), what)
}

/// Whether a writer holds the experiment's lock now (a probe that writes nothing and holds the
/// lock for no longer than the probe itself).
pub fn is_locked(data_dir: &Path) -> bool {
    let Ok(file) = File::open(data_dir.join(LOCK_FILE)) else {
        return false;
    };
    // SAFETY: flock on a descriptor this function owns; the shared lock is released when
    // `file` is closed at the end of this function.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) != 0 }
}

/// Takes the machine-wide measuring lock, or says who holds it (a warning, not a refusal).
pub fn lock_machine(what: &str) -> Result<std::result::Result<Lock, Held>> {
    take(&std::env::temp_dir().join("lab-measuring.lock"), what)
}

fn take(path: &Path, what: &str) -> Result<std::result::Result<Lock, Held>> {
    let (mut file, writable) = open_lock_file(path)?;
    // A few tries: a reader's probe (`is_locked`) holds the lock for microseconds.
    let try_lock = || {
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
    };
    let taken = (0..3).any(|attempt| {
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        try_lock()
    });
    if !taken {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        return Ok(Err(Held {
            path: path.to_path_buf(),
            holder: holder.trim().replace('\n', ", "),
        }));
    }
    if !writable {
        return Ok(Ok(Lock {
            _file: file,
            path: path.to_path_buf(),
        }));
    }
    file.set_len(0)?;
    file.rewind()?;
    writeln!(
        file,
        "pid {}\nsince {}\n{what}",
        std::process::id(),
        super::utc_timestamp(super::now_unix_ms())
    )?;
    Ok(Ok(Lock {
        _file: file,
        path: path.to_path_buf(),
    }))
}

/// The lock file at `path`, made when missing, and whether lab may write its holder into it.
/// Another user's lock file (the machine-wide one in a shared `/tmp`) is locked read-only:
/// `flock` needs no write access, and the lock still keeps two sessions apart.
fn open_lock_file(path: &Path) -> Result<(File, bool)> {
    let opened = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path);
    match opened {
        Ok(file) => Ok((file, true)),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => File::open(path)
            .map(|file| (file, false))
            .with_context(|| format!("cannot open the lock file {}", path.display())),
        Err(e) => Err(e).with_context(|| format!("cannot open the lock file {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_told_who_holds_the_lock_until_it_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock_experiment(dir.path(), "lab run x").unwrap().unwrap();
        let held = lock_experiment(dir.path(), "lab run x --resume")
            .unwrap()
            .unwrap_err();
        assert!(
            held.holder
                .starts_with(&format!("pid {}, since ", std::process::id())),
            "{held:?}"
        );
        assert!(held.holder.ends_with("lab run x"), "{held:?}");
        drop(first);
        assert!(lock_experiment(dir.path(), "again").unwrap().is_ok());
    }
}
