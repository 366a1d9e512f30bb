//! The real runner: one process per run in its own process group, a blocking `poll` on its
//! process file descriptor that kills the whole group at the deadline (a watchdog thread where
//! the kernel has no pidfd), then `wait4` for its resource usage.

use super::clock::Instant2;
use super::counters::Reading;
use super::duties::Duty;
use super::machine::{Counters, MachineLoad};
use super::measure::{Measurement, Paging, RunRequest, Runner};
use super::spawn::{Output, Ready, Spawn, Started};
use lab_config::counter::Counter;
use lab_config::units::{NANOS_PER_MILLI, Nanos};
use lab_store::Exit;
use std::collections::BTreeMap;
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Spawns real processes.
#[derive(Debug, Default)]
pub struct ProcessRunner;

impl Runner for ProcessRunner {
    fn run(&mut self, request: &RunRequest) -> Measurement {
        run_process(request, Alone::Yes)
    }

    fn concurrent(&self) -> Option<Box<dyn Runner + Send>> {
        Some(Box::new(BesideOthers))
    }

    fn waiting(&self) -> Option<String> {
        Some(super::taskstats::method_words())
    }
}

/// A [`ProcessRunner`] for one of several runs executing at once (`--jobs`): its process
/// group is registered while it runs, so a stop signal kills it and the other runs'
/// clean-ups spare it.
#[derive(Debug)]
struct BesideOthers;

impl Runner for BesideOthers {
    fn run(&mut self, request: &RunRequest) -> Measurement {
        run_process(request, Alone::No(&mut || {}))
    }

    fn run_announced(&mut self, request: &RunRequest, spawned: &mut dyn FnMut()) -> Measurement {
        run_process(request, Alone::No(spawned))
    }
}

/// Whether a run is the only one executing; if not, what to call once it is spawned.
enum Alone<'a> {
    Yes,
    No(&'a mut dyn FnMut()),
}

/// Spawns, waits for and measures one process.
fn run_process(request: &RunRequest, mut alone: Alone) -> Measurement {
    super::duties::begin(Duty::Preparing);
    let start_unix_ms = unix_ms();
    let mut group = super::cgroup::RunGroup::take_if_enabled();
    let (mut perf, callgrind) = match counting(request) {
        Ok(counting) => counting,
        Err(why) => return Measurement::spawn_failed(why, start_unix_ms),
    };
    let argv = callgrind.as_ref().map_or(request.argv, |c| c.argv());
    let start_with = match prepare(request, argv, group.as_ref(), perf.as_mut()) {
        Ok(s) => s,
        Err(e) => return Measurement::spawn_failed(e, start_unix_ms),
    };
    let before = Before::sample(request, &alone, group.as_mut());
    super::duties::begin(Duty::Preparing);
    let window = super::taskstats::open_window();
    let ready = super::spawn::prepare(start_with);
    super::duties::begin(Duty::Running);
    let (start, started) = match start_timed(ready, &mut alone) {
        Ok(started) => started,
        Err(e) => {
            if let Some(group) = group {
                group.give_back();
            }
            let why = spawn_error(&request.argv[0], &e, request.cwd, &request.env);
            return Measurement::spawn_failed(why, start_unix_ms);
        }
    };
    let mut run = Run {
        start,
        start_unix_ms,
        cpus_granted: request.cpus.map(|_| granted_cpus(started.pid)),
        started,
        window,
        group,
        before,
    };
    let mut ended = wait_until(run.started.pid, request.timeout, run.window.is_none());
    let end = ended.end;
    let reaped = reap(&mut run, &mut ended, perf, &alone);
    with_callgrind_count(measurement(run, ended, end, reaped), callgrind)
}

/// What counts the run's instructions: its perf counters, prepared, and the folder callgrind
/// writes its profiles into, where the run goes under callgrind.
fn counting(
    request: &RunRequest,
) -> Result<
    (
        Option<super::counters::Prepared>,
        Option<super::callgrind::OutFiles>,
    ),
    String,
> {
    let perf = super::counters::Prepared::new(request.counters)
        .map_err(|e| format!("cannot prepare the run's counters: {e}"))?;
    let callgrind = super::callgrind::OutFiles::for_argv(request.argv)
        .map_err(|e| format!("cannot make a folder for callgrind's profiles: {e}"))?;
    Ok((perf, callgrind))
}

/// `measured` with the instructions callgrind counted in the profiles it wrote, where the run
/// went under callgrind.
fn with_callgrind_count(
    mut measured: Measurement,
    callgrind: Option<super::callgrind::OutFiles>,
) -> Measurement {
    if let Some(callgrind) = callgrind {
        let count = callgrind.instructions().map(|value| Reading {
            value,
            multiplexed: false,
        });
        let count = count.ok_or_else(|| "callgrind wrote no profile".to_string());
        measured
            .counters
            .insert(Counter::CallgrindInstructions, count);
    }
    measured
}

/// The machine as a run found it: the CPUs it runs on, their counters, how many processes
/// had been forked, and how long its cgroup's tasks had waited.
struct Before {
    cpus: Vec<usize>,
    sample: Option<Counters>,
    forks: Option<u64>,
    group_waited: Option<u64>,
}

impl Before {
    /// Read just before the run is prepared for its start; a run alone reuses the previous
    /// run's closing sample where it is recent enough.
    fn sample(
        request: &RunRequest,
        alone: &Alone,
        group: Option<&mut super::cgroup::RunGroup>,
    ) -> Before {
        let group_waited = group.and_then(super::cgroup::RunGroup::waited_us);
        let cpus = request.cpus.map_or_else(allowed_cpus, <[usize]>::to_vec);
        super::duties::begin(Duty::SamplingBefore);
        let sample = match alone {
            Alone::Yes => recent_sample(&cpus).or_else(|| super::machine::sample(&cpus)),
            Alone::No(_) => super::machine::sample(&cpus),
        };
        let forks = sample.as_ref().and_then(Counters::forks);
        Before {
            cpus,
            sample,
            forks,
            group_waited,
        }
    }
}

/// A run that has started: when, on which CPUs, and what to read once it has ended.
struct Run {
    start: Instant2,
    start_unix_ms: u64,
    cpus_granted: Option<Vec<usize>>,
    started: Started,
    window: Option<super::taskstats::Window>,
    group: Option<super::cgroup::RunGroup>,
    before: Before,
}

/// What is read of a run once it has been reaped.
struct Reaped {
    after: Option<Counters>,
    own_waited: Option<u64>,
    used: Used,
    wait: Option<super::taskstats::TaskWait>,
    counters: BTreeMap<Counter, Result<Reading, String>>,
    left_running: Vec<String>,
}

/// The machine's counters after the run, its resource usage, its waiting and its counters,
/// and whatever it left running, killed.
fn reap(
    run: &mut Run,
    ended: &mut Ended,
    perf: Option<super::counters::Prepared>,
    alone: &Alone,
) -> Reaped {
    let (pid, cpus) = (run.started.pid, &run.before.cpus);
    super::duties::begin(Duty::SamplingAfter);
    let after = super::machine::sample(cpus);
    if let (Alone::Yes, Some(after)) = (alone, after) {
        keep_sample(cpus, after);
    }
    super::duties::begin(Duty::Reaping);
    let own_waited = own_wait(
        run.group.take(),
        run.started.in_cgroup,
        run.before.group_waited,
    );
    let used = Used::of(&ended.usage);
    let wait = match run.window.take() {
        Some(window) => super::taskstats::close_window(window, pid, matches!(alone, Alone::Yes)),
        None => ended
            .leader
            .take()
            .and_then(|l| l.wait_if_whole(used.user_ns + used.sys_ns)),
    };
    // Taken and read only now that the run is reaped: nothing of it was timed.
    let counters = perf
        .map(super::counters::Prepared::read)
        .unwrap_or_default();
    let forks_after = after.as_ref().and_then(Counters::forks);
    let left_running = match alone {
        Alone::Yes => super::orphans::reap_leftovers_alone(
            pid,
            run.before.forks,
            forks_after,
            ended.lab_created,
        ),
        Alone::No(_) => reap_beside_others(pid, run.before.forks),
    };
    Reaped {
        after,
        own_waited,
        used,
        wait,
        counters,
        left_running,
    }
}

/// The measurement of a run that ended at `end`.
fn measurement(run: Run, ended: Ended, end: Instant2, reaped: Reaped) -> Measurement {
    let (start, used) = (run.start, reaped.used);
    Measurement {
        wall_ns: end.monotonic - start.monotonic,
        boottime_ns: end.boottime - start.boottime,
        start_boottime_ns: start.boottime,
        user_ns: used.user_ns,
        sys_ns: used.sys_ns,
        max_rss_kib: used.max_rss_kib,
        voluntary_cs: used.voluntary_cs,
        involuntary_cs: used.involuntary_cs,
        paging: Some(used.paging),
        exit: decode_status(ended.status),
        counters: reaped.counters,
        timed_out: ended.timed_out,
        cpus_granted: run.cpus_granted,
        left_running: reaped.left_running,
        start_unix_ms: run.start_unix_ms,
        machine: run
            .before
            .sample
            .zip(reaped.after)
            .map(|(b, a)| MachineLoad {
                own_psi_some_us: reaped.own_waited,
                ..super::machine::between(&b, &a, super::machine::tick_ns())
            }),
        wait: reaped.wait,
    }
}

/// What `wait4` counted of a run, its children's included, in the measurement's units.
struct Used {
    user_ns: u64,
    sys_ns: u64,
    max_rss_kib: u64,
    voluntary_cs: u64,
    involuntary_cs: u64,
    paging: Paging,
}

impl Used {
    fn of(usage: &libc::rusage) -> Used {
        let count = |n: libc::c_long| n.max(0) as u64;
        Used {
            user_ns: timeval_ns(usage.ru_utime),
            sys_ns: timeval_ns(usage.ru_stime),
            max_rss_kib: count(usage.ru_maxrss),
            voluntary_cs: count(usage.ru_nvcsw),
            involuntary_cs: count(usage.ru_nivcsw),
            paging: Paging {
                minor_faults: count(usage.ru_minflt),
                major_faults: count(usage.ru_majflt),
                block_in: count(usage.ru_inblock),
                block_out: count(usage.ru_oublock),
            },
        }
    }
}

/// Microseconds the run's own tasks waited for a CPU: the growth of its cgroup's pressure
/// while it ran, when it joined one. The group is returned for the next run.
fn own_wait(
    group: Option<super::cgroup::RunGroup>,
    joined: bool,
    before: Option<u64>,
) -> Option<u64> {
    let mut group = group?;
    let after = group.waited_us();
    group.give_back();
    joined.then_some(after?.checked_sub(before?)).flatten()
}

/// Starts the clock and the prepared process; a run beside others is registered and
/// announced.
fn start_timed(
    ready: std::io::Result<Ready>,
    alone: &mut Alone,
) -> std::io::Result<(Instant2, Started)> {
    // Taken before the clock starts: waiting for another run's clean-up is not timed.
    let spawning = matches!(alone, Alone::No(_)).then(super::running::exclusive);
    let born = ready.as_ref().map_or(Ok(None), Ready::born_inside);
    let start = Instant2::now();
    let spawned = born.and_then(|born| ready.and_then(|ready| ready.start(born)));
    if let Ok(started) = spawned.as_ref()
        && spawning.is_some()
    {
        register_group(started.pid);
    }
    drop(spawning);
    if let Alone::No(announce) = alone {
        announce();
    }
    spawned.map(|started| (start, started))
}

/// Registers a run executing beside others so that a stop signal kills its group, and kills
/// it at once when the signal came before the group was registered (the handler missed it).
fn register_group(pid: libc::pid_t) {
    super::running::register(pid);
    if super::interrupt::requested() {
        // SAFETY: killing the group we created; the wait reaps the leader.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
}

/// Whatever a run left behind, in its group or escaped from it, would disturb the next run:
/// it is killed, reaped and reported, one run at a time among runs executing side by side.
fn reap_beside_others(pid: libc::pid_t, forks_before: Option<u64>) -> Vec<String> {
    let _cleaning = super::running::exclusive();
    let left = super::orphans::reap_leftovers(pid, forks_before);
    super::running::unregister(pid);
    left
}

/// The machine's counters read after the previous run, kept for the next one.
static LAST_SAMPLE: Mutex<Option<(Vec<usize>, std::time::Instant, Counters)>> = Mutex::new(None);

/// How old the previous run's closing sample may be to open the next run: well under one
/// `/proc/stat` tick (10 ms), so that reading the counters again could not tell them apart.
const SAMPLE_REUSE: Duration = Duration::from_millis(1);

/// The counters read as the previous run of `cpus` ended, when that was under
/// [`SAMPLE_REUSE`] ago: runs back to back read `/proc/stat` once between them, not twice.
fn recent_sample(cpus: &[usize]) -> Option<Counters> {
    let last = LAST_SAMPLE.lock().ok()?.take()?;
    (last.0 == cpus && last.1.elapsed() < SAMPLE_REUSE).then_some(last.2)
}

fn keep_sample(cpus: &[usize], counters: Counters) {
    if let Ok(mut last) = LAST_SAMPLE.lock() {
        *last = Some((cpus.to_vec(), std::time::Instant::now(), counters));
    }
}

/// What to start for `request`: its log files opened, its CPU set built.
fn prepare<'a>(
    request: &'a RunRequest,
    argv: &'a [String],
    group: Option<&super::cgroup::RunGroup>,
    counters: Option<&'a mut super::counters::Prepared>,
) -> Result<Spawn<'a>, String> {
    let output = |path: &'a std::path::Path, held: Option<&'a File>| match held {
        Some(file) => Ok(Output::Held(file)),
        None => lab_store::empty_file(path)
            .map(Output::Own)
            .map_err(|e| format!("cannot create {}: {e}", path.display())),
    };
    let [held_out, held_err] = request
        .held_output
        .map_or([None, None], |[o, e]| [Some(o), Some(e)]);
    let stdout = output(request.stdout, held_out)?;
    let stderr = output(request.stderr, held_err)?;
    let stdin = request
        .stdin
        .map(|path| {
            File::open(request.cwd.join(path))
                .map_err(|e| format!("cannot open {} as its input: {e}", path.display()))
        })
        .transpose()?;
    Ok(Spawn {
        argv,
        env: &request.env,
        cwd: request.cwd,
        cpus: request.cpus.map(cpu_set),
        stdin,
        stdout,
        stderr,
        cgroup_procs: group.map(super::cgroup::RunGroup::procs_fd),
        counters,
    })
}

/// A readable reason for a failed spawn of `program` in `cwd` with `env` set, naming the
/// program, and the interpreter when it is a script whose `#!` interpreter is missing.
pub fn spawn_error(
    program: &str,
    e: &std::io::Error,
    cwd: &std::path::Path,
    env: &std::collections::BTreeMap<String, String>,
) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            match super::shebang::missing_interpreter(program, cwd, env) {
                Some(why) => format!("cannot start `{program}`: {why}"),
                None => {
                    format!("cannot start `{program}`: not found (is it installed and on PATH?)")
                }
            }
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("cannot start `{program}`: permission denied (is it executable?)")
        }
        _ => format!("cannot start `{program}`: {e}"),
    }
}

fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // CPU_SET does not check its index: numbers beyond the set are left out (lab.toml
    // validation refuses them; the run's recorded affinity shows what it got).
    for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: `cpu` is within the set, checked above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    set
}

/// The CPUs lab itself may run on: the most any run can be given.
pub fn allowed_cpus() -> Vec<usize> {
    granted_cpus(0)
}

fn granted_cpus(pid: libc::pid_t) -> Vec<usize> {
    // SAFETY: as in cpu_set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is writable and sized as passed.
    if unsafe { libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) }
        != 0
    {
        return Vec::new();
    }
    // SAFETY: CPU_ISSET reads within the set.
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// How a run's leader ended, once reaped.
struct Ended {
    status: libc::c_int,
    usage: libc::rusage,
    /// Whether its group was killed at the deadline.
    timed_out: bool,
    /// Processes and threads lab created for the run: its leader, and a watchdog thread
    /// where the kernel has no process file descriptors.
    lab_created: u64,
    /// The leader's own scheduling counters, read after it exited and before it was reaped
    /// (where lab could wait on a process file descriptor).
    leader: Option<super::taskstats::Leader>,
    /// When lab saw the run end: the end of its timed interval, read before the leader's
    /// counters, which are lab's work and not the run's.
    end: Instant2,
}

/// Waits for `pid` to end and reaps it, killing its group if it is still running after
/// `timeout`. The wait blocks in `poll` on a process file descriptor (pidfd_open(2), Linux
/// 5.3), so lab starts no thread and spends no CPU while a run executes; where the kernel
/// has none, a watchdog thread keeps the deadline. The leader's own counters are read only
/// where `read_leader` (no taskstats window will count the run's waiting): that read is a
/// `/proc` file, lab's work between two runs.
fn wait_until(pid: libc::pid_t, timeout: Duration, read_leader: bool) -> Ended {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as libc::c_int;
    if pidfd < 0 {
        let watchdog = Watchdog::arm(pid, timeout);
        let (status, usage) = wait_blocking(pid);
        let end = Instant2::now();
        let timed_out = watchdog.disarm();
        return Ended {
            status,
            usage,
            timed_out,
            lab_created: 2,
            leader: None,
            end,
        };
    }
    let timed_out = poll_until_exit(pidfd, pid, timeout);
    let end = Instant2::now();
    let leader = read_leader
        .then(|| super::taskstats::Leader::read(pid))
        .flatten();
    // SAFETY: closing the descriptor pidfd_open gave us.
    unsafe { libc::close(pidfd) };
    let (status, usage) = wait_blocking(pid);
    Ended {
        status,
        usage,
        timed_out,
        lab_created: 1,
        leader,
        end,
    }
}

/// Blocks until the process behind `pidfd` exits; kills group `pid` at `timeout`, or at once
/// when lab is asked to stop. True when the deadline killed it.
fn poll_until_exit(pidfd: libc::c_int, pid: libc::pid_t, timeout: Duration) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            // SAFETY: killing the group we created; the caller's wait4 reaps the leader.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            return true;
        }
        // Rounded up, so that the deadline has passed when poll returns empty-handed.
        let ms = left
            .as_nanos()
            .div_ceil(u128::from(NANOS_PER_MILLI))
            .min(i32::MAX as u128) as libc::c_int;
        let mut fd = libc::pollfd {
            fd: pidfd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut fd, 1, ms) };
        if ready > 0 {
            return false;
        }
        if ready < 0 && super::interrupt::requested() {
            // SAFETY: as above; the leader exits and the caller reaps it.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
    }
}

/// Blocks in `wait4` until the process ends; on EINTR from Ctrl-C it kills the group first.
fn wait_blocking(pid: libc::pid_t) -> (libc::c_int, libc::rusage) {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waiting for our own child with valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return (status, usage);
        }
        if super::interrupt::requested() {
            // SAFETY: killing the group we created; the next wait4 reaps the leader.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
    }
}

fn decode_status(status: libc::c_int) -> Exit {
    if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(libc::WEXITSTATUS(status))
    }
}

fn timeval_ns(tv: libc::timeval) -> u64 {
    Nanos::from_parts(tv.tv_sec.max(0) as u64, (tv.tv_usec.max(0) as u64) * 1_000).0
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Sleeps (blocked on a channel, not polling) until the deadline, then kills the process group.
struct Watchdog {
    cancel: mpsc::Sender<()>,
    fired: Arc<AtomicBool>,
    thread: thread::JoinHandle<()>,
}

impl Watchdog {
    fn arm(pgid: libc::pid_t, timeout: Duration) -> Self {
        let (cancel, cancelled) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&fired);
        let thread = thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = cancelled.recv_timeout(timeout) {
                flag.store(true, Ordering::SeqCst);
                // SAFETY: killing the group we created.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
            }
        });
        Watchdog {
            cancel,
            fired,
            thread,
        }
    }

    /// Stops the watchdog; true when it had fired.
    fn disarm(self) -> bool {
        let _ = self.cancel.send(());
        let _ = self.thread.join();
        self.fired.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn run(argv: &[&str], timeout_ms: u64, cpus: Option<&[usize]>) -> (Measurement, String) {
        let dir = tempfile::tempdir().unwrap();
        let (out, err) = (dir.path().join("out"), dir.path().join("err"));
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let env = BTreeMap::from([("LAB_TEST".to_string(), "yes".to_string())]);
        let request = RunRequest {
            argv: &argv,
            env: std::borrow::Cow::Borrowed(&env),
            cwd: Path::new("/"),
            cpus,
            timeout: Duration::from_millis(timeout_ms),
            stdin: None,
            stdout: &out,
            stderr: &err,
            held_output: None,
            counters: &[],
        };
        let m = ProcessRunner.run(&request);
        (m, std::fs::read_to_string(out).unwrap_or_default())
    }

    #[test]
    fn records_exit_code_output_and_env() {
        let (m, out) = run(&["sh", "-c", "echo $LAB_TEST; exit 3"], 5_000, None);
        assert_eq!(m.exit, Exit::Code(3));
        assert_eq!(out, "yes\n");
        assert!(!m.timed_out);
        // The two clocks are read one after the other, so their intervals differ by a few ns.
        assert!(m.wall_ns > 0 && m.boottime_ns + 1_000_000 >= m.wall_ns);
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        // The shell's child `sleep` would outlive a kill of the shell alone.
        let (m, _) = run(&["sh", "-c", "sleep 30 & sleep 30; wait"], 200, None);
        assert!(m.timed_out);
        assert_eq!(m.exit, Exit::Signal(libc::SIGKILL));
        assert!(
            m.wall_ns < 5_000_000_000,
            "killed near the deadline, took {} ns",
            m.wall_ns
        );
    }

    #[test]
    fn every_task_of_a_run_is_counted_in_its_waiting() {
        // A shell, a thread-less child it waits for, a grandchild in a pipe, and an orphan
        // handed to lab: four processes at least, whatever else the machine does.
        let (m, _) = run(
            &[
                "sh",
                "-c",
                "(sleep 0.01 | cat) ; (sleep 0.01 &) ; sleep 0.05",
            ],
            5_000,
            None,
        );
        if crate::taskstats::method().1.is_some() {
            let wait = m.wait.expect("the leader's own counters are read");
            assert_eq!(wait.counted, 1, "without taskstats only the leader is read");
            return;
        }
        let wait = m.wait.expect("every task's exit record arrived");
        assert!(
            wait.counted >= 5,
            "sh, two subshells, sleep, cat, sleep…: {wait:?}"
        );
        // The run waited at most as long as all its tasks lived, together.
        assert!(wait.ns < 5 * m.wall_ns, "{wait:?} in {} ns", m.wall_ns);
    }

    #[test]
    fn a_run_that_prints_nothing_waits_for_nothing_it_did_not_do() {
        let (m, _) = run(&["true"], 5_000, None);
        let wait = m.wait.expect("a lone process's waiting is read either way");
        assert_eq!(wait.counted, 1, "{wait:?}");
        assert!(wait.ns <= m.wall_ns, "{wait:?} in {} ns", m.wall_ns);
    }

    #[test]
    fn missing_program_is_a_recorded_failure() {
        let (m, _) = run(&["/nonexistent/prog"], 1_000, None);
        match m.exit {
            Exit::SpawnFailed(reason) => assert!(reason.contains("not found"), "{reason}"),
            other => panic!("expected a spawn failure, got {other:?}"),
        }
    }

    #[test]
    fn affinity_is_applied_and_recorded() {
        let (m, out) = run(
            &["sh", "-c", "grep Cpus_allowed_list /proc/self/status"],
            5_000,
            Some(&[0]),
        );
        assert_eq!(m.cpus_granted, Some(vec![0]));
        assert!(out.trim().ends_with('0'), "{out}");
    }

    #[test]
    fn rusage_counts_cpu_time() {
        let (m, _) = run(
            &[
                "sh",
                "-c",
                "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
            ],
            10_000,
            None,
        );
        assert!(
            m.user_ns + m.sys_ns > 1_000_000,
            "user {} sys {}",
            m.user_ns,
            m.sys_ns
        );
        assert!(m.max_rss_kib > 0);
    }
}

#[cfg(test)]
mod counter_tests {
    use super::*;
    use crate::Counter;
    use std::collections::BTreeMap;
    use std::path::Path;

    /// `argv` run by the process runner with `counters`.
    fn counted(argv: &[&str], counters: &[Counter]) -> Measurement {
        let dir = tempfile::tempdir().unwrap();
        let (out, err) = (dir.path().join("out"), dir.path().join("err"));
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let env = BTreeMap::new();
        ProcessRunner.run(&RunRequest {
            argv: &argv,
            env: std::borrow::Cow::Borrowed(&env),
            cwd: Path::new("/"),
            cpus: None,
            timeout: Duration::from_secs(20),
            stdin: None,
            stdout: &out,
            stderr: &err,
            held_output: None,
            counters,
        })
    }

    #[test]
    fn counters_count_the_run_and_its_children_from_exec_on() {
        let wanted = [
            Counter::TaskClock,
            Counter::ContextSwitches,
            Counter::Instructions,
        ];
        // The shell forks `sleep` four times: each sleep's switches are the run's.
        let m = counted(
            &["sh", "-c", "for i in 1 2 3 4; do sleep 0.01; done"],
            &wanted,
        );
        assert_eq!(m.exit, Exit::Code(0));
        let clock = m.counters[&Counter::TaskClock].as_ref().unwrap();
        assert!(clock.value > 0 && !clock.multiplexed);
        let switches = m.counters[&Counter::ContextSwitches].as_ref().unwrap();
        assert!(switches.value >= 4, "{switches:?}");
        // instructions: counted where the machine has a PMU, its reason where not.
        let probed = crate::probe_counters(&[Counter::Instructions]);
        match (
            &probed[&Counter::Instructions],
            &m.counters[&Counter::Instructions],
        ) {
            (Ok(()), Ok(reading)) => assert!(reading.value > 0),
            (Err(crate::Refusal::Unavailable(why)), Err(recorded)) => {
                assert_eq!(why, recorded)
            }
            other => panic!("probe and run disagree: {other:?}"),
        }
    }

    /// What counting costs a run: `true` with and without four software counters, in
    /// alternating pairs. `cargo test --lib counter_cost -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, printed; takes a few seconds"]
    fn counter_cost() {
        let software = [
            Counter::TaskClock,
            Counter::ContextSwitches,
            Counter::CpuMigrations,
            Counter::PageFaults,
        ];
        // Per run: the timed interval (wall_ns), and the whole call with lab's work around it.
        let mut samples: [Vec<u64>; 4] = Default::default();
        for _ in 0..1000 {
            for (k, counters) in [&[][..], &software[..]].into_iter().enumerate() {
                let start = std::time::Instant::now();
                let wall = counted(&["/bin/true"], counters).wall_ns;
                samples[k].push(wall);
                samples[2 + k].push(start.elapsed().as_nanos() as u64);
            }
        }
        let [a, b, c, d] = samples.map(|mut v| {
            v.sort_unstable();
            v[v.len() / 2] as f64 / 1e3
        });
        println!(
            "median µs, timed: {a:.1} without, {b:.1} with 4 counters (+{:.1})",
            b - a
        );
        println!(
            "median µs, whole call: {c:.1} without, {d:.1} with (+{:.1})",
            d - c
        );
    }
}
