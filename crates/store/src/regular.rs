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
    regular_only(file, path)
}

/// `file`, opened at `path`, when it is a regular file; an error naming what it is instead.
fn regular_only(file: File, path: &Path) -> io::Result<File> {
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

/// `openat2`'s `struct open_how` (Linux 5.6, `<linux/openat2.h>`).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// Resolution stays beneath the folder given (`RESOLVE_BENEATH`) and follows no symbolic
/// link at all (`RESOLVE_NO_SYMLINKS`), from `<linux/openat2.h>`.
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_BENEATH: u64 = 0x08;

/// The file `name` in the folder `dir`, opened for reading when it is a regular file reached
/// without leaving `dir` and without a symbolic link on the way: `openat2` with
/// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it (Linux 5.6), else
/// [`open_regular`] of its path with `name` refused when it climbs out (`..`, absolute).
pub fn open_beneath(dir: &Path, name: &Path) -> io::Result<File> {
    use std::path::Component;
    if name
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(io::Error::other(format!(
            "{} leads out of {}",
            name.display(),
            dir.display()
        )));
    }
    match openat2_beneath(dir, name) {
        Some(opened) => regular_only(opened?, &dir.join(name)),
        None => open_regular(&dir.join(name)),
    }
}

/// `openat2` of `name` beneath `dir`; `None` where the kernel lacks the call.
fn openat2_beneath(dir: &Path, name: &Path) -> Option<io::Result<File>> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::{AsRawFd, FromRawFd};
    let folder = match File::options()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_PATH)
        .open(dir)
    {
        Ok(folder) => folder,
        Err(e) => return Some(Err(e)),
    };
    let name = match std::ffi::CString::new(name.as_os_str().as_bytes()) {
        Ok(name) => name,
        Err(e) => return Some(Err(io::Error::other(e))),
    };
    let how = OpenHow {
        flags: (libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOFOLLOW) as u64,
        mode: 0,
        resolve: RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: the folder's descriptor and the name outlive the call; `how` is the kernel's
    // struct of the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            folder.as_raw_fd(),
            name.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        let err = io::Error::last_os_error();
        // No such call (before Linux 5.6), or one a seccomp filter forbids: the fallback.
        return match err.raw_os_error() {
            Some(libc::ENOSYS | libc::EPERM) => None,
            _ => Some(Err(err)),
        };
    }
    // SAFETY: the kernel just gave this descriptor, owned by nothing else.
    Some(Ok(unsafe { File::from_raw_fd(fd as i32) }))
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

pub use lab_config::folder_file::kind_of;

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
    fn beneath_its_folder_only_a_regular_file_reached_without_a_link_opens() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "outside").unwrap();
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("new")).unwrap();
        fs::write(dir.path().join("new/sample.json"), "{}").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("away")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("fifo"))
            .status()
            .unwrap();
        assert!(made.success());
        let open = |name: &str| open_beneath(dir.path(), Path::new(name));
        assert!(open("new/sample.json").is_ok());
        for refused in [
            "link",
            "away/secret",
            "../secret",
            "/etc/passwd",
            "fifo",
            "new",
        ] {
            assert!(open(refused).is_err(), "{refused} was opened");
        }
        let fifo = open("fifo").unwrap_err().to_string();
        assert!(
            fifo.ends_with("fifo is a FIFO, not a regular file"),
            "{fifo}"
        );
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
