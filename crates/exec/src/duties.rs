//! What each of stage 3's per-run duties costs, timed one after another on the run loop's
//! thread, for `benches/per-run-duties.sh`. Only a build with the `duty-timing` feature keeps
//! the time: in every other build each mark is an empty function, so the loop is as it would
//! be without them.

/// One duty of the run loop; each lasts from its mark to the next mark, of any duty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Duty {
    Planning,
    Preparing,
    SamplingBefore,
    Running,
    SamplingAfter,
    Reaping,
    CheckingRoom,
    Verifying,
    Packing,
    ReadingValues,
    Appending,
    Concluding,
}

mod timed {
    use super::Duty;
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::time::Instant;

    /// The duty under way, and the nanoseconds spent in each so far.
    #[derive(Default)]
    struct Book {
        current: Option<(Duty, Instant)>,
        spent: BTreeMap<Duty, u128>,
    }

    thread_local! {
        static BOOK: RefCell<Book> = RefCell::new(Book::default());
    }

    pub(super) fn begin(duty: Duty) {
        let now = Instant::now();
        BOOK.with_borrow_mut(|book| {
            if let Some((previous, since)) = book.current.replace((duty, now)) {
                *book.spent.entry(previous).or_default() += (now - since).as_nanos();
            }
        });
    }

    /// What `duty` does, for the table.
    fn describe(duty: Duty) -> &'static str {
        match duty {
            Duty::Planning => "taking it from the plan (the plan written, hooks, its request)",
            Duty::Preparing => {
                "preparing its process (its output files, argv, environment, folder), before the clock starts"
            }
            Duty::SamplingBefore => {
                "sampling the machine before it (the previous run's closing sample when recent)"
            }
            Duty::Running => {
                "the run: `clone` to `wait4` (the timed interval), the program's own time included"
            }
            Duty::SamplingAfter => "sampling the machine after it (`/proc/stat`, PSI)",
            Duty::Reaping => "its counters and the processes it left behind",
            Duty::CheckingRoom => "checking the disk has room",
            Duty::Verifying => "checking the session's files were not touched",
            Duty::Packing => "packing its output (the spools into the packs, SHA-256)",
            Duty::ReadingValues => "its row, and the values read from its output",
            Duty::Appending => "appending and flushing its row and values",
            Duty::Concluding => "the progress line, hooks, deciding whether to run it again",
        }
    }

    pub(super) fn start() {
        BOOK.with_borrow_mut(|book| *book = Book::default());
    }

    /// The table of the duties timed since [`start`], per run of `runs`; empty when none ran.
    pub(super) fn table(runs: usize) -> String {
        use std::fmt::Write;
        BOOK.with_borrow_mut(|book| {
            let now = Instant::now();
            if let Some((last, since)) = book.current.take() {
                *book.spent.entry(last).or_default() += (now - since).as_nanos();
            }
            let mut table = String::new();
            if runs == 0 {
                return table;
            }
            let per_run = |ns: u128| ns as f64 / runs as f64 / 1e3;
            table.push_str("| duty (per run) | µs |\n|---|---|\n");
            let mut outside = 0.0;
            for (duty, ns) in &book.spent {
                let _ = writeln!(table, "| {} | {:.1} |", describe(*duty), per_run(*ns));
                if *duty != Duty::Running {
                    outside += per_run(*ns);
                }
            }
            let _ = writeln!(table, "| all but the run itself | {outside:.1} |");
            let _ = writeln!(table, "({runs} runs)");
            book.spent.clear();
            table
        })
    }
}

/// Marks the start of `duty` on this thread (and the end of the one before); nothing unless
/// lab is built with the `duty-timing` feature.
#[inline(always)]
pub(crate) fn begin(duty: Duty) {
    if cfg!(feature = "duty-timing") {
        timed::begin(duty);
    }
}

/// Forgets what was timed before (calibration's runs): the run loop starts.
#[inline(always)]
pub(crate) fn start() {
    if cfg!(feature = "duty-timing") {
        timed::start();
    }
}

/// Prints each duty's time per run of the `runs` just run, as a Markdown table on standard
/// error, and starts counting afresh.
#[inline(always)]
pub(crate) fn report(runs: usize) {
    if cfg!(feature = "duty-timing") {
        eprint!("{}", timed::table(runs));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn each_duty_lasts_until_the_next_mark_and_the_table_divides_by_the_runs() {
        timed::start();
        for _ in 0..2 {
            timed::begin(Duty::Planning);
            std::thread::sleep(Duration::from_millis(2));
            timed::begin(Duty::Running);
            std::thread::sleep(Duration::from_millis(10));
        }
        let table = timed::table(2);
        let micros = |row: &str| -> f64 {
            let line = table.lines().find(|l| l.starts_with(row)).expect(row);
            line.rsplit('|').nth(1).unwrap().trim().parse().unwrap()
        };
        let planning = micros("| taking it from the plan");
        let running = micros("| the run:");
        // Sleeps last at least as long as asked (longer on a busy machine).
        assert!(planning >= 2_000.0, "{table}");
        assert!(running >= 10_000.0, "{table}");
        assert_eq!(micros("| all but the run itself"), planning);
        assert!(table.ends_with("(2 runs)\n"), "{table}");
        // The table starts counting afresh.
        assert_eq!(
            timed::table(1).lines().count(),
            4,
            "header, total and count only"
        );
    }
}
