//! The untimed commands a variant declares around its runs (`prepare` before each, `conclude`
//! after each, `setup` once per cell before the first run, `cleanup` once per cell after the
//! last), run through the same runner as
//! the runs, so they are contained like them. Their output is not part of the record; a
//! failing one stops the session, as a failing build does, with the tail of what it printed.

use super::measure::{RunRequest, Runner};
use lab_config::plan::PlannedRun;
use lab_config::{Experiment, ParamValue, template::substitute};
use lab_store::Exit;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Lines of a failing hook's output shown in the error.
const TAIL_LINES: usize = 20;

/// Which hook of a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hook {
    Prepare,
    Conclude,
    Setup,
    Cleanup,
}

impl Hook {
    fn key(self) -> &'static str {
        match self {
            Hook::Prepare => "prepare",
            Hook::Conclude => "conclude",
            Hook::Setup => "setup",
            Hook::Cleanup => "cleanup",
        }
    }
}

/// Runs the `setup` command of every cell among `runs` that declares one, once each, in the
/// order of the cells' first runs.
pub(crate) fn set_up(
    exp: &Experiment,
    runs: &[PlannedRun],
    runner: &mut dyn Runner,
) -> anyhow::Result<()> {
    once_per_cell(exp, runs, Hook::Setup, runner)
}

/// Runs the `cleanup` command of every cell among `runs` that declares one, once each, after
/// the session's last run, from the cell whose last run came last.
pub fn clean_up(
    exp: &Experiment,
    runs: &[PlannedRun],
    runner: &mut dyn Runner,
) -> anyhow::Result<()> {
    once_per_cell(exp, runs.iter().rev(), Hook::Cleanup, runner)
}

fn once_per_cell<'a>(
    exp: &Experiment,
    runs: impl IntoIterator<Item = &'a PlannedRun>,
    hook: Hook,
    runner: &mut dyn Runner,
) -> anyhow::Result<()> {
    let mut done: BTreeSet<String> = BTreeSet::new();
    for run in runs {
        let declared = exp
            .variant(&run.cell.variant)
            .is_some_and(|v| declared(v, hook).is_some());
        if declared && done.insert(run.cell.to_string()) {
            around(exp, run, hook, runner)?;
        }
    }
    Ok(())
}

/// The command `variant` declares for `hook`.
fn declared(variant: &lab_config::Variant, hook: Hook) -> &Option<Vec<String>> {
    match hook {
        Hook::Prepare => &variant.hooks.prepare,
        Hook::Conclude => &variant.hooks.conclude,
        Hook::Setup => &variant.hooks.setup,
        Hook::Cleanup => &variant.hooks.cleanup,
    }
}

/// Runs `run`'s variant's `hook` command, when it declares one; an error when it fails.
pub(crate) fn around(
    exp: &Experiment,
    run: &PlannedRun,
    hook: Hook,
    runner: &mut dyn Runner,
) -> anyhow::Result<()> {
    let Some(variant) = exp.variant(&run.cell.variant) else {
        return Ok(());
    };
    let Some(argv) = declared(variant, hook) else {
        return Ok(());
    };
    let argv = with_values(argv, &run.cell.params);
    let logs = HookLogs::new();
    let measured = runner.run(&RunRequest {
        argv: &argv,
        env: std::borrow::Cow::Borrowed(&variant.env),
        cwd: exp.run_dir(&run.cell.params),
        cpus: None,
        timeout: exp.timeout,
        stdin: None,
        stdout: &logs.out,
        stderr: &logs.err,
        held_output: None,
        counters: &[],
    });
    let failure = match (&measured.exit, measured.timed_out) {
        (_, true) => Some(format!("timed out after {:?}", exp.timeout)),
        (Exit::Code(0), _) => None,
        (Exit::Code(c), _) => Some(format!("exit code {c}")),
        (Exit::Signal(s), _) => Some(format!("killed by signal {s}")),
        (Exit::SpawnFailed(e), _) => Some(e.clone()),
    };
    let Some(failure) = failure else {
        return Ok(());
    };
    Err(HookFailed(format!(
        "the {} command of variant {} ({}) failed {} run {}: {failure}{}\n  hint: fix the command in lab.toml; the runs before it are kept, and `lab run {} --resume` continues",
        hook.key(),
        variant.name,
        lab_config::shell_syntax::shell_words(&argv),
        if hook == Hook::Cleanup { "after" } else { "before" },
        run.id,
        logs.tail(),
        exp.dir.display()
    ))
    .into())
}

/// A declared hook failed: a mistake in lab.toml or the command, not lab's own failure.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HookFailed(String);

/// `argv` with its placeholders replaced by the cell's values.
fn with_values(argv: &[String], values: &BTreeMap<String, ParamValue>) -> Vec<String> {
    argv.iter().map(|a| substitute(a, values)).collect()
}

/// Where a hook's output goes: files of lab's own outside the record, removed afterwards.
struct HookLogs {
    out: PathBuf,
    err: PathBuf,
}

impl HookLogs {
    fn new() -> HookLogs {
        let base = std::env::temp_dir().join(format!("lab-hook-{}", std::process::id()));
        HookLogs {
            out: base.with_extension("out"),
            err: base.with_extension("err"),
        }
    }

    /// The last lines the hook printed on either stream, indented, for an error.
    fn tail(&self) -> String {
        let mut text = String::new();
        for path in [&self.err, &self.out] {
            let printed = std::fs::read(path).unwrap_or_default();
            let printed = String::from_utf8_lossy(&printed);
            let lines: Vec<&str> = printed.lines().collect();
            for line in &lines[lines.len().saturating_sub(TAIL_LINES)..] {
                text.push_str("\n    ");
                text.push_str(&lab_config::format::terminal(line));
            }
        }
        text
    }
}

impl Drop for HookLogs {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.out);
        let _ = std::fs::remove_file(&self.err);
    }
}
