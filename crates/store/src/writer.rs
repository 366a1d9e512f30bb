//! Writing a session: files created once, rows appended as runs finish, and a check after
//! every run that no run touched them. lab keeps the bytes it wrote to each session file; a
//! file whose identity (device, inode, length) or status-change time differs from what lab
//! left is read back and compared byte for byte, so an edit in place that keeps the length and
//! restores the modification time is caught too (a write always moves the change time, and no
//! call sets it back). lab puts back what it wrote, keeps what it found beside it, names the
//! first row that differs, and the session is marked damaged by its caller. When the session
//! ends, the SHA-256 of each file is sealed in its manifest, checked whenever it is read.
//! The packed logs are the exception (see [`super::packed`]): lab keeps no copy of runs'
//! output, so a pack written over is checked run by run against the digests of what lab
//! appended, and its rows' digests guard it whenever it is read.

use super::columns::{self, Overrides, RunLayout};
use super::identity::Identity;
use super::packed::{Pack, Packed, STDERR_PACK, STDOUT_PACK};
use super::read::{Tail, read_rows};
use super::rows::{RunRow, SampleRow};
use super::{LOGS, MANIFEST, Manifest, PLAN, RUNS, SAMPLES, SET_ASIDE, Sealed, write_json};
use anyhow::{Context, Result};
use lab_config::plan::{Plan, PlannedRun};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// An append-only CSV file and every byte lab has written to it.
struct Appended {
    path: PathBuf,
    file: File,
    identity: Identity,
    written: Vec<u8>,
}

/// A file written whole (manifest, plan, sealed copies) and its bytes.
struct Whole {
    path: PathBuf,
    bytes: Vec<u8>,
    identity: Identity,
}

/// The spool files of a serial run loop, in logs/ (hidden: no run id can start with a dot).
pub(super) const SPOOL_OUT: &str = ".spool.out";
pub(super) const SPOOL_ERR: &str = ".spool.err";

/// A session being written.
pub struct SessionWriter {
    pub dir: PathBuf,
    runs: Appended,
    samples: Appended,
    /// `logs/stdout.pack` and `logs/stderr.pack`.
    packs: [Pack; 2],
    whole: Vec<Whole>,
    /// The columns of this session's runs.csv, as its header names them.
    layout: RunLayout,
    /// The line of the row being appended, kept from row to row.
    line: Vec<u8>,
    /// The cluster node writing this folder, recorded on every row appended without one.
    node: Option<String>,
    /// How many runs plan.json holds, once read.
    planned: Option<usize>,
}

impl SessionWriter {
    /// Creates the session folder: the sealed files, the manifest, the plan, the CSV headers.
    pub fn create(
        dir: PathBuf,
        manifest: &Manifest,
        plan: &Plan,
        param_names: Vec<String>,
        sealed: &Sealed,
    ) -> Result<Self> {
        // Staged, then moved into place whole: a session folder is never half-created.
        let staging = super::staging_dir(&dir);
        if staging.exists() {
            fs::remove_dir_all(&staging)?;
        }
        fs::create_dir_all(staging.join(LOGS))
            .with_context(|| format!("cannot create session folder {}", staging.display()))?;
        sealed.write(&staging)?;
        write_json(&staging.join(MANIFEST), &manifest.on_disk())?;
        write_json(&staging.join(PLAN), plan)?;
        let padded = plan.runs.iter().any(|r| r.env_padding.is_some());
        create_csv(
            &staging.join(RUNS),
            &columns::run_header(&param_names, padded),
        )?;
        create_csv(&staging.join(SAMPLES), &columns::sample_header())?;
        fs::rename(&staging, &dir)
            .with_context(|| format!("cannot create session folder {}", dir.display()))?;
        super::seal::record_open(&dir)?;
        Self::open(dir)
    }

    /// Reopens an unfinished session to append the runs it is missing; call [`repair`] first.
    /// The digests sealed when it stopped no longer hold once it grows: they are dropped
    /// (and sealed anew when it closes).
    pub fn reopen(dir: PathBuf) -> Result<Self> {
        let path = dir.join(MANIFEST);
        let mut manifest = Manifest::from_json(&super::read_regular(&path)?)
            .map_err(|why| anyhow::anyhow!("{} is not a lab manifest: {why}", path.display()))?;
        if !manifest.digests.is_empty() {
            manifest.digests.clear();
            write_json(&path, &manifest.on_disk())?;
        }
        super::seal::record_open(&dir)?;
        Self::open(dir)
    }

    fn open(dir: PathBuf) -> Result<Self> {
        let header = runs_header(&dir.join(RUNS))?;
        let whole = whole_files(&dir)
            .into_iter()
            .filter_map(|path| {
                let bytes = fs::read(&path).ok()?;
                Some(Whole {
                    identity: Identity::of(&path)?,
                    path,
                    bytes,
                })
            })
            .collect();
        fs::create_dir_all(dir.join(LOGS))
            .with_context(|| format!("cannot create {}", dir.join(LOGS).display()))?;
        Ok(SessionWriter {
            runs: Appended::open(dir.join(RUNS))?,
            samples: Appended::open(dir.join(SAMPLES))?,
            packs: [
                Pack::open(&dir, STDOUT_PACK)?,
                Pack::open(&dir, STDERR_PACK)?,
            ],
            whole,
            dir,
            layout: RunLayout::new(header),
            line: Vec::new(),
            node: None,
            planned: None,
        })
    }

    /// Where a run executing beside others (`--jobs`) writes its stdout and stderr until
    /// [`Self::pack_own_spools`] packs them: hidden files of its own in logs/.
    pub fn own_spools(&self, run: &PlannedRun) -> (PathBuf, PathBuf) {
        let logs = self.dir.join(LOGS);
        (
            logs.join(format!(".{}.out", run.id)),
            logs.join(format!(".{}.err", run.id)),
        )
    }

    /// The names of a serial loop's run outputs in messages: the files have none
    /// ([`Self::run_outputs`]).
    pub fn spool_paths(&self) -> (PathBuf, PathBuf) {
        let logs = self.dir.join(LOGS);
        (logs.join(SPOOL_OUT), logs.join(SPOOL_ERR))
    }

    /// Two files of the run's own for its stdout and stderr: made without a name (in memory,
    /// else in logs/), so that nothing else can open them, and given to no other run. A
    /// process the run leaves behind can write into them after the run ended, but no later
    /// run's output is read from them.
    pub fn run_outputs(&self) -> Result<[File; 2]> {
        let logs = self.dir.join(LOGS);
        let make = || {
            super::anonymous_file(&logs)
                .with_context(|| format!("cannot make a file in {}", logs.display()))
        };
        Ok([make()?, make()?])
    }

    /// Appends what a run wrote into its own outputs ([`Self::run_outputs`]) to the packs, at
    /// most `max_output` bytes of each (see [`super::capped`]).
    pub fn pack_outputs(
        &mut self,
        id: &str,
        outputs: &[File; 2],
        max_output: u64,
    ) -> Result<Packed> {
        let [out, err] = outputs;
        let (mut out, mut err) = (
            super::capped(out, max_output)?,
            super::capped(err, max_output)?,
        );
        self.pack(id, &mut out, &mut err)
    }

    /// Appends the output of a run that executed beside others ([`Self::own_spools`]) to the
    /// packs and removes its files.
    pub fn pack_own_spools(&mut self, run: &PlannedRun, max_output: u64) -> Result<Packed> {
        let (out, err) = self.own_spools(run);
        let packed = self.pack_files(&run.id, &out, &err, max_output)?;
        for file in [out, err] {
            super::remove_planted(&file)
                .with_context(|| format!("cannot remove {}", file.display()))?;
        }
        Ok(packed)
    }

    /// Appends the files a run wrote to the packs. Only a regular file is read, never through
    /// a link: a run cannot have another file packed as its output. A missing file is empty.
    fn pack_files(&mut self, id: &str, out: &Path, err: &Path, max_output: u64) -> Result<Packed> {
        let (out, err) = (spooled(out), spooled(err));
        let (mut out_read, mut err_read) = (
            capped_or_empty(&out, max_output)?,
            capped_or_empty(&err, max_output)?,
        );
        self.pack(id, &mut out_read, &mut err_read)
    }

    /// Appends run `id`'s stdout and stderr, read from `out` and `err`, to the packs.
    pub fn pack(
        &mut self,
        id: &str,
        out: &mut dyn std::io::Read,
        err: &mut dyn std::io::Read,
    ) -> Result<Packed> {
        let [stdout, stderr] = &mut self.packs;
        Ok(Packed {
            stdout: stdout.append_from(id, out)?,
            stderr: stderr.append_from(id, err)?,
        })
    }

    /// Removes the spool files once no run will write to them.
    pub fn remove_spools(&mut self) {
        let (out, err) = self.spool_paths();
        for spool in [out, err] {
            let _ = fs::remove_file(spool);
        }
    }

    /// Records `name` as the node of every run appended from now on (a cluster shard).
    pub fn on_node(&mut self, name: &str) {
        self.node = Some(name.to_string());
    }

    /// Appends one finished run: its samples first, then its row, which commits it.
    pub fn append(&mut self, run: &PlannedRun, row: &RunRow, samples: &[SampleRow]) -> Result<()> {
        if !samples.is_empty() {
            let mut block = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(Vec::new());
            for s in samples {
                block.serialize(s)?;
            }
            self.samples.append(&block.into_inner()?)?;
        }
        let overrides = Overrides {
            samples: Some(samples.len()),
            node: self.node.as_deref(),
        };
        self.line.clear();
        self.layout
            .write_line(row, &run.cell.params, overrides, &mut self.line);
        self.runs.append(&self.line)
    }

    /// Bytes lab may still write on the file system holding the session, read through the
    /// session's open runs.csv.
    pub fn free_bytes(&self) -> Option<u64> {
        super::space::free_bytes_at(&self.runs.file)
    }

    /// Whether every session file is still the one lab wrote. Each change found is undone (what
    /// lab wrote is put back, what was found is kept beside it as `NAME.found`) and described.
    pub fn verify(&mut self) -> Result<Vec<String>> {
        let mut changes = Vec::new();
        if !self.dir.join(LOGS).is_dir() {
            fs::create_dir_all(self.dir.join(LOGS))?;
            changes.push(format!(
                "{LOGS}/ was deleted (earlier runs' output is lost)"
            ));
        }
        for file in [&mut self.runs, &mut self.samples] {
            changes.extend(file.verify()?);
        }
        for pack in &mut self.packs {
            changes.extend(pack.verify()?);
        }
        for file in &mut self.whole {
            changes.extend(file.verify()?);
        }
        Ok(changes)
    }

    fn read_plan(&self) -> Result<Plan> {
        let path = self.dir.join(super::PLAN);
        serde_json::from_slice(&fs::read(&path)?)
            .with_context(|| format!("{} is not a lab plan", path.display()))
    }

    /// Adds the runs `make` plans after the plan's last one (the next look of a sampled
    /// session): `make` gets the plan so far and returns runs numbered after it.
    pub fn extend_plan_with(
        &mut self,
        make: impl FnOnce(&[PlannedRun]) -> Vec<PlannedRun>,
    ) -> Result<Vec<PlannedRun>> {
        let path = self.dir.join(super::PLAN);
        let mut plan = self.read_plan()?;
        let runs = make(&plan.runs);
        plan.runs.extend(runs.iter().cloned());
        self.rewrite(&path, &plan)?;
        self.planned = Some(plan.runs.len());
        Ok(runs)
    }

    /// Replaces a file lab writes whole (or writes it a first time), and remembers the new
    /// bytes as the ones to keep.
    pub(super) fn rewrite<T: serde::Serialize>(&mut self, path: &Path, value: &T) -> Result<()> {
        write_json(path, value)?;
        let bytes = fs::read(path)?;
        match self.whole.iter_mut().find(|w| w.path == path) {
            Some(w) => {
                w.bytes = bytes;
                w.identity = Identity::of(path).unwrap_or(w.identity);
            }
            None => self.whole.push(Whole {
                identity: Identity::of(path)
                    .with_context(|| format!("cannot read {} back", path.display()))?,
                path: path.to_path_buf(),
                bytes,
            }),
        }
        Ok(())
    }

    /// Records the manifest of the session while it runs (a cluster job's id, as soon as it
    /// exists): no digests yet, as in any unfinished session.
    pub fn record(&mut self, manifest: &Manifest) -> Result<()> {
        let path = self.dir.join(MANIFEST);
        let mut open = manifest.clone();
        open.digests.clear();
        self.rewrite(&path, &open.on_disk())
    }

    /// Records the closing state of the session in its manifest, with the digest of every
    /// file as lab wrote it.
    pub fn finish(&mut self, manifest: &Manifest) -> Result<()> {
        let path = self.dir.join(MANIFEST);
        let mut sealed = manifest.clone();
        sealed.digests = self.digests()?;
        self.rewrite(&path, &sealed.on_disk())?;
        super::seal::record_closed(&self.dir)
    }

    /// SHA-256 of the bytes lab wrote to each session file but the manifest, by path within
    /// the session, and of each packed log as it closes (the runs' digests guarded every
    /// slice appended to it).
    fn digests(&self) -> Result<std::collections::BTreeMap<String, String>> {
        let appended = [&self.runs, &self.samples]
            .into_iter()
            .map(|a| (&a.path, &a.written));
        let whole = self
            .whole
            .iter()
            .filter(|w| w.path.file_name() != Some(MANIFEST.as_ref()))
            .map(|w| (&w.path, &w.bytes));
        let mut digests: std::collections::BTreeMap<String, String> = appended
            .chain(whole)
            .map(|(path, bytes)| (within(&self.dir, path), super::sha256_hex(bytes)))
            .collect();
        for pack in [STDOUT_PACK, STDERR_PACK] {
            let path = self.dir.join(LOGS).join(pack);
            if fs::symlink_metadata(&path).is_ok() {
                digests.insert(within(&self.dir, &path), super::sha256_file(&path)?);
            }
        }
        Ok(digests)
    }
}

/// The spool file at `path` opened to read and empty, when it is a regular file that holds
/// something: never through a link, and no file opened for a run that printed nothing (the
/// common case, and a system call less per stream).
fn spooled(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() == 0 {
        return None;
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

/// What `file` holds, at most `max` bytes of it (see `capped`), or nothing.
fn capped_or_empty(file: &Option<File>, max: u64) -> Result<Box<dyn std::io::Read + '_>> {
    Ok(match file {
        Some(f) => super::capped(f, max)?,
        None => Box::new(std::io::empty()),
    })
}

/// The column names of an existing runs.csv.
fn runs_header(path: &Path) -> Result<Vec<String>> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(reader
        .headers()
        .with_context(|| format!("{} has no header", path.display()))?
        .iter()
        .map(String::from)
        .collect())
}

/// Every file of a session written whole, that later runs must not change.
fn whole_files(dir: &Path) -> Vec<PathBuf> {
    let sealed = dir.join(super::SEALED);
    vec![
        dir.join(MANIFEST),
        dir.join(PLAN),
        sealed.join(lab_config::FILE_NAME),
        sealed.join(super::SEALED_NOTES),
        sealed.join(super::SEALED_REFERENCES),
        dir.join(super::LOOKS),
    ]
}

fn create_csv(path: &Path, header: &[String]) -> Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    let mut line = csv::Writer::from_writer(Vec::new());
    line.write_record(header)?;
    file.write_all(&line.into_inner()?)
        .with_context(|| format!("cannot write {}", path.display()))
}

impl Appended {
    fn open(path: PathBuf) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let written = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let identity = Identity::from_metadata(
            &file
                .metadata()
                .with_context(|| format!("cannot stat {}", path.display()))?,
        );
        Ok(Appended {
            path,
            file,
            identity,
            written,
        })
    }

    /// Appends and flushes: one `write` for the whole block, so a kill tears at most its end.
    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|e| super::space::write_failed(&self.path, e))?;
        self.written.extend_from_slice(bytes);
        match self.file.metadata() {
            Ok(m) => self.identity = Identity::from_metadata(&m),
            Err(_) => self.identity.len += bytes.len() as u64,
        }
        Ok(())
    }

    fn verify(&mut self) -> Result<Option<String>> {
        let now = Identity::of(&self.path);
        let change = match now {
            None => "was deleted".to_string(),
            Some(i) if (i.dev, i.ino) != (self.identity.dev, self.identity.ino) => {
                "was replaced".to_string()
            }
            Some(i) if i == self.identity => return Ok(None),
            Some(i) => {
                let found = fs::read(&self.path).unwrap_or_default();
                if found == self.written {
                    // Touched, not changed (a chmod or a rewrite of the same bytes).
                    self.identity = i;
                    return Ok(None);
                }
                first_difference(&self.written, &found)
            }
        };
        restore(&self.path, &self.written)?;
        let written = std::mem::take(&mut self.written);
        *self = Appended::open(self.path.clone())?;
        self.written = written;
        Ok(Some(describe(&self.path, &change)))
    }
}

/// "was changed from line 3 on" (line 1 is the header), or how the file ends short or long.
fn first_difference(written: &[u8], found: &[u8]) -> String {
    let at = written
        .iter()
        .zip(found)
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| written.len().min(found.len()));
    let line = 1 + written[..at].iter().filter(|b| **b == b'\n').count();
    if at == found.len() && found.len() < written.len() {
        format!("was cut short at line {line}")
    } else if at == written.len() {
        format!("was appended to after line {}", line - 1)
    } else {
        format!("was changed at line {line}")
    }
}

impl Whole {
    fn verify(&mut self) -> Result<Option<String>> {
        let change = match Identity::of(&self.path) {
            None => "was deleted",
            Some(i) if i == self.identity => return Ok(None),
            Some(i) if fs::read(&self.path).is_ok_and(|found| found == self.bytes) => {
                self.identity = i;
                return Ok(None);
            }
            Some(_) => "was changed",
        };
        restore(&self.path, &self.bytes)?;
        self.identity = Identity::of(&self.path).unwrap_or(self.identity);
        Ok(Some(describe(&self.path, change)))
    }
}

/// `path` within the session folder `dir`, with `/` between its parts.
fn within(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// "runs.csv was deleted", "sealed/lab.toml was changed": the path within the session.
fn describe(path: &Path, change: &str) -> String {
    let within = path
        .parent()
        .and_then(|p| p.file_name())
        .filter(|p| *p == super::SEALED)
        .map_or_else(PathBuf::new, PathBuf::from)
        .join(path.file_name().unwrap_or_default());
    format!("{} {change}", within.display())
}

/// Puts `bytes` back at `path`, keeping whatever stands there as `path.found`.
fn restore(path: &Path, bytes: &[u8]) -> Result<()> {
    if path.exists() {
        let mut found = path.as_os_str().to_owned();
        found.push(".found");
        fs::rename(path, &found)?;
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, bytes).with_context(|| format!("cannot restore {}", path.display()))
}

/// Moves torn or orphaned tails out of runs.csv and samples.csv, and the output appended to
/// the packed logs for runs that never committed, into `set-aside/`, so that appending
/// continues after the last committed run. Returns what was moved.
pub fn repair(dir: &Path) -> Result<Vec<Tail>> {
    let mut tails = read_rows(dir)?.tails;
    for tail in &tails {
        set_aside(dir, tail)?;
    }
    let uncommitted = super::packed::uncommitted_tails(dir, &read_rows(dir)?.runs);
    for tail in &uncommitted {
        set_aside(dir, tail)?;
    }
    tails.extend(uncommitted);
    Ok(tails)
}

/// Moves the bytes of `tail.file` past `tail.keep_bytes` to `set-aside/NAME.N` (the first N
/// free) and cuts the file back to them.
pub(super) fn set_aside(dir: &Path, tail: &Tail) -> Result<()> {
    let path = dir.join(tail.file);
    let name = Path::new(tail.file)
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let aside_dir = dir.join(SET_ASIDE);
    fs::create_dir_all(&aside_dir)?;
    let mut n = 1;
    while aside_dir.join(format!("{name}.{n}")).exists() {
        n += 1;
    }
    fs::write(
        aside_dir.join(format!("{name}.{n}")),
        super::packed::bytes_from(&path, tail.keep_bytes)?,
    )?;
    OpenOptions::new()
        .write(true)
        .open(&path)?
        .set_len(tail.keep_bytes)?;
    Ok(())
}
