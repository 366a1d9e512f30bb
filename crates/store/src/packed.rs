//! Runs' output packed into two append-only files per session, `logs/stdout.pack` and
//! `logs/stderr.pack`: each run's bytes are appended whole once it has ended, and its row in
//! runs.csv, appended after them, names where they lie (`stdout_offset`, `stdout_bytes`, …)
//! with their SHA-256. The row commits the run's output as it commits its values: bytes past
//! the last committed run's are a torn tail, set aside on `--resume`. A session of any size
//! keeps two log files instead of two per run. Sessions written before the packs keep one file
//! per run and stream (`logs/r0001.out`), read as they are.

use super::identity::Identity;
use super::rows::RunRow;
use super::{LOGS, Tail};
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The pack of each stream, in `logs/`.
pub const STDOUT_PACK: &str = "stdout.pack";
pub const STDERR_PACK: &str = "stderr.pack";

/// Where one run's output on one stream is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogRef {
    /// A file of its own (sessions from before the packs; a missing file reads as empty).
    File(PathBuf),
    /// `bytes` bytes from `offset` on in a pack.
    Packed {
        pack: PathBuf,
        offset: u64,
        bytes: u64,
    },
}

impl LogRef {
    /// The log opened for reading, limited to its own bytes; `None` where there is nothing
    /// to read (a missing file, a link, a FIFO, a pack shorter than the run's slice).
    pub fn open(&self) -> Option<Box<dyn Read>> {
        match self {
            LogRef::File(path) => Some(Box::new(crate::regular::open_regular(path).ok()?)),
            LogRef::Packed {
                pack,
                offset,
                bytes,
            } => {
                let end = offset.checked_add(*bytes)?;
                let file = opened_pack(pack, end)?;
                Some(Box::new(PackSlice {
                    file,
                    at: *offset,
                    end,
                }))
            }
        }
    }

    /// How many bytes a reader of the log needs to buffer at most: the slice of a packed log,
    /// a default for a file of its own.
    pub fn read_buffer(&self) -> usize {
        const DEFAULT: usize = 64 * 1024;
        match self {
            LogRef::File(_) => DEFAULT,
            LogRef::Packed { bytes, .. } => {
                usize::try_from(*bytes).map_or(DEFAULT, |b| b.clamp(1, DEFAULT))
            }
        }
    }

    /// Every byte of the log (nothing when it cannot be read).
    pub fn read_all(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        if let Some(mut reader) = self.open() {
            let _ = reader.read_to_end(&mut bytes);
        }
        bytes
    }
}

/// Packs recently opened for reading, each with the identity (device, inode) of the file it
/// is: reading every run of a session opens its pack once instead of once per run (100,000
/// opens of a 100,000-run session), and a pack replaced since (another inode at the path) is
/// opened afresh.
static OPENED: Mutex<Vec<OpenedPack>> = Mutex::new(Vec::new());

/// A pack open for reading, and which file it is.
struct OpenedPack {
    path: PathBuf,
    /// Device and inode.
    identity: (u64, u64),
    /// Its length when opened: a pack only grows, so every slice ending within it can be read.
    len: u64,
    file: Arc<File>,
}

/// How many [`held_open`] passes are under way: while one is, a pack already open is read
/// without looking its path up again.
static HOLDING: AtomicUsize = AtomicUsize::new(0);

/// Runs `pass` (one reading of many runs' logs, e.g. judging a session's runs) with the packs
/// it opens held: each path is looked up once, when first read, instead of once per run (a
/// `statx` per log, a fifth of judging a 100,000-run session); every run's slice is then read
/// from a file already open for that path whose length covers it, which may be one opened
/// before the pass. Outside a pass, a pack replaced at its path is noticed at the next read.
pub fn held_open<T>(pass: impl FnOnce() -> T) -> T {
    struct Holding;
    impl Drop for Holding {
        fn drop(&mut self) {
            HOLDING.fetch_sub(1, Ordering::SeqCst);
        }
    }
    HOLDING.fetch_add(1, Ordering::SeqCst);
    let _holding = Holding;
    pass()
}

/// How many packs [`OPENED`] keeps: a chapter reads one session's two packs at a time.
const OPENED_KEPT: usize = 8;

/// The pack at `path`, open for reading, when it is a regular file (not through a link) at
/// least `end` bytes long; `None` otherwise, as for a log of its own.
fn opened_pack(path: &Path, end: u64) -> Option<Arc<File>> {
    if HOLDING.load(Ordering::SeqCst) > 0
        && let Some(file) = held(path, end)
    {
        return Some(file);
    }
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() < end {
        return None;
    }
    let identity = (meta.dev(), meta.ino());
    let mut opened = OPENED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = opened
        .iter_mut()
        .find(|o| o.path == path && o.identity == identity)
    {
        known.len = known.len.max(meta.len());
        return Some(Arc::clone(&known.file));
    }
    let file = crate::regular::open_regular(path).ok()?;
    let meta = file.metadata().ok()?;
    if (meta.dev(), meta.ino()) != identity || meta.len() < end {
        return None;
    }
    let file = Arc::new(file);
    opened.retain(|o| o.path != path);
    if opened.len() >= OPENED_KEPT {
        opened.remove(0);
    }
    opened.push(OpenedPack {
        path: path.to_path_buf(),
        identity,
        len: meta.len(),
        file: Arc::clone(&file),
    });
    Some(file)
}

/// The pack at `path` already open, when the slice ending at `end` lies within it.
fn held(path: &Path, end: u64) -> Option<Arc<File>> {
    let opened = OPENED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    opened
        .iter()
        .find(|o| o.path == path && o.len >= end)
        .map(|o| Arc::clone(&o.file))
}

/// A run's bytes in a pack, read with `pread` so that readers on several threads share one
/// open file.
struct PackSlice {
    file: Arc<File>,
    at: u64,
    end: u64,
}

impl Read for PackSlice {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = usize::try_from(self.end - self.at).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl std::fmt::Display for LogRef {
    /// The file, and for a packed log the bytes of it that are the run's.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LogRef::File(path) => write!(f, "{}", path.display()),
            LogRef::Packed {
                pack,
                offset,
                bytes,
            } => write!(
                f,
                "{} (bytes {offset} to {})",
                pack.display(),
                offset + bytes
            ),
        }
    }
}

/// Where a run's output went in the packs, for its row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Packed {
    pub stdout: Slice,
    pub stderr: Slice,
}

impl RunRow {
    /// Records where the run's output was packed; its stdout digest is the one of its row.
    pub fn packed(&mut self, packed: &Packed) {
        self.stdout_offset = Some(packed.stdout.offset);
        self.stdout_bytes = Some(packed.stdout.bytes);
        self.stderr_offset = Some(packed.stderr.offset);
        self.stderr_bytes = Some(packed.stderr.bytes);
        self.stderr_sha256 = Some(packed.stderr.sha256.clone());
    }
}

/// One run's bytes in one pack, and their SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Slice {
    pub offset: u64,
    pub bytes: u64,
    pub sha256: String,
}

/// An open pack: every append goes to its end, and lab knows how long it left it and the
/// digest of what it wrote since it opened it, to tell whether anything else wrote to it.
pub(crate) struct Pack {
    path: PathBuf,
    file: File,
    /// The length lab left the file at.
    len: u64,
    /// The file as lab left it.
    identity: Identity,
    /// The runs appended since it was opened, with where their bytes lie: to name the one
    /// whose output was written over.
    appended: Vec<(String, Slice)>,
    /// What a run's output is copied through, made at the first run that printed anything
    /// and kept: most runs of a short benchmark print nothing, and clearing 64 KiB for each
    /// cost more than the rest of packing it.
    buffer: Vec<u8>,
}

/// `logs/NAME` of the pack at `path`, for what verifying it found.
fn pack_name(path: &Path) -> String {
    format!(
        "{LOGS}/{}",
        path.file_name().unwrap_or_default().to_string_lossy()
    )
}

impl Pack {
    /// Opens (creating it empty where missing) the pack `name` of the session at `dir`.
    pub(crate) fn open(dir: &Path, name: &str) -> Result<Pack> {
        let path = dir.join(LOGS).join(name);
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let meta = file
            .metadata()
            .with_context(|| format!("cannot stat {}", path.display()))?;
        Ok(Pack {
            len: meta.len(),
            identity: Identity::from_metadata(&meta),
            path,
            file,
            appended: Vec::new(),
            buffer: Vec::new(),
        })
    }

    /// Appends everything `from` reads, run `id`'s output, hashing it on the way; where it
    /// lies.
    pub(crate) fn append_from(&mut self, id: &str, from: &mut dyn Read) -> Result<Slice> {
        let offset = self.len;
        let mut hasher = Sha256::new();
        let mut probe = [0u8; 512];
        loop {
            let buf: &mut [u8] = if self.buffer.is_empty() {
                &mut probe
            } else {
                &mut self.buffer
            };
            let n = match from.read(buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e).context("cannot read a run's output"),
            };
            hasher.update(&buf[..n]);
            self.file
                .write_all(&buf[..n])
                .map_err(|e| super::space::write_failed(&self.path, e))?;
            self.len += n as u64;
            if self.buffer.is_empty() {
                self.buffer = vec![0u8; 64 * 1024];
            }
        }
        if self.len > offset {
            // A write moved the change time: what lab left is this, not what it found.
            if let Ok(meta) = self.file.metadata() {
                self.identity = Identity::from_metadata(&meta);
            }
        }
        let slice = Slice {
            offset,
            bytes: self.len - offset,
            sha256: format!("{:x}", hasher.finalize()),
        };
        self.appended.push((id.to_string(), slice.clone()));
        Ok(slice)
    }

    /// Whether the pack is still the file lab appended to, as long as lab left it. Bytes
    /// appended by another are cut off and kept beside it as `NAME.found`; a pack replaced,
    /// deleted or cut short has lost earlier runs' output, which is described.
    pub(crate) fn verify(&mut self) -> Result<Option<String>> {
        let Ok(meta) = fs::symlink_metadata(&self.path) else {
            return Ok(Some(format!(
                "{} was deleted (earlier runs' output is lost)",
                pack_name(&self.path)
            )));
        };
        let now = Identity::from_metadata(&meta);
        if now == self.identity {
            return Ok(None);
        }
        if (now.dev, now.ino) != (self.identity.dev, self.identity.ino) {
            return Ok(Some(format!(
                "{} was replaced (earlier runs' output is lost)",
                pack_name(&self.path)
            )));
        }
        if now.len < self.len {
            return Ok(Some(format!(
                "{} was cut short (earlier runs' output is lost)",
                pack_name(&self.path)
            )));
        }
        if now.len > self.len {
            self.set_aside_tail()?;
            self.identity = self
                .file
                .metadata()
                .map_or(self.identity, |m| Identity::from_metadata(&m));
            return Ok(Some(format!(
                "{} was appended to (the bytes are kept in {}.found)",
                pack_name(&self.path),
                pack_name(&self.path)
            )));
        }
        // The same length, written to: the runs' digests tell whose output changed. Lab
        // keeps no second copy to restore it from; each run's digest refuses it when read.
        self.identity = now;
        let changed = self.first_changed_run().map_or_else(String::new, |id| {
            format!(": run {id}'s output no longer matches its digest")
        });
        Ok(Some(format!(
            "{} was written to in place{changed}",
            pack_name(&self.path)
        )))
    }

    /// The first run appended since the pack was opened whose bytes are not what it wrote.
    fn first_changed_run(&self) -> Option<&str> {
        self.appended.iter().find_map(|(id, slice)| {
            let now = LogRef::Packed {
                pack: self.path.clone(),
                offset: slice.offset,
                bytes: slice.bytes,
            }
            .read_all();
            (format!("{:x}", Sha256::digest(&now)) != slice.sha256).then_some(id.as_str())
        })
    }

    /// Moves the bytes past lab's length to `NAME.found` and cuts the pack back.
    fn set_aside_tail(&mut self) -> Result<()> {
        let mut found = self.path.as_os_str().to_owned();
        found.push(".found");
        fs::write(&found, bytes_from(&self.path, self.len)?)?;
        self.file.set_len(self.len)?;
        Ok(())
    }
}

/// The bytes of the file at `path` from `offset` to its end.
pub(super) fn bytes_from(path: &Path, offset: u64) -> std::io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The bytes of each pack of the session at `dir` past the end of the last run its
/// committed rows name: output appended for a run lab was stopped before it could commit,
/// which [`super::repair`] sets aside.
pub(crate) fn uncommitted_tails(dir: &Path, runs: &[RunRow]) -> Vec<Tail> {
    let end = |slice: fn(&super::RunRow) -> Option<(u64, u64)>| {
        runs.iter()
            .filter_map(slice)
            .map(|(offset, bytes)| offset + bytes)
            .max()
            .unwrap_or(0)
    };
    let committed = [
        (
            "logs/stdout.pack",
            end(|r| r.stdout_offset.zip(r.stdout_bytes)),
        ),
        (
            "logs/stderr.pack",
            end(|r| r.stderr_offset.zip(r.stderr_bytes)),
        ),
    ];
    committed
        .into_iter()
        .filter_map(|(file, keep)| {
            let meta = fs::symlink_metadata(dir.join(file)).ok()?;
            (meta.is_file() && meta.len() > keep).then(|| Tail {
                file,
                keep_bytes: keep,
                total_bytes: meta.len(),
                reason: "output of a run stopped before its row was written".into(),
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "packed_tests.rs"]
mod tests;
