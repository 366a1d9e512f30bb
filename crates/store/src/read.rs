//! Reading runs.csv and samples.csv back without trusting them. A run is committed by its row
//! in runs.csv, written after its samples and carrying their count, so:
//! - a last line without its newline is a torn write: set aside, never parsed;
//! - sample rows of a run with no run row are the tail of a run that was cut short: set aside;
//! - a duplicated row, or a run whose sample count differs from its rows, is damage: an error
//!   naming the file and line, because no reading of it can be trusted.

use super::columns::RunReader;
use super::rows::{RunRow, SampleRow};
use super::{RUNS, SAMPLES};
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Bytes at the end of a file that are not data.
#[derive(Debug, Clone, PartialEq)]
pub struct Tail {
    pub file: &'static str,
    /// Where the data ends: everything from here on is set aside.
    pub keep_bytes: u64,
    pub total_bytes: u64,
    pub reason: String,
}

impl Tail {
    pub fn describe(&self) -> String {
        format!(
            "{}: {} byte{} after byte {} set aside ({})",
            self.file,
            self.total_bytes - self.keep_bytes,
            if self.total_bytes - self.keep_bytes == 1 {
                ""
            } else {
                "s"
            },
            self.keep_bytes,
            self.reason
        )
    }
}

/// The committed rows of a session, and what was found after them.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    pub runs: Vec<RunRow>,
    pub samples: Vec<SampleRow>,
    pub tails: Vec<Tail>,
}

/// A parsed row with where it stands in its file.
struct Located<T> {
    row: T,
    line: u64,
    start: u64,
}

/// Reads the committed rows of the session in `dir`.
pub fn read_rows(dir: &Path) -> Result<Rows> {
    let runs_path = dir.join(RUNS);
    let mut runs_file = open(&runs_path)?;
    let runs_lines = complete_lines(&mut runs_file, &runs_path)?;
    let runs_keep = runs_lines.keep_bytes;
    let samples_path = dir.join(SAMPLES);
    let mut samples_file = open(&samples_path)?;
    let samples_lines = complete_lines(&mut samples_file, &samples_path)?;
    let samples_complete = samples_lines.keep_bytes;
    super::memory::check(dir, runs_lines.total_bytes + samples_lines.total_bytes)?;
    // The two files are parsed side by side; errors are reported runs.csv first.
    let (runs, samples) = rayon::join(
        || parse::<RunRow>(runs_file, &runs_lines, &runs_path),
        || parse::<SampleRow>(samples_file, &samples_lines, &samples_path),
    );
    let runs = runs?;
    refuse_duplicate_runs(&runs, &runs_path)?;
    let committed: BTreeMap<&str, Option<usize>> = runs
        .iter()
        .map(|r| (r.row.run_id.as_str(), r.row.samples))
        .collect();
    let samples = samples?;
    refuse_duplicate_samples(&samples, &samples_path)?;
    let orphans_from = orphan_tail(&samples, &committed, &samples_path)?;
    let samples_keep = orphans_from.map_or(samples_complete, |i| samples[i].start);
    let kept: Vec<SampleRow> = without_slack(
        samples
            .into_iter()
            .take(orphans_from.unwrap_or(usize::MAX))
            .map(|s| s.row)
            .collect(),
    );
    check_counts(&committed, &kept, &samples_path)?;

    let tails = tails_of(
        (runs_keep, runs_lines.total_bytes),
        (samples_keep, samples_lines.total_bytes),
        orphans_from.is_some(),
    );
    Ok(Rows {
        runs: without_slack(runs.into_iter().map(|r| r.row).collect()),
        samples: kept,
        tails,
    })
}

/// What is set aside at the end of each file: runs.csv's and samples.csv's bytes kept and in
/// all, and whether samples.csv's tail holds the values of a run that never finished.
fn tails_of(runs: (u64, u64), samples: (u64, u64), orphans: bool) -> Vec<Tail> {
    let mut tails = Vec::new();
    if runs.0 < runs.1 {
        tails.push(Tail {
            file: RUNS,
            keep_bytes: runs.0,
            total_bytes: runs.1,
            reason: "a row cut off mid-write".into(),
        });
    }
    if samples.0 < samples.1 {
        tails.push(Tail {
            file: SAMPLES,
            keep_bytes: samples.0,
            total_bytes: samples.1,
            reason: if orphans {
                "values of a run that never finished".into()
            } else {
                "a row cut off mid-write".into()
            },
        });
    }
    tails
}

/// `rows` with the room it was collected in given back. Collecting the parsed rows reuses the
/// parser's vector, whose elements were larger (each held its line and offset): at 100,000
/// runs that room was MiBs held for the whole report.
fn without_slack<T>(mut rows: Vec<T>) -> Vec<T> {
    rows.shrink_to_fit();
    rows
}

fn open(path: &Path) -> Result<File> {
    super::open_regular(path)
}

/// How much of a file is whole lines: the part that ends with its last newline.
struct Lines {
    keep_bytes: u64,
    total_bytes: u64,
    /// Lines in the kept part, the header's included.
    count: usize,
}

/// Reads `file` through once, counting its lines and finding where its last one ends, without
/// holding its bytes; leaves it at its start.
fn complete_lines(file: &mut File, path: &Path) -> Result<Lines> {
    let mut lines = Lines {
        keep_bytes: 0,
        total_bytes: 0,
        count: 0,
    };
    let mut block = vec![0u8; 1 << 16];
    loop {
        let n = file
            .read(&mut block)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        let part = &block[..n];
        if let Some(last) = part.iter().rposition(|&b| b == b'\n') {
            lines.keep_bytes = lines.total_bytes + last as u64 + 1;
            lines.count += part.iter().filter(|&&b| b == b'\n').count();
        }
        lines.total_bytes += n as u64;
    }
    file.seek(SeekFrom::Start(0))
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(lines)
}

/// A row of a CSV file lab writes, read by a reader made once from the file's header.
trait CsvRow: Sized {
    type Reader;
    fn reader(header: &csv::ByteRecord) -> Self::Reader;
    fn read(reader: &Self::Reader, record: &csv::ByteRecord) -> Result<Self, String>;
}

/// A run row is read through its columns' table.
impl CsvRow for RunRow {
    type Reader = RunReader;
    fn reader(header: &csv::ByteRecord) -> RunReader {
        RunReader::new(header)
    }
    fn read(reader: &RunReader, record: &csv::ByteRecord) -> Result<RunRow, String> {
        reader.read(record)
    }
}

/// A sample row is read through its serde fields.
impl CsvRow for SampleRow {
    type Reader = csv::ByteRecord;
    fn reader(header: &csv::ByteRecord) -> csv::ByteRecord {
        header.clone()
    }
    fn read(header: &csv::ByteRecord, record: &csv::ByteRecord) -> Result<SampleRow, String> {
        record.deserialize(Some(header)).map_err(|e| e.to_string())
    }
}

/// Parses the CSV rows of the whole lines of `file` (after the header), keeping each row's
/// line and starting byte.
fn parse<T: CsvRow>(file: File, lines: &Lines, path: &Path) -> Result<Vec<Located<T>>> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(file.take(lines.keep_bytes));
    let row_reader = match reader.byte_headers() {
        Ok(h) => T::reader(h),
        Err(_) if lines.keep_bytes == 0 => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("{}: unreadable header", path.display())),
    };
    let mut record = csv::ByteRecord::new();
    let mut rows = Vec::with_capacity(lines.count.saturating_sub(1));
    loop {
        let more = reader
            .read_byte_record(&mut record)
            .with_context(|| format!("{}: unreadable row", path.display()))?;
        if !more {
            break;
        }
        let position = record
            .position()
            .cloned()
            .unwrap_or_else(csv::Position::new);
        let row = T::read(&row_reader, &record).map_err(|why| {
            anyhow::anyhow!(why).context(format!(
                "{}:{}: the row is damaged; the session cannot be read as it is",
                path.display(),
                position.line()
            ))
        })?;
        rows.push(Located {
            row,
            line: position.line(),
            start: position.byte(),
        });
    }
    Ok(rows)
}

fn refuse_duplicate_runs(runs: &[Located<RunRow>], path: &Path) -> Result<()> {
    let mut seen: HashMap<&str, u64> = HashMap::with_capacity(runs.len());
    for r in runs {
        if let Some(first) = seen.insert(&r.row.run_id, r.line) {
            bail!(
                "{}:{}: run {} appears twice (first on line {first}); the session is damaged\n  hint: remove the duplicate row by hand, or set the session aside and run again",
                path.display(),
                r.line,
                r.row.run_id
            );
        }
    }
    Ok(())
}

fn refuse_duplicate_samples(samples: &[Located<SampleRow>], path: &Path) -> Result<()> {
    if stretches_rise(samples) {
        return Ok(());
    }
    let mut seen: HashMap<(&str, &str, usize), u64> = HashMap::with_capacity(samples.len());
    for s in samples {
        let key = (
            s.row.run_id.as_str(),
            s.row.metric.as_str(),
            s.row.iteration,
        );
        if let Some(first) = seen.insert(key, s.line) {
            bail!(
                "{}:{}: value {} of `{}` for run {} appears twice (first on line {first}); the session is damaged",
                path.display(),
                s.line,
                s.row.iteration,
                s.row.metric,
                s.row.run_id
            );
        }
    }
    Ok(())
}

/// Whether each (run, metric) has its rows side by side, iterations rising, as lab writes
/// them: then no row repeats another, which one lookup per stretch of rows shows instead of
/// one per row.
fn stretches_rise(samples: &[Located<SampleRow>]) -> bool {
    let same = |a: &Located<SampleRow>, b: &Located<SampleRow>| {
        a.row.run_id == b.row.run_id && a.row.metric == b.row.metric
    };
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    samples.chunk_by(same).all(|stretch| {
        let first = &stretch[0].row;
        seen.insert((first.run_id.as_str(), first.metric.as_str()))
            && stretch
                .windows(2)
                .all(|w| w[0].row.iteration < w[1].row.iteration)
    })
}

/// The rows of `samples` by run: each stretch of rows of one run.
fn by_run<T>(samples: &[T], run_id: fn(&T) -> &str) -> impl Iterator<Item = &[T]> {
    samples.chunk_by(move |a, b| run_id(a) == run_id(b))
}

fn located_run(sample: &Located<SampleRow>) -> &str {
    &sample.row.run_id
}

/// The index of the first sample row of an uncommitted run, when every row after it is
/// uncommitted too (the tail of a run cut short). Uncommitted rows before committed ones are
/// damage.
fn orphan_tail(
    samples: &[Located<SampleRow>],
    committed: &BTreeMap<&str, Option<usize>>,
    path: &Path,
) -> Result<Option<usize>> {
    let is_orphan = |s: &Located<SampleRow>| !committed.contains_key(s.row.run_id.as_str());
    // A run's rows are all orphans or none: one lookup per stretch of them.
    let mut at = 0;
    let Some(first) = by_run(samples, located_run).find_map(|stretch| {
        at += stretch.len();
        is_orphan(&stretch[0]).then(|| at - stretch.len())
    }) else {
        return Ok(None);
    };
    let mut later = by_run(&samples[first..], located_run).map(|stretch| &stretch[0]);
    if let Some(later) = later.find(|s| !is_orphan(s)) {
        bail!(
            "{}:{}: values of run {}, which never finished, stand before those of run {} (line {}); the session is damaged",
            path.display(),
            samples[first].line,
            samples[first].row.run_id,
            later.row.run_id,
            later.line
        );
    }
    Ok(Some(first))
}

/// Each committed run has exactly the number of sample rows its run row recorded.
fn check_counts(
    committed: &BTreeMap<&str, Option<usize>>,
    samples: &[SampleRow],
    path: &Path,
) -> Result<()> {
    let mut found: HashMap<&str, usize> = HashMap::with_capacity(committed.len());
    for stretch in by_run(samples, |s| s.run_id.as_str()) {
        *found.entry(stretch[0].run_id.as_str()).or_default() += stretch.len();
    }
    for (run, expected) in committed {
        let Some(expected) = expected else { continue };
        let actual = found.get(run).copied().unwrap_or(0);
        if actual != *expected {
            bail!(
                "{}: run {run} has {actual} value row{} where its row in {RUNS} recorded {expected}; the session is damaged",
                path.display(),
                if actual == 1 { "" } else { "s" }
            );
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "read_tests.rs"]
pub(super) mod tests;
