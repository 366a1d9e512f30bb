//! Instruction counts without a PMU (`counters = ["callgrind-instructions"]`): every run goes
//! under `valgrind --tool=callgrind`, which executes the program on a synthetic CPU and counts
//! each user-space instruction it executes (its `Ir` event), in every process the run starts
//! (`--trace-children=yes`). The count does not depend on how busy the machine is; the run
//! takes 20 to 100 times its native time, so its times are valgrind's.
//!
//! Valgrind writes each process's profile into a folder lab makes for the run
//! (`--callgrind-out-file=DIR/callgrind.out.%p`), and lab sums their `totals:` lines after the
//! run ended. The run's standard error, where valgrind also prints `==PID== Collected : N`, is
//! the run's to write and counts for nothing: a run printing such a line does not set its own
//! count. Valgrind shares its process with the program it runs, so a program that looked for
//! the folder could still write there; lab makes one per run, with a name no other run sees.

use lab_config::counter::OUT_FILE_PLACEHOLDER;
use std::path::{Path, PathBuf};

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

/// The folder callgrind writes a run's profiles into, and the run's command with it named:
/// made for one run, removed with this value.
pub(crate) struct OutFiles {
    dir: PathBuf,
    argv: Vec<String>,
}

impl OutFiles {
    /// For a command run under callgrind (one holding the plan's placeholder option), a new
    /// folder and the command writing into it; `None` for any other command.
    pub(crate) fn for_argv(argv: &[String]) -> std::io::Result<Option<OutFiles>> {
        let Some(at) = argv.iter().position(|a| a == OUT_FILE_PLACEHOLDER) else {
            return Ok(None);
        };
        let dir = tempfile::Builder::new()
            .prefix("lab-callgrind-")
            .tempdir()?
            .keep();
        let mut argv = argv.to_vec();
        argv[at] = format!("--callgrind-out-file={}/callgrind.out.%p", dir.display());
        Ok(Some(OutFiles { dir, argv }))
    }

    pub(crate) fn argv(&self) -> &[String] {
        &self.argv
    }

    /// The instructions of every process of the run, summed from the profiles valgrind wrote;
    /// `None` when it wrote none (the run was killed, or valgrind could not start it).
    pub(crate) fn instructions(&self) -> Option<u64> {
        let entries = std::fs::read_dir(&self.dir).ok()?;
        entries
            .flatten()
            .filter_map(|e| profile_total(&e.path()))
            .reduce(u64::saturating_add)
    }
}

impl Drop for OutFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The `totals:` of one profile file (regular files only, read through no link).
fn profile_total(path: &Path) -> Option<u64> {
    let file = lab_store::regular::open_regular(path).ok()?;
    let mut total = None;
    let reader = std::io::BufReader::new(file);
    for line in std::io::BufRead::lines(reader).map_while(Result::ok) {
        if let Some(n) = line.strip_prefix("totals: ") {
            total = n.trim().parse().ok();
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_config::counter::wrap;

    #[test]
    fn a_profiles_totals_count_and_nothing_the_run_printed_does() {
        let dir = tempfile::tempdir().unwrap();
        // What valgrind 3.19 wrote for `sh -c true`, its header and last lines.
        let profile = dir.path().join("callgrind.out.4307");
        std::fs::write(
            &profile,
            "# callgrind format\nevents: Ir\nsummary: 226180\n\ntotals: 226189\n",
        )
        .unwrap();
        assert_eq!(profile_total(&profile), Some(226_189));
        let printed = dir.path().join("stderr");
        std::fs::write(&printed, "==1== Collected : 1000000000000\n").unwrap();
        assert_eq!(profile_total(&printed), None);
    }

    #[test]
    fn a_command_without_the_placeholder_gets_no_folder() {
        let argv = ["./bench".to_string()];
        assert!(OutFiles::for_argv(&argv).unwrap().is_none());
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
        let out = OutFiles::for_argv(&argv).unwrap().unwrap();
        assert!(out.argv()[2].starts_with("--callgrind-out-file=/"));
        assert!(out.argv()[2].ends_with("/callgrind.out.%p"));
        let dir = out.dir.clone();
        assert!(dir.is_dir());
        drop(out);
        assert!(!dir.exists(), "the folder goes with the run");
    }

    #[test]
    fn a_real_run_under_callgrind_counts_the_same_instructions_each_time() {
        if let Err(why) = probe() {
            // CI installs valgrind (.ci/run): there it must be found.
            assert!(std::env::var_os("CI").is_none(), "{why}");
            eprintln!("valgrind is not installed, nothing to count with: {why}");
            return;
        }
        let count = |n: u32| {
            // The program prints a forged total on its stderr: it counts for nothing.
            let script = format!("seq 1 {n} >/dev/null; echo '==1== Collected : 5' >&2");
            let argv = wrap(&["sh".into(), "-c".into(), script]);
            let out = OutFiles::for_argv(&argv).unwrap().unwrap();
            let status = std::process::Command::new(&out.argv()[0])
                .args(&out.argv()[1..])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
            out.instructions().unwrap()
        };
        let (small, again, large) = (count(1000), count(1000), count(100_000));
        // Within a tenth of a percent, not exactly: what differs between two runs of the same
        // work, such as how many digits their process IDs have, costs a few dozen
        // instructions of formatting (706,820 against 706,898 was seen).
        let apart = small.abs_diff(again) as f64 / small as f64;
        assert!(
            apart < 1e-3,
            "the same work, the same count: {small} against {again}"
        );
        assert!(large > 5 * small, "{large} against {small}");
    }
}
