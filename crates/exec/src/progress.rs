//! Progress on long sessions: a bar on a terminal, plain lines otherwise, nothing with
//! `--quiet`; each says when the session will likely end and at the latest. Updated only
//! between runs, never while one executes.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lab_config::plan::PlannedRun;
use lab_config::units::Nanos;
use std::cell::{Cell, RefCell};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How progress is shown, and whether each run's output is echoed after it.
pub struct Progress {
    form: Form,
    echo_output: bool,
}

/// What a session shows of its progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown {
    /// Nothing at all.
    pub quiet: bool,
    /// Where stderr is no terminal: a line per run and per note (else nothing until the end).
    pub run_lines: bool,
    /// A bar even where stderr is no terminal (`Some(true)`), or never (`Some(false)`).
    pub bar: Option<bool>,
    /// Each run's standard output and error, printed after it ends.
    pub echo_output: bool,
}

impl Shown {
    /// `lab run`'s way: a bar on a terminal, a line per run otherwise, nothing when `quiet`.
    pub fn standard(quiet: bool) -> Shown {
        Shown {
            quiet,
            run_lines: true,
            ..Shown::default()
        }
    }
}

enum Form {
    Quiet,
    Lines {
        total: Cell<usize>,
        eta: RefCell<Eta>,
        per_run: bool,
    },
    Bar(ProgressBar, RefCell<Eta>),
}

/// When a session will likely end: the later of what the sampling expects of the looks to
/// come and what the runs planned so far take at the pace of those done, never past the
/// budget. Indicatif's own ETA counts only the runs planned so far, not the looks to come.
#[derive(Debug, Default)]
pub(crate) struct Eta {
    started: Option<Instant>,
    /// Runs done and still planned.
    done: usize,
    total: usize,
    /// What the sampling expects after its latest look, from then.
    expected_end: Option<Instant>,
    /// The end of the time budget.
    latest_end: Option<Instant>,
    /// Hypotheses still open after the latest look.
    open: Option<usize>,
    /// Whether looks may follow the runs planned so far (a sampled session).
    sampled: bool,
}

impl Eta {
    fn new(total: usize) -> Eta {
        Eta {
            total,
            ..Eta::default()
        }
    }

    /// How long the session will likely still take, at `now`.
    fn likely_left(&self, now: Instant) -> Option<Duration> {
        let started = self.started?;
        let at_pace = (self.done > 0).then(|| {
            let per_run = now.duration_since(started).as_secs_f64() / self.done as f64;
            Duration::from_secs_f64(per_run * self.total.saturating_sub(self.done) as f64)
        });
        let expected = self
            .expected_end
            .map(|end| end.saturating_duration_since(now));
        let mut likely = at_pace.into_iter().chain(expected).max()?;
        if let (true, None, Some(end)) = (self.sampled, self.expected_end, self.latest_end) {
            // Before the first look is read nothing is known of the looks to come: the middle
            // of what the budget leaves after the runs planned.
            likely += end.saturating_duration_since(now).saturating_sub(likely) / 2;
        }
        Some(match self.latest_end {
            Some(end) => likely.min(end.saturating_duration_since(now)),
            None => likely,
        })
    }

    /// "3 open · ends in about 4 min 10 s, at most 8 min 30 s", or nothing before a pace is known.
    pub(crate) fn words(&self, now: Instant) -> Option<String> {
        let likely = self.likely_left(now)?;
        let mut out = String::new();
        if let Some(open) = self.open {
            out.push_str(&format!("{open} open · "));
        }
        out.push_str(&format!(
            "ends in about {}",
            lab_config::format::minutes(likely.as_secs_f64())
        ));
        if let Some(end) = self.latest_end {
            out.push_str(&format!(
                ", at most {}",
                lab_config::format::minutes(end.saturating_duration_since(now).as_secs_f64())
            ));
        }
        Some(out)
    }
}

impl Progress {
    /// Picks the form: quiet, a bar on an interactive stderr, lines otherwise.
    pub fn new(total: usize, quiet: bool) -> Self {
        Progress::shown(total, Shown::standard(quiet))
    }

    /// The form `shown` asks for.
    pub fn shown(total: usize, shown: Shown) -> Self {
        Progress {
            form: Form::of(total, shown),
            echo_output: shown.echo_output && !shown.quiet,
        }
    }

    /// Whether each run's output is printed after it.
    pub fn echoes_output(&self) -> bool {
        self.echo_output
    }

    /// Prints a run's standard output and error, as `--show-output` asks.
    pub fn output(&self, stdout: &[u8], stderr: &[u8]) {
        let mut text = String::from_utf8_lossy(stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(stderr));
        if text.is_empty() {
            return;
        }
        match &self.form {
            Form::Bar(bar, _) => bar.suspend(|| eprint!("{text}")),
            _ => eprint!("{text}"),
        }
    }
}

impl Form {
    fn of(total: usize, shown: Shown) -> Form {
        if shown.quiet {
            return Form::Quiet;
        }
        if !shown.bar.unwrap_or_else(|| std::io::stderr().is_terminal()) {
            return Form::Lines {
                total: Cell::new(total),
                eta: RefCell::new(Eta::new(total)),
                per_run: shown.run_lines,
            };
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        let style =
            ProgressStyle::with_template("{bar:30} {pos}/{len} runs, {elapsed} elapsed  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Form::Bar(bar, RefCell::new(Eta::new(total)))
    }
}

impl Progress {
    fn eta(&self) -> Option<&RefCell<Eta>> {
        match &self.form {
            Form::Quiet => None,
            Form::Lines { eta, .. } | Form::Bar(_, eta) => Some(eta),
        }
    }

    /// Starts the clock of the session's `runs` to go, which looks may follow where it is
    /// `sampled`; `budget`, where it has one, ends them at the latest.
    pub fn start_clock(&self, runs: usize, sampled: bool, budget: Option<Duration>) {
        if let Some(eta) = self.eta() {
            let mut eta = eta.borrow_mut();
            let now = Instant::now();
            eta.started = Some(now);
            eta.total = runs;
            eta.sampled = sampled;
            eta.latest_end = budget.map(|b| now + b);
        }
    }

    /// After a look: `open` hypotheses remain and the session will likely end `likely` from
    /// now.
    pub fn expect(&self, open: usize, likely: Duration) {
        if let Some(eta) = self.eta() {
            let mut eta = eta.borrow_mut();
            eta.open = Some(open);
            eta.expected_end = Some(Instant::now() + likely);
        }
    }

    /// Says what runs next, after when the session will likely end.
    pub fn starting(&self, run: &PlannedRun) {
        if let Form::Bar(bar, eta) = &self.form {
            let outlook = eta.borrow().words(Instant::now());
            let prefix = outlook.map_or(String::new(), |o| format!("{o} · "));
            bar.set_message(format!("{prefix}{}", describe(run)));
        }
    }

    /// Says how a run ended.
    pub fn finished(&self, run: &PlannedRun, wall_ns: u64, outcome: &str) {
        let outcome = &lab_config::format::terminal(outcome);
        if let Some(eta) = self.eta() {
            eta.borrow_mut().done += 1;
        }
        match &self.form {
            Form::Quiet | Form::Lines { per_run: false, .. } => {}
            Form::Lines {
                total,
                eta,
                per_run: true,
            } => {
                let outlook = eta.borrow().words(Instant::now());
                let line = format!(
                    "[{}/{}] {} {} {}{}\n",
                    run.position,
                    total.get(),
                    describe(run),
                    lab_config::format::seconds_fixed(Nanos(wall_ns).seconds()),
                    outcome,
                    outlook.map_or(String::new(), |o| format!(" · {o}"))
                );
                let _ = std::io::stderr().write_all(line.as_bytes());
            }
            Form::Bar(bar, _) => {
                if outcome != "ok" {
                    bar.println(format!("{} {}: {outcome}", run.id, describe(run)));
                }
                bar.inc(1);
            }
        }
    }

    /// Says that `added` more runs are planned (the next look of a sampled session).
    pub fn planned_more(&self, added: usize, text: &str) {
        if let Some(eta) = self.eta() {
            eta.borrow_mut().total += added;
        }
        match &self.form {
            Form::Quiet => {}
            Form::Lines { total, per_run, .. } => {
                total.set(total.get() + added);
                if *per_run {
                    eprintln!("{text}");
                }
            }
            Form::Bar(bar, _) => {
                bar.inc_length(added as u64);
                bar.println(text);
            }
        }
    }

    /// A note that is not about one run.
    pub fn note(&self, text: &str) {
        match &self.form {
            Form::Quiet => {}
            Form::Lines { per_run: false, .. } => {}
            Form::Lines { .. } => eprintln!("{text}"),
            Form::Bar(bar, _) => bar.println(text),
        }
    }

    pub fn done(&self) {
        if let Form::Bar(bar, _) = &self.form {
            bar.finish_and_clear();
        }
    }
}

/// "treiber threads=4 (rep 3)": the run's variant, its parameters and which run of its cell.
fn describe(run: &PlannedRun) -> String {
    let mut words = vec![run.cell.variant.to_string()];
    words.extend(run.cell.params.iter().map(|(k, v)| format!("{k}={v}")));
    let kind = if run.warmup { "warm-up" } else { "rep" };
    words.push(format!("({kind} {})", run.repetition));
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten runs done in ten seconds, ten to go, the budget ending in thirty.
    fn halfway(now: Instant, sampled: bool) -> Eta {
        Eta {
            started: Some(now - Duration::from_secs(10)),
            done: 10,
            total: 20,
            latest_end: Some(now + Duration::from_secs(30)),
            sampled,
            ..Eta::default()
        }
    }

    #[test]
    fn the_runs_planned_go_at_the_pace_so_far_and_looks_to_come_take_half_the_budget_left() {
        let now = Instant::now();
        let fixed = halfway(now, false);
        assert_eq!(
            fixed.words(now).unwrap(),
            "ends in about 10 s, at most 30 s"
        );
        let sampled = halfway(now, true);
        assert_eq!(
            sampled.words(now).unwrap(),
            "ends in about 20 s, at most 30 s",
            "10 s of runs planned, then half of the 20 s the budget leaves"
        );
    }

    fn run_of(variant: &str, params: &[(&str, i64)], warmup: bool) -> PlannedRun {
        let params = params
            .iter()
            .map(|(k, v)| (k.to_string(), lab_config::ParamValue::Int(*v)))
            .collect();
        PlannedRun {
            id: "r0001".into(),
            position: 1,
            cell: lab_config::plan::CellKey::new(variant, std::sync::Arc::new(params)),
            repetition: 3,
            warmup,
            argv: vec!["true".into()].into(),
            repeats: None,
            look: 1,
            env_padding: None,
            heap_shift: None,
        }
    }

    #[test]
    fn a_run_is_named_by_its_cell_with_single_spaces() {
        assert_eq!(describe(&run_of("sort", &[], false)), "sort (rep 3)");
        assert_eq!(
            describe(&run_of("treiber", &[("threads", 4), ("ops", 9)], true)),
            "treiber ops=9 threads=4 (warm-up 3)"
        );
    }

    #[test]
    fn after_a_look_its_expectation_counts_and_the_budget_caps_it() {
        let now = Instant::now();
        let mut eta = halfway(now, true);
        eta.open = Some(2);
        eta.expected_end = Some(now + Duration::from_secs(25));
        assert_eq!(
            eta.words(now).unwrap(),
            "2 open · ends in about 25 s, at most 30 s"
        );
        eta.expected_end = Some(now + Duration::from_secs(90));
        assert_eq!(
            eta.words(now).unwrap(),
            "2 open · ends in about 30 s, at most 30 s"
        );
        assert_eq!(Eta::new(5).words(now), None, "no clock, no words");
    }
}
