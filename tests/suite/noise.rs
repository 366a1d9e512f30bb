//! `lab noise EXP`: an A/A session of the `ab` fixture measured by the fake runner with a
//! chosen spread (each block's two runs take the same time, 98.2 ms to 101.8 ms in steps), its
//! reading checked against figures computed by hand, and its quote in the A/B comparison.

use crate::common;

use common::{FakeRunner, Project, Reply};
use lab::app::{self, NoiseOptions};
use lab::layout::Layout;
use std::path::Path;

/// Each shuffled block holds one run of side a and one of side b: runs 2k and 2k+1 both take
/// 98.2 + 0.4·k ms, so both sides see the same ten times, 98.2 to 101.8 ms.
fn chosen_spread() -> FakeRunner {
    FakeRunner::new(|run| {
        if !run.measured() {
            return Reply::ms(0.001);
        }
        Reply::ms(98.2 + 0.4 * (run.nth / 2) as f64)
    })
}

/// `lab noise ab` in `project` with the chosen spread.
fn noise_of(project: &Project) -> lab::compare::NoiseFloor {
    let layout = Layout::new(project.root());
    let opts = NoiseOptions {
        threshold: 0.02,
        quiet: true,
        command_line: "lab noise ab".into(),
    };
    app::noise(&layout, Path::new("ab"), &opts, &mut chosen_spread()).unwrap()
}

/// `lab noise ab` on a fresh project with the chosen spread.
fn measured() -> (Project, lab::compare::NoiseFloor) {
    let project = Project::with_fixtures(&["ab"]);
    let floor = noise_of(&project);
    (project, floor)
}

#[test]
fn an_aa_session_of_chosen_spread_gives_no_false_alarm_and_the_expected_mde() {
    let (project, floor) = measured();
    assert_eq!((floor.false_alarms, floor.compared), (0, 1));
    let cell = &floor.cells[0];
    assert_eq!(cell.change.cell, "work");
    assert_eq!((cell.change.a_runs, cell.change.b_runs), (10, 10));
    assert_eq!(cell.change.ratio, Some(1.0));
    assert_eq!(cell.change.verdict, lab::compare::Change::Same);
    // python3: from statistics import NormalDist, variance; import math
    //   xs = [round(98.2 + 0.4 * k, 1) for k in range(10)]
    //   s = math.sqrt(variance([math.log(x) for x in xs]))       # 0.012111702874
    //   z = NormalDist().inv_cdf(0.975)
    //   [math.expm1(z * s * math.sqrt(math.pi / n)) for n in (10, 20, 40)]
    //   # 0.013394320049, 0.009452742675, 0.006674882993
    //   math.sqrt(variance(xs)) / (sum(xs) / 10)                 # CV 0.012110601416
    let expected = [
        (10, 0.013_394_320_0),
        (20, 0.009_452_742_7),
        (40, 0.006_674_883_0),
    ];
    for ((n, m), (en, em)) in cell.mde.iter().zip(expected) {
        assert_eq!(*n, en);
        assert!((m - em).abs() < 1e-9, "MDE at {n}: {m}, expected {em}");
    }
    assert!((cell.log_sd.unwrap() - 0.012_111_702_9).abs() < 1e-9);
    assert!((cell.cv.unwrap() - 0.012_110_601_4).abs() < 1e-9);
    // The session is stored apart: the experiment itself has no session yet.
    assert!(project.path("data/ab/noise").is_dir());
    assert!(lab::store::sessions(&project.path("data/ab")).is_empty());
    let text = app::noise_text(&floor);
    assert!(
        text.contains("0 false alarms in 1 cell compared with itself"),
        "{text}"
    );
    assert!(text.contains("1.3%") && text.contains("0.7%"), "{text}");
    assert_eq!(
        floor.quote().unwrap(),
        format!(
            "noise floor measured {}: at 10 runs a side lab can detect a 1.3% change in cell work; at 40, 0.7%",
            &floor.measured[..10]
        )
    );
}

#[test]
fn lab_noise_of_an_unknown_experiment_is_a_usage_error() {
    let project = Project::with_fixtures(&["ab"]);
    let out = project.lab_exits(&["noise", "nope"], lab::Exit::Usage);
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
}

#[test]
fn the_ab_comparison_and_its_chapter_quote_the_latest_noise_floor() {
    let (project, floor) = measured();
    let layout = Layout::new(project.root());
    let quote = floor.quote().unwrap();
    for _ in 0..2 {
        let mut runner = chosen_spread();
        app::run(
            &layout,
            Path::new("ab"),
            &common::quiet_run("ab"),
            &mut runner,
        )
        .unwrap();
        // Session folders are named by the second they start in.
        std::thread::sleep(std::time::Duration::from_millis(1100));
    }
    let opts = app::CompareOptions {
        a: lab::store::SessionRef::Previous,
        b: lab::store::SessionRef::Latest,
        metric: None,
        threshold: 0.02,
    };
    let (text, _) = app::compare(&layout, Path::new("ab"), &opts, false).unwrap();
    assert!(text.contains(&quote), "{text}");
    let (json, _) = app::compare(&layout, Path::new("ab"), &opts, true).unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["noise"], quote.as_str());
    let chapter = project.read("book/src/ab/index.md");
    assert!(chapter.contains(&format!("The {quote}.")), "{chapter}");
}

#[test]
fn without_a_noise_measurement_nothing_is_quoted() {
    let project = Project::with_fixtures(&["ab"]);
    let layout = Layout::new(project.root());
    assert!(app::latest_noise(&layout, "ab").is_none());
}

#[test]
fn a_session_across_revisions_quotes_the_noise_floor_in_its_comparison() {
    let project = crate::revs::two_commits_with("100", "repetitions = 10");
    let layout = Layout::new(project.root());
    let floor = noise_of(&project);
    let revs = vec!["HEAD~1".to_string(), "HEAD".to_string()];
    let run = app::RunOptions {
        revs: Some(&revs),
        ..common::quiet_run("ab")
    };
    app::run(&layout, Path::new("ab"), &run, &mut chosen_spread()).unwrap();
    let chapter = project.read("book/src/ab/index.md");
    assert!(
        chapter.contains(&format!("The {}.", floor.quote().unwrap())),
        "{chapter}"
    );
}
