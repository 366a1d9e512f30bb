//! A session measured on a cluster: `shards/` inside the session folder holds which runs each
//! shard was given (`shards.json`) and one folder per shard (`shards/007/`), written on its
//! node in the same sealed format as a session. Merging appends every shard's committed runs
//! to the session, in plan order, each row naming its node, as if they had run here.
//!
//! A shard is written on another machine and read over a shared file system, so it is read as
//! hostile: a row cut off mid-write is no row (see [`super::read`]), and a committed row whose
//! output in the packs is cut short or no longer matches its digest is torn too. A torn run is
//! never merged: its shard counts as incomplete, so the run is measured again, and once no task
//! writes the shard any more the torn part is set aside (`set-aside/` in the shard's folder).

use super::{MANIFEST, Node, RUNS, SessionWriter, Tail, load_session, read_rows, write_json};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The folder of a session's shards.
pub const SHARDS: &str = "shards";
/// Which runs each shard was given, inside [`SHARDS`].
const SHARD_SET: &str = "shards.json";

/// Every shard of a session, by index: resubmitted tasks run the same shard again, a resumed
/// session adds shards after the existing ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardSet {
    /// The experiment folder as every node sees it on the shared file system.
    pub experiment_dir: PathBuf,
    /// Each shard's run ids, in the order it runs them.
    pub shards: Vec<Vec<String>>,
}

impl ShardSet {
    /// The session's shards, or none yet for `experiment_dir`.
    pub fn read_or_new(session_dir: &Path, experiment_dir: &Path) -> Result<ShardSet> {
        let path = session_dir.join(SHARDS).join(SHARD_SET);
        if !path.exists() {
            return Ok(ShardSet {
                experiment_dir: experiment_dir.to_path_buf(),
                shards: Vec::new(),
            });
        }
        ShardSet::read(session_dir)
    }

    pub fn read(session_dir: &Path) -> Result<ShardSet> {
        let path = session_dir.join(SHARDS).join(SHARD_SET);
        let text =
            fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a lab shard list", path.display()))
    }

    pub fn write(&self, session_dir: &Path) -> Result<()> {
        let dir = session_dir.join(SHARDS);
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        write_json(&dir.join(SHARD_SET), self)
    }

    /// Adds shards after the existing ones; returns their indices.
    pub fn add(&mut self, shards: Vec<Vec<String>>) -> Vec<usize> {
        let from = self.shards.len();
        self.shards.extend(shards);
        (from..self.shards.len()).collect()
    }
}

/// Shard `index`'s folder within the session.
pub fn shard_dir(session_dir: &Path, index: usize) -> PathBuf {
    session_dir.join(SHARDS).join(format!("{index:03}"))
}

/// How many rows shard `index`'s runs.csv holds, counted by lines: cheap enough to poll.
pub fn shard_rows(session_dir: &Path, index: usize) -> usize {
    fs::read(shard_dir(session_dir, index).join(super::RUNS))
        .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
        .saturating_sub(1)
}

/// Whether shard `index` has committed a row, with its output intact, for every run in `ids`.
pub fn shard_complete(session_dir: &Path, index: usize, ids: &[String]) -> bool {
    if shard_rows(session_dir, index) < ids.len() {
        return false;
    }
    let dir = shard_dir(session_dir, index);
    let Ok(rows) = read_rows(&dir) else {
        return false;
    };
    let done: BTreeSet<&str> = rows
        .runs
        .iter()
        .filter(|r| torn_output(&dir, r).is_none())
        .map(|r| r.run_id.as_str())
        .collect();
    ids.iter().all(|id| done.contains(id.as_str()))
}

/// What is wrong with the output the committed `row` of the folder `dir` names, when its
/// bytes in a pack are cut short or differ from its digests; `None` when intact (or kept in
/// a log file of its own, as before the packs, which has no length to check against).
pub fn torn_output(dir: &Path, row: &super::RunRow) -> Option<String> {
    let streams = [
        (super::Stream::Stdout, "stdout", Some(&row.stdout_sha256)),
        (super::Stream::Stderr, "stderr", row.stderr_sha256.as_ref()),
    ];
    streams.into_iter().find_map(|(stream, name, digest)| {
        let log = super::log_ref(dir, row, stream);
        if !matches!(log, super::LogRef::Packed { .. }) {
            return None;
        }
        let Some(mut reader) = log.open() else {
            return Some(format!("its {name} is cut short in {log}"));
        };
        let mut bytes = Vec::new();
        if reader.read_to_end(&mut bytes).is_err() {
            return Some(format!("its {name} cannot be read from {log}"));
        }
        // A digest of another length was not recorded (imported runs).
        digest
            .filter(|d| d.len() == 64 && super::sha256_hex(&bytes) != **d)
            .map(|_| format!("its {name} in {log} does not match its digest"))
    })
}

/// Sets aside what is torn in the shard folder `dir`, which no task writes any more: a row cut
/// off mid-write, values and output of a run that never committed, and a committed run whose
/// output is torn, with every row after it (so appending continues after the last intact run,
/// whose runs are measured again). Returns what was moved to `set-aside/`.
pub fn set_aside_torn(dir: &Path) -> Result<Vec<Tail>> {
    if !dir.join(MANIFEST).is_file() {
        return Ok(Vec::new());
    }
    let mut tails = super::repair(dir)?;
    let rows = read_rows(dir)?;
    let torn = rows
        .runs
        .iter()
        .enumerate()
        .find_map(|(i, r)| torn_output(dir, r).map(|why| (i, r.run_id.clone(), why)));
    if let Some((index, id, why)) = torn {
        let path = dir.join(RUNS);
        let tail = Tail {
            file: RUNS,
            keep_bytes: row_start(&path, index)?,
            total_bytes: fs::metadata(&path)?.len(),
            reason: format!("run {id} and the rows after it: {why}"),
        };
        super::writer::set_aside(dir, &tail)?;
        tails.push(tail);
        tails.extend(super::repair(dir)?);
    }
    Ok(tails)
}

/// The byte at which the data row `index` (0 for the first after the header) of the CSV file
/// at `path` starts.
fn row_start(path: &Path, index: usize) -> Result<u64> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut record = csv::ByteRecord::new();
    for _ in 0..=index {
        let more = reader
            .read_byte_record(&mut record)
            .with_context(|| format!("{}: unreadable row", path.display()))?;
        if !more {
            anyhow::bail!("{} has no row {}", path.display(), index + 1);
        }
    }
    Ok(record.position().map_or(0, csv::Position::byte))
}

/// What merging the shards found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Merged {
    /// Runs appended to the session now.
    pub appended: usize,
    /// Every node any shard ran on, by name.
    pub nodes: Vec<Node>,
    /// Committed runs left out because their output is torn, each said in a sentence that
    /// names its shard (they are measured again).
    pub torn: Vec<String>,
}

/// Appends to `session` every committed run of every shard that it does not hold yet (`held`),
/// in plan order, with its values and logs. Shards are only read: merging again appends
/// nothing twice.
pub fn merge_shards(session: &mut SessionWriter, held: &BTreeSet<String>) -> Result<Merged> {
    let set = ShardSet::read(&session.dir)?;
    let mut nodes: BTreeMap<String, Node> = BTreeMap::new();
    let mut found = Vec::new();
    let mut torn = Vec::new();
    for index in 0..set.shards.len() {
        let dir = shard_dir(&session.dir, index);
        if !dir.join(MANIFEST).is_file() {
            continue;
        }
        let shard = load_session(&dir)?;
        for node in shard.manifest.cluster.iter().flat_map(|c| &c.nodes) {
            nodes
                .entry(node.name.clone())
                .or_insert_with(|| node.clone());
        }
        let planned: BTreeMap<&str, &lab_config::plan::PlannedRun> =
            shard.plan.runs.iter().map(|r| (r.id.as_str(), r)).collect();
        let mut samples: BTreeMap<&str, Vec<super::SampleRow>> = BTreeMap::new();
        for s in &shard.samples {
            samples
                .entry(s.run_id.as_str())
                .or_default()
                .push(s.clone());
        }
        let new = |r: &&super::RunRow| !held.contains(r.run_id.as_str());
        for row in shard.runs.iter().filter(new) {
            if let Some(why) = torn_output(&dir, row) {
                torn.push(format!(
                    "shard {index}: run {} is not merged: {why}; it is measured again",
                    row.run_id
                ));
                continue;
            }
            if let Some(run) = planned.get(row.run_id.as_str()) {
                let values = samples.remove(row.run_id.as_str()).unwrap_or_default();
                found.push(((*run).clone(), row.clone(), values, dir.clone()));
            }
        }
    }
    found.sort_by_key(|(run, ..)| run.position);
    found.dedup_by(|a, b| a.0.id == b.0.id);
    for (run, row, values, dir) in &found {
        let mut row = row.clone();
        let packed = session.pack(
            &run.id,
            &mut open_log(dir, &row, super::Stream::Stdout),
            &mut open_log(dir, &row, super::Stream::Stderr),
        )?;
        row.packed(&packed);
        session.append(run, &row, values)?;
    }
    Ok(Merged {
        appended: found.len(),
        nodes: nodes.into_values().collect(),
        torn,
    })
}

/// A run's output on `stream` in its shard, packed or in a file of its own; empty where the
/// shard kept none.
fn open_log(shard: &Path, row: &super::RunRow, stream: super::Stream) -> Box<dyn std::io::Read> {
    super::log_ref(shard, row, stream)
        .open()
        .unwrap_or_else(|| Box::new(std::io::empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::tests::{planned, row, samples};
    use crate::{Cluster, LOGS, Manifest, Sealed};
    use lab_config::plan::Plan;

    fn manifest(node: Option<&str>) -> Manifest {
        let mut m = crate::tests::fixture_manifest();
        m.cluster = node.map(|name| Cluster {
            engine: "slurm".into(),
            jobs: vec!["5".into()],
            nodes: vec![Node {
                name: name.into(),
                host: m.host.clone(),
                calibration: None,
            }],
        });
        m
    }

    fn plan(runs: &[usize]) -> Plan {
        Plan {
            order: lab_config::Order::Shuffled,
            seed: 1,
            runs: runs.iter().map(|&i| planned(i)).collect(),
        }
    }

    fn sealed() -> Sealed {
        Sealed {
            lab_toml: "x".into(),
            notes: None,
            references: None,
        }
    }

    /// A shard of `runs` on `node`, of which the first `done` have finished, each printing its
    /// id: into the packs, or (a shard of an older lab) into a log file of its own.
    fn shard(session: &Path, index: usize, node: &str, runs: &[usize], done: usize) {
        let dir = shard_dir(session, index);
        let mut w = SessionWriter::create(
            dir.clone(),
            &manifest(Some(node)),
            &plan(runs),
            vec!["n".into()],
            &sealed(),
        )
        .unwrap();
        w.on_node(node);
        let packed = index > 0;
        for run in plan(runs).runs.iter().take(done) {
            let mut row = row(run);
            if packed {
                row.packed(
                    &w.pack(&run.id, &mut run.id.as_bytes(), &mut std::io::empty())
                        .unwrap(),
                );
            } else {
                fs::write(dir.join(LOGS).join(format!("{}.out", run.id)), &run.id).unwrap();
            }
            w.append(run, &row, &samples(run)).unwrap();
        }
    }

    /// A session of six planned runs split into two shards of three.
    fn two_shards(root: &std::path::Path) -> (std::path::PathBuf, SessionWriter) {
        let dir = root.join("s");
        let session = SessionWriter::create(
            dir.clone(),
            &manifest(None),
            &plan(&[1, 2, 3, 4, 5, 6]),
            vec!["n".into()],
            &sealed(),
        )
        .unwrap();
        ShardSet {
            experiment_dir: root.into(),
            shards: vec![
                vec!["r0001".into(), "r0002".into(), "r0003".into()],
                vec!["r0004".into(), "r0005".into(), "r0006".into()],
            ],
        }
        .write(&dir)
        .unwrap();
        (dir, session)
    }

    #[test]
    fn shards_merge_in_plan_order_once_each_with_their_node() {
        let root = tempfile::tempdir().unwrap();
        let (dir, mut session) = two_shards(root.path());
        // The second shard's node finished first; the first shard lost its last run.
        shard(&dir, 1, "n2", &[4, 5, 6], 3);
        shard(&dir, 0, "n1", &[1, 2, 3], 2);
        assert!(shard_complete(
            &dir,
            1,
            &["r0004".into(), "r0005".into(), "r0006".into()]
        ));
        assert!(!shard_complete(
            &dir,
            0,
            &["r0001".into(), "r0002".into(), "r0003".into()]
        ));
        assert_eq!((shard_rows(&dir, 0), shard_rows(&dir, 1)), (2, 3));

        let merged = merge_shards(&mut session, &BTreeSet::new()).unwrap();
        assert_eq!(merged.appended, 5);
        let nodes: Vec<&str> = merged.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(nodes, vec!["n1", "n2"]);
        let rows = read_rows(&dir).unwrap();
        let got: Vec<(String, Option<String>)> = rows
            .runs
            .iter()
            .map(|r| {
                (
                    r.run_id.to_string(),
                    r.node.as_ref().map(ToString::to_string),
                )
            })
            .collect();
        let want = [(1, "n1"), (2, "n1"), (4, "n2"), (5, "n2"), (6, "n2")]
            .map(|(i, n)| (format!("r{i:04}"), Some(n.to_string())))
            .to_vec();
        assert_eq!(got, want);
        assert_eq!(rows.samples.len(), 5 * 3);
        // Each run's output, from a packed shard or an older one, is in the session's packs.
        for row in &rows.runs {
            let log = crate::log_ref(&dir, row, crate::Stream::Stdout);
            assert!(matches!(log, crate::LogRef::Packed { .. }));
            assert_eq!(log.read_all(), row.run_id.as_bytes());
        }

        // Merging again appends nothing; the run the first shard adds later comes in alone.
        let held: BTreeSet<String> = rows.runs.iter().map(|r| r.run_id.to_string()).collect();
        assert_eq!(merge_shards(&mut session, &held).unwrap().appended, 0);
        let mut w = SessionWriter::reopen(shard_dir(&dir, 0)).unwrap();
        w.on_node("n3");
        let third = planned(3);
        w.append(&third, &row(&third), &samples(&third)).unwrap();
        assert_eq!(merge_shards(&mut session, &held).unwrap().appended, 1);
        let last = read_rows(&dir).unwrap().runs.pop().unwrap();
        assert_eq!(
            (last.run_id.as_str(), last.node.as_deref()),
            ("r0003", Some("n3"))
        );
    }

    /// What setting aside shard 1's torn run r0006 (bytes 10 to 15 of `pack`) says it moved.
    fn assert_torn_run_set_aside(tails: &[Tail], pack: &Path) {
        let described: Vec<String> = tails.iter().map(Tail::describe).collect();
        let row_bytes = tails[0].total_bytes - tails[0].keep_bytes;
        assert_eq!(
        described,
        vec![
            format!(
                "runs.csv: {row_bytes} bytes after byte {} set aside (run r0006 and the rows after it: its stdout is cut short in {} (bytes 10 to 15))",
                tails[0].keep_bytes,
                pack.display()
            ),
            format!(
                "samples.csv: {} bytes after byte {} set aside (values of a run that never finished)",
                tails[1].total_bytes - tails[1].keep_bytes,
                tails[1].keep_bytes
            ),
            "logs/stdout.pack: 4 bytes after byte 10 set aside (output of a run stopped before its row was written)".into(),
        ]
    );
    }

    /// Run r0006 measured again in shard 1's folder, on node n3.
    fn measure_sixth_again(dir: &Path) {
        let mut w = SessionWriter::reopen(shard_dir(dir, 1)).unwrap();
        w.on_node("n3");
        let sixth = planned(6);
        let mut again = row(&sixth);
        again.packed(
            &w.pack("r0006", &mut &b"r0006"[..], &mut std::io::empty())
                .unwrap(),
        );
        w.append(&sixth, &again, &samples(&sixth)).unwrap();
    }

    #[test]
    fn a_run_whose_output_is_torn_is_never_merged_and_is_set_aside_with_its_values() {
        let root = tempfile::tempdir().unwrap();
        let (dir, mut session) = two_shards(root.path());
        shard(&dir, 0, "n1", &[1, 2, 3], 3);
        shard(&dir, 1, "n2", &[4, 5, 6], 3);
        // r0006's stdout, bytes 10 to 15 of shard 1's pack, loses its last byte.
        let pack = shard_dir(&dir, 1).join("logs/stdout.pack");
        fs::OpenOptions::new()
            .write(true)
            .open(&pack)
            .unwrap()
            .set_len(14)
            .unwrap();
        let ids = |r: &[usize]| r.iter().map(|i| format!("r{i:04}")).collect::<Vec<_>>();
        assert!(!shard_complete(&dir, 1, &ids(&[4, 5, 6])));
        assert!(shard_complete(&dir, 0, &ids(&[1, 2, 3])));

        let merged = merge_shards(&mut session, &BTreeSet::new()).unwrap();
        assert_eq!(merged.appended, 5);
        assert_eq!(
            merged.torn,
            vec![format!(
                "shard 1: run r0006 is not merged: its stdout is cut short in {} (bytes 10 to 15); it is measured again",
                pack.display()
            )]
        );
        let held: BTreeSet<String> = read_rows(&dir)
            .unwrap()
            .runs
            .iter()
            .map(|r| r.run_id.to_string())
            .collect();
        assert_eq!(held, ids(&[1, 2, 3, 4, 5]).into_iter().collect());

        // Once no task writes the shard, the torn run's row, values and output are set aside.
        let tails = set_aside_torn(&shard_dir(&dir, 1)).unwrap();
        assert_torn_run_set_aside(&tails, &pack);
        assert_eq!(shard_rows(&dir, 1), 2);
        assert_eq!(
            fs::read(shard_dir(&dir, 1).join("set-aside/stdout.pack.1")).unwrap(),
            b"r000"
        );
        // Measured again in the same folder, it completes the shard and merges alone.
        measure_sixth_again(&dir);
        assert!(shard_complete(&dir, 1, &ids(&[4, 5, 6])));
        let merged = merge_shards(&mut session, &held).unwrap();
        assert_eq!((merged.appended, merged.torn.len()), (1, 0));
        let last = read_rows(&dir).unwrap().runs.pop().unwrap();
        assert_eq!(
            (last.run_id.as_str(), last.node.as_deref()),
            ("r0006", Some("n3"))
        );
        // Nothing torn is left: setting aside again moves nothing.
        assert!(set_aside_torn(&shard_dir(&dir, 1)).unwrap().is_empty());
    }
}
