//! `lab bisect EXP GOOD BAD`: the first commit where the experiment got slower. The bad
//! commit is measured against the good one first; the cells slower there are watched. Then
//! each step measures one commit between them against the good one, interleaved, sampled
//! until decided (see `bisect_search` for which commit is tried next and how an inconclusive
//! step is skipped). Every step is a sealed session of its own; the bisection is kept as
//! `data/NAME/bisect/GOOD..BAD.json`, and the chapter's Bisect page shows it.

use super::bisect_search::Search;
use super::ci::{Deciding, Revised, across_revisions};
use crate::error::{Exit, Result};
use crate::layout::Layout;
use crate::run::{RunOptions, commits_between, resolve_commit, subject};
use lab_exec::{ProcessRunner, Runner};
use lab_judge::bisect::{Answer, Bisection, Commit, Step, StepVerdict, short};
use lab_judge::compare::{CellChange, Change};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct BisectArgs {
    /// The experiment folder (experiments/NAME) or its name.
    pub experiment: PathBuf,
    /// A commit where the experiment was fast.
    pub good: String,
    /// A later commit where it is slower.
    pub bad: String,
    #[command(flatten)]
    pub deciding: Deciding,
}

impl BisectArgs {
    /// `lab bisect`: exits 0 when it names the first slower commit.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        bisect(layout, &self, quiet, &mut ProcessRunner)
    }
}

/// `lab bisect` with `runner` timing the runs; the bisection is stored and the chapter
/// re-rendered with its Bisect page.
pub fn bisect(
    layout: &Layout,
    args: &BisectArgs,
    quiet: bool,
    runner: &mut dyn Runner,
) -> Result<Exit> {
    let dir = layout.experiment_dir(&args.experiment)?;
    let good = named(&dir, &args.good)?;
    let bad = named(&dir, &args.bad)?;
    let between = commits_between(&dir, &good.commit, &bad.commit)?;
    let mut stepping = Stepping {
        layout,
        dir: &dir,
        args,
        good: &good,
        quiet,
        steps: Vec::new(),
        watched: Vec::new(),
    };
    let first = stepping.step(&bad, runner)?;
    stepping.watched = slower_cells(&first.cells);
    stepping.steps.push(first);
    let answer = if stepping.watched.is_empty() {
        Answer::NotSlower
    } else {
        stepping.search(&between, runner)?
    };
    let bisection = Bisection {
        experiment: lab_config::experiment_name(&dir),
        good: good.clone(),
        bad,
        threshold: args.deciding.threshold,
        cells: stepping.watched,
        steps: stepping.steps,
        answer,
    };
    crate::chapter::bisections::keep(layout, &bisection)?;
    let only = [dir.clone()];
    let chapter = super::ReportOptions {
        only: &only,
        session: None,
        quiet: true,
        summary: crate::chapter::summary::Wanted::Verdict,
    };
    super::report::report(layout, &chapter)?;
    if !quiet {
        println!("{}", capitalised(&bisection.sentence()));
    }
    Ok(Exit::failed_if(!matches!(
        bisection.answer,
        Answer::Culprit { .. }
    )))
}

fn named(dir: &Path, rev: &str) -> Result<Commit> {
    let commit = resolve_commit(dir, rev)?;
    Ok(Commit {
        subject: subject(dir, &commit),
        commit,
    })
}

/// The cells slower beyond the threshold.
fn slower_cells(cells: &[CellChange]) -> Vec<String> {
    cells
        .iter()
        .filter(|c| c.verdict == Change::Slower)
        .map(|c| c.cell.clone())
        .collect()
}

/// The steps of one bisection, taken in turn.
struct Stepping<'a> {
    layout: &'a Layout,
    dir: &'a Path,
    args: &'a BisectArgs,
    good: &'a Commit,
    quiet: bool,
    steps: Vec<Step>,
    /// The cells slower at the bad commit; empty before its step.
    watched: Vec<String>,
}

impl Stepping<'_> {
    /// The commits `between` searched for the first slower one, step by step.
    fn search(&mut self, between: &[String], runner: &mut dyn Runner) -> Result<Answer> {
        let mut search = Search::new(between.len());
        while let Some(i) = search.next() {
            let tried = named(self.dir, &between[i])?;
            let step = self.step(&tried, runner)?;
            match step.verdict {
                StepVerdict::Slower => search.slower_at(i),
                StepVerdict::NotSlower => search.not_slower_at(i),
                StepVerdict::Skipped => search.skip(i),
            }
            self.steps.push(step);
        }
        let first: Vec<Commit> = search
            .first_slower()
            .into_iter()
            .map(|i| named(self.dir, &between[i]))
            .collect::<Result<_>>()?;
        Ok(match <[Commit; 1]>::try_from(first) {
            Ok([commit]) => Answer::Culprit { commit },
            Err(commits) => Answer::Ambiguous { commits },
        })
    }

    /// `tried` measured against the good commit in a session of its own.
    fn step(&self, tried: &Commit, runner: &mut dyn Runner) -> Result<Step> {
        let number = self.steps.len() + 1;
        let revs = [
            short(&self.good.commit).to_string(),
            short(&tried.commit).to_string(),
        ];
        let label = format!("bisect step {number}: {}", short(&tried.commit));
        let opts = RunOptions {
            label: Some(&label),
            ..self.args.deciding.options(&revs, self.quiet)
        };
        let Revised {
            comparison,
            session,
            ..
        } = across_revisions(self.layout, self.dir, &opts, runner)?;
        let step = self.judged(tried, session, comparison.cells);
        if !self.quiet {
            eprintln!(
                "step {number}: {} ({}): {}",
                short(&tried.commit),
                tried.subject,
                step.verdict.words()
            );
        }
        Ok(step)
    }

    /// The step's verdict on the watched cells (on every cell at the first step).
    fn judged(&self, tried: &Commit, session: String, cells: Vec<CellChange>) -> Step {
        let cells: Vec<CellChange> = cells
            .into_iter()
            .filter(|c| self.watched.is_empty() || self.watched.contains(&c.cell))
            .collect();
        let slower = cells.iter().any(|c| c.verdict == Change::Slower);
        let decided = cells
            .iter()
            .all(|c| matches!(c.verdict, Change::Same | Change::Faster | Change::Slower));
        let verdict = match (slower, decided || self.watched.is_empty()) {
            (true, _) => StepVerdict::Slower,
            (false, true) => StepVerdict::NotSlower,
            (false, false) => StepVerdict::Skipped,
        };
        Step {
            tried: tried.clone(),
            session,
            verdict,
            cells,
        }
    }
}

fn capitalised(sentence: &str) -> String {
    let mut chars = sentence.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect::<String>() + "."
    })
}
