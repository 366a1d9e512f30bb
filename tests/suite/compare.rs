//! `lab compare` on sessions made with a fake runner: a second session 20% slower is reported
//! slower in every cell with an interval that excludes 1 (exit 1), two sessions of the same
//! program in 8% noise are inconclusive, not a change (exit 0), and sessions measured
//! differently are flagged.

use crate::common;
use lab::Exit;

use common::timed_session as session;
use lab::app::{self, Change, CompareOptions, Comparison};
use lab::layout::Layout;
use std::path::Path;

fn compared(layout: &Layout) -> (Comparison, i32) {
    let opts = CompareOptions {
        a: lab::store::SessionRef::Previous,
        b: lab::store::SessionRef::Latest,
        metric: None,
        threshold: 0.02,
    };
    let (json, code) = app::compare(layout, Path::new("sampled"), &opts, true).unwrap();
    (serde_json::from_str(&json).unwrap(), code.code())
}

#[test]
fn a_session_20_percent_slower_is_reported_slower_in_every_cell() {
    let project = common::sampled_project();
    let layout = Layout::new(project.root());
    session(&layout, 100.0, 1);
    session(&layout, 120.0, 2);
    let (c, code) = compared(&layout);
    assert_eq!(
        Exit::from_code(code),
        Exit::CheckFailed,
        "a regression fails the command"
    );
    assert!(c.regressed);
    assert_eq!(c.metric, "ms");
    assert_eq!(c.better, "lower");
    assert_eq!(c.cells.len(), 2);
    for cell in &c.cells {
        assert_eq!(cell.verdict, Change::Slower, "{cell:?}");
        let (r, lo) = (cell.ratio.unwrap(), cell.lo.unwrap());
        assert!(lo > 1.02 && (1.1..1.3).contains(&r), "{cell:?}");
        assert_eq!((cell.a_runs, cell.b_runs), (12, 12));
    }
    assert_eq!(
        c.summary,
        "2 cells in both sessions: 2 slower, 0 faster, 0 same, 0 inconclusive within ±2.0% (each interval at 97.5%, so that all 2 hold together at 95%)"
    );
}

#[test]
fn two_sessions_of_the_same_program_in_8_percent_noise_are_inconclusive() {
    let project = common::sampled_project();
    let layout = Layout::new(project.root());
    session(&layout, 100.0, 1);
    session(&layout, 100.0, 2);
    let (c, code) = compared(&layout);
    assert_eq!(Exit::from_code(code), Exit::Ok);
    assert!(!c.regressed);
    for cell in &c.cells {
        // Twelve runs of 8% noise cannot tell ±2% apart: the interval reaches across the band.
        assert_eq!(cell.verdict, Change::Inconclusive, "{cell:?}");
        let (lo, hi, r) = (cell.lo.unwrap(), cell.hi.unwrap(), cell.ratio.unwrap());
        assert!(lo < 1.0 / 1.02 && hi > 1.02, "{cell:?}");
        assert!((cell.half_width.unwrap() - (hi - lo) / 2.0 / r).abs() < 1e-12);
        assert!(cell.half_width.unwrap() > 0.02, "{cell:?}");
    }
    assert!(
        c.summary.starts_with(
            "2 cells in both sessions: 0 slower, 0 faster, 0 same, 2 inconclusive within ±2.0%"
        ),
        "{}",
        c.summary
    );
    let out = project.lab_exits(&["compare", "sampled", "previous", "latest"], Exit::Ok);
    let text = String::from_utf8_lossy(&out.stdout);
    let fast = &c.cells[0];
    assert!(
        text.contains(&format!(
            "{}  {}  inconclusive: straddles −2.0% and +2.0%",
            lab::format::ratio_interval(fast.ratio.unwrap(), fast.lo.unwrap(), fast.hi.unwrap()),
            fast.resolution()
        )),
        "{text}"
    );
}

#[test]
fn a_saved_baseline_is_compared_with_the_latest_session() {
    let project = common::sampled_project();
    let layout = Layout::new(project.root());
    session(&layout, 100.0, 1);
    let first = common::Project::session(&project, "sampled");
    let first = first.file_name().unwrap().to_string_lossy().into_owned();
    let saved = project.lab_exits(&["baseline", "sampled", "main"], Exit::Ok);
    assert_eq!(
        String::from_utf8_lossy(&saved.stdout),
        format!("baseline main of sampled is session {first}\n")
    );
    session(&layout, 120.0, 2);
    let out = project.lab_exits(
        &["compare", "sampled", "--baseline", "main"],
        Exit::CheckFailed,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("against A = {first}")), "{text}");
    assert!(text.contains("2 slower"), "{text}");
    let err = project.lab_exits(
        &["compare", "sampled", "--baseline", "release"],
        Exit::Usage,
    );
    assert!(
        String::from_utf8_lossy(&err.stderr)
            .contains("no baseline named \"release\"\n  hint: baselines: main"),
        "{}",
        String::from_utf8_lossy(&err.stderr)
    );
    let bad = project.lab_exits(&["baseline", "sampled", "../up"], Exit::Usage);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("the baseline name \"../up\""));
}

#[test]
fn the_terminal_names_what_differs_between_the_records_before_any_ratio() {
    let project = common::sampled_project();
    let layout = Layout::new(project.root());
    session(&layout, 100.0, 1);
    // The second session runs under an edited lab.toml: its record says so.
    let toml = project.path("experiments/sampled/lab.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replacen("seed = 11", "seed = 12", 1);
    std::fs::write(&toml, text).unwrap();
    session(&layout, 100.0, 2);
    let out = project.lab_exits(&["compare", "sampled", "previous", "latest"], Exit::Ok);
    let text = String::from_utf8_lossy(&out.stdout);
    let warning = text
        .find("WARNING: the two sessions were not measured alike")
        .unwrap();
    let hash = text.find("  lab.toml SHA-256: ").unwrap();
    // Two cells, each at 97.5%: together at 95% (Bonferroni).
    let table = text.find("B/A [97.5% CI]").unwrap();
    assert!(warning < hash && hash < table, "{text}");
    let err = project.lab_exits(&["compare", "sampled", "previous", "earlier"], Exit::Usage);
    assert!(
        String::from_utf8_lossy(&err.stderr).contains("no sessions named like \"earlier\""),
        "{}",
        String::from_utf8_lossy(&err.stderr)
    );
}
