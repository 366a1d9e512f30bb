//! Stage 3: build once, calibrate, then run every planned run in its own process, storing each
//! as it finishes. Nothing is analysed or rendered between runs.

mod build;
mod build_log;
mod calibrate;
mod callgrind;
mod calm;
mod cgroup;
mod clock;
mod counters;
mod disturbers;
mod duties;
mod heap;
mod hooks;
mod interrupt;
mod isolation;
mod landlock;
mod machine;
mod measure;
mod metrics;
mod orphans;
mod parallel;
mod pid_namespace;
mod privileges;
mod process;
mod progress;
mod running;
mod shebang;
pub mod slurm;
mod sources;
mod spawn;
mod syscheck;
pub(crate) mod taskstats;

pub use build::{BuildError, build, tail};
pub use calibrate::{calibrate, start_up_cost};
pub use callgrind::probe as probe_callgrind;
pub use counters::{Reading, Refusal, paranoid as perf_paranoid, probe as probe_counters};
pub use disturbers::{Watch as DisturberWatch, watch as watch_disturbers};
pub use heap::unshifted as heap_unshifted;
pub use hooks::{HookFailed, clean_up};
pub use interrupt::{restore_default as restore_signals, signal as interrupt_signal};
pub use isolation::{Containment, Wanted, current_record as current_isolation};
pub use lab_config::counter::Counter;
pub use machine::MachineLoad;
pub use measure::{Measurement, Paging, RunRequest, Runner};
pub use metrics::MetricReader;
pub use parallel::{disjoint, execute_duet, execute_side_by_side};
pub use privileges::shield_from_runs;
pub use process::{ProcessRunner, allowed_cpus, spawn_error};
pub use progress::{Progress, Shown};
pub use shebang::locate as locate_program;
pub use sources::{
    Change as SourceChangeKind, SourceChange, build_changed, changes as source_changes,
    record as record_sources,
};
pub use syscheck::system_check;
pub use taskstats::TaskWait;

use anyhow::Result;
use duties::Duty;
use lab_config::Experiment;
use lab_config::plan::PlannedRun;
use lab_store::{Exit, Manifest, RunRow, SessionWriter, utc_timestamp};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// How a session's run loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Complete,
    Interrupted,
    /// A run changed the session's own files; lab restored them and stopped.
    Damaged(String),
}

impl Ending {
    /// Writes into the manifest how the run loop ended: now, complete or not, and why it was
    /// damaged.
    pub fn record(&self, manifest: &mut Manifest) {
        manifest.end(*self == Ending::Complete);
        if let Ending::Damaged(why) = self {
            manifest.damaged = Some(why.clone());
        }
    }
}

/// Runs `runs` in order, appending each to the session as it finishes. Nothing is judged
/// here: the validity stage reads what was stored. After a run that waited for a CPU others
/// had for more than `max_busy` of its wall time, the next waits up to `calm_wait` for the
/// machine to calm.
pub fn execute(
    exp: &Experiment,
    runs: &[PlannedRun],
    session: &mut SessionWriter,
    runner: &mut dyn Runner,
    progress: &Progress,
) -> Result<Ending> {
    interrupt::install();
    orphans::become_subreaper();
    let _shield = privileges::SignalShield::raise();
    cgroup::remove_stale();
    duties::start();
    let ending = run_in_turn(exp, runs, session, runner, progress);
    duties::report(runs.len());
    cgroup::remove_all();
    session.remove_spools();
    ending
}

/// The loop of [`execute`]: each run writes into two files of its own, packed under its name
/// once it has ended (at most `max_output` bytes of each).
fn run_in_turn(
    exp: &Experiment,
    runs: &[PlannedRun],
    session: &mut SessionWriter,
    runner: &mut dyn Runner,
    progress: &Progress,
) -> Result<Ending> {
    let reader = MetricReader::new(&exp.metrics);
    let mut calm = calm::Calm::new(exp.calm_wait, exp.max_busy);
    let (spool_out, spool_err) = session.spool_paths();
    hooks::set_up(exp, runs, runner)?;
    for run in runs {
        duties::begin(Duty::Planning);
        if interrupt::requested() || calm.before_run(progress) == calm::Waited::Interrupted {
            return Ok(Ending::Interrupted);
        }
        hooks::around(exp, run, hooks::Hook::Prepare, runner)?;
        progress.starting(run);
        let outputs = session.run_outputs()?;
        let measurement = runner.run(&RunRequest {
            held_output: Some([&outputs[0], &outputs[1]]),
            ..request(exp, run, &spool_out, &spool_err)
        });
        if interrupt::requested() {
            // The run was cut short by the user: it is not a measurement.
            return Ok(Ending::Interrupted);
        }
        duties::begin(Duty::CheckingRoom);
        refuse_on_full_disk(exp, run, session)?;
        duties::begin(Duty::Verifying);
        let changes = session.verify()?;
        if progress.echoes_output() {
            progress.output(&echoed(&outputs[0]), &echoed(&outputs[1]));
        }
        duties::begin(Duty::Packing);
        let packed = session.pack_outputs(&run.id, &outputs, exp.max_output)?;
        duties::begin(Duty::ReadingValues);
        let (row, samples) = stored_row(exp, &reader, run, &measurement, session, &packed);
        duties::begin(Duty::Appending);
        session.append(run, &row, &samples)?;
        duties::begin(Duty::Concluding);
        progress.finished(run, measurement.wall_ns, &outcome(&measurement));
        hooks::around(exp, run, hooks::Hook::Conclude, runner)?;
        if !changes.is_empty() {
            return Ok(Ending::Damaged(format!(
                "run {} changed the session's files: {}",
                run.id,
                changes.join(", ")
            )));
        }
        calm.after_run(row.contention().ok().map(|c| c.share()));
    }
    Ok(Ending::Complete)
}

/// What a run wrote into `output`, from its start, for `--show-output`.
fn echoed(output: &std::fs::File) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut text = output;
    let _ = std::io::Seek::rewind(&mut text);
    let _ = std::io::Read::read_to_end(&mut text, &mut bytes);
    bytes
}

/// Stops the session when the file system holding it filled up during `run`: the run may
/// have failed, or printed less than it meant to, for want of room, so it is not recorded
/// (`--resume` runs it again) and no later run starts into the full disk.
fn refuse_on_full_disk(
    exp: &Experiment,
    run: &PlannedRun,
    session: &mut SessionWriter,
) -> Result<()> {
    let Some(free) = lab_store::space::full(session.free_bytes()) else {
        return Ok(());
    };
    session.remove_spools();
    anyhow::bail!(
        "the file system holding {} is full ({} free): run {} is not recorded, since a full disk may have made it fail or cut its output short; the runs before it are kept\n  hint: free some space, then `lab run {} --resume` runs it and the rest",
        session.dir.display(),
        lab_config::format::memory(free as f64),
        run.id,
        exp.name
    )
}

/// What to run for `run`: its command, environment, CPUs, limits and log files.
fn request<'a>(
    exp: &'a Experiment,
    run: &'a PlannedRun,
    stdout: &'a std::path::Path,
    stderr: &'a std::path::Path,
) -> RunRequest<'a> {
    static NO_ENV: std::sync::OnceLock<BTreeMap<String, String>> = std::sync::OnceLock::new();
    let variant = exp.variant(&run.cell.variant);
    let declared = variant.map_or_else(|| NO_ENV.get_or_init(Default::default), |v| &v.env);
    RunRequest {
        argv: &run.argv,
        env: run_env(declared, run.env_padding, heap::shift(exp, run)),
        cwd: exp.run_dir(&run.cell.params),
        cpus: variant.and_then(|v| v.cpus.as_deref()),
        timeout: exp.timeout,
        stdin: variant.and_then(|v| v.input.as_deref()),
        stdout,
        stderr,
        held_output: None,
        counters: &exp.counters,
    }
}

/// The variables a run is given: its variant's, and its layout padding and heap shift where
/// the layout is randomised. These are set last: a variant that declares the variables itself
/// cannot take the place of the drawn values that are recorded for the run. The shift is
/// written with four digits, so that it does not change the environment's size; the shim is
/// preloaded after the libraries the variant (or else lab's own environment) preloads.
fn run_env<'a>(
    declared: &'a BTreeMap<String, String>,
    padding: Option<u32>,
    heap: Option<(u32, &std::path::Path)>,
) -> Cow<'a, BTreeMap<String, String>> {
    use lab_config::plan::layout::{HEAP_VAR, PAD_VAR, pad_value};
    if padding.is_none() && heap.is_none() {
        return Cow::Borrowed(declared);
    }
    let mut env = declared.clone();
    if let Some(bytes) = padding {
        env.insert(PAD_VAR.to_string(), pad_value(bytes));
    }
    if let Some((shift, shim)) = heap {
        let inherited = std::env::var(heap::PRELOAD_VAR).ok();
        let existing = declared.get(heap::PRELOAD_VAR).cloned().or(inherited);
        env.insert(HEAP_VAR.to_string(), format!("{shift:04}"));
        env.insert(
            heap::PRELOAD_VAR.to_string(),
            heap::preload(existing.as_deref(), shim),
        );
    }
    Cow::Owned(env)
}

/// The stored row of a measured run.
pub fn run_row(
    run: &PlannedRun,
    m: &Measurement,
    stdout_sha256: String,
    busy_limit: f64,
) -> RunRow {
    let (exit_code, signal, spawn_error) = match &m.exit {
        Exit::Code(c) => (Some(*c), None, None),
        Exit::Signal(s) => (None, Some(*s), None),
        Exit::SpawnFailed(e) => (None, None, Some(e.clone())),
    };
    let mut row = RunRow {
        run_id: run.id.as_str().into(),
        position: run.position,
        variant: run.cell.variant.as_str().into(),
        repetition: run.repetition,
        warmup: run.warmup,
        start_utc: utc_timestamp(m.start_unix_ms).into(),
        wall_ns: m.wall_ns,
        boottime_ns: m.boottime_ns,
        user_ns: m.user_ns,
        sys_ns: m.sys_ns,
        max_rss_kib: m.max_rss_kib,
        voluntary_cs: m.voluntary_cs,
        involuntary_cs: m.involuntary_cs,
        exit_code,
        signal,
        spawn_error,
        timed_out: m.timed_out,
        cpus: m.cpus_granted.as_deref().map(cpu_list),
        stdout_sha256,
        left_running: (!m.left_running.is_empty()).then(|| m.left_running.join(" ")),
        host_busy_ns: m.machine.map(|l| l.busy_ns),
        host_steal_ns: m.machine.map(|l| l.steal_ns),
        host_capacity_ns: m.machine.map(|l| l.capacity_ns),
        psi_cpu_some_us: m.machine.and_then(|l| l.psi_some_us),
        psi_cpu_own_us: m.machine.and_then(|l| l.own_psi_some_us),
        busy_limit: Some(busy_limit),
        throttle_events: m.machine.and_then(|l| l.throttle_events),
        samples: None,
        node: None,
        start_boottime_ns: (m.start_boottime_ns > 0).then_some(m.start_boottime_ns),
        overlapped: None,
        env_padding: run.env_padding,
        minor_faults: m.paging.map(|p| p.minor_faults),
        major_faults: m.paging.map(|p| p.major_faults),
        block_in: m.paging.map(|p| p.block_in),
        block_out: m.paging.map(|p| p.block_out),
        wait_ns: m.wait.map(|w| w.ns),
        wait_tasks: m.wait.map(|w| w.tasks),
        wait_share: m.wait.and_then(|w| w.share),
        ..RunRow::default()
    };
    record_counters(&mut row, &m.counters);
    row
}

/// The CPUs a run was granted, as its row lists them: "0 2 3".
fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The counters read after the run, in their columns; a counter that could not be read stays
/// empty (never zero), and those the kernel multiplexed are named.
fn record_counters(
    row: &mut RunRow,
    counters: &std::collections::BTreeMap<Counter, std::result::Result<Reading, String>>,
) {
    let mut multiplexed = Vec::new();
    for (counter, reading) in counters {
        let Ok(reading) = reading else { continue };
        row.set_counter(counter.def().name, reading.value);
        if reading.multiplexed {
            multiplexed.push(counter.def().name);
        }
    }
    row.set_counters_multiplexed((!multiplexed.is_empty()).then(|| multiplexed.join(" ")));
}

/// The row of a run whose output was just packed, and the values its stdout holds.
fn stored_row(
    exp: &Experiment,
    reader: &MetricReader,
    run: &PlannedRun,
    measurement: &Measurement,
    session: &SessionWriter,
    packed: &lab_store::Packed,
) -> (RunRow, Vec<lab_store::SampleRow>) {
    use lab_store::{Stream, log_ref};
    let mut row = run_row(run, measurement, packed.stdout.sha256.clone(), exp.max_busy);
    row.heap_shift = heap::shift(exp, run).map(|(bytes, _)| bytes);
    row.packed(packed);
    let samples = reader.read_values(&log_ref(&session.dir, &row, Stream::Stdout), &run.id);
    (row, samples)
}

/// How the process ended, for the progress line (a fact, not a verdict).
fn outcome(m: &Measurement) -> String {
    match (&m.exit, m.timed_out) {
        (_, true) => "timed out".into(),
        (Exit::Code(0), _) => "ok".into(),
        (Exit::Code(c), _) => format!("exit code {c}"),
        (Exit::Signal(s), _) => format!("killed by signal {s}"),
        (Exit::SpawnFailed(e), _) => e.clone(),
    }
    .to_string()
        + &if m.left_running.is_empty() {
            String::new()
        } else {
            format!("; left running: {}", m.left_running.join(" "))
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_padded_run_gets_its_padding_over_whatever_its_variant_declares() {
        let declared = BTreeMap::from([
            ("LAB_LAYOUT_PAD".to_string(), "a variant's own".to_string()),
            ("OTHER".to_string(), "kept".to_string()),
        ]);
        let env = run_env(&declared, Some(5), None);
        assert_eq!(env["LAB_LAYOUT_PAD"], "xxxxx");
        assert_eq!(env["OTHER"], "kept");
        assert!(!env.contains_key("LAB_HEAP_SHIFT"));
        assert_eq!(run_env(&declared, Some(0), None)["LAB_LAYOUT_PAD"], "");
        // Without a padding the variant's variables are passed as they are, not copied.
        assert!(matches!(run_env(&declared, None, None), Cow::Borrowed(e) if *e == declared));
    }

    #[test]
    fn a_shifted_run_preloads_the_shim_after_its_variants_libraries() {
        let shim = std::path::Path::new("/tmp/lab-heap-0/heap-shift-0.so");
        let declared = BTreeMap::from([
            ("LAB_HEAP_SHIFT".to_string(), "a variant's own".to_string()),
            ("LD_PRELOAD".to_string(), "libmine.so".to_string()),
        ]);
        let env = run_env(&declared, Some(3), Some((48, shim)));
        assert_eq!(
            env["LAB_HEAP_SHIFT"], "0048",
            "four digits whatever the shift"
        );
        assert_eq!(
            run_env(&declared, None, Some((4080, shim)))["LAB_HEAP_SHIFT"],
            "4080"
        );
        assert_eq!(
            env["LD_PRELOAD"],
            "libmine.so:/tmp/lab-heap-0/heap-shift-0.so"
        );
        assert_eq!(env["LAB_LAYOUT_PAD"], "xxx");
    }
}
