//! Every stored run, joined with its plan entry and samples, judged by the automatic rules.

use super::automatic::{Problem, RunFacts, echoed_config, problems, too_short};
use super::printed;
use lab_config::Experiment;
use lab_config::counter::Counter;
use lab_config::plan::{CellKey, PlannedRun};
use lab_config::units::Nanos;
use lab_findings::runs::{Measured, Names, RunValues, RunView, Usage};
use lab_store::{Exit, RunRow, SampleRow, StartUpCost, StoredSession};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// What judging does with the session's rows and samples: a caller that reads them after
/// (the bench summary and its exports, `lab logs`, the earlier looks of a sampled session)
/// keeps them; one that needs only the judged runs gives them up as they are judged (at
/// 100,000 runs, rows and views held together were half of `lab report`'s memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    Keep,
    GiveUp,
}

/// Runs judged per chunk when the rows are given up as they are judged.
const CHUNK: usize = 4_096;

/// Builds the views of every finished run, in execution order. With [`Rows::GiveUp`] each
/// chunk of rows is freed as soon as its views are built, so the rows and the views are never
/// held whole at the same time (at 100,000 runs each holds around 100 MB), and the session
/// keeps no rows or samples after.
pub fn run_views(exp: &Experiment, session: &mut StoredSession, rows: Rows) -> Vec<RunView> {
    if rows == Rows::Keep {
        let judging = Judging::of(exp, session, &session.runs, &session.samples);
        return in_execution_order(lab_store::held_open(|| judging.views(&session.runs)));
    }
    let mut rows = std::mem::take(&mut session.runs);
    let samples = std::mem::take(&mut session.samples);
    let session = &*session;
    let judging = Judging::of(exp, session, &rows, &samples);
    let mut views = Vec::with_capacity(rows.len());
    // Chunks are taken from the end, where a vector can give its room back.
    rows.reverse();
    lab_store::held_open(|| {
        while !rows.is_empty() {
            let mut chunk = rows.split_off(rows.len().saturating_sub(CHUNK));
            rows.shrink_to_fit();
            chunk.reverse();
            views.extend(judging.views(&chunk));
        }
    });
    drop(judging);
    drop(samples);
    lab_store::give_back_free_pages();
    in_execution_order(views)
}

/// `views` sorted by position; runs.csv holds them in that order already, and a sort would
/// take room for half of them.
fn in_execution_order(mut views: Vec<RunView>) -> Vec<RunView> {
    if !views.is_sorted_by_key(|v| v.position) {
        views.sort_by_key(|v| v.position);
    }
    views
}

/// What judging a run needs besides its row: its plan entry, the values it printed, the
/// shared metric names and, for runs that executed beside others, every run's CPUs. Plan
/// entries and values are found through lists sorted by run id (maps from run id to them held
/// 10 MB at 100,000 runs).
struct Judging<'s> {
    exp: &'s Experiment,
    session: &'s StoredSession,
    /// The planned runs by id; of runs planned twice under one id, the later is the one found.
    planned: Vec<&'s PlannedRun>,
    samples: &'s [SampleRow],
    /// Indices into `samples` by run id, each run's in the order of the file.
    by_run: Vec<u32>,
    names: Names,
    cpus: BTreeMap<String, Option<Vec<usize>>>,
}

impl<'s> Judging<'s> {
    fn of(
        exp: &'s Experiment,
        session: &'s StoredSession,
        rows: &[RunRow],
        samples: &'s [SampleRow],
    ) -> Judging<'s> {
        let mut by_run: Vec<u32> = (0..samples.len() as u32).collect();
        by_run.sort_by(|a, b| {
            samples[*a as usize]
                .run_id
                .cmp(&samples[*b as usize].run_id)
        });
        let mut planned: Vec<&PlannedRun> = session.plan.runs.iter().collect();
        planned.sort_by(|a, b| a.id.cmp(&b.id));
        let names = Names::of(
            exp.metrics
                .iter()
                .map(|m| m.name.as_str())
                .chain(BUILTIN_NAMES)
                .chain(Counter::ALL.iter().map(|c| c.def().metric)),
        );
        Judging {
            exp,
            session,
            planned,
            samples,
            by_run,
            names,
            cpus: cpus_by_run(exp, session, rows),
        }
    }

    /// The plan entry of run `id`.
    fn plan_of(&self, id: &str) -> Option<&'s PlannedRun> {
        let after = self.planned.partition_point(|p| p.id.as_str() <= id);
        let plan = *self.planned.get(after.checked_sub(1)?)?;
        (plan.id == id).then_some(plan)
    }

    /// The sample rows of run `id`, in the order of the file.
    fn samples_of(&self, id: &str) -> Vec<&'s SampleRow> {
        let samples = self.samples;
        let from = self
            .by_run
            .partition_point(|i| samples[*i as usize].run_id.as_str() < id);
        self.by_run[from..]
            .iter()
            .map(|i| &samples[*i as usize])
            .take_while(|s| s.run_id == id)
            .collect()
    }

    /// The views of the planned runs among `rows`, in the order of `rows`. Each run is judged
    /// on its own (its log read, its values parsed): in parallel, collected in order, so the
    /// result does not depend on the scheduling.
    fn views(&self, rows: &[RunRow]) -> Vec<RunView> {
        let stored: Vec<(&RunRow, &PlannedRun)> = rows
            .iter()
            .filter_map(|row| Some((row, self.plan_of(&row.run_id)?)))
            .collect();
        stored
            .into_par_iter()
            .map_init(
                || self.names.apart(),
                |names, (row, plan)| {
                    let values = self.samples_of(&row.run_id);
                    let (exp, session) = (self.exp, self.session);
                    let cell = plan.cell.clone();
                    let mut v = view(exp, session, row, &self.cpus, cell, &values, names);
                    v.repeats = plan.repeats.clone();
                    v.env_padding = row.env_padding.or(plan.env_padding);
                    // Only the row: a run whose heap could not be shifted records none.
                    v.heap_shift = row.heap_shift;
                    v
                },
            )
            .collect()
    }
}

/// The CPUs each run was pinned to: as granted, for stored runs; as its variant declares, for
/// a planned run that executed beside a stored one but was not stored (a stop cut it short).
/// Only runs that executed beside others look them up: none when every run ran alone.
fn cpus_by_run(
    exp: &Experiment,
    session: &StoredSession,
    rows: &[RunRow],
) -> BTreeMap<String, Option<Vec<usize>>> {
    if rows.iter().all(|r| r.overlapped_ids().next().is_none()) {
        return BTreeMap::new();
    }
    let mut cpus: BTreeMap<String, Option<Vec<usize>>> = session
        .plan
        .runs
        .iter()
        .map(|r| {
            let declared = exp.variant(&r.cell.variant).and_then(|v| v.cpus.clone());
            (r.id.clone(), declared)
        })
        .collect();
    for row in rows {
        cpus.insert(row.run_id.to_string(), row.cpu_set());
    }
    cpus
}

/// What the machine's disturbance of a run means for its wall-time value: the share of that
/// value its waiting may account for, and whether that is beyond `max_busy`. Where a start-up
/// is taken out of every wall time, the same waiting is a larger share of what is left.
struct Weighed {
    slowed: f64,
    disturbed: bool,
}

impl Weighed {
    /// `busy_share`: the share of its wall time the run waited, where it could be judged.
    fn of(
        row: &RunRow,
        busy_share: Option<f64>,
        exp: &Experiment,
        session: &StoredSession,
    ) -> Weighed {
        let (Some(share), true) = (busy_share, session.manifest.keeps_disturbed()) else {
            return Weighed {
                slowed: 0.0,
                disturbed: false,
            };
        };
        let left = start_up(session).map_or(1.0, |c| {
            let wall = row.wall_ns as f64;
            (wall - c.median_ns as f64).max(wall * 0.01) / wall
        });
        // At least `share`: what is left of the wall time is at most all of it.
        let of_value = (share / left).min(1.0);
        Weighed {
            slowed: if guarded(row, exp) { of_value } else { 0.0 },
            disturbed: of_value > row.busy_limit.unwrap_or(exp.legacy_max_busy),
        }
    }
}

/// The run is too short to time, where the session has a timing floor and lab.toml does not
/// time runs whole or take a start-up out (`start_up`).
fn under_the_floor(exp: &Experiment, session: &StoredSession, row: &RunRow) -> Option<Problem> {
    let c = session.manifest.calibration.as_ref()?;
    exp.start_up.is_floor().then(|| too_short(row.wall_ns, c))?
}

/// The start-up the session takes out of every run's wall time (lab.toml's `start_up`).
fn start_up(session: &StoredSession) -> Option<&StartUpCost> {
    session
        .manifest
        .calibration
        .as_ref()
        .and_then(|c| c.start_up.as_ref())
}

/// Whether `ignore_failure` makes `problem` no problem: an exit code it ignores (every
/// non-zero one, or one it lists).
fn ignored_exit(exp: &Experiment, problem: &Problem) -> bool {
    match problem {
        Problem::ExitCode(code) => exp.ignore_failure || exp.ignored_exit_codes.contains(code),
        _ => false,
    }
}

fn view(
    exp: &Experiment,
    session: &StoredSession,
    row: &RunRow,
    cpus: &BTreeMap<String, Option<Vec<usize>>>,
    cell: CellKey,
    samples: &[&SampleRow],
    names: &Names,
) -> RunView {
    let judged = judge_run(exp, session, row, cpus, &cell, samples);
    run_view(exp, session, row, cell, judged, names)
}

/// What judging a run found: how it ended, its values (numbers as printed read once, plain
/// after), what lab measured of it, whether it echoed its configuration, and its problems.
struct Judged<'r> {
    exit: Exit,
    values: BTreeMap<String, Vec<String>>,
    measured: Vec<(&'r str, Measured)>,
    echoed: bool,
    found: Vec<Problem>,
}

/// Applies every automatic rule to one run, in the order its problems are listed.
fn judge_run<'r>(
    exp: &Experiment,
    session: &StoredSession,
    row: &'r RunRow,
    cpus: &BTreeMap<String, Option<Vec<usize>>>,
    cell: &CellKey,
    samples: &[&SampleRow],
) -> Judged<'r> {
    let exit = row.exit();
    let values = printed_values(samples);
    let measured = if matches!(exit, Exit::SpawnFailed(_)) {
        Vec::new()
    } else {
        builtin_values(row, session.manifest.keeps_disturbed(), start_up(session))
    };
    let (mut found, printed) = printed_problems(exp, session, row, &exit, &values);
    if !session.manifest.keeps_disturbed() {
        found.extend(super::automatic::machine_busy(row, exp.legacy_max_busy));
    }
    found.extend(super::automatic::shared_cpus(row, cpus));
    // Numbers as printed ("5,194,253", "12.5ms") are read once, here; later stages see plain
    // numbers. Values that cannot be read stay as printed, and the run is invalid.
    let mut values = normalise_numbers(exp, values);
    found.extend(impossible_in(exp, session, row, &values));
    found.extend(super::derived::derive(exp, &mut values, &measured));
    found.extend(under_the_floor(exp, session, row));
    let (echoed, mismatches) = echoed_config(&printed.config, &cell.params);
    found.extend(mismatches);
    Judged {
        exit,
        values,
        measured,
        echoed,
        found,
    }
}

/// How the run ended and what it printed, judged: the problems its exit, its output and its
/// values show, explained by where its output was printed.
fn printed_problems(
    exp: &Experiment,
    session: &StoredSession,
    row: &RunRow,
    exit: &Exit,
    values: &BTreeMap<String, Vec<String>>,
) -> (Vec<Problem>, printed::Printed) {
    let pairs: Vec<(&str, &str)> = values
        .iter()
        .flat_map(|(m, vs)| vs.iter().map(move |v| (m.as_str(), v.as_str())))
        .collect();
    let facts = RunFacts {
        exit,
        timed_out: row.timed_out,
        suspended_ns: row.boottime_ns.saturating_sub(row.wall_ns),
        left_running: row.left_running.as_deref(),
        values: &pairs,
    };
    let mut found = problems(&facts, &exp.metrics);
    // `ignore_failure`: an exit code (any, or those listed) is the program's answer, not a
    // failed run.
    found.retain(|p| !ignored_exit(exp, p));
    let stdout = session.stdout(row);
    let printed = printed::read(&stdout, &exp.metrics, &printed::to_locate(&found));
    printed::explain(&mut found, &printed, &exp.metrics);
    (found, printed)
}

/// The judged run as later stages see it.
fn run_view(
    exp: &Experiment,
    session: &StoredSession,
    row: &RunRow,
    cell: CellKey,
    judged: Judged,
    names: &Names,
) -> RunView {
    let Judged {
        exit,
        values,
        measured,
        echoed,
        found,
    } = judged;
    let busy_share = row.contention().ok().map(|c| c.share());
    let weighed = Weighed::of(row, busy_share, exp, session);
    RunView {
        id: row.run_id.to_string(),
        position: row.position,
        cell,
        repetition: row.repetition,
        warmup: row.warmup,
        wall_s: Nanos(row.wall_ns).seconds().0,
        exit: describe_exit(&exit),
        stdout_sha256: row.stdout_sha256.clone(),
        echoed_config: echoed,
        busy_share,
        slowed: weighed.slowed,
        disturbed: weighed.disturbed,
        reshaped: weighed.disturbed && guarded(row, exp) && row.wait_tasks.is_some_and(|n| n >= 2),
        exact_wait: row.wait_tasks.is_some_and(|n| n <= 1)
            && row
                .contention()
                .is_ok_and(|c| c.source == lab_store::WaitSource::Tasks),
        repeats: None,
        overlapped: row.overlapped_ids().map(str::to_string).collect(),
        failed_checks: found.iter().map(|p| p.check_name().to_string()).collect(),
        timing_only: found.iter().map(Problem::timing_only).collect(),
        problems: found.iter().map(ToString::to_string).collect(),
        values: RunValues::from_parts(values, measured, names),
        env_padding: None,
        heap_shift: None,
        node: row
            .node
            .as_ref()
            .filter(|n| !n.is_empty())
            .map(ToString::to_string),
        usage: Usage::of(row),
    }
}

/// Whether the run was recorded with the busy-machine guard on: a `max_busy` of 100% turns it
/// off, and what the machine did to the run is then recorded but not weighed.
pub(super) fn guarded(row: &RunRow, exp: &Experiment) -> bool {
    row.busy_limit.unwrap_or(exp.max_busy) < 1.0
}

/// The values a run printed, by metric.
fn printed_values(samples: &[&SampleRow]) -> BTreeMap<String, Vec<String>> {
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in samples {
        values
            .entry(s.metric.to_string())
            .or_default()
            .push(s.value.to_string());
    }
    values
}

fn describe_exit(exit: &Exit) -> String {
    match exit {
        Exit::Code(c) => format!("exit {c}"),
        Exit::Signal(s) => format!("signal {s}"),
        Exit::SpawnFailed(_) => "not started".into(),
    }
}

fn normalise_numbers(
    exp: &Experiment,
    mut values: BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Vec<String>> {
    for metric in exp.metrics.iter().filter(|m| !m.text && m.is_printed()) {
        if let Some(list) = values.get_mut(&metric.name) {
            for v in list.iter_mut() {
                if let Ok(x) = lab_config::format::parse_value(v, &metric.unit) {
                    *v = x.to_string();
                }
            }
        }
    }
    values
}

/// The names of the metrics lab measures itself, as [`builtin_values`] gives them.
const BUILTIN_NAMES: [&str; 12] = [
    "wall_s",
    "user_s",
    "sys_s",
    "cpu_s",
    "wait_s",
    "max_rss_mib",
    "voluntary_cs",
    "involuntary_cs",
    "minor_faults",
    "major_faults",
    "block_in",
    "block_out",
];

/// The metrics lab measured itself, in seconds, MiB and counts. A count the session did not
/// record (a runs.csv from before its column) is absent, not zero; so is `wait_s` where the
/// session does not weigh its runs' waiting (`weighs_waiting`). `wall_s` leaves out the
/// `start_up` the session measured, where lab.toml names one.
fn builtin_values(
    row: &RunRow,
    weighs_waiting: bool,
    start_up: Option<&StartUpCost>,
) -> Vec<(&'static str, Measured)> {
    let seconds = |ns: u64| Measured::Number(Nanos(ns).seconds().0);
    let own_wall = Measured::Number(
        Nanos(row.wall_ns).seconds().0 - start_up.map_or(0.0, |c| c.median_ns as f64 / 1e9),
    );
    let [
        wall,
        user,
        sys,
        cpu,
        wait,
        rss,
        vcs,
        ics,
        minor,
        major,
        bin,
        bout,
    ] = BUILTIN_NAMES;
    // `wait_s` is the waiting each verdict weighs: sessions recorded before lab weighed it
    // judged others' share of the CPUs instead, and have no such figure.
    let waited = row
        .contention()
        .ok()
        .filter(|_| weighs_waiting)
        .map(|c| c.waited * row.wall_ns as f64 / 1e9);
    let recorded = [
        (minor, row.minor_faults),
        (major, row.major_faults),
        (bin, row.block_in),
        (bout, row.block_out),
    ];
    [
        (wall, own_wall),
        (user, seconds(row.user_ns)),
        (sys, seconds(row.sys_ns)),
        (cpu, seconds(row.user_ns + row.sys_ns)),
        (rss, Measured::Number(row.max_rss_kib as f64 / 1024.0)),
        (vcs, Measured::count(row.voluntary_cs)),
        (ics, Measured::count(row.involuntary_cs)),
    ]
    .into_iter()
    .chain(waited.map(|w| (wait, Measured::Number(w))))
    .chain(
        recorded
            .into_iter()
            .filter_map(|(name, v)| Some((name, Measured::count(v?)))),
    )
    .chain(counter_values(row))
    .collect()
}

/// The perf counters the run recorded, as their metrics: task-clock in seconds, the others
/// as counted. A counter not recorded (not asked for, unavailable) has no value.
fn counter_values(row: &RunRow) -> impl Iterator<Item = (&'static str, Measured)> + '_ {
    Counter::ALL.into_iter().filter_map(|c| {
        let count = row.counter(c.def().name)?;
        Some((c.def().metric, Measured::Number(c.metric_value(count))))
    })
}

/// A time the run printed beyond its own wall and CPU time, unless lab.toml turned the check
/// off or the run was imported (its wall time is what the other tool recorded, if anything).
fn impossible_in(
    exp: &Experiment,
    session: &StoredSession,
    row: &RunRow,
    values: &BTreeMap<String, Vec<String>>,
) -> Option<Problem> {
    if session.manifest.imported.is_some() || exp.skips(lab_config::skip::IMPOSSIBLE_TIMES) {
        return None;
    }
    super::impossible::impossible_time(
        &exp.metrics,
        values,
        Nanos(row.wall_ns).seconds().0,
        Nanos(row.user_ns + row.sys_ns).seconds().0,
    )
}
