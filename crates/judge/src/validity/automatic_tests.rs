//! Unit tests of `automatic`.

use super::*;
use lab_config::{Better, Extractor};

fn metric(name: &str, text: bool) -> Metric {
    Metric {
        name: name.into(),
        extractor: Extractor::Json(name.into()),
        unit: String::new(),
        better: Better::Higher,
        text,
        count: false,
        optional: false,
        warmup_iterations: 0,
    }
}

#[test]
fn finds_each_problem() {
    let metrics = [metric("mops", false), metric("sum", true)];
    let ok = Exit::Code(0);
    let clean = RunFacts {
        exit: &ok,
        timed_out: false,
        suspended_ns: 5,
        left_running: None,
        values: &[("mops", "1.5"), ("sum", "ab")],
    };
    assert!(problems(&clean, &metrics).is_empty());
    let crashed = Exit::Signal(libc::SIGSEGV);
    let bad = RunFacts {
        exit: &crashed,
        timed_out: false,
        suspended_ns: 2_000_000_000,
        left_running: None,
        values: &[("mops", "nan")],
    };
    let found = problems(&bad, &metrics);
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(
        found[0].to_string(),
        format!("killed by signal {} (SIGSEGV)", libc::SIGSEGV)
    );
    assert_eq!(
        found[1].to_string(),
        "the machine was suspended for 2.000 s during the run"
    );
    assert_eq!(
        found[2],
        Problem::NotANumber {
            metric: "mops".into(),
            value: "nan".into(),
            why: "is NaN, not a number lab can use".into(),
            line: None
        }
    );
    assert_eq!(found[3], Problem::MissingMetric("sum".into()));
}

fn calibration(median: u64, iqr: u64, granularity: u64) -> Calibration {
    Calibration {
        timer_reported_resolution_ns: 1,
        timer_granularity_ns: granularity,
        timer_read_ns: 20.0,
        spawn_median_ns: median,
        spawn_iqr_ns: iqr,
        spawn_mad_ns: None,
        spawn_samples: 30,
        start_up: None,
    }
}

#[test]
fn the_timing_floor_counts_spawn_cost_spread_and_granularity() {
    let c = calibration(600_000, 50_000, 30);
    assert_eq!(timing_floor_ns(&c), 1_600_000);
    assert_eq!(
        too_short(1_599_999, &c),
        Some(Problem::TooShort {
            wall_ns: 1_599_999,
            floor_ns: 1_600_000
        })
    );
    assert_eq!(too_short(1_600_000, &c), None);
    // A coarse timer dominates a steady spawn cost.
    assert_eq!(timing_floor_ns(&calibration(100, 0, 1_000_000)), 10_000_000);
    assert_eq!(
        too_short(900_000, &c).unwrap().to_string(),
        "took 0.900 ms where 1.60 ms is the shortest run this session can time"
    );
}

#[test]
fn echoed_configuration_is_compared_with_the_request() {
    let params: BTreeMap<String, ParamValue> = [
        ("threads".to_string(), ParamValue::Int(4)),
        ("mode".to_string(), ParamValue::Text("fast".to_string())),
    ]
    .into();
    let ok = "start\n{\"config\": {\"threads\": 4.0, \"mode\": \"fast\", \"extra\": 1}}\n";
    assert_eq!(echoed_config(ok, &params), (true, vec![]));
    let bad = "{\"config\": {\"threads\": 2}, \"mops\": 3}";
    let (echoed, found) = echoed_config(bad, &params);
    assert!(echoed);
    assert_eq!(
        found[0].to_string(),
        "echoed threads = 2 when threads = 4 was requested"
    );
    assert_eq!(
        echoed_config("{\"config\": \"x\"}\n{\"mops\": 1}", &params),
        (false, vec![])
    );
}

fn pinned(id: &str, cpus: Option<&str>, overlapped: &str) -> lab_store::RunRow {
    lab_store::RunRow {
        run_id: id.into(),
        position: 1,
        variant: "v".into(),
        repetition: 1,
        warmup: false,
        start_utc: Default::default(),
        wall_ns: 1,
        boottime_ns: 1,
        user_ns: 0,
        sys_ns: 0,
        max_rss_kib: 0,
        voluntary_cs: 0,
        involuntary_cs: 0,
        exit_code: Some(0),
        signal: None,
        spawn_error: None,
        timed_out: false,
        cpus: cpus.map(str::to_string),
        stdout_sha256: String::new(),
        left_running: None,
        host_busy_ns: None,
        host_steal_ns: None,
        host_capacity_ns: None,
        psi_cpu_some_us: None,
        psi_cpu_own_us: None,
        busy_limit: None,
        throttle_events: None,
        samples: None,
        start_boottime_ns: None,
        overlapped: (!overlapped.is_empty()).then(|| overlapped.to_string()),
        minor_faults: None,
        major_faults: None,
        block_in: None,
        block_out: None,
        node: None,
        env_padding: None,
        ..lab_store::RunRow::default()
    }
}

#[test]
fn runs_side_by_side_must_not_share_a_cpu() {
    let cpus: BTreeMap<String, Option<Vec<usize>>> = [
        ("r1", Some(vec![0, 1])),
        ("r2", Some(vec![2, 3])),
        ("r3", Some(vec![1, 2])),
        ("r4", None),
    ]
    .map(|(id, cpus)| (id.to_string(), cpus))
    .into();
    assert_eq!(shared_cpus(&pinned("r1", Some("0 1"), ""), &cpus), None);
    assert_eq!(shared_cpus(&pinned("r1", Some("0 1"), "r2"), &cpus), None);
    let shared = shared_cpus(&pinned("r1", Some("0 1"), "r2 r3 r4"), &cpus).unwrap();
    assert_eq!(
        shared,
        Problem::SharedCpus {
            with: "r3".into(),
            runs: 2,
            cpus: Some(vec![1])
        }
    );
    assert_eq!(shared.check_name(), APART);
    assert_eq!(
        shared.to_string(),
        "executed beside run r3 and 1 other run on shared CPU 1"
    );
    // A run pinned nowhere, or one lab knows nothing of, may use every CPU.
    let unpinned = shared_cpus(&pinned("r2", None, "r1"), &cpus).unwrap();
    assert_eq!(
        unpinned.to_string(),
        "executed beside run r1 with any CPU to share (one of them was pinned to none)"
    );
    assert!(shared_cpus(&pinned("r2", Some("2 3"), "r9"), &cpus).is_some());
}

#[test]
fn a_timeout_is_reported_once_not_also_as_a_signal() {
    let killed = Exit::Signal(libc::SIGKILL);
    let run = RunFacts {
        exit: &killed,
        timed_out: true,
        suspended_ns: 0,
        left_running: None,
        values: &[],
    };
    assert_eq!(problems(&run, &[]), vec![Problem::TimedOut]);
}
