//! `lab bundle`'s writing side: a stored session's files, each digested, as one archive whose
//! bytes depend only on the session's (the same session gives the same bundle).

use super::{INDEX, Index, Member, REQUIRED_FILES, SESSION_FILES, archive};
use anyhow::{Context, Result, bail};
use lab_store::{self as store, StoredSession};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// What `lab bundle` wrote.
#[derive(Debug, Clone)]
pub struct Written {
    pub path: PathBuf,
    /// The archive's size in bytes.
    pub bytes: u64,
    /// The index the bundle opens with.
    pub index: Index,
}

/// Writes the session in `session.dir` of `experiment` to `out` (through a temporary file
/// beside it and a rename): refused for a damaged session or one whose rows end torn.
pub fn write_bundle(experiment: &str, session: &StoredSession, out: &Path) -> Result<Written> {
    refuse_unsound(session)?;
    let members = session_members(session)?;
    let index = Index {
        format: super::FORMAT.into(),
        version: super::VERSION,
        experiment: experiment.to_string(),
        session: session.name.clone(),
        lab_version: env!("CARGO_PKG_VERSION").into(),
        members,
    };
    let mut index_text = serde_json::to_string_pretty(&index)?;
    index_text.push('\n');
    let mut tmp = out.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    store::remove_planted(&tmp).with_context(|| format!("cannot clear {}", tmp.display()))?;
    let written = write_archive_file(&tmp, &session.dir, &index, index_text.as_bytes());
    let bytes = match written {
        Ok(bytes) => bytes,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    fs::rename(&tmp, out).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(Written {
        path: out.to_path_buf(),
        bytes,
        index,
    })
}

/// A damaged session, or one whose rows end in a torn tail, is not sent anywhere.
fn refuse_unsound(session: &StoredSession) -> Result<()> {
    if let Some(damage) = session.damage() {
        bail!(
            "{damage}\n  a bundle carries only a sound session\n  hint: bundle another session with --session ID"
        );
    }
    if let Some(tail) = session.tails.first() {
        bail!(
            "session {} has bytes after its last whole row ({}): it was stopped part way\n  hint: complete it with `lab run EXP --resume`, then bundle it",
            session.name,
            tail.describe()
        );
    }
    Ok(())
}

/// The session's files with their sizes and digests, in the order the bundle holds them:
/// the session files, then each run's own log files in run order.
fn session_members(session: &StoredSession) -> Result<Vec<Member>> {
    let mut names: Vec<String> = SESSION_FILES.iter().map(|s| s.to_string()).collect();
    let mut logs: Vec<String> = session
        .runs
        .iter()
        .flat_map(|r| ["out", "err"].map(|ext| format!("logs/{}.{ext}", r.run_id)))
        .collect();
    logs.sort();
    logs.dedup();
    names.extend(logs);
    let mut members = Vec::new();
    for name in names {
        let path = session.dir.join(&name);
        let Ok(meta) = fs::symlink_metadata(&path) else {
            if REQUIRED_FILES.contains(&name.as_str()) {
                bail!(
                    "session {} has no {name}: it is not a whole lab session",
                    session.name
                );
            }
            continue;
        };
        if !meta.is_file() {
            bail!(
                "{} is {}, not a file lab wrote: a bundle carries regular files only\n  hint: put back the file lab wrote",
                path.display(),
                lab_store::regular::kind_of(&meta.file_type())
            );
        }
        let (bytes, sha256) = digest_file(&path)?;
        members.push(Member {
            path: name,
            bytes,
            sha256,
        });
    }
    Ok(members)
}

/// The size and SHA-256 of the regular file at `path`, read in pieces.
fn digest_file(path: &Path) -> Result<(u64, String)> {
    let mut file = lab_store::regular::open_regular(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    Ok((total, format!("{:x}", hasher.finalize())))
}

/// Writes the archive to `tmp`: the index, then every member as digested; its size.
fn write_archive_file(tmp: &Path, dir: &Path, index: &Index, index_text: &[u8]) -> Result<u64> {
    let file = fs::File::options()
        .write(true)
        .create_new(true)
        .open(tmp)
        .with_context(|| format!("cannot create {}", tmp.display()))?;
    let mut out = archive::Writer::new(BufWriter::new(file));
    let fail = |e: std::io::Error| store::space::write_failed(tmp, e);
    out.append(INDEX, index_text.len() as u64, &mut &index_text[..])
        .map_err(fail)?;
    for m in &index.members {
        let path = dir.join(&m.path);
        let mut data = Hashing::new(
            lab_store::regular::open_regular(&path)
                .with_context(|| format!("cannot read {}", path.display()))?,
        );
        out.append(&m.path, m.bytes, &mut data).map_err(fail)?;
        if data.hex() != m.sha256 {
            bail!(
                "{} changed while it was bundled\n  hint: bundle the session again once nothing writes it",
                path.display()
            );
        }
    }
    let (out, total) = out.finish().map_err(fail)?;
    let file = out.into_inner().map_err(|e| fail(e.into_error()))?;
    file.sync_all().map_err(fail)?;
    Ok(total)
}

/// A reader that digests what passes through it.
pub(super) struct Hashing<R> {
    inner: R,
    hasher: Sha256,
}

impl<R> Hashing<R> {
    pub(super) fn new(inner: R) -> Self {
        Hashing {
            inner,
            hasher: Sha256::new(),
        }
    }

    /// The SHA-256 of everything read so far, in hex.
    pub(super) fn hex(&self) -> String {
        format!("{:x}", self.hasher.clone().finalize())
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
