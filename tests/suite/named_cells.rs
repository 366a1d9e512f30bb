//! Every declared check kind names exactly the cells that decided its verdict: one session of
//! nine cells (variants base, fast and calib × n = 1, 2, 4) answered by a fake runner, one
//! flaw planted per check in a cell of its own, and each result's `cells`, verdict and reading
//! checked, so that a check naming every cell, or a neighbouring one, fails here.

use crate::common::{self, FakeRunner, Reply};
use lab::Exit;

use lab::app;
use lab::assess::Assessed;
use lab::checks::{CheckResult, Verdict};
use lab::layout::Layout;
use std::path::Path;

/// Runs per cell in the fixture.
const REPETITIONS: usize = 16;
/// What every run asks for, in milliseconds (the duration check expects 0.5 s).
const REQUESTED_MS: u64 = 500;
/// What a run disturbed by a pause takes.
const PAUSED_MS: u64 = 800;
/// The runs of `fast n=1`, counted from 0, that a pause stretches.
const PAUSED_RUNS: [usize; 2] = [3, 10];
/// Resident memory of every run but those of the leaking cell.
const RSS_MIB: u64 = 64;
/// How much more the leaking cell's every run holds than the one before it.
const LEAK_MIB: u64 = 8;

/// The throughput a cell is built around (Mops/s): base ignores n below 4, fast does not
/// scale and sits at the clock's ceiling at n=2, calib is the clock itself.
fn planned_ops(variant: &str, n: u32) -> f64 {
    match (variant, n) {
        ("base", 1 | 2) => 10.0,
        ("base", _) => 40.0,
        ("fast", 1) => 20.0,
        ("fast", 2) => 58.0,
        ("fast", _) => 24.0,
        (_, n) => 30.0 * f64::from(n),
    }
}

/// How far a cell's runs stray from its throughput: not at all where n is swallowed (its
/// output must be identical run after run), ±65% for the noisy clock at n=4 (a CV near 40%),
/// ±1.7% elsewhere (a CV near 1%).
fn spread(variant: &str, n: u32) -> f64 {
    match (variant, n) {
        ("base", 1 | 2) => 0.0,
        ("calib", 4) => 0.65,
        _ => 0.017,
    }
}

/// The k-th point of an even grid over [−1, 1] visited in a scrambled order: a spread with
/// no trend and no second mode (only memory, never `ops`, is judged for order effects).
fn even_grid(k: usize) -> f64 {
    ((k * 7) % REPETITIONS) as f64 / (REPETITIONS - 1) as f64 * 2.0 - 1.0
}

/// The coefficient of variation (n − 1 degrees of freedom) of a cell whose runs stray by
/// `spread` over the whole even grid, whose mean is 0.
fn grid_cv(spread: f64) -> f64 {
    let squares: f64 = (0..REPETITIONS).map(|k| even_grid(k).powi(2)).sum();
    spread * (squares / (REPETITIONS - 1) as f64).sqrt()
}

/// What the k-th run of a cell prints for `ops`.
fn ops(variant: &str, n: u32, k: usize) -> f64 {
    planned_ops(variant, n) * (1.0 + spread(variant, n) * even_grid(k))
}

/// The checksum: calib at n=1 computes a different answer.
fn answer(variant: &str, n: u32) -> &'static str {
    if (variant, n) == ("calib", 1) {
        "43"
    } else {
        "42"
    }
}

/// The 100 iteration times of a run, as `tests/fixtures/steady/iterations.sh` prints them:
/// 30 warm-up iterations then a steady 0.344 ms, except calib at n=2, whose level steps up
/// 0.05 ms every 20 iterations and never settles.
fn iterations(variant: &str, n: u32) -> Vec<f64> {
    let never = (variant, n) == ("calib", 2);
    (0..100)
        .map(|i| {
            let wobble = 0.002 * ((i * 7) % 5) as f64 - 0.004;
            if never {
                0.30 + 0.05 * (i / 20) as f64 + wobble
            } else if i < 30 {
                0.82 - 0.002 * i as f64
            } else {
                0.344 + wobble
            }
        })
        .collect()
}

/// Wall time: two runs of fast at n=1 are stretched by a pause.
fn wall_ms(variant: &str, n: u32, k: usize) -> u64 {
    if (variant, n) == ("fast", 1) && PAUSED_RUNS.contains(&k) {
        PAUSED_MS
    } else {
        REQUESTED_MS
    }
}

/// Resident memory: base at n=4 leaks, each run holding more than the one before it.
fn rss_mib(variant: &str, n: u32, k: usize) -> u64 {
    if (variant, n) == ("base", 4) {
        RSS_MIB + LEAK_MIB * k as u64
    } else {
        RSS_MIB
    }
}

/// The standard output of the k-th run of a cell.
fn stdout(variant: &str, n: u32, k: usize) -> String {
    let mut out = format!(
        "{{\"ops\": {:.6}, \"answer\": \"{}\"}}\n",
        ops(variant, n, k),
        answer(variant, n)
    );
    for ms in iterations(variant, n) {
        out.push_str(&format!("{{\"iter_ms\": {ms:.3}}}\n"));
    }
    out
}

/// Answers `bench VARIANT N` from the variant, n and how many runs of that cell came before;
/// the calibration's spawns of `true` take a millisecond and print nothing.
fn planted() -> FakeRunner {
    FakeRunner::new(|run| {
        let (text, ms, rss) = match run.request.argv {
            [_, variant, n] => {
                let n: u32 = n.parse().unwrap();
                let k = run.nth;
                (
                    stdout(variant, n, k),
                    wall_ms(variant, n, k),
                    rss_mib(variant, n, k),
                )
            }
            _ => (String::new(), 1, RSS_MIB),
        };
        Reply::new(text, ms * 1_000_000).with(|m| m.max_rss_kib = rss * 1024)
    })
}

/// Measured runs per cell: the count of each `bench VARIANT N`.
fn runs_by_cell(fake: &FakeRunner) -> Vec<usize> {
    let seen = fake.seen();
    seen.by_argv
        .iter()
        .filter(|(argv, _)| argv.len() == 3)
        .map(|(_, runs)| *runs)
        .collect()
}

/// Runs the fixture through the whole pipeline and assesses its session.
fn planted_session() -> (common::Project, Assessed, i32, FakeRunner) {
    let project = common::Project::with_fixtures(&["named"]);
    let layout = Layout::new(project.root());
    let mut planted = planted();
    let code = app::run(
        &layout,
        Path::new("named"),
        &common::quiet_run("named"),
        &mut planted,
    )
    .map(lab::error::Exit::code)
    .unwrap();
    let dir = layout.experiment_dir(Path::new("named")).unwrap();
    let assessed = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    (project, assessed, code, planted)
}

/// The result of the declared check `name`.
fn result<'a>(assessed: &'a Assessed, name: &str) -> &'a CheckResult {
    assessed
        .findings
        .checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name:?}"))
}

/// The check's verdict and the cells it names, in plan order.
fn assert_decided(assessed: &Assessed, name: &str, verdict: Verdict, cells: &[&str]) {
    let check = result(assessed, name);
    let expected: Vec<String> = cells.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        (check.verdict, &check.cells),
        (verdict, &expected),
        "{name}: {}\n{}",
        check.reading,
        check.evidence
    );
}

/// The check failed on `cells`, and its reading names every one of them.
fn assert_failed_on(assessed: &Assessed, name: &str, cells: &[&str]) {
    assert_decided(assessed, name, Verdict::Fail, cells);
    let reading = &result(assessed, name).reading;
    for cell in cells {
        assert!(
            reading.contains(cell),
            "{name}: the reading does not name {cell}: {reading}"
        );
    }
}

/// The label of the cell a run belongs to.
fn cell_of_run(assessed: &Assessed, id: &str) -> String {
    let run = assessed.analysis.runs.iter().find(|r| r.id == id).unwrap();
    lab::analysis::cell_label(&assessed.experiment, &run.cell)
}

/// The `ops` statistics of one cell.
fn ops_cell<'a>(assessed: &'a Assessed, label: &str) -> &'a lab::analysis::CellStats {
    assessed
        .analysis
        .cells
        .iter()
        .find(|c| c.label == label && c.metric == "ops")
        .unwrap()
}

/// duration: two runs of fast n=1 took 0.8 s for 0.5 s; they are invalid, the rest count.
fn the_duration_rule_names_its_runs(a: &Assessed) {
    let duration = "every run lasted half a second";
    assert_decided(a, duration, Verdict::Fail, &["fast n=1"]);
    let stretched = &result(a, duration).runs;
    assert_eq!(stretched.len(), 2);
    for id in stretched {
        assert_eq!(cell_of_run(a, id), "fast n=1");
    }
    // Its reading names one of those runs, not its cell.
    let reading = &result(a, duration).reading;
    assert!(
        stretched
            .iter()
            .any(|id| *reading == format!("run {id} took 0.800 s for a 0.500 s request")),
        "{reading}"
    );
    assert_eq!(ops_cell(a, "fast n=1").n, REPETITIONS - 2);
    assert_eq!(ops_cell(a, "fast n=2").n, REPETITIONS);
}

/// ceiling: fast n=2 runs at 58 of calib n=2's 60 Mops/s; checksum: calib n=1 printed 43
/// where base printed 42; distinct: base printed the same at n=1 and n=2.
fn the_ceiling_checksum_and_distinct_checks_name_their_cells(a: &Assessed) {
    // ceiling: fast n=2 runs at 58 of calib n=2's 60 Mops/s; fast n=1 stays at 67% of its 30.
    let ceiling = "no cell runs at the clock's ceiling";
    assert_failed_on(a, ceiling, &["fast n=2"]);
    let ratio = result(a, ceiling).ratio.as_ref().unwrap();
    assert_eq!(
        (ratio.a.as_str(), ratio.b.as_str()),
        ("fast n=2", "median of calib n=2")
    );
    assert!((ratio.ratio - 58.0 / 60.0).abs() < 1e-9, "{ratio:?}");

    // checksum: calib n=1 printed 43 where base printed 42, in every one of its 16 runs.
    let checksum = "every variant computes base's answer";
    assert_failed_on(a, checksum, &["calib n=1"]);
    assert_eq!(result(a, checksum).runs.len(), REPETITIONS);

    // distinct: base printed the same at n=1 and n=2; n=2 → n=4 differs fourfold.
    let distinct = "every n of base is a different configuration";
    assert_failed_on(a, distinct, &["base n=1", "base n=2"]);
    assert!(
        result(a, distinct)
            .reading
            .starts_with("base n=1 and base n=2 printed identical output"),
        "{}",
        result(a, distinct).reading
    );
}

/// order: the memory of base n=4 climbs 8 MiB a run; stable: calib n=4 varies 41% from run
/// to run.
fn the_order_and_stable_checks_name_their_cells(a: &Assessed) {
    // order: the memory of base n=4 climbs 8 MiB a run; every other cell holds 64 MiB.
    let order = "memory does not depend on the runs before";
    assert_failed_on(a, order, &["base n=4"]);
    assert_eq!(result(a, order).runs.len(), REPETITIONS);
    // The pooled within-cell test finds it; the reading says which cell it rests on.
    let reading = &result(a, order).reading;
    assert!(
        reading.starts_with("serial dependence within cells: each run lands on the same side")
            && reading.ends_with("; it rests on base n=4: without its runs no test fails"),
        "{reading}"
    );

    // stable: calib n=4 varies 41% from run to run, every other cell 1% or not at all.
    let stable = "runs of a cell vary under 10%";
    assert_failed_on(a, stable, &["calib n=4"]);
    assert_eq!(
        result(a, stable).reading,
        "calib n=4 varies 41.3% from run to run, above the 10.0% limit"
    );
    let cv = |label: &str| ops_cell(a, label).summary.as_ref().unwrap().cv;
    assert!(
        (cv("calib n=4") - grid_cv(0.65)).abs() < 1e-6,
        "{}",
        cv("calib n=4")
    );
    assert!(
        (cv("fast n=2") - grid_cv(0.017)).abs() < 1e-6,
        "{}",
        cv("fast n=2")
    );
    assert_eq!(cv("base n=1"), 0.0);
}

/// steady: every run of calib n=2 is still changing at iteration 80; scaling: fast grows
/// 20 → 24 from n=1 to n=4.
fn the_steady_and_scaling_checks_name_their_cells(a: &Assessed) {
    let steady = "every run settles within 50 iterations";
    assert_failed_on(a, steady, &["calib n=2"]);
    assert_eq!(result(a, steady).runs.len(), REPETITIONS);
    assert!(
        result(a, steady)
            .reading
            .contains("(calib n=2) reached no steady state: still changing at iteration 80"),
        "{}",
        result(a, steady).reading
    );

    // scaling: fast grows 20 → 24 from n=1 to n=4; base (10 → 40) and calib (30 → 120) pass.
    let scaling = "every variant doubles from n=1 to n=4";
    assert_failed_on(a, scaling, &["fast n=1", "fast n=4"]);
    let ratio = result(a, scaling).ratio.as_ref().unwrap();
    assert_eq!(
        (ratio.a.as_str(), ratio.b.as_str()),
        ("fast n=4", "fast n=1")
    );
}

#[test]
fn every_check_names_the_cells_that_decided_its_verdict() {
    let (_project, a, code, planted) = planted_session();
    assert_eq!(
        Exit::from_code(code),
        Exit::CheckFailed,
        "validity checks fail by design"
    );
    let runs = runs_by_cell(&planted);
    assert_eq!(runs.len(), 9);
    assert!(runs.iter().all(|k| *k == REPETITIONS), "{runs:?}");

    the_duration_rule_names_its_runs(&a);

    // compare and agree name the two cells they compare, in plan order.
    assert_decided(
        &a,
        "fast loses to base at n=4",
        Verdict::Pass,
        &["base n=4", "fast n=4"],
    );
    assert_failed_on(&a, "fast matches base at n=1", &["base n=1", "fast n=1"]);

    the_ceiling_checksum_and_distinct_checks_name_their_cells(&a);

    the_order_and_stable_checks_name_their_cells(&a);

    the_steady_and_scaling_checks_name_their_cells(&a);
}
