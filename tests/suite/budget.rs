//! An answer in the time given, end to end with a fake runner: a time budget that no look
//! runs past and that `--resume --budget` extends, and hypotheses whose true ratios sit at,
//! inside and outside the practical margin of their threshold, each stopped at its own look
//! with its own words.

use crate::common::{self, FakeRunner, Reply, twelve_uniforms};
use lab::Exit;
use lab::app::{self, RunOptions};
use lab::layout::Layout;
use lab::stopping::Next;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::time::{Duration, Instant};

/// Real time each fake run takes.
const RUN_MS: f64 = 250.0;

/// Runs that last [`RUN_MS`] of real time and report it, 8% apart from one another, the slow
/// variant GAP percent longer.
fn sleeping() -> FakeRunner {
    let mut rng = ChaCha8Rng::seed_from_u64(52);
    FakeRunner::new(move |run| match run.request.argv {
        [_, _, _, gap] => {
            let gap: f64 = gap.parse().unwrap();
            std::thread::sleep(Duration::from_millis(RUN_MS as u64));
            Reply::ms(RUN_MS * (1.0 + gap / 100.0) * (1.0 + 0.08 * twelve_uniforms(&mut rng)))
        }
        _ => Reply::ms(0.001),
    })
}

/// The `sampled` fixture with no difference to find and a margin too narrow to call it at
/// the threshold: only the budget ends it.
fn endless_project() -> common::Project {
    let project = common::Project::with_fixtures(&["sampled"]);
    let toml = project.path("experiments/sampled/lab.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replacen("gap = [10]", "gap = [0]", 1)
        .replacen(
            "expect = \"a > b\"",
            "expect = \"a > b\"\nmargin = \"0.1%\"",
            1,
        );
    std::fs::write(&toml, text).unwrap();
    project
}

fn budgeted(seconds: u64, resume: bool) -> RunOptions<'static> {
    RunOptions {
        budget: Some(Duration::from_secs(seconds)),
        resume,
        ..common::quiet_run("sampled")
    }
}

fn assessed(layout: &Layout) -> lab::Assessed {
    let dir = layout.experiment_dir(Path::new("sampled")).unwrap();
    app::assess_chosen(layout, &dir, None).unwrap().unwrap()
}

/// Sampling stopped after the fifth look, whose successor the budget could not finish, and the
/// chapter says so.
fn assert_stopped_before_the_sixth_look(project: &common::Project, layout: &Layout) {
    let a = assessed(layout);
    let steps: Vec<(u32, u32)> = a.looks.iter().map(|s| (s.look, s.runs_per_cell)).collect();
    assert_eq!(steps, vec![(1, 5), (2, 8), (3, 12), (4, 18), (5, 27)]);
    let Next::TimeSpent(stop) = a.looks.last().unwrap().next else {
        panic!("{:?}", a.looks.last());
    };
    assert_eq!((stop.look, stop.budget_s), (5, 18.0));
    assert!((6.0..7.5).contains(&stop.next_look_s), "{stop:?}");
    assert!(stop.used_s + stop.next_look_s > 18.0, "{stop:?}");
    let chapter = project.read("book/src/sampled/index.md");
    assert!(
        chapter.contains("Sampling stopped at look 5 of up to 6 (27 runs per cell in the 2 cells it depends on, intervals at")
            && chapter.contains("the time budget (18 s) had"),
        "{chapter}"
    );
    assert!(
        chapter.contains("still open: slow takes longer than fast ("),
        "each open hypothesis is named with what more runs would do: {chapter}"
    );
}

/// Resumed with another budget, enough for the last look, the session takes it and completes.
fn resume_with_a_budget_for_the_last_look(layout: &Layout) {
    let mut more = sleeping();
    let code = app::run(layout, Path::new("sampled"), &budgeted(10, true), &mut more).unwrap();
    assert_eq!(code, Exit::Ok);
    assert_eq!(
        more.seen().started.len(),
        26,
        "the sixth look's runs, no others"
    );
    let a = assessed(layout);
    let last = a.looks.last().unwrap();
    assert_eq!((last.look, last.runs_per_cell), (6, 40));
    assert_eq!(last.next, Next::BudgetSpent);
    assert!(a.session.manifest.complete && a.session.manifest.time_stop.is_none());
    assert_eq!(a.session.manifest.resumed, 1);
}

#[test]
fn no_look_starts_that_the_budget_cannot_finish_and_resume_takes_a_new_budget() {
    let project = endless_project();
    let layout = Layout::new(project.root());
    let mut runner = sleeping();
    let started = Instant::now();
    let code = app::run(
        &layout,
        Path::new("sampled"),
        &budgeted(18, false),
        &mut runner,
    )
    .unwrap();
    let took = started.elapsed();
    assert_eq!(code, Exit::Ok, "an open hypothesis is not a failure");
    // Two cells of 0.25 s runs: looks at 5, 8, 12, 18 and 27 runs per cell end by about
    // 13.5 s; the sixth, to 40, would add 26 runs (6.5 s) and end past 18 s.
    assert!(took < Duration::from_secs(18), "the runs took {took:?}");
    assert_eq!(runner.seen().started.len(), 54);
    assert_stopped_before_the_sixth_look(&project, &layout);

    resume_with_a_budget_for_the_last_look(&layout);

    // A session the run budget ended is complete: there is nothing to resume.
    let out = project.lab_exits(
        &["run", "experiments/sampled", "--resume", "--budget", "1m"],
        Exit::Usage,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to resume"), "{err}");
}

/// The `sampled` fixture with three variants 0, 5 and 25 percent slower than `fast`, and three
/// hypotheses "X takes longer than fast", each with a margin of 10%.
fn margin_project() -> common::Project {
    let project = common::Project::with_fixtures(&["sampled"]);
    let toml = project.path("experiments/sampled/lab.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let (head, _) = text.split_once("[[variant]]").unwrap();
    let (_, metric) = text.split_once("[metric.ms]").unwrap();
    let (metric, _) = metric.split_once("[profile.even]").unwrap();
    let mut out = head.replacen("gap = [10]", "gap = [0]", 1);
    out.push_str("[[variant]]\nname = \"fast\"\nrun = [\"sh\", \"bench.sh\", \"fast\", \"0\"]\n\n");
    for (name, gap) in [("same", 0), ("near", 5), ("far", 25)] {
        out.push_str(&format!(
            "[[variant]]\nname = \"{name}\"\nrun = [\"sh\", \"bench.sh\", \"{name}\", \"{gap}\"]\n\n"
        ));
    }
    out.push_str(&format!("[metric.ms]{metric}"));
    for name in ["same", "near", "far"] {
        out.push_str(&format!(
            "[[check]]\nname = \"{name} takes longer than fast\"\nkind = \"compare\"\nmetric = \"ms\"\na = {{ variant = \"{name}\" }}\nb = {{ variant = \"fast\" }}\nexpect = \"a > b\"\nmargin = \"10%\"\n\n"
        ));
    }
    std::fs::write(&toml, out).unwrap();
    project
}

/// The line of the chapter's hypothesis table for `name`.
fn claim_line<'a>(chapter: &'a str, name: &str) -> &'a str {
    chapter
        .lines()
        .find(|l| l.contains(name) && l.contains("at look"))
        .unwrap_or_else(|| panic!("no line for {name}: {chapter}"))
}

#[test]
fn ratios_at_inside_and_outside_the_margin_stop_each_at_its_own_look_with_its_own_words() {
    let project = margin_project();
    let layout = Layout::new(project.root());
    let mut runner = common::timed(100.0, 2026);
    let code = app::run(
        &layout,
        Path::new("sampled"),
        &common::quiet_run("sampled"),
        &mut runner,
    )
    .unwrap();
    assert_eq!(code, Exit::Ok);
    let a = assessed(&layout);
    let verdict = |name: &str| {
        let check = a.findings.checks.iter().find(|c| c.name == name).unwrap();
        (check.verdict.word(), check.reading.clone())
    };
    let (far, _) = verdict("far takes longer than fast");
    assert_eq!(far, "pass");
    let (same, same_reading) = verdict("same takes longer than fast");
    assert_eq!(same, "at the threshold");
    assert!(
        same_reading.starts_with("at the threshold: ")
            && same_reading.ends_with(
                "within ±10.0% of 1.00 — the data cannot tell which side, and more runs would not change what it means"
            ),
        "{same_reading}"
    );
    let (near, _) = verdict("near takes longer than fast");
    assert_eq!(
        near, "pass",
        "inside the margin, yet far enough for its interval to clear 1.00"
    );
    assert_eq!(a.looks.last().unwrap().next, Next::GoalMet);

    let chapter = project.read("book/src/sampled/index.md");
    // Each stopped at its own look and kept it: far at the first, same at the threshold at
    // the third, near at the fifth; the cells of a decided one took no more runs.
    for (name, look, runs) in [("far", 1, 5), ("same", 3, 12), ("near", 5, 27)] {
        let line = claim_line(&chapter, &format!("{name} takes longer than fast"));
        let note = format!("decided at look {look} ({runs} runs per cell)</small>");
        assert!(line.contains(&note), "{line}");
        let cell = a
            .analysis
            .cells
            .iter()
            .find(|c| c.metric == "ms" && c.label == name);
        assert_eq!(cell.unwrap().n, runs, "{name}");
    }
    assert!(
        claim_line(&chapter, "same takes longer than fast").starts_with(
            "| <span class=\"lab-verdict lab-at-threshold\">at the threshold</span> |"
        ),
    );
}
