//! A run's stdout and stderr as files of its own: made without a name, read back from their
//! start through lab's descriptor, and cut at `max_output` bytes, so that a run that prints
//! without end, or stretches its output to a terabyte of holes with `ftruncate`, costs the
//! record at most that much and is recorded as what it did.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// A file without a name, open for reading and writing: in memory (`memfd_create(2)`, Linux
/// 3.17), else in `dir` (`O_TMPFILE`), else a file made in `dir` and removed at once. In
/// memory it costs a run one system call and its close; an `O_TMPFILE` on ext4 made the
/// pause between two runs of `true` about 100 µs longer (its inode made, then evicted through
/// the journal at close). What a run writes stays in memory only until it is packed, at most
/// `max_output` of it.
pub(crate) fn anonymous_file(dir: &Path) -> io::Result<File> {
    // SAFETY: memfd_create with a NUL-terminated name and flags; a new descriptor or -1.
    let fd = unsafe { libc::memfd_create(c"lab-run-output".as_ptr(), libc::MFD_CLOEXEC) };
    if fd >= 0 {
        // SAFETY: the descriptor was just made and is owned here alone.
        return Ok(unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) });
    }
    let unnamed = File::options()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .open(dir);
    match unnamed {
        Ok(file) => Ok(file),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => {
            named_then_removed(dir)
        }
        Err(e) => Err(e),
    }
}

/// A hidden file made anew in `dir` and removed at once.
fn named_then_removed(dir: &Path) -> io::Result<File> {
    let path = dir.join(format!(
        ".output-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let file = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// What `file` holds from its start, at most `max` bytes of it; when it holds more, a last
/// line says how much the run wrote (and how little of it was on disk, for a file of holes).
pub(crate) fn capped(file: &File, max: u64) -> io::Result<Box<dyn Read + '_>> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("a run's output is not a regular file"));
    }
    let reader = FromStart { file, at: 0 }.take(max);
    if meta.len() <= max {
        return Ok(Box::new(reader));
    }
    let note = cut_note(meta.len(), meta.blocks() * 512, max);
    Ok(Box::new(reader.chain(io::Cursor::new(note.into_bytes()))))
}

/// The line that ends an output cut at `max` bytes of `len` (`stored` of them on disk).
fn cut_note(len: u64, stored: u64, max: u64) -> String {
    let holes = if stored < len / 2 {
        format!(
            ", {stored} of them stored: the rest are holes (a file stretched by ftruncate or a seek)"
        )
    } else {
        String::new()
    };
    format!("\n[lab: output cut at {max} bytes (max_output); the run wrote {len} bytes{holes}]\n")
}

/// `file` read from its start by position, whatever its descriptor's offset.
struct FromStart<'a> {
    file: &'a File,
    at: u64,
}

impl Read for FromStart<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn an_output_is_read_from_its_start_whatever_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = anonymous_file(dir.path()).unwrap();
        file.write_all(b"{\"ops\": 1}\n").unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mut text = String::new();
        capped(&file, 100)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "{\"ops\": 1}\n");
    }

    #[test]
    fn an_output_past_the_limit_is_cut_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = anonymous_file(dir.path()).unwrap();
        file.write_all(b"0123456789").unwrap();
        let mut text = String::new();
        capped(&file, 4).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(
            text,
            "0123\n[lab: output cut at 4 bytes (max_output); the run wrote 10 bytes]\n"
        );
    }

    #[test]
    fn a_terabyte_of_holes_costs_the_limit_and_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = anonymous_file(dir.path()).unwrap();
        file.set_len(1 << 40).unwrap();
        let mut bytes = Vec::new();
        capped(&file, 1000)
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        assert!(bytes[..1000].iter().all(|&b| b == 0));
        let note = String::from_utf8_lossy(&bytes[1000..]).to_string();
        assert!(
            note.contains(
                "the run wrote 1099511627776 bytes, 0 of them stored: the rest are holes"
            ),
            "{note}"
        );
    }
}
