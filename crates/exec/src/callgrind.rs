//! Instruction counts without a PMU (`counters = ["callgrind-instructions"]`): every run goes
//! under `valgrind --tool=callgrind`, which executes the program on a synthetic CPU and counts
//! each user-space instruction it executes (its `Ir` event), in every process the run starts
//! (`--trace-children=yes`). The count does not depend on how busy the machine is; the run
//! takes 20 to 100 times its native time, so its times are valgrind's. Valgrind prints each
//! process's total on the run's standard error (`==PID== Collected : N`), which lab keeps as
//! the run's log and sums after the run ended. No profile file is written
//! (`--callgrind-out-file=/dev/null`).
//!
//! A run prints into its own log only: it could misstate its own count, as it could any
//! value it prints, but no other run's.

use lab_config::counter::VALGRIND;

/// The version valgrind reports (`valgrind-3.19.0`), or why it cannot be run.
pub fn probe() -> Result<String, String> {
    let out = std::process::Command::new(VALGRIND)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("`{VALGRIND} --version` cannot be started: {e}"))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || version.is_empty() {
        return Err(format!(
            "`{VALGRIND} --version` ended with {} and printed {version:?}",
            out.status
        ));
    }
    Ok(version)
}

/// The instructions of every process of the run, summed from its standard error log; `None`
/// when valgrind reported none (the run was killed, or valgrind could not start it).
pub(crate) fn collected(stderr_log: &lab_store::LogRef) -> Option<u64> {
    let mut totals = Vec::new();
    lab_store::read_lines(stderr_log, |line| {
        if let lab_store::Line::Text(text) = line
            && text.contains("== Collected : ")
        {
            totals.push(text.to_string());
        }
    });
    sum_collected(totals.iter().map(String::as_str))
}

/// The sum of valgrind's `==PID== Collected : N` lines among `lines`.
fn sum_collected<'a>(lines: impl Iterator<Item = &'a str>) -> Option<u64> {
    lines.filter_map(collected_line).reduce(u64::saturating_add)
}

/// N of a line `==PID== Collected : N`.
fn collected_line(line: &str) -> Option<u64> {
    let rest = line.trim_end().strip_prefix("==")?;
    let (pid, rest) = rest.split_once("== ")?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.strip_prefix("Collected : ")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_config::counter::wrap;

    fn lines(text: &str) -> impl Iterator<Item = &str> {
        text.lines()
    }

    #[test]
    fn every_process_total_is_summed_and_nothing_else_counts() {
        // What valgrind 3.19 printed for `sh -c 'ls /'`: the shell's child first, then the
        // shell, with the program's own output between.
        let log = "==27531== Callgrind, a call-graph generating cache profiler\n\
                   ==27532== Events    : Ir\n\
                   ==27532== Collected : 571839\n\
                   ==27532== \n\
                   ==27532== I   refs:      571,839\n\
                   hi\n\
                   Collected : 99\n\
                   ==x== Collected : 7\n\
                   ==27531== Collected : 250820\n";
        assert_eq!(sum_collected(lines(log)), Some(571_839 + 250_820));
        assert_eq!(sum_collected(lines("hi\n==1== Events    : Ir\n")), None);
    }

    #[test]
    fn the_run_goes_after_valgrind_and_its_options() {
        let argv = wrap(&["./bench".to_string(), "--n=3".to_string()]);
        assert_eq!(
            argv,
            [
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=/dev/null",
                "--trace-children=yes",
                "./bench",
                "--n=3"
            ]
        );
    }

    #[test]
    fn a_real_run_under_callgrind_counts_the_same_instructions_each_time() {
        if let Err(why) = probe() {
            // CI installs valgrind (.ci/run): there it must be found.
            assert!(std::env::var_os("CI").is_none(), "{why}");
            eprintln!("valgrind is not installed, nothing to count with: {why}");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let count = |n: u32| {
            let log = dir.path().join(format!("err{n}"));
            let argv = wrap(&["seq".into(), "1".into(), n.to_string()]);
            let status = std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .stdout(std::process::Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .status()
                .unwrap();
            assert!(status.success());
            collected(&lab_store::LogRef::File(log)).unwrap()
        };
        let (small, again, large) = (count(1000), count(1000), count(100_000));
        assert_eq!(small, again, "the same work, the same count");
        assert!(large > 10 * small, "{large} against {small}");
    }
}
