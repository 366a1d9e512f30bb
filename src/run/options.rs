//! What `lab run` was asked to do, as the command line gave it.

use super::slurm::Engine;

/// What `lab run` was asked to do.
pub struct RunOptions<'a> {
    pub profile: Option<&'a str>,
    pub dry_run: bool,
    pub resume: bool,
    pub quiet: bool,
    /// Print the closing summary as JSON instead of text.
    pub json: bool,
    /// The command line as typed, recorded in the manifest.
    pub command_line: String,
    /// `--revs BASE,HEAD`: measure the experiment at these two git revisions, interleaved.
    pub revs: Option<&'a [String]>,
    /// Changes between revisions within ± this share count as noise.
    pub threshold: f64,
    /// Confirm a regression between revisions with a second interleaved session.
    pub confirm: bool,
    /// `--until-decided MAX`: with `--revs`, add runs to the cells still inconclusive, look by
    /// look, up to MAX per cell.
    pub until_decided: Option<u32>,
    /// A name for the session, shown in its history.
    pub label: Option<&'a str>,
    /// Where the runs are measured: here, or on a cluster's nodes.
    pub on: Engine,
    /// `--jobs N`: up to N runs execute at once, on disjoint CPUs (1: one at a time).
    pub jobs: usize,
    /// `--duet`: with `--revs`, each base run executes at the same time as a head run.
    pub duet: bool,
    /// Print the closing summary (off when the caller prints its own, as `lab bench` does).
    pub summary: bool,
    /// `--no-wait`: after a disturbed run, start the next at once rather than waiting for the
    /// machine to calm.
    pub no_wait: bool,
    /// `--budget`: how long a sampled session's runs may take, over lab.toml's `budget`.
    pub budget: Option<std::time::Duration>,
    /// How progress is shown (`quiet` wins).
    pub shown: lab_exec::Shown,
}

impl RunOptions<'_> {
    /// A new session of the default profile, with the command line recorded as `command_line`.
    pub fn new(command_line: String) -> RunOptions<'static> {
        RunOptions {
            profile: None,
            dry_run: false,
            resume: false,
            quiet: false,
            json: false,
            command_line,
            revs: None,
            threshold: lab_judge::compare::DEFAULT_THRESHOLD,
            confirm: false,
            until_decided: None,
            label: None,
            on: Engine::Local,
            jobs: 1,
            duet: false,
            summary: true,
            no_wait: false,
            budget: None,
            shown: lab_exec::Shown::standard(false),
        }
    }
}
