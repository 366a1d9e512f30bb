//! What `lab run` checks before anything is built or runs: that lab may run the experiment
//! here, with the CPUs, `--jobs` and engine asked for, that the files its chapter reads can
//! be read, and that no other lab writes it.

use super::options::RunOptions;
use super::slurm::{self, Engine};
use crate::error::{LabError, Result};
use crate::layout::Layout;
use lab_config::{CheckClass, Experiment, Goal};
use lab_exec as exec;
use lab_store::{self as store, Lock};

/// An experiment of results another harness measured is imported, never run.
pub fn check_runnable(exp: &Experiment) -> Result<()> {
    match &exp.imported {
        Some(tool) => Err(LabError::Usage(format!(
            "{} holds results measured by {tool}: lab does not run it\n  hint: `lab import` adds a session of {tool} results; `lab report {}` renders the chapter",
            exp.file.display(),
            exp.name
        ))),
        None => Ok(()),
    }
}

/// notes.md and references.bib, which the chapter reads once the runs are done, can be read:
/// a FIFO, a folder or a device where one goes is the author's to fix before the runs, not
/// after them. A missing file is no notes; any other failure is reported where it is read.
pub(super) fn check_authored(dir: &std::path::Path) -> Result<()> {
    for name in [store::SEALED_NOTES, store::SEALED_REFERENCES] {
        let path = dir.join(name);
        if let Err(e) = lab_config::folder_file::open(&path)
            && e.kind() == std::io::ErrorKind::InvalidInput
        {
            return Err(LabError::Usage(format!("{}: {e}", path.display())));
        }
    }
    Ok(())
}

/// A new session not across revisions, sampled until decided, needs a hypothesis check to
/// decide (with `--revs` it decides the comparison of the two revisions instead).
pub(super) fn check_decidable(exp: &Experiment) -> Result<()> {
    let decided = exp
        .sampling
        .as_ref()
        .is_some_and(|s| s.goal == Goal::Decided);
    let hypotheses = exp.checks.iter().any(|c| c.class == CheckClass::Hypothesis);
    if !decided || hypotheses {
        return Ok(());
    }
    Err(LabError::Usage(format!(
        "{}: `experiment.stop`: the goal \"decided\" needs a hypothesis check to decide\n  hint: declare a `compare` or `scaling` check, stop on precision: stop = {{ half_width = \"2%\" }}, or run with --revs BASE,HEAD to sample until the two revisions' comparison is decided",
        exp.file.display()
    )))
}

/// Every CPU a variant asks for exists and may be used here; checked before anything runs.
pub(super) fn check_cpus(exp: &Experiment) -> Result<()> {
    let allowed = exec::allowed_cpus();
    for (i, v) in exp.variants.iter().enumerate() {
        let missing: Vec<String> = v
            .cpus
            .iter()
            .flatten()
            .filter(|c| !allowed.contains(c))
            .map(ToString::to_string)
            .collect();
        if !missing.is_empty() {
            let at = (v.cpus_declared_at.clone()).unwrap_or_else(|| exp.file.display().to_string());
            return Err(LabError::Usage(format!(
                "{at}: `variant[{}].cpus` of {}: CPU {} cannot be used on this machine (lab may use CPUs {})\n  hint: choose CPUs from that list, or leave `cpus` out",
                i + 1,
                v.name,
                missing.join(", "),
                super::revs::cpu_list(&allowed)
            )));
        }
    }
    Ok(())
}

/// A duet runs two processes at once here: a Slurm task runs its shard one run at a time.
pub(super) fn check_duet(opts: &RunOptions) -> Result<()> {
    if opts.duet && matches!(opts.on, Engine::Slurm(_)) {
        return Err(LabError::Usage(
            "--duet cannot be combined with --on slurm: each Slurm task runs its shard one run at a time\n  hint: drop --duet, or measure the duet on one machine".into(),
        ));
    }
    Ok(())
}

/// With `--jobs N` above 1, every variant must be pinned to CPUs: runs execute side by side
/// only where they cannot share one. Checked before anything runs. Runs of variants whose
/// CPUs overlap still run one at a time, which a note says when it leaves nothing in parallel.
pub(super) fn check_jobs(
    exp: &Experiment,
    opts: &RunOptions,
    across_revisions: bool,
) -> Result<()> {
    if opts.jobs <= 1 {
        return Ok(());
    }
    if matches!(opts.on, Engine::Slurm(_)) {
        return Err(LabError::Usage(format!(
            "--jobs {} cannot be combined with --on slurm: each Slurm task holds a whole node and runs its shard one run at a time\n  hint: drop --jobs; --nodes N spreads the runs over N nodes",
            opts.jobs
        )));
    }
    if across_revisions {
        return Err(LabError::Usage(format!(
            "--jobs {} cannot be combined with --revs: the two revisions' runs of a variant are pinned to the same CPUs, and lab compares revisions only on runs measured one at a time\n  hint: drop --jobs",
            opts.jobs
        )));
    }
    if let Some(v) = exp
        .variants
        .iter()
        .find(|v| v.hooks.prepare.is_some() || v.hooks.conclude.is_some())
    {
        return Err(LabError::Usage(format!(
            "{}: variant {} has a `prepare` or `conclude` command, which runs between its runs, so with --jobs {} it would run beside other runs\n  hint: drop --jobs",
            exp.file.display(),
            v.name,
            opts.jobs
        )));
    }
    if let Some((i, v)) = exp
        .variants
        .iter()
        .enumerate()
        .find(|(_, v)| v.cpus.is_none())
    {
        return Err(LabError::Usage(format!(
            "{}: `variant[{}]` ({}) declares no `cpus`, so with --jobs {} its runs could share CPUs with the runs beside them\n  hint: give every variant disjoint `cpus` (e.g. cpus = \"0\" and cpus = \"1\"), or drop --jobs",
            exp.file.display(),
            i + 1,
            v.name,
            opts.jobs
        )));
    }
    let apart = exp.variants.iter().enumerate().any(|(i, a)| {
        exp.variants[i + 1..]
            .iter()
            .any(|b| exec::disjoint(a.cpus.as_deref(), b.cpus.as_deref()))
    });
    if !apart && !opts.quiet {
        eprintln!(
            "note: no two variants of {} have disjoint `cpus`, so its runs still execute one at a time",
            exp.name
        );
    }
    Ok(())
}

/// A cluster measures one build: `--revs` runs only here, and `--on slurm` needs Slurm's
/// commands.
pub(super) fn check_engine(opts: &RunOptions) -> Result<()> {
    if opts.on == Engine::Local {
        return Ok(());
    }
    if opts.revs.is_some() {
        return Err(LabError::Usage(
            "--revs measures two builds side by side on this machine; it does not run --on slurm"
                .into(),
        ));
    }
    slurm::available()
}

/// The locks a measuring session holds until it ends: the experiment's writer lock and, when
/// measuring here and no other session holds it, the machine's (released first).
pub(super) struct Locks {
    _machine: Option<Lock>,
    _writer: Lock,
}

/// The protections the experiment asks for around its runs and builds, held while they run
/// (a cluster's nodes set up their own). `strict` where they cannot be had: a usage error
/// naming the key.
pub(super) fn contain(
    layout: &Layout,
    exp: &Experiment,
    opts: &RunOptions,
) -> Result<Option<exec::Containment>> {
    if opts.on != Engine::Local {
        return Ok(None);
    }
    exec::Containment::enter(&layout.root, exp.isolation.wanted)
        .map(Some)
        .map_err(|why| match &exp.isolation.declared_at {
            Some(at) => LabError::Usage(format!(
                "{at}: {why}; run as root (or where mount namespaces and cgroups are allowed), or set isolation = \"auto\""
            )),
            None => LabError::Usage(why),
        })
}

/// Opens each counter the experiment asks for on lab itself, before any run: what the
/// machine lacks is recorded as unavailable; what the kernel forbids refuses the session, a
/// usage error naming `perf_event_paranoid` and what to do.
pub(super) fn counters(exp: &Experiment) -> Result<std::collections::BTreeMap<String, String>> {
    let mut states = std::collections::BTreeMap::new();
    for (counter, verdict) in exec::probe_counters(&exp.counters) {
        let name = counter.def().name.to_string();
        let state = match verdict {
            Ok(()) => "available".to_string(),
            Err(exec::Refusal::Unavailable(why)) => format!("unavailable: {why}"),
            Err(exec::Refusal::Forbidden(why)) => {
                return Err(LabError::Usage(forbidden(exp, &name, &why)));
            }
        };
        states.insert(name, state);
    }
    if exp.counters.contains(&exec::Counter::CallgrindInstructions) {
        let version =
            exec::probe_callgrind().map_err(|why| LabError::Usage(no_valgrind(exp, &why)))?;
        let name = exec::Counter::CallgrindInstructions.def().name.to_string();
        states.insert(name, format!("available: {version}"));
    }
    Ok(states)
}

/// Why the session cannot count instructions with callgrind, and what to do.
fn no_valgrind(exp: &Experiment, why: &str) -> String {
    let at = exp
        .counters_declared_at
        .as_deref()
        .map_or_else(String::new, |at| format!("{at}: `experiment.counters`: "));
    format!(
        "{at}`callgrind-instructions` runs every run under valgrind, which cannot be run here ({why})\n  hint: install valgrind (Debian and Ubuntu: `apt install valgrind`), or leave `callgrind-instructions` out of counters"
    )
}

/// Why the session cannot count `name`, and what to do.
fn forbidden(exp: &Experiment, name: &str, why: &str) -> String {
    let at = exp
        .counters_declared_at
        .as_deref()
        .map_or_else(String::new, |at| format!("{at}: `experiment.counters`: "));
    format!(
        "{at}the kernel forbids counting `{name}` for this user ({why}); {}\n  hint: allow it with `sudo sysctl kernel.perf_event_paranoid=1` (or run lab with CAP_PERFMON), or leave `{name}` out of counters",
        exec::perf_paranoid()
    )
}

impl Locks {
    /// The experiment's writer lock, then the machine's when the runs are measured here.
    pub(super) fn take(layout: &Layout, exp: &Experiment, opts: &RunOptions) -> Result<Locks> {
        let writer = writer_lock(layout, exp, &opts.command_line)?;
        let machine = match opts.on {
            Engine::Local => machine_lock(exp, &opts.command_line, opts.quiet)?,
            Engine::Slurm(_) => None,
        };
        Ok(Locks {
            _machine: machine,
            _writer: writer,
        })
    }
}

/// The experiment's writer lock, or a refusal naming who holds it.
fn writer_lock(layout: &Layout, exp: &Experiment, command: &str) -> Result<Lock> {
    match store::lock_experiment(&layout.data_dir(&exp.name), command)? {
        Ok(lock) => Ok(lock),
        Err(held) => Err(LabError::Usage(format!(
            "{} is being written by another lab ({}); one session of an experiment runs at a time\n  hint: wait for it to finish, or stop it (Ctrl-C keeps its finished runs)",
            exp.name, held.holder
        ))),
    }
}

/// The machine-wide measuring lock; when another session holds it, a warning (two sessions
/// measuring at once disturb each other) and no lock.
fn machine_lock(exp: &Experiment, command: &str, quiet: bool) -> Result<Option<Lock>> {
    match store::lock_machine(&format!("{command} ({})", exp.name))? {
        Ok(lock) => Ok(Some(lock)),
        Err(held) => {
            if !quiet {
                eprintln!(
                    "warning: another lab session is measuring on this machine ({}); the two will disturb each other's timings",
                    held.holder
                );
            }
            Ok(None)
        }
    }
}

/// Unless quiet, warns of what on this machine would disturb the measurement.
pub(super) fn warn_about(host: &store::Host, quiet: bool) {
    if quiet {
        return;
    }
    for finding in exec::system_check(
        &exec::allowed_cpus(),
        host.governor.as_deref(),
        host.turbo.as_deref(),
    ) {
        eprintln!("warning: {finding}");
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn a_forbidden_counter_names_the_setting_its_value_and_what_to_do() {
        let source = "[experiment]\ntitle = \"t\"\nhypothesis = \"h\"\ncounters = [\"cycles\"]\n\n[[variant]]\nname = \"a\"\nrun = [\"prog\"]\n";
        let exp = lab_config::parse(source, Path::new("e/lab.toml"), Path::new("e"), None).unwrap();
        let message = super::forbidden(&exp, "cycles", "Permission denied (os error 13)");
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map_or_else(|_| String::new(), |v| v.trim().to_string());
        assert!(
            message.starts_with(&format!(
                "e/lab.toml:4:13: `experiment.counters`: the kernel forbids counting `cycles` for this user (Permission denied (os error 13)); /proc/sys/kernel/perf_event_paranoid is {paranoid}\n"
            )),
            "{message}"
        );
        assert!(
            message.ends_with("hint: allow it with `sudo sysctl kernel.perf_event_paranoid=1` (or run lab with CAP_PERFMON), or leave `cycles` out of counters"),
            "{message}"
        );
    }
}
