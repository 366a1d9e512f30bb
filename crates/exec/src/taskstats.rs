//! How long each run's own tasks waited for a CPU, from the kernel's per-task accounting: the
//! time a task was runnable but not running (`sched_info.run_delay`, the `cpu_delay_total` of
//! delay accounting; kernel docs `accounting/delay-accounting.rst` and `taskstats.rst`).
//!
//! Every task reports its total when it exits. lab registers as a listener for the exits on
//! every CPU (`TASKSTATS_CMD_ATTR_REGISTER_CPUMASK`) and, once a run's leader has been waited
//! for, adds up the records of the run's tasks: the leader, its threads, the processes it
//! started and theirs, and (when the run executed alone) orphans handed to lab as their
//! subreaper. Each thread's record comes before its process is reported ended, so nothing of
//! the run is missed. Listening needs `CAP_NET_ADMIN`; without it, or where the kernel has no
//! taskstats, [`leader_wait`] reads the leader's own `/proc/PID/schedstat` before it is reaped,
//! used only where the leader did the run's work.
//!
//! Hand-written over a raw netlink socket (the protocol is three messages and one record):
//! the `linux-taskstats` crate asks the kernel about one living task at a time, which cannot
//! see the tasks of a run that have ended, and builds its bindings with bindgen and libclang.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Mutex;

/// What a run's own tasks waited for a CPU, summed over every task counted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskWait {
    /// Nanoseconds the tasks were runnable but not running, all tasks together.
    pub ns: u64,
    /// How many of the run's tasks (processes and threads) worked: wanted a CPU, running or
    /// waiting to run, for at least [`WORKING`] of their life. Two or more make the run a
    /// parallel one, whose threads interleave otherwise when they wait.
    pub tasks: u32,
    /// How many tasks were counted in all, idle ones included.
    pub counted: u32,
    /// The largest share of its life one task of the run spent waiting for a CPU, among the
    /// tasks that wanted one for at least [`WORKING`] of it: how far the waiting could have
    /// stretched the run. Threads that ran side by side each lose their own share, so their
    /// sum would count one stretch once per thread. `None` where only the total is known.
    pub share: Option<f64>,
}

/// The least share of its life a task must have wanted a CPU (run or waited to run) for its
/// waiting to speak for the run: idle helper threads neither run nor wait.
pub(crate) const WORKING: f64 = 0.1;

/// Where a session's per-run waiting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// Every task of every run, from the kernel's exit records.
    Taskstats,
    /// The leader's own counters, read before it was reaped.
    Leader,
}

impl Method {
    /// The words the manifest records.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Method::Taskstats => {
                "each run's own tasks, every process and thread (taskstats exit records)"
            }
            Method::Leader => {
                "each run's own process, where it did the run's work (/proc/PID/schedstat)"
            }
        }
    }
}

/// The method runs are measured by in this process, and why the better one is missing.
pub(crate) fn method() -> (Method, Option<String>) {
    match &*collector() {
        Ok(_) => (Method::Taskstats, None),
        Err(why) => (Method::Leader, Some(why.clone())),
    }
}

/// The method in the manifest's words: "each run's own tasks, …", or the fallback and why
/// ("…; not every task: listening to exit records needs CAP_NET_ADMIN").
pub(crate) fn method_words() -> String {
    match method() {
        (method, None) => method.describe().to_string(),
        (method, Some(why)) => format!(
            "{}, else the machine-wide pressure bounded by others' CPU time; not every task of a run: {why}",
            method.describe()
        ),
    }
}

/// A run's window on the exit records: those that arrive after it opened.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    since: u64,
}

/// Opens a window for a run about to start: the records already waiting are older than it.
/// `None` where the records cannot be had.
pub(crate) fn open_window() -> Option<Window> {
    let mut guard = collector();
    let listener = guard.as_mut().ok()?;
    listener.drain();
    listener.generation += 1;
    let since = listener.generation;
    *listener.open.entry(since).or_insert(0) += 1;
    Some(Window { since })
}

/// What the tasks of the run led by `leader` waited, from the records that arrived in
/// `window`; `None` when records were lost (none arrived, the leader's included). `alone` counts orphans handed to lab as the run's
/// (no other run was executing).
pub(crate) fn close_window(window: Window, leader: libc::pid_t, alone: bool) -> Option<TaskWait> {
    let mut guard = collector();
    let listener = guard.as_mut().ok()?;
    listener.drain();
    let lost = listener.lost_since.is_some_and(|g| g >= window.since);
    // Orphans are the run's only while no other window is open: another run's leader is a
    // child of this process too, and its records are its own.
    let alone = alone && listener.open.values().sum::<usize>() == 1;
    let wait = listener.take_run(window.since, leader as u32, alone);
    listener.close(window.since);
    // Every run's leader exits before it is reaped: without its record, records went missing.
    (!lost && wait.counted > 0).then_some(wait)
}

/// A run's leader's own scheduling counters, read from `/proc/PID/schedstat` while it is a
/// zombie (after it exited, before it is reaped).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Leader {
    ran_ns: u64,
    waited_ns: u64,
}

/// The least share of a run's CPU time its leader must have run itself for the leader's
/// waiting to stand for the run's.
const LEADER_SHARE: f64 = 0.9;

impl Leader {
    pub(crate) fn read(pid: libc::pid_t) -> Option<Leader> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
        let (ran_ns, waited_ns) = schedstat(&text)?;
        Some(Leader { ran_ns, waited_ns })
    }

    /// The leader's waiting as the run's, when the leader ran at least [`LEADER_SHARE`] of
    /// the run's CPU time (`cpu_ns`, its children's included): a run whose work happened in
    /// other processes or threads is not called undisturbed on the leader's word.
    pub(crate) fn wait_if_whole(self, cpu_ns: u64) -> Option<TaskWait> {
        (self.ran_ns as f64 >= LEADER_SHARE * cpu_ns as f64).then_some(TaskWait {
            ns: self.waited_ns,
            tasks: 1,
            counted: 1,
            share: None,
        })
    }
}

/// The time run and the time waited on a run queue, the first two fields of `schedstat`.
fn schedstat(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    Some((fields.next()?.ok()?, fields.next()?.ok()?))
}

/// One task's exit record.
#[derive(Debug, Clone, Copy)]
struct Exited {
    /// The window generation it arrived in.
    generation: u64,
    /// The process its process was a child of when it exited.
    ppid: u32,
    /// Its process (thread group).
    tgid: u32,
    delay_ns: u64,
    /// Its life, start to exit, and the CPU time it used.
    elapsed_ns: u64,
    cpu_ns: u64,
}

impl Exited {
    /// The share of its life it waited for a CPU, if it wanted one for at least [`WORKING`]
    /// of it.
    fn waited_share(&self) -> Option<f64> {
        let life = self.elapsed_ns.max(1) as f64;
        let wanted = (self.cpu_ns + self.delay_ns) as f64;
        (wanted >= WORKING * life).then(|| (self.delay_ns as f64 / life).min(1.0))
    }
}

/// The listening socket and the records not yet claimed by a run.
struct Listener {
    socket: OwnedFd,
    pending: Vec<Exited>,
    generation: u64,
    /// Windows still open, by the generation they opened at.
    open: std::collections::BTreeMap<u64, usize>,
    /// The generation at which the socket last overflowed.
    lost_since: Option<u64>,
    buffer: Vec<u8>,
}

fn collector() -> std::sync::MutexGuard<'static, Result<Listener, String>> {
    static COLLECTOR: std::sync::OnceLock<Mutex<Result<Listener, String>>> =
        std::sync::OnceLock::new();
    COLLECTOR
        .get_or_init(|| Mutex::new(Listener::register()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Listener {
    /// Registers for every CPU's exit records.
    fn register() -> Result<Listener, String> {
        let socket = netlink::socket().map_err(|e| format!("no netlink socket: {e}"))?;
        let family = netlink::family(&socket, b"TASKSTATS\0")
            .map_err(|e| format!("the kernel has no taskstats: {e}"))?;
        let cpus = std::fs::read_to_string("/sys/devices/system/cpu/possible")
            .map_err(|e| format!("cannot read the machine's CPUs: {e}"))?;
        netlink::register_cpumask(&socket, family, cpus.trim()).map_err(|e| {
            if e.raw_os_error() == Some(libc::EPERM) {
                "listening to exit records needs CAP_NET_ADMIN".to_string()
            } else {
                format!("cannot listen to exit records: {e}")
            }
        })?;
        Ok(Listener {
            socket,
            pending: Vec::new(),
            generation: 0,
            open: std::collections::BTreeMap::new(),
            lost_since: None,
            buffer: vec![0; 64 * 1024],
        })
    }

    /// Reads every record waiting on the socket into `pending`.
    fn drain(&mut self) {
        loop {
            // SAFETY: receiving into our own buffer of its length; MSG_DONTWAIT never blocks.
            let n = unsafe {
                libc::recv(
                    self.socket.as_raw_fd(),
                    self.buffer.as_mut_ptr().cast(),
                    self.buffer.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if n < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::ENOBUFS) => {
                        self.lost_since = Some(self.generation);
                        continue;
                    }
                    _ => return,
                }
            }
            if n == 0 {
                return;
            }
            let generation = self.generation;
            let received = &self.buffer[..n as usize];
            self.pending
                .extend(netlink::exits(received).map(|r| Exited { generation, ..r }));
        }
    }

    /// Sums and removes the records of the run led by `leader` that arrived since `since`.
    fn take_run(&mut self, since: u64, leader: u32, alone: bool) -> TaskWait {
        let members = run_members(&self.pending, since, leader, alone.then(std::process::id));
        let mut wait = TaskWait {
            ns: 0,
            tasks: 0,
            counted: 0,
            share: None,
        };
        for (record, _) in self.pending.iter().zip(&members).filter(|(_, m)| **m) {
            wait.ns = wait.ns.saturating_add(record.delay_ns);
            wait.counted += 1;
            if let Some(share) = record.waited_share() {
                wait.tasks += 1;
                wait.share = Some(wait.share.map_or(share, |s: f64| s.max(share)));
            }
        }
        let mut member = members.into_iter();
        self.pending.retain(|_| !member.next().unwrap_or(false));
        wait
    }

    /// Closes the window opened at `since`, and forgets the records no open window can claim.
    fn close(&mut self, since: u64) {
        if let Some(count) = self.open.get_mut(&since) {
            *count -= 1;
            if *count == 0 {
                self.open.remove(&since);
            }
        }
        match self.open.keys().next() {
            Some(&oldest) => self.pending.retain(|r| r.generation >= oldest),
            None => self.pending.clear(),
        }
    }
}

/// Which of `records` belong to the run led by `leader`: those that arrived since `since` and
/// are its own tasks or those of a process descended from it, found through each record's
/// parent; with `adopter` (lab's own PID, when the run executed alone), also the processes
/// orphaned to lab, and theirs.
fn run_members(records: &[Exited], since: u64, leader: u32, adopter: Option<u32>) -> Vec<bool> {
    let mut processes = std::collections::BTreeSet::from([leader]);
    let mut member = vec![false; records.len()];
    loop {
        let mut grew = false;
        for (record, member) in records.iter().zip(member.iter_mut()) {
            if *member || record.generation < since {
                continue;
            }
            let orphan = adopter.is_some_and(|me| record.ppid == me && record.tgid != me);
            if orphan || processes.contains(&record.tgid) || processes.contains(&record.ppid) {
                *member = true;
                grew |= processes.insert(record.tgid);
            }
        }
        if !grew {
            return member;
        }
    }
}

/// The generic netlink messages of taskstats: finding the family, registering for exit
/// records, and reading the records out of what the socket received.
mod netlink {
    use super::Exited;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    const GENL_ID_CTRL: u16 = 0x10;
    const CTRL_CMD_GETFAMILY: u8 = 3;
    const CTRL_ATTR_FAMILY_ID: u16 = 1;
    const CTRL_ATTR_FAMILY_NAME: u16 = 2;
    const TASKSTATS_CMD_GET: u8 = 1;
    const TASKSTATS_CMD_ATTR_REGISTER_CPUMASK: u16 = 3;
    const TASKSTATS_TYPE_STATS: u16 = 3;
    const TASKSTATS_TYPE_AGGR_PID: u16 = 4;
    const NLMSG_ERROR: u16 = 2;
    const NLM_F_REQUEST: u16 = 1;
    const NLM_F_ACK: u16 = 4;
    /// `struct nlmsghdr` and `struct genlmsghdr`.
    const HEADER: usize = 16 + 4;
    /// Offsets in `struct taskstats` (linux/taskstats.h; fields are only ever appended).
    const CPU_DELAY_TOTAL: usize = 24;
    const AC_PID: usize = 128;
    const AC_PPID: usize = 132;
    /// `ac_etime`, `ac_utime`, `ac_stime`: microseconds.
    const AC_ETIME: usize = 144;
    const AC_UTIME: usize = 152;
    const AC_STIME: usize = 160;
    /// `ac_tgid`, from version 12 of the record on.
    const AC_TGID: usize = 368;
    /// The receive buffer asked for: room for about 10,000 exit records between two reads.
    const RECEIVE_BUFFER: libc::c_int = 4 << 20;

    /// A generic netlink socket with a large receive buffer, bound to this process.
    pub(super) fn socket() -> std::io::Result<OwnedFd> {
        // SAFETY: plain socket creation; the descriptor is owned below.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_GENERIC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd is a new descriptor nobody else owns.
        let socket = unsafe { OwnedFd::from_raw_fd(fd) };
        let size = RECEIVE_BUFFER;
        for option in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
            // SAFETY: setting an int option from a valid pointer and its size.
            let set = unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    option,
                    std::ptr::from_ref(&size).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            if set == 0 {
                break;
            }
        }
        // SAFETY: sockaddr_nl is plain data; zeroed is a valid address (kernel picks the port).
        let mut address: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        address.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: binding our socket to a valid address of its size.
        let bound = unsafe {
            libc::bind(
                fd,
                std::ptr::from_ref(&address).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if bound < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(socket)
    }

    /// A request: the headers, then one attribute holding `payload`.
    fn request(family: u16, flags: u16, command: u8, attribute: u16, payload: &[u8]) -> Vec<u8> {
        let attribute_len = 4 + payload.len();
        let total = HEADER + align(attribute_len);
        let mut message = Vec::with_capacity(total);
        message.extend_from_slice(&(total as u32).to_ne_bytes());
        message.extend_from_slice(&family.to_ne_bytes());
        message.extend_from_slice(&(NLM_F_REQUEST | flags).to_ne_bytes());
        message.extend_from_slice(&1u32.to_ne_bytes());
        message.extend_from_slice(&0u32.to_ne_bytes());
        message.extend_from_slice(&[command, 1, 0, 0]);
        message.extend_from_slice(&(attribute_len as u16).to_ne_bytes());
        message.extend_from_slice(&attribute.to_ne_bytes());
        message.extend_from_slice(payload);
        message.resize(total, 0);
        message
    }

    fn align(len: usize) -> usize {
        len.div_ceil(4) * 4
    }

    /// Sends `message` and reads the kernel's one reply into `reply`.
    fn ask(socket: &OwnedFd, message: &[u8], reply: &mut [u8]) -> std::io::Result<usize> {
        // SAFETY: sending our own buffer of its length to the kernel (port 0).
        let sent = unsafe {
            libc::send(
                socket.as_raw_fd(),
                message.as_ptr().cast(),
                message.len(),
                0,
            )
        };
        if sent < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: receiving into our own buffer of its length.
        let n = unsafe {
            libc::recv(
                socket.as_raw_fd(),
                reply.as_mut_ptr().cast(),
                reply.len(),
                0,
            )
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(n as usize)
    }

    /// The error a reply carries, when it is one (`NLMSG_ERROR` with a non-zero code).
    fn error_of(reply: &[u8]) -> Option<std::io::Error> {
        let kind = u16::from_ne_bytes(reply.get(4..6)?.try_into().ok()?);
        let code = i32::from_ne_bytes(reply.get(16..20)?.try_into().ok()?);
        (kind == NLMSG_ERROR && code != 0).then(|| std::io::Error::from_raw_os_error(-code))
    }

    /// The id of the generic netlink family `name` (NUL-terminated).
    pub(super) fn family(socket: &OwnedFd, name: &[u8]) -> std::io::Result<u16> {
        let message = request(
            GENL_ID_CTRL,
            0,
            CTRL_CMD_GETFAMILY,
            CTRL_ATTR_FAMILY_NAME,
            name,
        );
        let mut reply = vec![0; 8192];
        let n = ask(socket, &message, &mut reply)?;
        if let Some(e) = error_of(&reply[..n]) {
            return Err(e);
        }
        attributes(reply.get(HEADER..n).unwrap_or_default())
            .find(|(kind, _)| *kind == CTRL_ATTR_FAMILY_ID)
            .and_then(|(_, value)| Some(u16::from_ne_bytes(value.get(..2)?.try_into().ok()?)))
            .ok_or_else(|| std::io::Error::other("no family id in the reply"))
    }

    /// Registers the socket for the exit records of `cpus` (a list such as `0-3`).
    pub(super) fn register_cpumask(
        socket: &OwnedFd,
        family: u16,
        cpus: &str,
    ) -> std::io::Result<()> {
        let mut mask = cpus.as_bytes().to_vec();
        mask.push(0);
        let message = request(
            family,
            NLM_F_ACK,
            TASKSTATS_CMD_GET,
            TASKSTATS_CMD_ATTR_REGISTER_CPUMASK,
            &mask,
        );
        let mut reply = vec![0; 8192];
        let n = ask(socket, &message, &mut reply)?;
        error_of(&reply[..n]).map_or(Ok(()), Err)
    }

    /// The attributes (type, value) laid out one after another in `bytes`.
    fn attributes(mut bytes: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
        std::iter::from_fn(move || {
            let len = usize::from(u16::from_ne_bytes(bytes.get(..2)?.try_into().ok()?));
            let kind = u16::from_ne_bytes(bytes.get(2..4)?.try_into().ok()?) & 0x3fff;
            let value = bytes.get(4..len.max(4))?;
            bytes = bytes.get(align(len.max(4))..).unwrap_or_default();
            Some((kind, value))
        })
    }

    /// The per-task exit records in what one `recv` returned (every message in it).
    pub(super) fn exits(mut received: &[u8]) -> impl Iterator<Item = Exited> + '_ {
        let mut records = Vec::new();
        while let Some(len) = received
            .get(..4)
            .and_then(|b| Some(u32::from_ne_bytes(b.try_into().ok()?) as usize))
            .filter(|len| *len >= HEADER && *len <= received.len())
        {
            let body = &received[HEADER..len];
            for (kind, nested) in attributes(body) {
                if kind == TASKSTATS_TYPE_AGGR_PID {
                    records.extend(
                        attributes(nested)
                            .filter(|(kind, _)| *kind == TASKSTATS_TYPE_STATS)
                            .filter_map(|(_, stats)| record(stats)),
                    );
                }
            }
            received = received.get(align(len)..).unwrap_or_default();
        }
        records.into_iter()
    }

    /// One task's record, from its `struct taskstats`.
    fn record(stats: &[u8]) -> Option<Exited> {
        let u32_at = |at: usize| Some(u32::from_ne_bytes(stats.get(at..at + 4)?.try_into().ok()?));
        let u64_at = |at: usize| Some(u64::from_ne_bytes(stats.get(at..at + 8)?.try_into().ok()?));
        let pid = u32_at(AC_PID)?;
        let micros = |at: usize| u64_at(at).map(|us| us.saturating_mul(1_000));
        Some(Exited {
            generation: 0,
            ppid: u32_at(AC_PPID)?,
            tgid: u32_at(AC_TGID).unwrap_or(pid),
            delay_ns: u64_at(CPU_DELAY_TOTAL)?,
            elapsed_ns: micros(AC_ETIME)?,
            cpu_ns: micros(AC_UTIME)?.saturating_add(micros(AC_STIME)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(generation: u64, ppid: u32, tgid: u32, delay_ns: u64) -> Exited {
        Exited {
            generation,
            ppid,
            tgid,
            delay_ns,
            elapsed_ns: 100,
            cpu_ns: 50,
        }
    }

    #[test]
    fn the_stretch_is_the_largest_share_one_working_task_waited_not_the_sum() {
        let task = |delay_ns, elapsed_ns, cpu_ns| Exited {
            elapsed_ns,
            cpu_ns,
            ..exited(1, 1, 1, delay_ns)
        };
        // Two threads that each ran two thirds of their life and waited a third.
        assert_eq!(task(100, 300, 200).waited_share(), Some(1.0 / 3.0));
        // A helper thread idle all its life neither ran nor waited: it does not speak.
        assert_eq!(task(1, 1_000, 5).waited_share(), None);
        // A thread starved of its CPU wanted it all along, and waited most of it.
        assert_eq!(task(900, 1_000, 50).waited_share(), Some(0.9));
    }

    #[test]
    fn a_run_is_its_leader_its_threads_and_every_process_descended_from_it() {
        let lab = 10;
        let records = [
            exited(1, 500, 501, 7),  // a stranger
            exited(2, lab, 100, 1),  // a thread of the leader (its parent is lab)
            exited(2, 101, 102, 2),  // a grandchild, listed before its parent
            exited(2, 100, 101, 4),  // a child
            exited(2, lab, 100, 8),  // the leader itself
            exited(2, lab, 103, 16), // an orphan handed to lab
            exited(2, lab, lab, 32), // a thread of lab's own
            exited(1, 100, 104, 64), // a child of an earlier process with the same pid
        ];
        let members = run_members(&records, 2, 100, Some(lab));
        assert_eq!(
            members,
            [false, true, true, true, true, true, false, false],
            "every task the run made, orphans included, and nothing from before it"
        );
        // Beside other runs an orphan cannot be told apart, so it is left out.
        let beside = run_members(&records, 2, 100, None);
        assert_eq!(beside, [false, true, true, true, true, false, false, false]);
    }

    #[test]
    fn a_listener_sums_and_forgets_the_records_of_the_run_it_closes() {
        let mut pending = vec![
            exited(1, 9, 9, 5),
            exited(3, 1, 100, 10),
            exited(3, 100, 101, 20),
            exited(3, 1, 200, 40),
        ];
        let members = run_members(&pending, 3, 100, None);
        let summed: u64 = pending
            .iter()
            .zip(&members)
            .filter(|(_, m)| **m)
            .map(|(r, _)| r.delay_ns)
            .sum();
        assert_eq!(summed, 30);
        let mut keep = members.iter();
        pending.retain(|_| !keep.next().copied().unwrap_or(false));
        assert_eq!(pending.len(), 2);
    }

    #[test]
    fn exit_records_are_read_from_the_kernels_messages() {
        // One message: headers, then AGGR_PID holding PID and STATS, as the kernel lays it out.
        let mut stats = vec![0u8; 416];
        stats[0..2].copy_from_slice(&16u16.to_ne_bytes());
        stats[24..32].copy_from_slice(&123_456u64.to_ne_bytes());
        stats[144..152].copy_from_slice(&2_000u64.to_ne_bytes());
        stats[152..160].copy_from_slice(&300u64.to_ne_bytes());
        stats[160..168].copy_from_slice(&200u64.to_ne_bytes());
        stats[128..132].copy_from_slice(&4321u32.to_ne_bytes());
        stats[132..136].copy_from_slice(&1234u32.to_ne_bytes());
        stats[368..372].copy_from_slice(&4300u32.to_ne_bytes());
        let attribute = |kind: u16, value: &[u8]| {
            let mut a = Vec::new();
            a.extend_from_slice(&((4 + value.len()) as u16).to_ne_bytes());
            a.extend_from_slice(&kind.to_ne_bytes());
            a.extend_from_slice(value);
            a.resize(a.len().div_ceil(4) * 4, 0);
            a
        };
        let nested = [attribute(1, &4321u32.to_ne_bytes()), attribute(3, &stats)].concat();
        let body = attribute(4, &nested);
        let mut message = Vec::new();
        message.extend_from_slice(&((20 + body.len()) as u32).to_ne_bytes());
        message.extend_from_slice(&[0; 12]);
        message.extend_from_slice(&[3, 1, 0, 0]);
        message.extend_from_slice(&body);
        let twice = [message.clone(), message].concat();
        let records: Vec<Exited> = netlink::exits(&twice).collect();
        assert_eq!(records.len(), 2);
        assert_eq!(
            (records[0].ppid, records[0].tgid, records[0].delay_ns),
            (1234, 4300, 123_456)
        );
        assert_eq!(
            (records[0].elapsed_ns, records[0].cpu_ns),
            (2_000_000, 500_000)
        );
        assert_eq!(
            netlink::exits(&twice[..30]).count(),
            0,
            "a cut message is no record"
        );
    }

    #[test]
    fn schedstat_gives_the_time_run_and_waited() {
        assert_eq!(schedstat("12345 678 9\n"), Some((12_345, 678)));
        assert_eq!(schedstat("x 1 2"), None);
        let me = Leader::read(std::process::id() as libc::pid_t).expect("our own schedstat");
        assert!(me.ran_ns > 0);
        assert_eq!(
            Leader {
                ran_ns: 90,
                waited_ns: 7
            }
            .wait_if_whole(100),
            Some(TaskWait {
                ns: 7,
                tasks: 1,
                counted: 1,
                share: None
            })
        );
        assert_eq!(
            Leader {
                ran_ns: 50,
                waited_ns: 7
            }
            .wait_if_whole(100),
            None
        );
    }
}
