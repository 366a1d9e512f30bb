//! The files of an experiment folder as lab reads them: lab.toml, notes.md, references.bib and
//! templates. A link to a file is followed (the folder is the author's), but only a regular
//! file is read: opening a FIFO for reading would block lab until something wrote to it.

use std::fs::File;
use std::fs::FileType;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The regular file at `path` opened for reading; `NotFound` when there is none, and an
/// `InvalidInput` error naming what it is for a FIFO, a folder, a device or a socket.
pub fn open(path: &Path) -> io::Result<File> {
    // O_NONBLOCK makes the open of a FIFO return at once; reads of a regular file ignore it.
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "it is {}, not a regular file; put the file itself there",
                kind_of(&kind)
            ),
        ));
    }
    Ok(file)
}

/// "a FIFO", "a folder", …: what a file that is not a regular one is.
pub fn kind_of(kind: &FileType) -> &'static str {
    if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

/// The bytes of the regular file at `path`, as [`open`] finds it.
pub fn read_bytes(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text; invalid bytes are `InvalidData`, naming the first.
pub fn read_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_bytes(path)?).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not valid UTF-8 at byte {at}; save it as UTF-8"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_a_folder_is_refused_at_once_and_a_link_to_a_file_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("notes.md");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let err = read_bytes(&fifo).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            err.to_string(),
            "it is a FIFO, not a regular file; put the file itself there"
        );
        let err = read_bytes(dir.path()).unwrap_err();
        assert!(err.to_string().starts_with("it is a folder"), "{err}");
        let file = dir.path().join("real.md");
        std::fs::write(&file, "text é").unwrap();
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_text(&link).unwrap(), "text é");
        let missing = read_bytes(&dir.path().join("none")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        std::fs::write(&file, b"ok\xff").unwrap();
        let bad = read_text(&file).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "not valid UTF-8 at byte 2; save it as UTF-8"
        );
    }
}
