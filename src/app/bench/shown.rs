//! How `lab bench` shows its times and orders its rows: hyperfine's `-u/--time-unit` and
//! `--sort`.

use lab_config::units::Seconds;

/// hyperfine's `-u/--time-unit`: the unit of every time shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TimeUnit {
    Microsecond,
    Millisecond,
    Second,
}

impl TimeUnit {
    /// The unit hyperfine shows a time in when none is asked for: microseconds below a
    /// millisecond, milliseconds below a second, else seconds.
    pub fn of(t: Seconds) -> TimeUnit {
        match t.0 {
            s if s < 1e-3 => TimeUnit::Microsecond,
            s if s < 1.0 => TimeUnit::Millisecond,
            _ => TimeUnit::Second,
        }
    }

    /// How many of this unit make a second.
    pub fn scale(self) -> f64 {
        match self {
            TimeUnit::Microsecond => 1e6,
            TimeUnit::Millisecond => 1e3,
            TimeUnit::Second => 1.0,
        }
    }

    /// The unit's symbol: `µs`, `ms`, `s`.
    pub fn short_name(self) -> &'static str {
        match self {
            TimeUnit::Microsecond => "µs",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Second => "s",
        }
    }

    /// `t` in this unit as hyperfine writes it: three decimals in seconds, one in milli- and
    /// microseconds (`2.005`, `105.7`).
    pub fn format_value(self, t: Seconds) -> String {
        let x = t.0 * self.scale();
        match self {
            TimeUnit::Second => format!("{x:.3}"),
            TimeUnit::Millisecond | TimeUnit::Microsecond => format!("{x:.1}"),
        }
    }

    /// `t` in this unit with its symbol, as hyperfine prints it on the terminal: `105.7 ms`.
    pub fn format_duration(self, t: Seconds) -> String {
        format!("{} {}", self.format_value(t), self.short_name())
    }
}

/// hyperfine's `--sort`: the order of a table's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SortOrder {
    /// The order the commands were given in, as hyperfine orders its tables by default.
    #[default]
    Auto,
    /// The order the commands were given in.
    Command,
    /// The fastest mean first.
    MeanTime,
}
