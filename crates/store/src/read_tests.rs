//! Unit tests of `read`.

use super::*;
use crate::{Sealed, SessionWriter};
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
        argv: vec!["true".into()].into(),
        repeats: None,
        look: 1,
        env_padding: None,
        heap_shift: None,
    }
}

pub(crate) fn row(run: &PlannedRun) -> RunRow {
    RunRow {
        run_id: run.id.as_str().into(),
        position: run.position,
        variant: run.cell.variant.as_str().into(),
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
            run_id: run.id.as_str().into(),
            metric: "ops".into(),
            iteration: i,
            value: format!("{}.{i}25", run.position).into(),
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
    let manifest = crate::tests::fixture_manifest();
    let sealed = Sealed {
        lab_toml: "x".into(),
        notes: None,
        references: None,
    };
    let dir = root.join("s");
    let mut w =
        SessionWriter::create(dir.clone(), &manifest, &plan, vec!["n".into()], &sealed).unwrap();
    for run in plan.runs.iter().take(runs) {
        w.append(run, &row(run), &samples(run)).unwrap();
    }
    dir
}

#[test]
fn each_run_packs_only_what_it_wrote_into_its_own_outputs() {
    use std::io::Write;
    let root = tempfile::tempdir().unwrap();
    let dir = session(root.path(), 0);
    let mut w = SessionWriter::reopen(dir.clone()).unwrap();
    let first_outputs = w.run_outputs().unwrap();
    let [mut out, mut err] = [&first_outputs[0], &first_outputs[1]];
    out.write_all(b"{\"ops\": 1}\n").unwrap();
    err.write_all(b"e").unwrap();
    let first = w.pack_outputs("r0001", &first_outputs, 1 << 20).unwrap();
    assert_eq!((first.stdout.offset, first.stdout.bytes), (0, 11));
    assert_eq!((first.stderr.offset, first.stderr.bytes), (0, 1));
    // A process that outlived the first run keeps writing into its output: the next run's
    // output is another file, and what is written late is never packed.
    let second_outputs = w.run_outputs().unwrap();
    out.write_all(b"{\"v\": 999}\n").unwrap();
    (&second_outputs[0]).write_all(b"{\"ops\": 2}\n").unwrap();
    let second = w.pack_outputs("r0002", &second_outputs, 1 << 20).unwrap();
    assert_eq!((second.stdout.offset, second.stdout.bytes), (11, 11));
    assert_eq!(second.stderr.bytes, 0);
    assert_eq!(
        fs::read(dir.join("logs").join(crate::STDOUT_PACK)).unwrap(),
        b"{\"ops\": 1}\n{\"ops\": 2}\n"
    );
    let named: Vec<_> = fs::read_dir(dir.join("logs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".pack"))
        .collect();
    assert_eq!(named, Vec::<String>::new(), "the outputs have no name");
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
        e.contains("samples.csv:8: value 1 of `ops` for run r0001 appears twice (first on line 3)"),
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

#[test]
fn samples_read_back_hold_their_short_texts_without_the_heap() {
    let root = tempfile::tempdir().unwrap();
    let dir = session(root.path(), 4);
    let rows = read_rows(&dir).unwrap();
    assert_eq!(rows.samples.len(), 12);
    assert_eq!(
        rows.samples,
        (1..=4)
            .map(planned)
            .flat_map(|r| samples(&r))
            .collect::<Vec<_>>()
    );
    // Half a million values held three heap allocations each as `String`s.
    let texts = rows
        .samples
        .iter()
        .flat_map(|s| [&s.run_id, &s.metric, &s.value]);
    assert_eq!(on_the_heap(texts), 0);
}

#[test]
fn run_rows_read_back_hold_their_id_variant_and_start_without_the_heap() {
    let root = tempfile::tempdir().unwrap();
    let dir = session(root.path(), 4);
    let rows = read_rows(&dir).unwrap();
    let ids: Vec<&str> = rows.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(ids, ["r0001", "r0002", "r0003", "r0004"]);
    let texts = rows
        .runs
        .iter()
        .flat_map(|r| [&r.run_id, &r.variant, &r.start_utc]);
    assert_eq!(on_the_heap(texts), 0);
}

/// How many of `texts` hold their bytes on the heap.
fn on_the_heap<'a>(texts: impl Iterator<Item = &'a compact_str::CompactString>) -> usize {
    texts.filter(|text| text.is_heap_allocated()).count()
}
