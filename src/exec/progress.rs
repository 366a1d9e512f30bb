//! Progress on long sessions: a bar with ETA on a terminal, plain lines otherwise, nothing with
//! `--quiet`. Updated only between runs, never while one executes.

use crate::plan::PlannedRun;
use crate::units::Nanos;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};

/// How progress is shown.
pub enum Progress {
    Quiet,
    Lines { total: std::cell::Cell<usize> },
    Bar(ProgressBar),
}

impl Progress {
    /// Picks the form: quiet, a bar on an interactive stderr, lines otherwise.
    pub fn new(total: usize, quiet: bool) -> Self {
        if quiet {
            return Progress::Quiet;
        }
        if !std::io::stderr().is_terminal() {
            return Progress::Lines {
                total: std::cell::Cell::new(total),
            };
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{bar:30} {pos}/{len} runs, {elapsed} elapsed, ETA {eta}  {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Progress::Bar(bar)
    }

    /// Says what runs next.
    pub fn starting(&self, run: &PlannedRun) {
        if let Progress::Bar(bar) = self {
            bar.set_message(describe(run));
        }
    }

    /// Says how a run ended.
    pub fn finished(&self, run: &PlannedRun, wall_ns: u64, outcome: &str) {
        let outcome = &crate::format::terminal(outcome);
        match self {
            Progress::Quiet => {}
            Progress::Lines { total } => {
                let line = format!(
                    "[{}/{}] {} {} {}\n",
                    run.position,
                    total.get(),
                    describe(run),
                    crate::format::seconds_fixed(Nanos(wall_ns).seconds()),
                    outcome
                );
                let _ = std::io::stderr().write_all(line.as_bytes());
            }
            Progress::Bar(bar) => {
                if outcome != "ok" {
                    bar.println(format!("{} {}: {outcome}", run.id, describe(run)));
                }
                bar.inc(1);
            }
        }
    }

    /// Says that `added` more runs are planned (the next look of a sampled session).
    pub fn planned_more(&self, added: usize, text: &str) {
        match self {
            Progress::Quiet => {}
            Progress::Lines { total } => {
                total.set(total.get() + added);
                eprintln!("{text}");
            }
            Progress::Bar(bar) => {
                bar.inc_length(added as u64);
                bar.println(text);
            }
        }
    }

    /// A note that is not about one run.
    pub fn note(&self, text: &str) {
        match self {
            Progress::Quiet => {}
            Progress::Lines { .. } => eprintln!("{text}"),
            Progress::Bar(bar) => bar.println(text),
        }
    }

    pub fn done(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

fn describe(run: &PlannedRun) -> String {
    let params: Vec<String> = run
        .cell
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let kind = if run.warmup { "warm-up" } else { "rep" };
    format!(
        "{} {} ({kind} {})",
        run.cell.variant,
        params.join(" "),
        run.repetition
    )
}
