//! What identifies a session file's content as the one lab wrote (device, inode, length and
//! the modification and status-change times): the writer compares it after every run, and a
//! pack being appended to is checked against it.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// What identifies a file's content as the one lab wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Identity {
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Identity {
    pub(super) fn of(path: &Path) -> Option<Identity> {
        fs::metadata(path).ok().map(|m| Identity::from_metadata(&m))
    }

    pub(super) fn from_metadata(m: &fs::Metadata) -> Identity {
        Identity {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        }
    }
}
