//! Stage 4: sessions on disk, sealed and append-only. `data/NAME/SESSION/` holds
//! `sealed/lab.toml`, `sealed/notes.md` and `sealed/references.bib` (the files the session ran with), manifest.json,
//! plan.json, runs.csv, samples.csv, logs/ and, for a sampled session, looks.json. Each run's
//! samples and then its run row are appended and flushed as it finishes; nothing is rewritten
//! but the manifest's closing fields (and a sampled session's plan and looks, look by look).

mod columns;
mod contention;
mod heap;
mod identity;
mod lock;
mod logs;
mod looks;
mod manifest;
mod manifest_file;
mod memory;
mod outputs;
mod packed;
mod printed;
mod read;
pub mod regular;
mod rows;
pub mod seal;
mod session_ref;
mod shards;
pub mod space;
mod writer;

pub use columns::{PARAMS_AFTER, RUN_COLUMNS, RunColumn, SAMPLE_COLUMNS, SampleColumn};
pub use contention::{Contention, MIN_CAPACITY_NS, Source as WaitSource, Unjudged};
pub use heap::{give_back_free_pages, share_arenas};
pub use lock::{Held, LOCK_FILE, Lock, is_locked, lock_experiment, lock_machine};
pub use logs::{Line, MAX_LINE, Scan, empty_file, read_lines, remove_planted, scan_lines};
pub use looks::{LOOKS, read_looks};
pub use manifest::*;
pub use manifest_file::FORMAT;
pub(crate) use outputs::{anonymous_file, capped};
pub use packed::{LogRef, Packed, STDERR_PACK, STDOUT_PACK, Slice, held_open};
pub use printed::{Found, JsonLine, Unusable, shown};
pub use read::{Rows, Tail, read_rows};
pub use rows::{COUNTER_NAMES, Counters, Exit, RunRow, SampleRow};
pub use seal::{Standing, Verified};
pub use session_ref::{
    ACCEPTED, BASELINES, SessionError, SessionList, SessionRef, folder_name, save_baseline,
};
pub use shards::{
    Merged, SHARDS, ShardSet, merge_shards, set_aside_torn, shard_complete, shard_dir, shard_rows,
    torn_output,
};
pub use writer::{SessionWriter, repair};

use anyhow::{Context, Result};
use std::fs;
use std::path::{Path, PathBuf};

pub const MANIFEST: &str = "manifest.json";
pub const PLAN: &str = "plan.json";
pub const RUNS: &str = "runs.csv";
pub const SAMPLES: &str = "samples.csv";
pub const LOGS: &str = "logs";
/// The folder of the files a session ran with.
pub const SEALED: &str = "sealed";
/// Where bytes that are not data (torn or orphaned tails) are moved on `--resume`.
pub const SET_ASIDE: &str = "set-aside";

use lab_config::plan::Plan;

/// The author's files as the session ran with them.
#[derive(Debug, Clone, PartialEq)]
pub struct Sealed {
    pub lab_toml: String,
    /// notes.md byte for byte: sealed as written even when it is not UTF-8, which rendering
    /// reports.
    pub notes: Option<Vec<u8>>,
    /// references.bib beside notes.md, byte for byte, where the experiment has one.
    pub references: Option<Vec<u8>>,
}

/// The sealed copies of notes.md and references.bib, inside `sealed/`.
pub const SEALED_NOTES: &str = "notes.md";
pub const SEALED_REFERENCES: &str = "references.bib";

impl Sealed {
    /// The experiment's lab.toml, notes.md and references.bib as they are now; a notes file
    /// that is no regular file (a FIFO would block) is not sealed.
    pub fn read(experiment_dir: &Path) -> Result<Self> {
        let file = experiment_dir.join(lab_config::FILE_NAME);
        let read = |name: &str| lab_config::folder_file::read_bytes(&experiment_dir.join(name));
        Ok(Sealed {
            lab_toml: lab_config::folder_file::read_text(&file)
                .with_context(|| format!("cannot read {}", file.display()))?,
            notes: read(SEALED_NOTES).ok(),
            references: read(SEALED_REFERENCES).ok(),
        })
    }

    fn write(&self, session_dir: &Path) -> Result<()> {
        let dir = session_dir.join(SEALED);
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        write_file(&dir.join(lab_config::FILE_NAME), self.lab_toml.as_bytes())?;
        if let Some(notes) = &self.notes {
            write_file(&dir.join(SEALED_NOTES), notes)?;
        }
        if let Some(references) = &self.references {
            write_file(&dir.join(SEALED_REFERENCES), references)?;
        }
        Ok(())
    }

    /// The files sealed in `session_dir`, or `None` for a session from before sealing.
    pub fn load(session_dir: &Path) -> Option<Self> {
        let dir = session_dir.join(SEALED);
        Some(Sealed {
            lab_toml: fs::read_to_string(dir.join(lab_config::FILE_NAME)).ok()?,
            notes: fs::read(dir.join(SEALED_NOTES)).ok(),
            references: fs::read(dir.join(SEALED_REFERENCES)).ok(),
        })
    }
}

/// The folder of a new session: `data/NAME/YYYYMMDDTHHMMSSZ-HOST`, never an existing one.
pub fn new_session_dir(data_dir: &Path, unix_ms: u64) -> PathBuf {
    let stamp: String = utc_timestamp(unix_ms)
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    let base = format!("{stamp}-{}", host_name());
    let mut dir = data_dir.join(&base);
    let mut n = 2;
    while dir.exists() {
        dir = data_dir.join(format!("{base}-{n}"));
        n += 1;
    }
    dir
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    fs::write(path, bytes).map_err(|e| {
        // A file left half-written by a full disk is not lab's to keep.
        let _ = fs::remove_file(path);
        space::write_failed(path, e)
    })
}

/// Writes `bytes` through a temporary file beside `path` and a rename, so a kill never leaves
/// half of it.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    write_file(Path::new(&tmp), bytes)?;
    fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

/// Writes JSON through a temporary file and a rename, so a kill never leaves half of it.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    write_file(Path::new(&tmp), text.as_bytes())?;
    fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

/// How the name of a folder being assembled ends, and of a derived session being written.
const STAGING_SUFFIX: &str = ".partial";
const DERIVED_SUFFIX: &str = ".derived";

/// A hidden sibling of `dir` where it is assembled before being moved into place.
fn staging_dir(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!(".{name}{STAGING_SUFFIX}"))
}

/// Whether `name` is one of the files lab writes only while it writes a session, which no
/// reader of a finished session looks at: the writer's lock, a run's spool files, a session
/// folder being assembled (it appears under its own name when it is whole), a derived one.
pub fn is_working_name(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    let own_spool = name.starts_with(".r") && (name.ends_with(".out") || name.ends_with(".err"));
    [LOCK_FILE, writer::SPOOL_OUT, writer::SPOOL_ERR].contains(&name.as_ref())
        || own_spool
        || (name.starts_with('.')
            && (name.ends_with(STAGING_SUFFIX) || name.ends_with(DERIVED_SUFFIX)))
}

/// A stored session, read back for analysis.
#[derive(Debug, Clone)]
pub struct StoredSession {
    pub dir: PathBuf,
    pub name: String,
    pub manifest: Manifest,
    pub plan: Plan,
    pub runs: Vec<RunRow>,
    pub samples: Vec<SampleRow>,
    /// The lab.toml and notes.md it ran with; `None` for sessions written before sealing.
    pub sealed: Option<Sealed>,
    /// Bytes after the committed rows that were set aside on reading.
    pub tails: Vec<Tail>,
    /// How lab knows the session: sealed by it, committed to git, or unrecorded.
    pub standing: Standing,
}

impl StoredSession {
    /// "session NAME is damaged: WHY" when [`seal::verify`] (or the run that wrote it) found
    /// it damaged: the one wording every reader gives.
    pub fn damage(&self) -> Option<String> {
        let why = self.manifest.damaged.as_ref()?;
        Some(format!("session {} is damaged: {why}", self.name))
    }

    /// Where the run of `row` kept its stdout.
    pub fn stdout(&self, row: &RunRow) -> LogRef {
        log_ref(&self.dir, row, Stream::Stdout)
    }

    /// Where the run of `row` kept its stderr.
    pub fn stderr(&self, row: &RunRow) -> LogRef {
        log_ref(&self.dir, row, Stream::Stderr)
    }
}

/// A run's output stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Where the run of `row` in the session at `dir` kept `stream`: its slice of the stream's
/// pack, or, in a session from before the packs, a file of its own.
pub fn log_ref(dir: &Path, row: &RunRow, stream: Stream) -> LogRef {
    let (slice, pack, ext) = match stream {
        Stream::Stdout => (row.stdout_offset.zip(row.stdout_bytes), STDOUT_PACK, "out"),
        Stream::Stderr => (row.stderr_offset.zip(row.stderr_bytes), STDERR_PACK, "err"),
    };
    match slice {
        Some((offset, bytes)) => LogRef::Packed {
            pack: dir.join(LOGS).join(pack),
            offset,
            bytes,
        },
        None => LogRef::File(dir.join(LOGS).join(format!("{}.{ext}", row.run_id))),
    }
}

/// Every session folder of an experiment's data folder, oldest first.
pub fn sessions(data_dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(data_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.join(MANIFEST).is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Reads a session folder's manifest alone.
pub fn load_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST);
    let manifest = Manifest::from_json(&read_regular(&path)?)
        .map_err(|why| anyhow::anyhow!("{} is not a lab manifest: {why}", path.display()))?;
    if let Err(why) = manifest.generator() {
        anyhow::bail!("{}: {why}", path.display());
    }
    Ok(manifest)
}

/// Reads a session folder; torn or orphaned tails are set aside (see [`read_rows`]).
pub fn load_session(dir: &Path) -> Result<StoredSession> {
    let manifest = load_manifest(dir)?;
    // The plan and the rows are parsed side by side: at 100,000 runs each takes a while.
    let (plan, rows) = rayon::join(|| read_plan(dir), || read_rows(dir));
    let (plan, rows) = (plan?, rows?);
    // Reading a plan makes a parameter map per run before the runs of a cell share one.
    give_back_free_pages();
    plan_holds_every_run(dir, &plan, &rows.runs)?;
    let mut manifest = manifest;
    let verified = seal::verify(dir, &manifest);
    if let Some(changed) = verified.damage {
        manifest.damaged = Some(match manifest.damaged.take() {
            Some(earlier) => format!("{earlier}; {changed}"),
            None => changed,
        });
    }
    Ok(StoredSession {
        name: dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        dir: dir.to_path_buf(),
        manifest,
        plan,
        runs: rows.runs,
        samples: rows.samples,
        sealed: Sealed::load(dir),
        tails: rows.tails,
        standing: verified.standing,
    })
}

/// SHA-256 of the session file at `path` (see [`open_regular`]), read as a stream.
pub fn sha256_file(path: &Path) -> Result<String> {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    std::io::copy(&mut open_regular(path)?, &mut hasher)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(format!("{:x}", hasher.finalize()))
}

/// SHA-256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

/// The session file at `path`, opened for reading, which must be a regular file: a FIFO would
/// block the reader forever, a device or a folder is no file lab wrote.
pub fn open_regular(path: &Path) -> Result<fs::File> {
    let file =
        logs::open_unblocked(path, 0).with_context(|| format!("cannot read {}", path.display()))?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        anyhow::bail!(
            "{} is not a regular file (it is {}): lab reads a session only from the files it wrote\n  hint: put back the file lab wrote, or move the session folder aside",
            path.display(),
            crate::regular::kind_of(&kind)
        );
    }
    Ok(file)
}

/// The bytes of the session file at `path` (see [`open_regular`]).
pub fn read_regular(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    open_regular(path)?
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(bytes)
}

/// The plan of the session in `dir`, parsed as it is read: the text of a plan of 100,000 runs
/// (24 MB) is never held whole.
fn read_plan(dir: &Path) -> Result<Plan> {
    let path = dir.join(PLAN);
    let file = std::io::BufReader::new(open_regular(&path)?);
    serde_json::from_reader(file).with_context(|| format!("{} is not a lab plan", path.display()))
}

/// Every stored run is one the plan holds: a plan missing runs (or holding none) beside rows
/// is a damaged session, never read as a complete one of fewer runs.
fn plan_holds_every_run(dir: &Path, plan: &Plan, runs: &[RunRow]) -> Result<()> {
    let planned: std::collections::BTreeSet<&str> =
        plan.runs.iter().map(|r| r.id.as_str()).collect();
    let missing: Vec<&str> = runs
        .iter()
        .map(|r| r.run_id.as_str())
        .filter(|id| !planned.contains(id))
        .collect();
    match missing.as_slice() {
        [] => Ok(()),
        [first, ..] => anyhow::bail!(
            "session {} is damaged: {} holds {} runs its {PLAN} does not plan (the first: {first}){}\n  hint: put back the {PLAN} lab wrote; the stored runs are kept as they are",
            dir.display(),
            RUNS,
            missing.len(),
            if plan.runs.is_empty() {
                format!(", and the {PLAN} plans no run at all")
            } else {
                String::new()
            }
        ),
    }
}

/// Writes a session derived from `parent`: its plan, runs and logs, with `samples` re-read
/// from the logs under `sealed`, and `manifest` naming the parent. Written in a temporary
/// folder and moved into place whole, so a reader never sees half of it.
pub fn write_derived(
    parent: &StoredSession,
    dir: &Path,
    manifest: &Manifest,
    sealed: &Sealed,
    param_names: &[String],
    samples: &[(RunRow, Vec<SampleRow>)],
) -> Result<()> {
    let staging = dir.with_file_name(format!(
        ".{}{DERIVED_SUFFIX}",
        dir.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    ));
    if staging.exists() {
        fs::remove_dir_all(&staging)?;
    }
    let mut writer = SessionWriter::create(
        staging.clone(),
        manifest,
        &parent.plan,
        param_names.to_vec(),
        sealed,
    )?;
    let planned: std::collections::BTreeMap<&str, _> = parent
        .plan
        .runs
        .iter()
        .map(|r| (r.id.as_str(), r))
        .collect();
    for (row, values) in samples {
        let Some(run) = planned.get(row.run_id.as_str()) else {
            continue;
        };
        writer.append(run, row, values)?;
        for ext in ["out", "err"] {
            let from = parent.dir.join(LOGS).join(format!("{}.{ext}", row.run_id));
            if from.exists() {
                link_or_copy(
                    &from,
                    &staging.join(LOGS).join(format!("{}.{ext}", row.run_id)),
                )?;
            }
        }
    }
    for pack in [STDOUT_PACK, STDERR_PACK] {
        let from = parent.dir.join(LOGS).join(pack);
        if from.is_file() {
            link_or_copy(&from, &staging.join(LOGS).join(pack))?;
        }
    }
    writer.finish(manifest)?;
    drop(writer);
    fs::rename(&staging, dir)
        .with_context(|| format!("cannot move {} to {}", staging.display(), dir.display()))?;
    seal::record_closed(dir)
}

/// Puts the file `from` at `to` (replacing what is there): a hard link where the file system
/// allows, else a copy. Session files are never changed once written, so sharing them is safe.
fn link_or_copy(from: &Path, to: &Path) -> Result<()> {
    remove_planted(to).with_context(|| format!("cannot replace {}", to.display()))?;
    if fs::hard_link(from, to).is_err() {
        fs::copy(from, to).with_context(|| format!("cannot copy {}", from.display()))?;
    }
    Ok(())
}

/// The parameter columns of a stored session's runs.csv, as its header has them.
pub fn param_columns(dir: &Path) -> Result<Vec<String>> {
    let path = dir.join(RUNS);
    let mut reader =
        csv::Reader::from_path(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let names: Vec<String> = reader
        .headers()
        .with_context(|| format!("cannot read the header of {}", path.display()))?
        .iter()
        .map(String::from)
        .collect();
    Ok(columns::param_columns(&names).to_vec())
}

#[cfg(test)]
pub(crate) mod tests {
    /// The manifest of tests/data, a session recorded in lab's first weeks (format 1).
    pub(crate) fn fixture_manifest() -> super::Manifest {
        super::Manifest::from_json(include_bytes!("../tests/data/manifest.json"))
            .expect("the manifest fixture reads")
    }
}
