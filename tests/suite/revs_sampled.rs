//! A session across revisions sampled until decided (`repetitions = { min, max }` or
//! `--until-decided MAX`), end to end with the seeded fake program of `revs`: a +5% change
//! inconclusive at the first look gets more runs until it is called slower; an exact +2%
//! change spends the budget and ends inconclusive, not a regression; two identical commits end
//! the same.

use crate::common::{self, FakeRunner, Project};
use crate::revs::{costs_off_by, two_commits_with};
use lab::Exit;
use lab::app::{self, RunOptions};
use lab::assess::Assessed;
use lab::compare::{Change, Comparison, between_revisions};
use lab::layout::Layout;
use lab::stats::sequential::{look_levels, schedule};
use lab::stopping::Next;
use std::path::Path;

/// A lab.toml line that samples from 5 to 40 runs per cell.
const SAMPLED: &str = "repetitions = { min = 5, max = 40 }";

/// What one `lab run ab --revs HEAD~1,HEAD` left: how lab ended, the session judged, its
/// comparison of the two revisions, and how many runs the fake measured.
struct Outcome {
    exit: Exit,
    assessed: Assessed,
    compared: Comparison,
    measured: usize,
}

fn measure(project: &Project, noise: f64, until_decided: Option<u32>) -> Outcome {
    let layout = Layout::new(project.root());
    let revs = vec!["HEAD~1".to_string(), "HEAD".to_string()];
    let opts = RunOptions {
        revs: Some(&revs),
        until_decided,
        ..common::quiet_run("ab")
    };
    let mut runner: FakeRunner = costs_off_by(noise);
    let exit = app::run(&layout, Path::new("ab"), &opts, &mut runner).unwrap();
    let dir = layout.experiment_dir(Path::new("ab")).unwrap();
    let assessed = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    let revisions = assessed.session.manifest.revisions.as_ref().unwrap();
    let metric = assessed.experiment.primary_metric().unwrap();
    let level = assessed.looks.last().unwrap().level;
    let compared = between_revisions(
        &assessed.experiment,
        &assessed.analysis,
        revisions,
        metric,
        level,
    )
    .unwrap();
    let measured = runner.seen().started.len();
    Outcome {
        exit,
        assessed,
        compared,
        measured,
    }
}

#[test]
fn a_change_inconclusive_at_the_first_look_gets_runs_until_it_is_called_slower() {
    let project = two_commits_with("105", SAMPLED);
    let o = measure(&project, 0.03, None);
    let looks = &o.assessed.looks;
    let first = &looks[0];
    assert_eq!(first.runs_per_cell, 5);
    // Five pairs cannot give an interval at the look's 99% level: the sign-test interval of
    // the median needs 8 pairs there.
    assert_eq!(
        first.unmet,
        ["work: too few runs (5 pairs of runs, too few for an interval at this level)"],
        "{looks:?}"
    );
    let last = looks.last().unwrap();
    assert_eq!(last.next, Next::GoalMet, "{looks:?}");
    assert_eq!(last.look, 4);
    let n = schedule(5, 40)[last.look as usize - 1];
    assert_eq!(n, 18);
    let cell = &o.compared.cells[0];
    assert_eq!(cell.verdict, Change::Slower, "{cell:?}");
    assert_eq!((cell.a_runs, cell.b_runs), (18, 18));
    assert_eq!(o.measured, 36);
    assert!(cell.lo.unwrap() > 1.02, "{cell:?}");
    // One compared cell: its interval is read at the look's own level.
    let level = look_levels(0.95, &schedule(5, 40))[3];
    assert_eq!(o.compared.level, level);
    assert_eq!(o.exit, Exit::CheckFailed, "a regression fails the command");
    // Every look's runs interleave the two revisions, block by block.
    let plan = &o.assessed.session.plan.runs;
    let heads: Vec<bool> = plan
        .iter()
        .map(|r| r.cell.params.get("rev").map(ToString::to_string) == Some("HEAD".into()))
        .collect();
    assert_eq!(plan.len(), 36);
    assert!(heads.chunks(2).all(|b| b[0] != b[1]), "{heads:?}");
    let chapter = crate::common::unlinked(&project.read("book/src/ab/index.md"));
    assert!(
        chapter.contains(&format!(
            "Sampling stopped at look 4 of up to 6 (up to 18 runs per cell and revision, intervals at {} over all compared cells): the goal (every cell compared between the revisions faster, slower or the same within ±2.0%) was met.",
            lab::format::level(level)
        )),
        "{chapter}"
    );
    assert!(chapter.contains("| 1 | 5 |"), "{chapter}");
}

#[test]
fn a_budget_spent_on_an_exact_2_percent_change_ends_inconclusive_and_says_why() {
    let project = two_commits_with("102", "repetitions = 5");
    let o = measure(&project, 0.03, Some(8));
    assert_eq!(
        o.assessed
            .session
            .manifest
            .revisions
            .as_ref()
            .unwrap()
            .until_decided,
        Some(8)
    );
    let last = o.assessed.looks.last().unwrap();
    assert_eq!((last.look, last.looks, last.runs_per_cell), (2, 2, 8));
    assert_eq!(last.next, Next::BudgetSpent);
    let cell = &o.compared.cells[0];
    assert_eq!(cell.verdict, Change::Inconclusive, "{cell:?}");
    assert_eq!((cell.a_runs, cell.b_runs), (8, 8));
    assert_eq!(o.measured, 16);
    let (lo, hi) = (cell.lo.unwrap(), cell.hi.unwrap());
    assert!(lo < 1.02 && hi > 1.02, "{cell:?}");
    // Inconclusive is not a regression.
    assert_eq!(o.exit, Exit::Ok);
    assert!(!o.compared.regressed);
    assert_eq!(
        last.unmet,
        vec![format!(
            "work: inconclusive: {} straddles +2.0%",
            lab::format::ratio_interval_fine(cell.ratio.unwrap(), lo, hi)
        )]
    );
    let chapter = project.read("book/src/ab/index.md");
    assert!(
        chapter.contains(&format!(
            "the budget was spent before the goal (every cell compared between the revisions faster, slower or the same within ±2.0%) was met; still open: {}.",
            last.unmet[0].replace('[', "\\[").replace(']', "\\]")
        )),
        "{chapter}"
    );
    assert!(
        o.compared.summary.starts_with(
            "1 cells in both revisions: 0 slower, 0 faster, 0 same, 1 inconclusive within ±2.0%"
        ),
        "{}",
        o.compared.summary
    );
}

#[test]
fn two_identical_commits_end_the_same_not_faster_or_slower() {
    let project = two_commits_with("100", SAMPLED);
    let o = measure(&project, 0.02, None);
    let last = o.assessed.looks.last().unwrap();
    assert_eq!(last.next, Next::GoalMet, "{:?}", o.assessed.looks);
    let cell = &o.compared.cells[0];
    assert_eq!(cell.verdict, Change::Same, "{cell:?}");
    let (lo, hi) = (cell.lo.unwrap(), cell.hi.unwrap());
    assert!(lo >= 1.0 / 1.02 && hi <= 1.02, "{cell:?}");
    // In 2% noise of each run, the pairs' ratios spread by about 2.8%: their sign-test
    // interval fits ±2% at the last look, 40 pairs (5 and 8 are too few for any interval at
    // 99% and 99.5%).
    assert_eq!(last.look, 6);
    assert_eq!((cell.a_runs, cell.b_runs, cell.pairs), (40, 40, Some(40)));
    assert_eq!(o.measured, 80);
    let looks = &o.assessed.looks;
    assert!(looks[..2].iter().all(|l| l.unmet.len() == 1
        && l.unmet[0].starts_with("work: too few runs (")
        && matches!(l.next, Next::More { .. })));
    assert!(looks[2..5].iter().all(|l| l.unmet.len() == 1
        && l.unmet[0].starts_with("work: inconclusive: ")
        && matches!(l.next, Next::More { .. })));
    assert!(last.unmet.is_empty());
    assert_eq!(o.exit, Exit::Ok);
}

#[test]
fn until_decided_needs_revisions_and_room_above_the_runs_lab_toml_starts_with() {
    let project = two_commits_with("100", "repetitions = 10");
    let out = project.lab_exits(
        &["run", "ab", "--revs", "HEAD~1,HEAD", "--until-decided", "3"],
        Exit::Usage,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--until-decided 3:") && err.contains("starts with 10 runs per cell"),
        "{err}"
    );
    let out = project.lab_exits(&["run", "ab", "--until-decided", "20"], Exit::Usage);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--revs"), "{err}");
    assert!(project.sessions("ab").is_empty());
}
