//! Hardware and software counters of a run (`[experiment] counters`), read through
//! `perf_event_open(2)`. The run's own process opens them between `clone` and `execve`,
//! disabled until its `execve` (`enable_on_exec`: lab's work before it is not counted) and
//! inherited by every process the run starts; it hands them to lab over a Unix socket
//! (`SCM_RIGHTS`), and lab takes and reads them only after the run was reaped, so neither
//! costs the timed interval anything. A counter the kernel had to multiplex is scaled by
//! time enabled / time running, as `perf stat` does, and the run records that it was.

use lab_config::counter::{Counter, Source};
use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER0` (64 bytes), which every kernel since
/// 2.6.31 accepts; the fields after it stay zero.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// `read_format`: the value, then the time the counter was enabled and the time it ran.
const READ_TIMES: u64 = 1 | 2;
/// `flags` bits: disabled, inherit, enable_on_exec.
const DISABLED: u64 = 1;
const INHERIT: u64 = 1 << 1;
const ENABLE_ON_EXEC: u64 = 1 << 12;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

impl Attr {
    /// The attribute of a perf counter; `None` for one valgrind counts.
    fn of(counter: Counter, flags: u64) -> Option<Attr> {
        let Source::Perf { kind, config } = counter.def().source else {
            return None;
        };
        Some(Attr {
            kind,
            size: std::mem::size_of::<Attr>() as u32,
            config,
            read_format: READ_TIMES,
            flags,
            ..Attr::default()
        })
    }
}

/// `perf_event_open(attr, pid = 0 (this task), cpu = -1 (any), group = -1, FD_CLOEXEC)`:
/// the descriptor, or the errno.
///
/// # Safety
/// Async-signal-safe: a single system call on `attr`.
unsafe fn open(attr: &Attr) -> Result<RawFd, i32> {
    // SAFETY: the kernel reads `size` bytes of `attr`, which is that long.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const Attr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        // SAFETY: reading this thread's errno.
        Err(unsafe { *libc::__errno_location() })
    } else {
        Ok(fd as RawFd)
    }
}

/// Why a counter cannot be had on this machine, or that the kernel forbids it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The machine lacks it (no PMU, an event the CPU does not have): recorded, never zero.
    Unavailable(String),
    /// The kernel forbids it (`perf_event_paranoid`, missing capability): the session cannot
    /// measure what it asks for.
    Forbidden(String),
}

/// Sorts an errno from `perf_event_open` into unavailable or forbidden.
fn refusal(errno: i32) -> Refusal {
    let why = io::Error::from_raw_os_error(errno).to_string();
    match errno {
        libc::EACCES | libc::EPERM => Refusal::Forbidden(why),
        libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL => Refusal::Unavailable(
            format!("{why} (the machine has no such event: perf_event_open gave errno {errno})"),
        ),
        _ => Refusal::Unavailable(format!("{why} (perf_event_open gave errno {errno})")),
    }
}

/// Opens each perf counter for lab itself, as a run will: whether the machine has it, and
/// whether the kernel lets this user count it. Counters valgrind counts are not probed here.
pub fn probe(counters: &[Counter]) -> BTreeMap<Counter, Result<(), Refusal>> {
    counters
        .iter()
        .filter_map(|&c| Some((c, Attr::of(c, DISABLED)?)))
        .map(|(c, attr)| {
            // SAFETY: one system call on an attribute that lives across it.
            let opened = unsafe { open(&attr) };
            let verdict = opened.map(|fd| {
                // SAFETY: the descriptor was just opened and is ours.
                drop(unsafe { OwnedFd::from_raw_fd(fd) });
            });
            (c, verdict.map_err(refusal))
        })
        .collect()
}

/// The kernel setting that decides who may count, and its value, for a refusal's message.
pub fn paranoid() -> String {
    const PATH: &str = "/proc/sys/kernel/perf_event_paranoid";
    match std::fs::read_to_string(PATH) {
        Ok(v) => format!("{PATH} is {}", v.trim()),
        Err(e) => format!("{PATH} cannot be read ({e})"),
    }
}

/// A run's counters, prepared before `clone`: the child opens them and sends them to lab
/// using only this memory.
pub(crate) struct Prepared {
    counters: Vec<Counter>,
    attrs: Vec<Attr>,
    /// Written by the child: the errno of each counter it could not open, 0 for opened.
    errnos: Vec<i32>,
    /// The child's descriptors, gathered for one message.
    fds: Vec<RawFd>,
    /// Room for the `SCM_RIGHTS` message, aligned as `cmsghdr`.
    control: Vec<u64>,
    /// The child's end of the socket pair and lab's.
    child_end: OwnedFd,
    lab_end: OwnedFd,
    /// Written by the child: the errno of a `sendmsg` that failed.
    send_failed: i32,
}

/// What one counter read after the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// The count, scaled when the counter ran for part of the time only.
    pub value: u64,
    /// Whether the kernel multiplexed it (ran it for part of the time it was enabled).
    pub multiplexed: bool,
}

impl Prepared {
    /// Buffers and a socket pair for the perf counters among `counters` (none when there are
    /// none).
    pub(crate) fn new(counters: &[Counter]) -> io::Result<Option<Prepared>> {
        let flags = DISABLED | INHERIT | ENABLE_ON_EXEC;
        let (counters, attrs): (Vec<Counter>, Vec<Attr>) = counters
            .iter()
            .filter_map(|&c| Some((c, Attr::of(c, flags)?)))
            .unzip();
        if counters.is_empty() {
            return Ok(None);
        }
        let mut pair = [0; 2];
        // SAFETY: socketpair writes two descriptors into `pair`.
        let made = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                pair.as_mut_ptr(),
            )
        };
        if made != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just created and are owned here only.
        let (child_end, lab_end) =
            unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        // SAFETY: CMSG_SPACE is arithmetic.
        let space = unsafe { libc::CMSG_SPACE((counters.len() * 4) as u32) } as usize;
        Ok(Some(Prepared {
            attrs,
            errnos: vec![0; counters.len()],
            fds: vec![-1; counters.len()],
            control: vec![0; space.div_ceil(8)],
            counters,
            child_end,
            lab_end,
            send_failed: 0,
        }))
    }

    /// In the child, just before `execve`: opens every counter on this process and sends the
    /// ones it opened to lab. Their descriptors close at `execve` (close-on-exec); lab's copies
    /// in the socket keep them counting.
    ///
    /// # Safety
    /// Only in the child of `clone(CLONE_VM | CLONE_VFORK)`: system calls on this memory, no
    /// allocation.
    pub(crate) unsafe fn open_in_child(&mut self) {
        let mut opened = 0;
        for (i, attr) in self.attrs.iter().enumerate() {
            // SAFETY: one system call on an attribute prepared before clone.
            match unsafe { open(attr) } {
                Ok(fd) => {
                    self.fds[opened] = fd;
                    opened += 1;
                }
                // SAFETY: a volatile write the parent reads after the child execs.
                Err(errno) => unsafe { std::ptr::write_volatile(&mut self.errnos[i], errno) },
            }
        }
        if opened > 0 {
            // SAFETY: as above, a message built on the stack and prepared buffers.
            if let Err(errno) = unsafe { self.send(opened) } {
                unsafe { std::ptr::write_volatile(&mut self.send_failed, errno) };
            }
        }
    }

    /// Sends the first `opened` descriptors of `fds` in one `SCM_RIGHTS` message.
    ///
    /// # Safety
    /// As [`Prepared::open_in_child`].
    unsafe fn send(&mut self, opened: usize) -> Result<(), i32> {
        let bytes = opened * std::mem::size_of::<RawFd>();
        let mut byte = 0u8;
        let mut iov = libc::iovec {
            iov_base: (&mut byte as *mut u8).cast(),
            iov_len: 1,
        };
        // SAFETY: msghdr is plain data; every pointer below is into memory that outlives the
        // call, and the control buffer holds CMSG_SPACE(bytes) for up to every counter.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = self.control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(bytes as u32) as usize;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(bytes as u32) as usize;
            std::ptr::copy_nonoverlapping(
                self.fds.as_ptr().cast::<u8>(),
                libc::CMSG_DATA(cmsg),
                bytes,
            );
            if libc::sendmsg(self.child_end.as_raw_fd(), &msg, 0) < 0 {
                return Err(*libc::__errno_location());
            }
        }
        Ok(())
    }

    /// After the run was reaped: takes the counters the child sent and reads each. A counter
    /// the child could not open is `Err` with why.
    pub(crate) fn read(self) -> BTreeMap<Counter, Result<Reading, String>> {
        let received = self.receive();
        let mut fds = received.into_iter();
        let mut readings = BTreeMap::new();
        for (i, &counter) in self.counters.iter().enumerate() {
            // SAFETY: the child has exec'd or exited; it writes nothing more.
            let errno = unsafe { std::ptr::read_volatile(&self.errnos[i]) };
            let reading = if errno != 0 {
                Err(match refusal(errno) {
                    Refusal::Unavailable(why) | Refusal::Forbidden(why) => why,
                })
            } else {
                match fds.next() {
                    Some(fd) => read_one(&fd),
                    None => Err(self.lost()),
                }
            };
            readings.insert(counter, reading);
        }
        readings
    }

    /// Why an opened counter never reached lab.
    fn lost(&self) -> String {
        // SAFETY: as in `read`.
        let errno = unsafe { std::ptr::read_volatile(&self.send_failed) };
        if errno != 0 {
            format!("not received: {}", io::Error::from_raw_os_error(errno))
        } else {
            "not received".into()
        }
    }

    /// The descriptors waiting in lab's end of the socket, in the order the child opened them.
    fn receive(&self) -> Vec<OwnedFd> {
        let mut byte = 0u8;
        let mut iov = libc::iovec {
            iov_base: (&mut byte as *mut u8).cast(),
            iov_len: 1,
        };
        let mut control = vec![0u64; self.control.len()];
        // SAFETY: msghdr is plain data pointing into buffers alive across recvmsg; the kernel
        // writes at most msg_controllen bytes of control data.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = control.len() * 8;
            let flags = libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC;
            if libc::recvmsg(self.lab_end.as_raw_fd(), &mut msg, flags) < 0 {
                return Vec::new();
            }
            let mut fds = Vec::new();
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(cmsg);
                    let bytes = (*cmsg).cmsg_len - (data as usize - cmsg as usize);
                    for k in 0..bytes / std::mem::size_of::<RawFd>() {
                        let fd = std::ptr::read_unaligned(data.cast::<RawFd>().add(k));
                        fds.push(OwnedFd::from_raw_fd(fd));
                    }
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
            fds
        }
    }
}

/// One counter's value, enabled and running times, scaled when it was multiplexed.
fn read_one(fd: &OwnedFd) -> Result<Reading, String> {
    let mut buf = [0u64; 3];
    // SAFETY: reading up to 24 bytes into a 24-byte buffer.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), 24) };
    if n != 24 {
        return Err(format!("unreadable: {}", io::Error::last_os_error()));
    }
    scaled(buf[0], buf[1], buf[2])
}

/// `value × enabled / running` when the counter ran for part of the time it was enabled (the
/// estimate `perf stat` prints); an error when it never ran.
fn scaled(value: u64, enabled: u64, running: u64) -> Result<Reading, String> {
    if running == 0 {
        return Err("never scheduled on a counter".into());
    }
    if running >= enabled {
        return Ok(Reading {
            value,
            multiplexed: false,
        });
    }
    let estimate = (value as u128 * enabled as u128 / running as u128).min(u64::MAX as u128);
    Ok(Reading {
        value: estimate as u64,
        multiplexed: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multiplexed_count_is_scaled_by_enabled_over_running() {
        assert_eq!(
            scaled(1000, 400, 400),
            Ok(Reading {
                value: 1000,
                multiplexed: false
            })
        );
        assert_eq!(
            scaled(1000, 400, 100),
            Ok(Reading {
                value: 4000,
                multiplexed: true
            })
        );
        assert!(scaled(0, 400, 0).is_err());
    }

    #[test]
    fn permission_errors_forbid_and_missing_events_are_unavailable() {
        assert!(matches!(refusal(libc::EACCES), Refusal::Forbidden(_)));
        assert!(matches!(refusal(libc::EPERM), Refusal::Forbidden(_)));
        assert!(matches!(refusal(libc::ENOENT), Refusal::Unavailable(_)));
        assert!(matches!(refusal(libc::EOPNOTSUPP), Refusal::Unavailable(_)));
    }
}
