//! Reading runs.csv and samples.csv back without trusting them. A run is committed by its row
//! in runs.csv, written after its samples and carrying their count, so:
//! - a last line without its newline is a torn write: set aside, never parsed;
//! - sample rows of a run with no run row are the tail of a run that was cut short: set aside;
//! - a duplicated row, or a run whose sample count differs from its rows, is damage: an error
//!   naming the file and line, because no reading of it can be trusted.

use super::rows::{RunRow, SampleRow};
use super::{RUNS, SAMPLES};
use anyhow::{Context, Result, bail};
use serde::de::DeserializeOwned;
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

    let mut tails = Vec::new();
    if runs_keep < runs_lines.total_bytes {
        tails.push(Tail {
            file: RUNS,
            keep_bytes: runs_keep,
            total_bytes: runs_lines.total_bytes,
            reason: "a row cut off mid-write".into(),
        });
    }
    if samples_keep < samples_lines.total_bytes {
        tails.push(Tail {
            file: SAMPLES,
            keep_bytes: samples_keep,
            total_bytes: samples_lines.total_bytes,
            reason: if orphans_from.is_some() {
                "values of a run that never finished".into()
            } else {
                "a row cut off mid-write".into()
            },
        });
    }
    Ok(Rows {
        runs: without_slack(runs.into_iter().map(|r| r.row).collect()),
        samples: kept,
        tails,
    })
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

/// Parses the CSV rows of the whole lines of `file` (after the header), keeping each row's
/// line and starting byte.
fn parse<T: DeserializeOwned>(file: File, lines: &Lines, path: &Path) -> Result<Vec<Located<T>>> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(file.take(lines.keep_bytes));
    let headers = match reader.byte_headers() {
        Ok(h) => h.clone(),
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
        let row: T = record.deserialize(Some(&headers)).with_context(|| {
            format!(
                "{}:{}: the row is damaged; the session cannot be read as it is",
                path.display(),
                position.line()
            )
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
pub(super) mod tests {
    use super::*;
    use crate::{Manifest, Sealed, SessionWriter};
    use lab_config::ParamValue;
    use lab_config::plan::{Plan, PlannedRun};
    use std::fs;

    pub(crate) fn planned(id: usize) -> PlannedRun {
        PlannedRun {
            id: format!("r{id:04}"),
            position: id,
            cell: lab_config::plan::CellKey::new(
                "v",
                std::sync::Arc::new([("n".to_string(), ParamValue::Int(id as i64))].into()),
            ),
            repetition: 1,
            warmup: false,
            argv: vec!["true".into()],
            repeats: None,
            look: 1,
            env_padding: None,
            heap_shift: None,
        }
    }

    pub(crate) fn row(run: &PlannedRun) -> RunRow {
        RunRow {
            run_id: run.id.clone(),
            position: run.position,
            variant: run.cell.variant.clone(),
            repetition: 1,
            warmup: false,
            start_utc: "2026-11-30T00:00:00Z".into(),
            wall_ns: 1_000_000 * run.position as u64,
            boottime_ns: 1_000_000 * run.position as u64,
            user_ns: 1,
            sys_ns: 1,
            max_rss_kib: 1,
            voluntary_cs: 0,
            involuntary_cs: 0,
            exit_code: Some(0),
            signal: None,
            spawn_error: None,
            timed_out: false,
            cpus: None,
            stdout_sha256: "x".into(),
            left_running: None,
            host_busy_ns: Some(900_000_000),
            host_steal_ns: Some(0),
            host_capacity_ns: Some(2_000_000_000),
            psi_cpu_some_us: None,
            psi_cpu_own_us: None,
            busy_limit: None,
            throttle_events: None,
            samples: None,
            node: None,
            start_boottime_ns: None,
            overlapped: None,
            env_padding: run.env_padding,
            minor_faults: None,
            major_faults: None,
            block_in: None,
            block_out: None,
            ..RunRow::default()
        }
    }

    pub(crate) fn samples(run: &PlannedRun) -> Vec<SampleRow> {
        (0..3)
            .map(|i| SampleRow {
                run_id: run.id.clone(),
                metric: "ops".into(),
                iteration: i,
                value: format!("{}.{i}25", run.position),
            })
            .collect()
    }

    /// A session of `runs` complete runs, written by the real writer; returns its folder.
    fn session(root: &Path, runs: usize) -> std::path::PathBuf {
        let plan = Plan {
            order: lab_config::Order::Sequential,
            seed: 1,
            runs: (1..=4).map(planned).collect(),
        };
        let manifest: Manifest = serde_json::from_str(include_str!("../tests/data/manifest.json"))
            .expect("manifest fixture");
        let sealed = Sealed {
            lab_toml: "x".into(),
            notes: None,
        };
        let dir = root.join("s");
        let mut w = SessionWriter::create(dir.clone(), &manifest, &plan, vec!["n".into()], &sealed)
            .unwrap();
        for run in plan.runs.iter().take(runs) {
            w.append(run, &row(run), &samples(run)).unwrap();
        }
        dir
    }

    #[test]
    fn held_spools_pack_what_each_run_wrote_whatever_is_put_at_their_paths() {
        use std::io::Write;
        let root = tempfile::tempdir().unwrap();
        let dir = session(root.path(), 0);
        let mut w = SessionWriter::reopen(dir.clone()).unwrap();
        let [mut out, mut err] = w.held_spools().unwrap();
        out.write_all(b"{\"ops\": 1}\n").unwrap();
        err.write_all(b"e").unwrap();
        // The run removes its spool and plants a link to a file outside the record.
        let victim = root.path().join("victim.txt");
        fs::write(&victim, "untouched").unwrap();
        let (spool_out, _) = w.spool_paths();
        fs::remove_file(&spool_out).unwrap();
        std::os::unix::fs::symlink(&victim, &spool_out).unwrap();
        let first = w.pack_spooled("r0001").unwrap();
        assert_eq!((first.stdout.offset, first.stdout.bytes), (0, 11));
        assert_eq!((first.stderr.offset, first.stderr.bytes), (0, 1));
        // Bytes written after the run was packed (a process that outlived it) are dropped
        // before the next run starts, which writes from the start of the spool again.
        out.write_all(b"late").unwrap();
        let emptied = crate::emptied(&out).unwrap();
        assert_eq!(emptied.metadata().unwrap().len(), 0);
        out.write_all(b"{\"ops\": 2}\n").unwrap();
        let second = w.pack_spooled("r0002").unwrap();
        assert_eq!((second.stdout.offset, second.stdout.bytes), (11, 11));
        assert_eq!(second.stderr.bytes, 0);
        assert_eq!(
            fs::read(dir.join("logs").join(crate::STDOUT_PACK)).unwrap(),
            b"{\"ops\": 1}\n{\"ops\": 2}\n"
        );
        assert_eq!(fs::read_to_string(&victim).unwrap(), "untouched");
        w.remove_spools();
        assert!(
            fs::symlink_metadata(&spool_out).is_err(),
            "the link is removed"
        );
        assert_eq!(fs::read_to_string(&victim).unwrap(), "untouched");
    }

    #[test]
    fn a_kill_at_any_byte_of_a_run_leaves_the_finished_runs_and_nothing_else() {
        let root = tempfile::tempdir().unwrap();
        let whole = session(root.path(), 3);
        let complete = |f: &str| fs::read(whole.join(f)).unwrap();
        let two = session(&root.path().join("two"), 2);
        let (runs2, samples2) = (
            fs::read(two.join(RUNS)).unwrap(),
            fs::read(two.join(SAMPLES)).unwrap(),
        );
        let (runs3, samples3) = (complete(RUNS), complete(SAMPLES));
        // The third run writes its samples, then its row: a kill can stop it after any byte.
        let third: Vec<u8> = [&samples3[samples2.len()..], &runs3[runs2.len()..]].concat();
        let split = samples3.len() - samples2.len();
        for cut in 0..=third.len() {
            let (s_part, r_part) = third[..cut].split_at(cut.min(split));
            fs::write(two.join(SAMPLES), [&samples2[..], s_part].concat()).unwrap();
            fs::write(two.join(RUNS), [&runs2[..], r_part].concat()).unwrap();
            let read = read_rows(&two).unwrap_or_else(|e| panic!("cut at {cut}: {e:#}"));
            let expected = if cut == third.len() { 3 } else { 2 };
            assert_eq!(read.runs.len(), expected, "cut at {cut}");
            assert_eq!(read.samples.len(), 3 * expected, "cut at {cut}");
            assert_eq!(
                read.tails.is_empty(),
                cut == 0 || cut == third.len(),
                "cut at {cut}"
            );
            // Resuming sets the tail aside and leaves exactly the committed rows.
            crate::repair(&two).unwrap();
            assert!(read_rows(&two).unwrap().tails.is_empty(), "cut at {cut}");
            if expected == 2 {
                assert_eq!(fs::read(two.join(RUNS)).unwrap(), runs2, "cut at {cut}");
                assert_eq!(
                    fs::read(two.join(SAMPLES)).unwrap(),
                    samples2,
                    "cut at {cut}"
                );
            }
        }
        let aside = fs::read_dir(two.join(crate::SET_ASIDE)).unwrap().count();
        assert!(aside > 0, "torn bytes are kept in set-aside/");
    }

    #[test]
    fn duplicated_and_miscounted_rows_are_errors_naming_the_line() {
        let root = tempfile::tempdir().unwrap();
        let dir = session(root.path(), 2);
        let runs = fs::read_to_string(dir.join(RUNS)).unwrap();
        let last = runs.lines().last().unwrap().to_string();
        fs::write(dir.join(RUNS), format!("{runs}{last}\n")).unwrap();
        let e = format!("{:#}", read_rows(&dir).unwrap_err());
        assert!(
            e.contains("runs.csv:4: run r0002 appears twice (first on line 3)"),
            "{e}"
        );

        fs::write(dir.join(RUNS), &runs).unwrap();
        let samples = fs::read_to_string(dir.join(SAMPLES)).unwrap();
        let second = samples.lines().nth(2).unwrap().to_string();
        fs::write(dir.join(SAMPLES), format!("{samples}{second}\n")).unwrap();
        let e = format!("{:#}", read_rows(&dir).unwrap_err());
        assert!(
            e.contains(
                "samples.csv:8: value 1 of `ops` for run r0001 appears twice (first on line 3)"
            ),
            "{e}"
        );

        // A row lost from the middle: the count in runs.csv no longer matches.
        let fewer: Vec<&str> = samples
            .lines()
            .filter(|l| !l.starts_with("r0001,ops,1,"))
            .collect();
        fs::write(dir.join(SAMPLES), fewer.join("\n") + "\n").unwrap();
        let e = format!("{:#}", read_rows(&dir).unwrap_err());
        assert!(
            e.contains("run r0001 has 2 value rows where its row in runs.csv recorded 3"),
            "{e}"
        );
    }
}
