//! The contention rule on counters recorded on a two-CPU machine: idle, one busy process
//! beside a one-thread and a two-thread run, a run oversubscribing its CPUs alone, steal, and
//! kernels without PSI.

use super::*;

const MS: u64 = 1_000_000;

/// A run of `wall_ms` on two CPUs that used `own_ms` of CPU time while the CPUs were busy for
/// `busy_ms` in all, with `psi_own_ms` of its own waiting (`None`: no cgroup) and
/// `psi_machine_ms` machine-wide.
fn recorded(
    wall_ms: u64,
    own_ms: u64,
    busy_ms: u64,
    psi_own_ms: Option<u64>,
    psi_machine_ms: Option<u64>,
) -> RunRow {
    RunRow {
        wall_ns: wall_ms * MS,
        user_ns: own_ms * MS,
        host_busy_ns: Some(busy_ms * MS),
        host_steal_ns: Some(0),
        host_capacity_ns: Some(2 * wall_ms * MS),
        psi_cpu_own_us: psi_own_ms.map(|ms| ms * 1000),
        psi_cpu_some_us: psi_machine_ms.map(|ms| ms * 1000),
        busy_limit: Some(0.10),
        ..RunRow::default()
    }
}

fn waited(row: &RunRow) -> f64 {
    (row.contention().unwrap().waited * 1000.0).round() / 1000.0
}

#[test]
fn an_idle_machine_disturbs_nothing() {
    // 1.2 s of one thread; 5 ms of stray waiting, 30 ms of others' ticks.
    let row = recorded(1200, 1195, 1225, Some(5), Some(6));
    let c = row.contention().unwrap();
    assert_eq!(c.source, Source::Run);
    assert_eq!(waited(&row), 0.004);
    assert!(!c.disturbed(0.10));
    assert_eq!(row.disturbed(0.10), None);
}

#[test]
fn one_busy_process_beside_a_one_thread_run_leaves_it_its_cpu() {
    // Measured here: the run's cgroup waited 14.8 ms of 1.2 s while a busy loop had the other
    // CPU; the old rule saw "others took 50%" and called every such run busy.
    let row = recorded(1203, 1195, 2400, Some(15), Some(5));
    let c = row.contention().unwrap();
    assert!(
        (c.others - 1.0).abs() < 0.01,
        "others ran a whole CPU: {c:?}"
    );
    assert_eq!(waited(&row), 0.012);
    assert!(!c.disturbed(0.10));
}

#[test]
fn one_busy_process_beside_a_two_thread_run_disturbs_it() {
    // Measured: 1.86 s wall, 612 ms of the run's own waiting, the busy loop ~1/3 of 2 CPUs.
    let row = recorded(1858, 2420, 3716, Some(612), Some(909));
    let c = row.contention().unwrap();
    assert_eq!(waited(&row), 0.329);
    assert!(c.disturbed(0.10));
    let (found, limit) = row.disturbed(0.25).unwrap();
    assert_eq!((found, limit), (c, 0.10), "the recorded limit wins");
    let lenient = RunRow {
        busy_limit: Some(0.5),
        ..row
    };
    assert_eq!(lenient.disturbed(0.10), None);
}

#[test]
fn a_run_waiting_on_its_own_threads_is_not_disturbed() {
    // 16 threads on 2 CPUs alone: its tasks wait all the time, on each other; others ran 10 ms.
    let row = recorded(1000, 1990, 2000, Some(1000), Some(1000));
    let c = row.contention().unwrap();
    assert_eq!(c.stalled, 1.0);
    assert_eq!(c.waited, 0.0, "others' 10 ms is within a tick per CPU");
    // The same run beside a busy process that got 12% of the CPUs' time.
    let shared = recorded(1000, 1760, 2000, Some(1000), Some(1000));
    assert_eq!(waited(&shared), 0.22);
    assert!(shared.contention().unwrap().disturbed(0.10));
}

#[test]
fn machine_wide_pressure_stands_in_without_a_cgroup() {
    // Two busy loops beside a one-thread run: some task waited half the time machine-wide.
    let row = recorded(1682, 1120, 3364, None, Some(847));
    let c = row.contention().unwrap();
    assert_eq!(c.source, Source::Machine);
    assert_eq!(waited(&row), 0.504);
    // A short run is judged too: 86 ms, 45 ms waited, others ~110 ms of ticks.
    let short = recorded(86, 58, 170, None, Some(45));
    assert_eq!(waited(&short), 0.523);
    assert!(
        short.contention().unwrap().steal.is_none(),
        "too few ticks for steal"
    );
}

#[test]
fn steal_counts_against_the_limit() {
    let row = RunRow {
        host_steal_ns: Some(300 * MS),
        ..recorded(1000, 1000, 1000, Some(1), None)
    };
    let c = row.contention().unwrap();
    assert_eq!(c.steal, Some(0.15));
    assert_eq!(c.share(), 0.15);
    assert!(c.disturbed(0.10));
}

#[test]
fn without_pressure_saturated_cpus_count_as_waiting() {
    // No PSI: the one-thread run beside a busy loop cannot be told from a starved one.
    let saturated = recorded(1200, 1195, 2400, None, None);
    let c = saturated.contention().unwrap();
    assert_eq!(c.source, Source::Demand);
    assert!(c.disturbed(0.10), "conservative without PSI: {c:?}");
    // CPUs with idle time: nobody waited.
    let idle = recorded(1200, 1195, 1500, None, None);
    assert_eq!(waited(&idle), 0.0);
    let unrecorded = RunRow {
        host_busy_ns: None,
        ..idle
    };
    assert_eq!(unrecorded.contention(), Err(Unjudged::NotRecorded));
}

#[test]
fn runs_recorded_before_waiting_was_judged_keep_their_rule() {
    // No busy_limit: others' share of the CPUs' time against the legacy limit.
    let old = RunRow {
        busy_limit: None,
        ..recorded(1200, 1195, 2400, None, Some(5))
    };
    let c = old.contention().unwrap();
    assert_eq!(c.source, Source::Ticks);
    assert!((c.share() - 0.502).abs() < 0.001, "{c:?}");
    assert_eq!(old.disturbed(0.25).map(|(_, l)| l), Some(0.25));
    assert_eq!(old.disturbed(1.0), None);
    let short = RunRow {
        busy_limit: None,
        ..recorded(50, 50, 100, None, Some(1))
    };
    assert_eq!(short.contention(), Err(Unjudged::TooFewTicks));
}
