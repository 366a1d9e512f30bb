//! Files opened as what lab expects them to be: regular files, never reached through a
//! symbolic link in their last component and never a FIFO that would block the reader. A run
//! may plant any of these where lab reads; the book and the server read through this module.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Which file a path led to when it was listed: a file opened later must be the same one,
/// not one a link put in its place meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    device: u64,
    inode: u64,
}

impl Identity {
    pub fn of(meta: &fs::Metadata) -> Identity {
        Identity {
            device: meta.dev(),
            inode: meta.ino(),
        }
    }
}

/// `path` opened for reading when it is a regular file; an error for a symbolic link
/// (`ELOOP`), a FIFO, a folder, a device or a socket.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::other(format!(
            "{} is {}, not a regular file",
            path.display(),
            kind_of(&kind)
        )));
    }
    Ok(file)
}

/// [`open_regular`], refusing a file other than the one `identity` names.
pub fn open_same(path: &Path, identity: Identity) -> io::Result<File> {
    let file = open_regular(path)?;
    if Identity::of(&file.metadata()?) != identity {
        return Err(io::Error::other(format!(
            "{} was replaced while lab read the folder it is in",
            path.display()
        )));
    }
    Ok(file)
}

/// "a FIFO", "a folder", …: what a file that is not a regular one is.
pub fn kind_of(kind: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_reached_without_a_link_opens() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        fs::write(&file, "text").unwrap();
        std::os::unix::fs::symlink(&file, dir.path().join("link")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("fifo"))
            .status()
            .unwrap();
        assert!(made.success());
        assert!(open_regular(&file).is_ok());
        let refused = |name: &str| {
            open_regular(&dir.path().join(name))
                .unwrap_err()
                .to_string()
        };
        assert!(
            refused("link").contains("symbolic links"),
            "{}",
            refused("link")
        );
        assert!(refused("fifo").ends_with("fifo is a FIFO, not a regular file"));
        assert!(refused("").ends_with("is a folder, not a regular file"));
    }

    #[test]
    fn a_file_put_in_place_of_the_one_listed_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file");
        fs::write(&path, "first").unwrap();
        let listed = Identity::of(&fs::symlink_metadata(&path).unwrap());
        assert!(open_same(&path, listed).is_ok());
        // Written while the first still exists, so it cannot reuse the first one's inode.
        fs::write(dir.path().join("other"), "second").unwrap();
        fs::rename(dir.path().join("other"), &path).unwrap();
        let err = open_same(&path, listed).unwrap_err().to_string();
        assert!(
            err.ends_with("was replaced while lab read the folder it is in"),
            "{err}"
        );
    }
}
