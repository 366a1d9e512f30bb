//! Clock reads for measuring runs: CLOCK_MONOTONIC for time, CLOCK_BOOTTIME to spot suspends.

use lab_config::units::Nanos;

/// Nanoseconds on `clock`, from an arbitrary origin.
fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clocks exist on every Linux since 2.6.39.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    Nanos::from_parts(ts.tv_sec as u64, ts.tv_nsec as u64).0
}

/// CLOCK_MONOTONIC in nanoseconds: does not jump with NTP steps, stops during suspend.
pub(crate) fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// CLOCK_BOOTTIME in nanoseconds: like MONOTONIC, but keeps counting while the machine sleeps.
pub(crate) fn boottime_ns() -> u64 {
    read(libc::CLOCK_BOOTTIME)
}

/// Both clocks read back to back.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Instant2 {
    pub monotonic: u64,
    pub boottime: u64,
}

impl Instant2 {
    pub(crate) fn now() -> Self {
        Instant2 {
            monotonic: monotonic_ns(),
            boottime: boottime_ns(),
        }
    }
}

/// The reported resolution of CLOCK_MONOTONIC.
pub(crate) fn reported_resolution_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: as in `read`.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    Nanos::from_parts(ts.tv_sec as u64, ts.tv_nsec as u64).0
}

/// The smallest observed positive step between consecutive reads (the timer's granularity).
pub(crate) fn observed_granularity_ns(trials: usize) -> u64 {
    let mut smallest = u64::MAX;
    for _ in 0..trials {
        let start = monotonic_ns();
        let mut next = monotonic_ns();
        while next == start {
            next = monotonic_ns();
        }
        smallest = smallest.min(next - start);
    }
    smallest
}

/// The mean cost of one clock read, over `reads` back-to-back reads.
pub(crate) fn read_cost_ns(reads: u32) -> f64 {
    let start = monotonic_ns();
    let mut sink = 0u64;
    for _ in 0..reads {
        sink = sink.wrapping_add(monotonic_ns());
    }
    std::hint::black_box(sink);
    (monotonic_ns() - start) as f64 / f64::from(reads.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_advance_and_boottime_is_not_behind() {
        let a = Instant2::now();
        let b = Instant2::now();
        assert!(b.monotonic >= a.monotonic);
        assert!(
            a.boottime >= a.monotonic,
            "boottime includes suspended time"
        );
        assert!(observed_granularity_ns(10) > 0);
    }
}
