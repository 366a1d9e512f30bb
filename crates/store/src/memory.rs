//! Whether a session's rows fit the memory the machine has left, judged before they are read:
//! reading and judging them takes several times their bytes on disk, and a process the kernel
//! ends for want of memory has no chance to say why.

use anyhow::{Result, bail};
use std::path::Path;

/// Bytes of memory a report of a session takes for each byte of its runs.csv and samples.csv,
/// at the least: measured 4.4× at 1,000,010 runs, 5.0× at 100,010 and 5.4× at 100,000 runs of
/// one value each (docs/src/topics/performance.md, "Short texts inline, one command per cell").
const BYTES_PER_CSV_BYTE: u64 = 4;

/// Sessions smaller than this are read without asking: 256 MiB of memory and less.
const CHECKED_FROM: u64 = 64 << 20;

/// The environment variable that reads a session whatever memory is left (set to `1`).
const IGNORE_VAR: &str = "LAB_IGNORE_MEMORY";

/// An error naming the session, what reading it takes and what is left, where `csv_bytes` of
/// its CSV files would take more memory than the machine has available.
pub(super) fn check(dir: &Path, csv_bytes: u64) -> Result<()> {
    if csv_bytes < CHECKED_FROM || std::env::var_os(IGNORE_VAR).is_some_and(|v| v == "1") {
        return Ok(());
    }
    let Some(available) = available_bytes() else {
        return Ok(());
    };
    match shortfall(csv_bytes, available) {
        Some(needed) => bail!(
            "{}: its runs.csv and samples.csv ({}) take about {} of memory or more to read, and \
             this machine has {} available; nothing was read and the session is as it was\n  \
             hint: stop what else uses memory, or read the session on a machine with more; \
             {IGNORE_VAR}=1 reads it anyway",
            dir.display(),
            size(csv_bytes),
            size(needed),
            size(available)
        ),
        None => Ok(()),
    }
}

/// The memory reading `csv_bytes` takes, where that is more than `available`.
fn shortfall(csv_bytes: u64, available: u64) -> Option<u64> {
    let needed = csv_bytes.saturating_mul(BYTES_PER_CSV_BYTE);
    (needed > available).then_some(needed)
}

/// The memory this process may still take: the kernel's estimate of what can be had without
/// swapping (`MemAvailable`, proc(5)), less where the process's address space is limited
/// (`RLIMIT_AS`, as `ulimit -v` sets it) to less than that.
fn available_bytes() -> Option<u64> {
    let available = kib_field("/proc/meminfo", "MemAvailable")?;
    Some(address_space_left().map_or(available, |left| left.min(available)))
}

/// What `RLIMIT_AS` leaves this process, where it is set.
fn address_space_left() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let used = kib_field("/proc/self/status", "VmSize")?;
    Some(limit.rlim_cur.saturating_sub(used))
}

/// A `KEY: N kB` field of a file under /proc, in bytes.
fn kib_field(path: &str, key: &str) -> Option<u64> {
    let kib: u64 = super::manifest::proc_field(path, key)?
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib.saturating_mul(1024))
}

/// `bytes` as MB or GB, three significant digits.
fn size(bytes: u64) -> String {
    let mb = bytes as f64 / 1e6;
    if mb >= 1000.0 {
        format!("{} GB", lab_config::format::significant(mb / 1000.0, 3))
    } else {
        format!("{} MB", lab_config::format::significant(mb, 3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_refused_only_where_four_times_its_csv_would_not_fit() {
        let mb = 1_000_000;
        // The realistic 1,000,010-run session's 483 MB of CSV took 2.14 GB.
        assert_eq!(shortfall(483 * mb, 1_500 * mb), Some(1_932 * mb));
        assert_eq!(shortfall(483 * mb, 2_000 * mb), None);
        assert_eq!(shortfall(483 * mb, 1_932 * mb), None);
        assert_eq!(size(1_932 * mb), "1.93 GB");
        assert_eq!(size(483 * mb), "483 MB");
    }

    #[test]
    fn this_machine_reports_the_memory_it_has_left() {
        let available = available_bytes().unwrap();
        assert!(available > 0);
        // Small sessions are never refused, whatever is left.
        assert!(check(Path::new("s"), CHECKED_FROM - 1).is_ok());
    }
}
