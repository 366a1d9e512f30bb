//! `lab ci`: a pull request's answer. The checkout's head is measured against its merge-base
//! with the branch it goes into (`--base main`), both revisions' runs interleaved in one
//! session per experiment, sampled until each cell is decided or has `--max-runs`, and a
//! slowdown measured again before it is reported. The answer goes where reviewers look: a
//! Markdown comment, the job's step summary (`$GITHUB_STEP_SUMMARY`) and the files
//! dashboards read (Bencher's BMF, github-action-benchmark's custom JSON).

use super::run_command::{Compared as Chaptered, run_compared, typed_command};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use crate::run::{RunOptions, exists_at, merge_base};
use lab_exec::{ProcessRunner, Runner};
use lab_judge::bisect::short;
use lab_judge::compare::Comparison;
use lab_render::pull_request::{Measured, PullRequest, Standing};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The most characters of an error an experiment's row shows.
const ROW_WORDS: usize = 300;

/// The variable GitHub Actions names the step summary's file by.
const STEP_SUMMARY: &str = "GITHUB_STEP_SUMMARY";

#[derive(Debug, clap::Args)]
pub struct CiArgs {
    /// The experiments to measure (folders or names); every experiment of the project when
    /// none is named.
    pub experiments: Vec<PathBuf>,
    /// The branch the pull request goes into: the head is measured against its merge-base
    /// with it, so that what landed there since does not count as the pull request's change.
    #[arg(long, default_value = "main")]
    pub base: String,
    #[command(flatten)]
    pub deciding: Deciding,
    /// Write the answer as Markdown for a pull request comment.
    #[arg(long, value_name = "FILE")]
    pub comment: Option<PathBuf>,
    /// Where the book is published: the comment links each experiment to its chapter.
    #[arg(long)]
    pub url: Option<String>,
    /// Write the head's values and the ratios in Bencher's metric format (BMF JSON).
    #[arg(long, value_name = "FILE")]
    pub bmf: Option<PathBuf>,
    /// Write the head's values as github-action-benchmark's `customSmallerIsBetter` JSON (and
    /// metrics where higher is better as `customBiggerIsBetter`, beside it in
    /// FILE-bigger.json).
    #[arg(long, value_name = "FILE")]
    pub github_benchmark: Option<PathBuf>,
    /// Exit 1 also when a cell stays inconclusive.
    #[arg(long)]
    pub fail_on_inconclusive: bool,
    /// Report a slowdown at once instead of measuring it again in a second session.
    #[arg(long)]
    pub no_confirm: bool,
}

/// How each comparison of two revisions is decided, for `lab ci` and `lab bisect`.
#[derive(Debug, Clone, clap::Args)]
pub struct Deciding {
    /// Changes within ± this share count as the same ("5%" or 0.05). Shared CI machines
    /// rarely resolve less.
    #[arg(long, default_value = "5%", value_parser = super::value_parsers::threshold)]
    pub threshold: f64,
    /// Sample each undecided cell up to this many runs per revision (a cell stops as soon as
    /// it is decided).
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_runs: u32,
    /// How long each comparison's runs may take ("10m", "90s"), over lab.toml's `budget`.
    #[arg(long, value_name = "DURATION", value_parser = super::value_parsers::budget)]
    pub budget: Option<Duration>,
}

impl Deciding {
    /// `opts` with the revisions `revs` measured and sampled as asked.
    pub(super) fn options<'a>(&self, revs: &'a [String], quiet: bool) -> RunOptions<'a> {
        RunOptions {
            quiet,
            revs: Some(revs),
            threshold: self.threshold,
            until_decided: Some(self.max_runs),
            budget: self.budget,
            summary: false,
            shown: lab_exec::Shown::standard(quiet),
            ..RunOptions::new(typed_command())
        }
    }
}

impl CiArgs {
    /// `lab ci`: measures the pull request, writes its answer, and exits 1 on a confirmed
    /// slowdown beyond the threshold.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        ci(layout, &self, quiet, &mut ProcessRunner)
    }
}

/// One experiment's outcome.
struct Outcome {
    name: String,
    measured: std::result::Result<Compared, String>,
    /// Whether the outcome should fail the check: an error measuring it.
    error: Option<Exit>,
}

/// An experiment's head compared with the merge-base, and what measuring it used.
struct Compared {
    comparison: Comparison,
    used: String,
}

/// `lab ci` with `runner` timing the runs.
pub fn ci(layout: &Layout, args: &CiArgs, quiet: bool, runner: &mut dyn Runner) -> Result<Exit> {
    let [base_commit, head_commit] = merge_base(&layout.root, &args.base)?;
    if !quiet && crate::run::uncommitted(&layout.root) {
        eprintln!(
            "note: the working tree has changes not committed: lab ci measures HEAD's commit, {}, without them",
            short(&head_commit)
        );
    }
    let dirs = chosen_dirs(layout, &args.experiments)?;
    let measuring = Measuring {
        layout,
        args,
        base_commit: &base_commit,
        quiet,
    };
    let mut outcomes = Vec::new();
    for dir in &dirs {
        outcomes.push(if base_commit == head_commit {
            let why = "the head is the merge-base: nothing changed to compare";
            unmeasured(lab_config::experiment_name(dir), why)
        } else {
            measuring.outcome(dir, runner)?
        });
    }
    let pr = PullRequest {
        base: &args.base,
        base_commit: &base_commit,
        head_commit: &head_commit,
        threshold: args.deciding.threshold,
        url: args.url.as_deref(),
        experiments: outcomes.iter().map(measured).collect(),
    };
    write_answer(&pr, args, quiet)?;
    Ok(exit_of(&outcomes, args.fail_on_inconclusive))
}

/// The experiments named, or every experiment of the project.
fn chosen_dirs(layout: &Layout, named: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if named.is_empty() {
        let all = layout.experiment_dirs();
        if all.is_empty() {
            return Err(LabError::Usage(format!(
                "{} holds no experiment\n  hint: lab new NAME",
                layout.experiments().display()
            )));
        }
        return Ok(all);
    }
    named.iter().map(|n| layout.experiment_dir(n)).collect()
}

/// What every experiment is measured with.
struct Measuring<'a> {
    layout: &'a Layout,
    args: &'a CiArgs,
    base_commit: &'a str,
    quiet: bool,
}

impl Measuring<'_> {
    /// One experiment measured across the two revisions, or why not. A signal stops
    /// `lab ci`.
    fn outcome(&self, dir: &Path, runner: &mut dyn Runner) -> Result<Outcome> {
        let name = lab_config::experiment_name(dir);
        if !exists_at(dir, self.base_commit, Path::new("./lab.toml")) {
            let why = "new in this pull request: the merge-base has no such experiment";
            return Ok(unmeasured(name, why));
        }
        let (measured, error) = match self.compared(dir, runner) {
            Ok(c) => (Ok(c), None),
            Err(e) if matches!(e.exit(), Exit::Signal(_)) => return Err(e),
            Err(e) => (Err(row_words(&e.to_string())), Some(e.exit())),
        };
        Ok(Outcome {
            name,
            measured,
            error,
        })
    }

    /// `lab run DIR --revs MERGE-BASE,HEAD`, sampled until decided and confirmed, then the
    /// newest session's comparison.
    fn compared(&self, dir: &Path, runner: &mut dyn Runner) -> Result<Compared> {
        let revs = [short(self.base_commit).to_string(), "HEAD".to_string()];
        let opts = RunOptions {
            confirm: !self.args.no_confirm,
            ..self.args.deciding.options(&revs, self.quiet)
        };
        let started = Instant::now();
        let revised = across_revisions(self.layout, dir, &opts, runner)?;
        let used = used(&revised.comparison, &revised.manifest, started.elapsed());
        let comparison = revised.comparison;
        Ok(Compared { comparison, used })
    }
}

/// A session across two revisions, as stored.
pub(super) struct Revised {
    /// Its head revision's cells against its base revision's.
    pub comparison: Comparison,
    pub session: String,
    pub manifest: lab_store::Manifest,
}

/// `lab run DIR --revs …` as `opts` asks, then the newest session's comparison of its two
/// revisions, as its chapter found it.
pub(super) fn across_revisions(
    layout: &Layout,
    dir: &Path,
    opts: &RunOptions,
    runner: &mut dyn Runner,
) -> Result<Revised> {
    let (_, compared) = run_compared(layout, dir, opts, runner)?;
    let Chaptered {
        session,
        comparison,
    } = compared
        .ok_or_else(|| LabError::Other(anyhow::anyhow!("the session has no comparison")))?;
    let session_dir = layout
        .data_dir(&lab_config::experiment_name(dir))
        .join(&session);
    let manifest = lab_store::load_manifest(&session_dir)?;
    Ok(Revised {
        comparison,
        session,
        manifest,
    })
}

/// An error as a table row can hold it: its first line, and the line after where the first
/// announces it ("its output:"), cut to [`ROW_WORDS`] characters.
fn row_words(error: &str) -> String {
    let mut lines = error.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut words = lines.next().unwrap_or_default().to_string();
    if words.ends_with(':')
        && let Some(next) = lines.next()
    {
        words = format!("{words} {next}");
    }
    match words.char_indices().nth(ROW_WORDS) {
        Some((cut, _)) => format!("{}…", &words[..cut]),
        None => words,
    }
}

/// An experiment left unmeasured for `why`, which is no failure.
fn unmeasured(name: String, why: &str) -> Outcome {
    Outcome {
        name,
        measured: Err(why.to_string()),
        error: None,
    }
}

/// "40 runs compared, 12.3 s of measuring, on AMD EPYC 7B13 (2 CPUs)", saying where a
/// slowdown was measured again.
fn used(c: &Comparison, manifest: &lab_store::Manifest, took: Duration) -> String {
    let runs: usize = c.cells.iter().map(|x| x.a_runs + x.b_runs).sum();
    let host = &manifest.host;
    let cpu = host.cpu_model.as_deref().unwrap_or("an unnamed CPU");
    let confirmed = manifest
        .revisions
        .as_ref()
        .is_some_and(|r| r.confirms.is_some());
    let (seconds, cpus) = (
        lab_config::format::seconds(took.as_secs_f64()),
        host.logical_cpus,
    );
    if confirmed {
        format!(
            "{runs} runs compared, in a second session that measured the slowdown again; {seconds} of measuring in both, on {cpu} ({cpus} CPUs)"
        )
    } else {
        format!("{runs} runs compared, {seconds} of measuring, on {cpu} ({cpus} CPUs)")
    }
}

fn measured(o: &Outcome) -> Measured<'_> {
    Measured {
        name: &o.name,
        outcome: o
            .measured
            .as_ref()
            .map(|c| &c.comparison)
            .map_err(Clone::clone),
        used: o.measured.as_ref().ok().map(|c| c.used.clone()),
    }
}

/// The comment printed and written where asked, and the exports.
fn write_answer(pr: &PullRequest, args: &CiArgs, quiet: bool) -> Result<()> {
    let comment = lab_render::pull_request::comment(pr);
    if !quiet {
        print!("{comment}");
    }
    if let Some(path) = &args.comment {
        write(path, &comment, quiet)?;
    }
    if let Some(summary) = std::env::var_os(STEP_SUMMARY).filter(|s| !s.is_empty()) {
        append(Path::new(&summary), &comment)?;
    }
    if let Some(path) = &args.bmf {
        let bmf = lab_render::pull_request::bencher_metrics(pr);
        write(path, &pretty(&bmf)?, quiet)?;
    }
    if let Some(path) = &args.github_benchmark {
        write_github_benchmark(pr, path, quiet)?;
    }
    Ok(())
}

/// github-action-benchmark's two custom inputs: smaller-is-better in `path`, and
/// bigger-is-better beside it where a metric is better higher.
fn write_github_benchmark(pr: &PullRequest, path: &Path, quiet: bool) -> Result<()> {
    use lab_render::pull_request::github_benchmark;
    write(path, &pretty(&github_benchmark(pr, "lower"))?, quiet)?;
    let bigger = github_benchmark(pr, "higher");
    if bigger.as_array().is_some_and(|a| !a.is_empty()) {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        let beside = path.with_file_name(format!("{stem}-bigger.json"));
        write(&beside, &pretty(&bigger)?, quiet)?;
    }
    Ok(())
}

fn pretty(value: &serde_json::Value) -> Result<String> {
    let mut text = serde_json::to_string_pretty(value).map_err(anyhow::Error::from)?;
    text.push('\n');
    Ok(text)
}

fn write(path: &Path, text: &str, quiet: bool) -> Result<()> {
    std::fs::write(path, text)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot write {}: {e}", path.display())))?;
    if !quiet {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn append(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| {
            LabError::Other(anyhow::anyhow!(
                "cannot append to {} (${STEP_SUMMARY}): {e}",
                path.display()
            ))
        })
}

/// An error measuring an experiment wins; then a slowdown fails the check, and, if asked, so
/// does a cell left undecided.
fn exit_of(outcomes: &[Outcome], fail_on_inconclusive: bool) -> Exit {
    if let Some(error) = outcomes
        .iter()
        .filter_map(|o| o.error)
        .max_by_key(|e| e.code())
    {
        return error;
    }
    let standings: Vec<Standing> = outcomes
        .iter()
        .filter_map(|o| o.measured.as_ref().ok())
        .map(|c| Standing::of(&c.comparison))
        .collect();
    let failed = standings.contains(&Standing::Slower)
        || (fail_on_inconclusive && standings.contains(&Standing::Undecided));
    Exit::failed_if(failed)
}
