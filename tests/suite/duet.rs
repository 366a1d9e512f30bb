//! `lab run EXP --revs BASE,HEAD --duet`: each base run executes at the same time as a head
//! run of the same cell, the two pinned to disjoint CPUs, and the comparison is the median of
//! the per-pair ratios. The fake program below is disturbed as a shared machine disturbs: a
//! slowdown of up to 30% that hits whatever runs at that moment (both runs of a pair alike),
//! on top of ±0.5% of its own, and lasting no longer than a run. Measured in duet, a 5% change
//! is decided; interleaved one at a time (paired by block, but not disturbed alike), the same
//! machine leaves it inconclusive with an interval several times as wide.

use crate::common;
use crate::revs::two_commits_with;
use common::{FakeRunner, Project, Reply};
use lab::app::{self, RunOptions};
use lab::compare::between_revisions;
use lab::layout::Layout;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::time::Duration;

/// The program of the `ab` fixture: its cost from the revision's `built.txt`, times the
/// disturbance of the moment (the same for the two runs of a duet pair; a run one at a time
/// has a moment of its own), times ±0.5% of its own. Runs report the CPUs they were pinned to as granted.
fn disturbed() -> FakeRunner {
    FakeRunner::new(move |run| {
        let cost: f64 = std::fs::read_to_string(run.request.cwd.join("built.txt"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0.001);
        // Runs start in plan order, one at a time or a pair at a time: the nth is at n + 1.
        // A duet pins its runs; the two of a pair (positions 2k − 1 and 2k) run at one moment.
        let position = run.nth as u64 + 1;
        let moment = match run.request.cpus {
            Some(_) => position.div_ceil(2),
            None => position,
        };
        let moment = ChaCha8Rng::seed_from_u64(moment).gen_range(0.0..0.3);
        let own = ChaCha8Rng::seed_from_u64(1_000_000 + position).gen_range(-0.005..0.005);
        let granted = run.request.cpus.map(<[usize]>::to_vec);
        Reply::ms(cost * (1.0 + moment) * (1.0 + own)).with(|m| m.cpus_granted = granted)
    })
    .side_by_side(Duration::from_millis(5))
}

/// `lab run ab --revs HEAD~1,HEAD [--duet]` with [`disturbed`]: the comparison's one cell.
fn compared(project: &Project, duet: bool) -> serde_json::Value {
    let layout = Layout::new(project.root());
    let revs = vec!["HEAD~1".to_string(), "HEAD".to_string()];
    let opts = RunOptions {
        revs: Some(&revs),
        duet,
        ..common::quiet_run("ab")
    };
    app::run(&layout, Path::new("ab"), &opts, &mut disturbed()).unwrap();
    let dir = layout.experiment_dir(Path::new("ab")).unwrap();
    let a = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    let revisions = a.session.manifest.revisions.as_ref().unwrap();
    let metric = a.experiment.primary_metric().unwrap();
    let c = between_revisions(&a.experiment, &a.analysis, revisions, metric, 0.95).unwrap();
    serde_json::to_value(&c).unwrap()
}

#[test]
fn a_duet_decides_a_change_the_same_disturbance_leaves_inconclusive_one_at_a_time() {
    assert!(
        lab::exec::allowed_cpus().len() >= 2,
        "a duet needs two CPUs; this test machine lets lab use {:?}",
        lab::exec::allowed_cpus()
    );
    let project = two_commits_with("105", "repetitions = 12");
    let duet = compared(&project, true);
    let alone = compared(&project, false);
    let (d, a) = (&duet["cells"][0], &alone["cells"][0]);
    assert_eq!(d["verdict"], "slower", "{duet}");
    assert_eq!(d["pairs"], 12, "{d}");
    let ratio = d["ratio"].as_f64().unwrap();
    assert!((1.04..1.06).contains(&ratio), "{d}");
    assert_eq!(a["verdict"], "inconclusive", "{alone}");
    assert_eq!(a["pairs"], 12, "paired by block: {a}");
    let (dw, aw) = (
        d["half_width"].as_f64().unwrap(),
        a["half_width"].as_f64().unwrap(),
    );
    assert!(
        dw < 0.01 && aw > 5.0 * dw,
        "duet ±{dw}, one at a time ±{aw}"
    );
    assert!(
        duet["summary"]
            .as_str()
            .unwrap()
            .contains("measured in duet"),
        "{duet}"
    );
    let sessions = project.sessions("ab");
    let manifest = std::fs::read_to_string(sessions[0].join("manifest.json")).unwrap();
    assert!(manifest.contains("\"duet\": ["), "{manifest}");
    every_run_has_its_partner_beside_it(&sessions[0]);
}

/// Each row of a duet session overlapped exactly one run: its partner, at the other revision,
/// pinned to the other side's CPU.
fn every_run_has_its_partner_beside_it(session: &Path) {
    let rows = common::csv_rows(&session.join("runs.csv"));
    assert_eq!(rows.len(), 24);
    let by_id: std::collections::BTreeMap<&str, &std::collections::BTreeMap<String, String>> =
        rows.iter().map(|r| (r["run_id"].as_str(), r)).collect();
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("plan.json")).unwrap()).unwrap();
    let rev_of = |id: &str| {
        plan["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| r["params"]["rev"].clone())
            .unwrap()
    };
    for row in &rows {
        let id = row["run_id"].as_str();
        let partner = row["overlapped"].as_str();
        let other = by_id[partner];
        assert_eq!(other["overlapped"], id, "{row:?}");
        assert_ne!(rev_of(id), rev_of(partner), "{id} and {partner}");
        assert_ne!(row["cpus"], other["cpus"], "{id} and {partner}");
        assert!(["0", "1"].contains(&row["cpus"].as_str()), "{row:?}");
    }
}

#[test]
fn a_duet_needs_revisions_and_a_machine_it_fits() {
    let project = two_commits_with("100", "repetitions = 5");
    let out = project.lab(&["run", "ab", "--duet"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--revs"), "{err}");
    // On one CPU there is no second side: refused before anything is built or runs.
    let out = std::process::Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_lab"), "run", "ab"])
        .args(["--revs", "HEAD~1,HEAD", "--duet"])
        .current_dir(project.root())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("it needs 2 CPUs, and lab may use 1 here (0)"),
        "{err}"
    );
    assert!(project.sessions("ab").is_empty(), "nothing ran");
}
