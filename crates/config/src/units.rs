//! Units of time: the nanosecond counts runs are measured and stored in, and the seconds and
//! milliseconds they are read in. Every conversion between them happens here; their text
//! comes from the `format` module.

/// Nanoseconds in one second.
pub const NANOS_PER_SECOND: u64 = 1_000_000_000;

/// Nanoseconds in one millisecond.
pub const NANOS_PER_MILLI: u64 = 1_000_000;

/// A whole number of nanoseconds, as clocks and the store count time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Nanos(pub u64);

/// A time in seconds.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct Seconds(pub f64);

/// A time in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct Millis(pub f64);

/// How many of something happen per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct PerSecond(pub f64);

impl Nanos {
    /// Whole seconds and the nanoseconds past them, as `timespec` holds a time.
    pub fn from_parts(seconds: u64, nanos: u64) -> Nanos {
        Nanos(seconds * NANOS_PER_SECOND + nanos)
    }

    pub fn seconds(self) -> Seconds {
        Seconds(self.0 as f64 / 1e9)
    }

    pub fn millis(self) -> Millis {
        Millis(self.0 as f64 / 1e6)
    }
}

impl Seconds {
    /// The nearest whole nanosecond below, saturating at zero and `u64::MAX`.
    pub fn nanos(self) -> Nanos {
        Nanos((self.0 * 1e9) as u64)
    }
}

impl PerSecond {
    /// `count` events in `elapsed`.
    pub fn of(count: f64, elapsed: Seconds) -> PerSecond {
        PerSecond(count / elapsed.0)
    }
}

/// How many seconds one of `unit` is, for the units of time lab.toml may give a metric
/// (`s`, `ms`, `us`/`µs`, `ns`, their spelled-out forms, `min`, `h`); `None` for any other.
pub fn seconds_per(unit: &str) -> Option<f64> {
    Some(match unit.trim().to_lowercase().as_str() {
        "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "ms" | "msec" => 1e-3,
        "us" | "µs" | "μs" | "usec" => 1e-6,
        "ns" | "nsec" => 1e-9,
        "min" | "minutes" => 60.0,
        "h" => 3600.0,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_divide_by_the_unit() {
        assert_eq!(Nanos(1_500_000_000).seconds(), Seconds(1.5));
        assert_eq!(Nanos(2_500_000).millis(), Millis(2.5));
        assert_eq!(Seconds(0.25).nanos(), Nanos(250_000_000));
        assert_eq!(Nanos::from_parts(2, 7), Nanos(2_000_000_007));
        assert_eq!(PerSecond::of(10.0, Seconds(4.0)), PerSecond(2.5));
    }

    #[test]
    fn units_of_time_are_known_by_their_seconds() {
        assert_eq!(seconds_per("ms"), Some(1e-3));
        assert_eq!(seconds_per("µs"), Some(1e-6));
        assert_eq!(seconds_per("ns"), Some(1e-9));
        assert_eq!(seconds_per("s"), Some(1.0));
        assert_eq!(seconds_per("Mops/s"), None);
        assert_eq!(seconds_per(""), None);
    }
}
