//! Reading a run's kept output line by line, in bounded memory: however much a run printed,
//! lab holds one line (at most [`MAX_LINE`] bytes) at a time. Every byte is hashed; a line that
//! is not UTF-8, or longer than the limit, is skipped, never fatal; a reader that asks is told
//! where each skipped line was and why, so that a value lost with it can be explained.

use super::packed::LogRef;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The longest line read for values; longer lines are hashed and skipped.
pub const MAX_LINE: usize = 1 << 20;

/// What scanning a log found besides its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// SHA-256 of every byte of the file (of nothing when it is missing).
    pub sha256: String,
    /// Lines skipped because they were not UTF-8 or were longer than [`MAX_LINE`].
    pub skipped_lines: usize,
}

/// One line of a log, as the reader met it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// A UTF-8 line, without its line break (nor the `\r` of a `\r\n`).
    Text(&'a str),
    /// A line of this many bytes (before its `\n`), longer than [`MAX_LINE`]: skipped.
    TooLong(usize),
    /// A line that is not UTF-8: skipped.
    NotUtf8,
}

/// Calls `line` with each UTF-8 line of the log (without its line break).
pub fn scan_lines(log: &LogRef, mut line: impl FnMut(&str)) -> Scan {
    let mut hasher = Sha256::new();
    let mut skipped = 0;
    each_line(log, Some(&mut hasher), |event| match event {
        Line::Text(text) => line(text),
        Line::TooLong(_) | Line::NotUtf8 => skipped += 1,
    });
    Scan {
        sha256: format!("{:x}", hasher.finalize()),
        skipped_lines: skipped,
    }
}

/// Calls `line` with every line of the log in order, the skipped ones included, for a reader
/// that needs the lines only, not the log's hash.
pub fn read_lines(log: &LogRef, line: impl FnMut(Line)) {
    each_line(log, None, line);
}

/// Calls `line` with each line, feeding every byte to `hasher` where there is one.
fn each_line(log: &LogRef, mut hasher: Option<&mut Sha256>, mut line: impl FnMut(Line)) {
    if let LogRef::Packed { bytes: 0, .. } = log {
        // A run that printed nothing: no line, and no pack to open for it.
        return;
    }
    let Some(file) = log.open() else {
        return;
    };
    let mut reader = BufReader::with_capacity(log.read_buffer(), file);
    let mut current: Vec<u8> = Vec::new();
    // The length of the line being read once it is over the limit (its bytes are dropped).
    let mut long: Option<usize> = None;
    loop {
        let chunk = match reader.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(chunk) => chunk,
        };
        let (part, ends_line) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], true),
            None => (chunk, false),
        };
        long = match long {
            Some(n) => Some(n + part.len()),
            None if current.len() + part.len() > MAX_LINE => {
                let n = current.len() + part.len();
                current.clear();
                Some(n)
            }
            None => {
                current.extend_from_slice(part);
                None
            }
        };
        let used = part.len() + usize::from(ends_line);
        if let Some(h) = hasher.as_deref_mut() {
            h.update(&chunk[..used]);
        }
        reader.consume(used);
        if ends_line {
            emit(&current, long, &mut line);
            current.clear();
            long = None;
        }
    }
    if !current.is_empty() || long.is_some() {
        emit(&current, long, &mut line);
    }
}

/// Passes one line on: its text, or why it was skipped.
fn emit(bytes: &[u8], long: Option<usize>, line: &mut impl FnMut(Line)) {
    if let Some(n) = long {
        return line(Line::TooLong(n));
    }
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => line(Line::Text(text)),
        Err(_) => line(Line::NotUtf8),
    }
}

/// `path` opened for reading with `flags` besides `O_NONBLOCK`, so that opening a FIFO no
/// one writes to returns at once instead of waiting for a writer.
pub(crate) fn open_unblocked(path: &Path, flags: libc::c_int) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | flags)
        .open(path)
}

/// `path` opened for writing and empty: created, or truncated only when it holds something
/// (truncating an empty file still costs the file system an inode update). Never through a
/// symbolic link, and never into a FIFO or device: whatever other than a regular file sits
/// at `path` (an earlier run may have planted it) is removed and a new file made.
pub fn empty_file(path: &Path) -> std::io::Result<std::fs::File> {
    open_empty(path).or_else(|_| {
        remove_planted(path)?;
        open_empty(path)
    })
}

/// [`empty_file`] when `path` is missing or a regular file; an error for a link (`ELOOP`), a
/// FIFO (`ENXIO` without a reader) or anything else that is not a regular file.
fn open_empty(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    truncate_regular(&file, &path.display())?;
    Ok(file)
}

/// Empties `file` when it holds something (truncating an empty file still costs the file
/// system an inode update); whether it did. An error naming it `name` when it is not a
/// regular file.
fn truncate_regular(file: &std::fs::File, name: &dyn std::fmt::Display) -> std::io::Result<bool> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "{name} is not a regular file"
        )));
    }
    if meta.len() == 0 {
        return Ok(false);
    }
    file.set_len(0)?;
    Ok(true)
}

/// Removes whatever is at `path` (a file, a link, a FIFO, a folder tree), a file lab did not
/// write; nothing there is fine.
pub fn remove_planted(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_in_bounded_memory_and_bad_ones_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mut bytes = b"a=1\n\xff\xfe=2\n".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        bytes.extend(b"\r\nb=3");
        std::fs::write(&path, &bytes).unwrap();
        let mut lines = Vec::new();
        let log = LogRef::File(path);
        let scan = scan_lines(&log, |l| lines.push(l.to_string()));
        assert_eq!(lines, vec!["a=1", "b=3"]);
        assert_eq!(scan.skipped_lines, 2);
        assert_eq!(scan.sha256, format!("{:x}", Sha256::digest(&bytes)));
        let mut every = Vec::new();
        read_lines(&log, |l| every.push(format!("{l:?}")));
        assert_eq!(
            every,
            [
                "Text(\"a=1\")".to_string(),
                "NotUtf8".to_string(),
                format!("TooLong({})", MAX_LINE + 11),
                "Text(\"b=3\")".to_string(),
            ]
        );
        let missing = LogRef::File(dir.path().join("missing"));
        let empty = scan_lines(&missing, |_| panic!("no lines"));
        assert_eq!(
            empty.sha256,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
