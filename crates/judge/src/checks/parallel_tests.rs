use super::*;
use lab_stats::{Statistic, ratio_ci};
use rand::Rng;

fn iv(lo: f64, hi: f64) -> Interval {
    super::super::interval(lo, hi)
}

#[test]
fn a_gain_wholly_beyond_the_cpus_fails() {
    // 7.76 > 1.98 × 1.25 = 2.475: counted more than once.
    assert_eq!(decide(&iv(7.76, 7.96), 1.98), Verdict::Fail);
    // 2.40 ≤ 2.475: within what caches can give.
    assert_eq!(decide(&iv(2.40, 2.60), 1.98), Verdict::Pass);
    // Just above the allowance: 2.0 × 1.25 = 2.5.
    assert_eq!(decide(&iv(2.51, 2.7), 2.0), Verdict::Fail);
    assert_eq!(decide(&iv(2.5, 2.7), 2.0), Verdict::Pass);
}

#[test]
fn thread_like_names_are_known() {
    for name in [
        "threads",
        "nthreads",
        "workers",
        "jobs",
        "cores",
        "procs",
        "num_threads",
        "t",
    ] {
        assert!(THREAD_NAMES.contains(&name));
    }
    assert!(!THREAD_NAMES.contains(&"size"));
}

/// 1,000 clean pairs of cells, 10 runs each, whose throughput doubles on twice the CPUs
/// (1 → 2 threads, 3% run-to-run noise on the metric, CPU gain 2.0 ± 2%): the bound is
/// 2.5×, 25% above the true gain and about 18 standard errors of the median ratio away, so
/// fewer than 0.1% may fail (none is expected).
#[test]
fn clean_doublings_do_not_fail() {
    let mut rng = lab_stats::stream(7, "parallel-false-alarms");
    let mut noisy = |centre: f64, spread: f64| {
        let u: f64 = (0..12).map(|_| rng.r#gen::<f64>()).sum::<f64>() - 6.0;
        centre * (1.0 + spread * u)
    };
    let mut alarms = 0;
    for _ in 0..1000 {
        let low: Vec<Vec<f64>> = (0..10).map(|_| vec![noisy(100.0, 0.03)]).collect();
        let high: Vec<Vec<f64>> = (0..10).map(|_| vec![noisy(200.0, 0.03)]).collect();
        let cpu_gain = noisy(2.0, 0.02) / noisy(1.0, 0.02);
        let mut stream = lab_stats::stream(7, "parallel-bootstrap");
        let e = ratio_ci(&high, &low, Statistic::Median, 1000, 0.95, &mut stream).unwrap();
        alarms += usize::from(decide(&e.interval, cpu_gain) == Verdict::Fail);
    }
    assert!(alarms as f64 / 1000.0 < 0.001, "{alarms} false alarms");
}

/// The same cells with the work counted twice at two threads (4× on 2× the CPUs) all fail.
#[test]
fn doubly_counted_work_fails_every_time() {
    let mut rng = lab_stats::stream(8, "parallel-planted");
    let mut fails = 0;
    for _ in 0..200 {
        let low: Vec<Vec<f64>> = (0..10)
            .map(|_| vec![100.0 * (1.0 + 0.03 * (rng.r#gen::<f64>() - 0.5))])
            .collect();
        let high: Vec<Vec<f64>> = (0..10)
            .map(|_| vec![400.0 * (1.0 + 0.03 * (rng.r#gen::<f64>() - 0.5))])
            .collect();
        let mut stream = lab_stats::stream(8, "parallel-bootstrap");
        let e = ratio_ci(&high, &low, Statistic::Median, 1000, 0.95, &mut stream).unwrap();
        fails += usize::from(decide(&e.interval, 2.0) == Verdict::Fail);
    }
    assert_eq!(fails, 200);
}
