use super::*;
use crate::analysis::Usage;
use crate::validity::RunValues;
use lab_config::plan::CellKey;
use rand::Rng;

/// A valid timed run of cell `variant` at `position` that read `read` bytes from disk.
pub(crate) fn run_at(position: usize, variant: &str, usage: Usage) -> RunView {
    RunView {
        id: format!("r{position:04}"),
        position,
        cell: CellKey {
            variant: variant.to_string(),
            params: Default::default(),
        },
        repetition: 0,
        warmup: false,
        wall_s: if read_from_disk_usage(&usage) {
            0.9
        } else {
            0.3
        },
        exit: "exit 0".into(),
        stdout_sha256: String::new(),
        echoed_config: false,
        busy_share: None,
        slowed: 0.0,
        disturbed: false,
        reshaped: false,
        exact_wait: false,
        repeats: None,
        overlapped: Vec::new(),
        problems: Vec::new(),
        failed_checks: Vec::new(),
        timing_only: Vec::new(),
        values: RunValues::of("v", vec!["1".into()]),
        env_padding: None,
        heap_shift: None,
        node: None,
        usage,
    }
}

/// Whether `usage` reads from disk: the fixtures' cold runs are three times as slow.
fn read_from_disk_usage(usage: &Usage) -> bool {
    usage.read_bytes.is_some_and(|b| b > READ_BYTES)
        || usage.major_faults.is_some_and(|f| f > MAJOR_FAULTS)
}

fn reading(read: u64, faults: u64) -> Usage {
    Usage {
        cpus: Some(1.0),
        read_bytes: Some(read),
        major_faults: Some(faults),
        waiting: None,
    }
}

const MIB: u64 = 1 << 20;

#[test]
fn a_first_run_that_read_its_input_from_disk_fails() {
    let mut usage = vec![reading(256 * MIB, 0)];
    usage.extend([reading(0, 0); 5]);
    let runs: Vec<RunView> = (0..6).map(|i| run_at(i + 2, "cold", usage[i])).collect();
    let refs: Vec<&RunView> = runs.iter().collect();
    let split = split("cold n=1".into(), &refs).expect("the cell splits");
    assert!(split.first_only);
    let c = decided(&[split], 6);
    assert_eq!(c.verdict, Verdict::Fail);
    assert_eq!(
        c.reading,
        "r0002 read 256 MiB from disk, the other 5 runs of `cold n=1` none: its input was not cached; set warmup_runs = 1 (or prepare the cache)"
    );
    assert_eq!(c.runs, vec!["r0002".to_string()]);
    assert_eq!(
        c.evidence,
        "1 of 6 timed runs read from disk beside runs of their cell that did not (more than 1.00 MiB read or 10 major faults counts); 1 cells split"
    );
}

#[test]
fn reads_under_the_allowance_and_cells_that_all_read_pass() {
    // 1 MiB exactly and 10 major faults are still the cache's; a cell reading every time is
    // consistent.
    let quiet = [reading(MIB, 10), reading(0, 0), reading(4096, 3)];
    let runs: Vec<RunView> = (0..3).map(|i| run_at(i, "a", quiet[i])).collect();
    assert!(split("a".into(), &runs.iter().collect::<Vec<_>>()).is_none());
    let all: Vec<RunView> = (0..3)
        .map(|i| run_at(i, "b", reading(64 * MIB, 0)))
        .collect();
    assert!(split("b".into(), &all.iter().collect::<Vec<_>>()).is_none());
    assert_eq!(decided(&[], 6).verdict, Verdict::Pass);
}

#[test]
fn a_later_run_with_major_faults_is_an_eviction() {
    let usage = [reading(0, 0), reading(0, 0), reading(2 * MIB, 1200)];
    let runs: Vec<RunView> = (0..3).map(|i| run_at(i, "x", usage[i])).collect();
    let split = split("x".into(), &runs.iter().collect::<Vec<_>>()).expect("splits");
    assert!(!split.first_only);
    assert_eq!(
        decided(&[split], 3).reading,
        "r0002 read 2.00 MiB from disk (1200 major faults), the other 2 runs of `x` none: its input left the page cache between runs; prepare the cache in a `setup` hook, or give the machine memory to keep it"
    );
}

#[test]
fn a_run_that_read_from_disk_but_was_not_slower_does_not_split() {
    let usage = [reading(8 * MIB, 0), reading(0, 0), reading(0, 0)];
    let mut runs: Vec<RunView> = (0..3).map(|i| run_at(i, "py", usage[i])).collect();
    runs[0].wall_s = 0.29;
    assert!(split("py".into(), &runs.iter().collect::<Vec<_>>()).is_none());
    runs[0].wall_s = 0.31;
    assert!(split("py".into(), &runs.iter().collect::<Vec<_>>()).is_some());
}

/// 1,000 clean cells of 10 runs, each run paging in a little from disk as programs do (an
/// exponential amount with a mean of 64 KiB, and binomially about one major fault): the read
/// allowance lies 16 means out (10 × e^-16 ≈ 1e-6 per cell) and eleven faults of twenty
/// chances at 5% have probability about 5e-10 per run, so no cell of the 1,000 may split.
#[test]
fn clean_cells_do_not_split() {
    let mut rng = lab_stats::stream(42, "cold-false-alarms");
    let mut alarms = 0;
    for cell in 0..1000 {
        let runs: Vec<RunView> = (0..10)
            .map(|i| {
                let read = -(1.0 - rng.r#gen::<f64>()).ln() * 65536.0;
                let faults = (0..20).filter(|_| rng.r#gen::<f64>() < 0.05).count() as u64;
                let mut run = run_at(cell * 10 + i, "c", reading(read as u64, faults));
                // Times vary, so that only the counters' allowance keeps the cells whole.
                run.wall_s = 0.3 * (1.0 + 0.05 * rng.r#gen::<f64>());
                run
            })
            .collect();
        alarms += usize::from(split("c".into(), &runs.iter().collect::<Vec<_>>()).is_some());
    }
    assert!(alarms as f64 / 1000.0 < 0.001, "{alarms} false alarms");
}
