//! The session manifest: everything about the machine and the experiment needed to trust or
//! reproduce a session. Its file, of the current format, is read and written by
//! [`super::manifest_file`].

use lab_config::Experiment;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::{Command, Stdio};

/// Written at session start, completed at its end. A key an older record lacks is given its
/// value by `manifest_file::upgrade`; the keys marked `default` here are left out of every
/// record where they hold nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub lab_version: String,
    pub experiment: String,
    /// SHA-256 of the lab.toml the session ran with (sealed in `sealed/lab.toml`).
    pub experiment_file_hash: String,
    pub profile: Option<String>,
    /// The command line that started the session, as typed.
    pub command: String,
    pub seed: u64,
    pub order: String,
    pub planned_runs: usize,
    pub git: Option<GitState>,
    pub host: Host,
    pub load_before: String,
    pub load_after: Option<String>,
    pub started_utc: String,
    pub finished_utc: Option<String>,
    /// True once every planned run has finished.
    pub complete: bool,
    /// How many times `lab run --resume` continued the session.
    pub resumed: u32,
    /// The session this one was derived from by `lab reanalyze`: same runs, today's lab.toml.
    pub derived_from: Option<String>,
    /// For a session across git revisions (`lab run --revs BASE,HEAD`): the revisions, base
    /// first, and how their comparison is judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revisions: Option<Revisions>,
    /// For results another harness measured (`lab import`): which tool, from which files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<ImportRecord>,
    /// For a session measured on another machine and received as a bundle (`lab import
    /// lab`): the bundle it came in. The machine's fingerprint is the manifest's own `host`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<ReceivedRecord>,
    /// A name the author gave the session (`lab run --label`), shown in its history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The most runs `lab run --jobs N` let execute at once (N); absent when they ran one at
    /// a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<usize>,
    /// Why the session's own files cannot be trusted whole (a run changed them).
    pub damaged: Option<String>,
    pub versions: Vec<ToolVersion>,
    pub build: Option<BuildReport>,
    pub calibration: Option<Calibration>,
    /// For a session run on a cluster (`lab run --on slurm`): the jobs and every node that
    /// ran its runs. `host` is then the machine that submitted it; the runs' machines are here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Cluster>,
    /// How the session's runs and builds were kept from its record; absent in sessions
    /// recorded before lab isolated them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<IsolationRecord>,
    /// The perf counters the session asked for (`[experiment] counters`), by perf's name:
    /// `available`, or `unavailable: <why>` (no value recorded for it, never zero).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub counters: std::collections::BTreeMap<String, String>,
    /// SHA-256 of each of the session's own files (runs.csv, samples.csv, plan.json, the
    /// sealed files, the packed logs) as lab wrote them, by path within the session, sealed
    /// when the session closed; every read checks them. The manifest's own SHA-256 is kept
    /// outside the project, in lab's state folder ([`crate::seal`]): a manifest sealed again
    /// by anyone but lab is damaged, and a session lab has no record of (nor git) is
    /// unrecorded, never the latest.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub digests: std::collections::BTreeMap<String, String>,
    /// The analysis the session is read with, which fixes the generator of its resamples
    /// ([`lab_basis::Generator::of_analysis`]): [`ANALYSIS`] for a session recorded now;
    /// absent, and so 1, in a session recorded before there was a second. A session keeps
    /// its analysis; `lab reanalyze` derives one with today's.
    #[serde(default = "first_analysis", skip_serializing_if = "is_first_analysis")]
    pub analysis: u32,
    /// How each run's own waiting for a CPU was measured, and why a finer way was missing;
    /// absent in sessions recorded before lab measured it run by run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<String>,
    /// Where a sampled session stopped because its next look would not fit in its time
    /// budget; absent where it stopped otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_stop: Option<TimeStop>,
    /// The processes other than lab's that used the most CPU time while the session ran
    /// (from `/proc`), busiest first: who kept the machine busy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disturbers: Vec<Disturber>,
    /// With `layout = "randomized"`: why some runs' heaps were not shifted, one sentence per
    /// reason ("`build/bench` is statically linked: …"); empty where every heap was, and in
    /// sessions recorded before lab shifted heaps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heap_unshifted: Vec<String>,
    /// The SHA-256 of each file that defines what the session measured, by its path in the
    /// experiment folder: what the build reads and writes, and the files the commands name.
    /// A chapter whose files differ today says so. Absent in sessions recorded before lab
    /// kept them (their build's `fingerprint` is compared instead), across revisions and in
    /// imported sessions.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sources: std::collections::BTreeMap<String, String>,
}

/// Why a sampled session took no further look: the look it stopped at, its time budget, the
/// time its runs had taken, and what the next look would have needed, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeStop {
    pub look: u32,
    pub budget_s: f64,
    pub used_s: f64,
    pub next_look_s: f64,
}

/// A process that used CPU time beside a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disturber {
    pub pid: u32,
    pub name: String,
    /// CPU seconds it used while the session ran.
    pub cpu_s: f64,
    /// Its CPU time as a share of the session's wall time (2.0: two CPUs' worth).
    pub share: f64,
}

impl Disturber {
    /// "sh (pid 812) 98% of a CPU".
    pub fn describe(&self) -> String {
        format!(
            "{} (pid {}) {:.0}% of a CPU",
            self.name,
            self.pid,
            self.share * 100.0
        )
    }
}

/// The analysis of sessions recorded now: intervals resampled from xoshiro256++ streams
/// (from analysis 2), every run's timing kept with its disturbance beside it (analysis 3).
pub const ANALYSIS: u32 = 3;

/// The first analysis that keeps the timings of runs the machine disturbed and weighs their
/// disturbance in each verdict; earlier ones discarded them.
pub const KEEPS_DISTURBED: u32 = 3;

fn first_analysis() -> u32 {
    1
}

fn is_first_analysis(analysis: &u32) -> bool {
    *analysis == 1
}

/// The protection a session's runs and builds had (`exec::isolation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IsolationRecord {
    /// What kept runs from writing `read_only`: `mount namespace`, `landlock (ABI N)` or
    /// `none`.
    pub files: String,
    /// What ended each run's whole process tree with lab: `cgroup v2`, `cgroup v1`, or
    /// `process group` (a process that left its run's group survives a SIGKILL of lab).
    pub processes: String,
    /// What runs and builds could read but not write.
    pub read_only: Vec<String>,
    /// What kept each run from signalling processes it did not start (runs beside it, lab,
    /// the rest of the machine); `None` where nothing did, or in sessions recorded before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signals: Option<String>,
    /// What kept runs from seeing lab and the rest of the machine's processes: the session's
    /// own PID namespace with its `/proc`; `None` where nothing did, or in sessions recorded
    /// before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<String>,
    /// Why a protection is missing; empty when every one held.
    pub why: Vec<String>,
}

impl IsolationRecord {
    /// No protection, for the reason given.
    pub fn none(why: &str) -> IsolationRecord {
        IsolationRecord {
            files: "none".to_string(),
            processes: "process group".to_string(),
            read_only: Vec::new(),
            signals: None,
            pids: None,
            why: vec![why.to_string()],
        }
    }
}

/// The cluster a session's runs ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    /// The workload manager that placed the runs: `slurm`.
    pub engine: String,
    /// Every job submitted for the session, in order (resubmissions and resumptions included).
    pub jobs: Vec<String>,
    /// Every node that ran some of its runs, by name.
    pub nodes: Vec<Node>,
}

/// A cluster node as it was when it ran a share of the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The name the workload manager knows it by (`SLURMD_NODENAME`), else its host name.
    pub name: String,
    pub host: Host,
    /// What calibration measured on the node itself before its first run.
    pub calibration: Option<Calibration>,
}

impl Manifest {
    /// The record of a session of `exp` starting at `started_unix_ms` on `host`: the
    /// experiment, the command, the repository's commit and the machine's load now; nothing
    /// finished, built, calibrated or versioned yet.
    pub fn new(
        exp: &Experiment,
        command: &str,
        planned_runs: usize,
        host: Host,
        started_unix_ms: u64,
    ) -> Manifest {
        Manifest {
            lab_version: env!("CARGO_PKG_VERSION").to_string(),
            experiment: exp.name.clone(),
            experiment_file_hash: exp.source_hash.clone(),
            profile: exp.profile.clone(),
            command: command.to_string(),
            seed: exp.seed,
            order: format!("{:?}", exp.order).to_lowercase(),
            planned_runs,
            git: git_state(&exp.dir),
            host,
            load_before: load_average(),
            load_after: None,
            started_utc: utc_timestamp(started_unix_ms),
            finished_utc: None,
            complete: false,
            resumed: 0,
            derived_from: None,
            revisions: None,
            imported: None,
            received: None,
            label: None,
            jobs: None,
            damaged: None,
            versions: Vec::new(),
            build: None,
            calibration: None,
            cluster: None,
            isolation: None,
            counters: std::collections::BTreeMap::new(),
            digests: std::collections::BTreeMap::new(),
            analysis: ANALYSIS,
            waiting: None,
            time_stop: None,
            disturbers: Vec::new(),
            heap_unshifted: Vec::new(),
            sources: std::collections::BTreeMap::new(),
        }
    }

    /// The generator of this session's analysis, or why this lab cannot read it.
    pub fn generator(&self) -> Result<lab_basis::Generator, String> {
        lab_basis::Generator::of_analysis(self.analysis).ok_or_else(|| {
            format!(
                "key `analysis`: the session was recorded for analysis {}, which this lab ({}) does not know (it reads analyses 1 to {ANALYSIS})\n  hint: report it with the lab that recorded it ({}) or a newer one",
                self.analysis,
                env!("CARGO_PKG_VERSION"),
                self.lab_version
            )
        })
    }

    /// Whether the session's disturbed runs keep their timings, their disturbance weighed in
    /// each verdict ([`KEEPS_DISTURBED`]), rather than being discarded.
    pub fn keeps_disturbed(&self) -> bool {
        self.analysis >= KEEPS_DISTURBED
    }

    /// Marks the session ended now, with every planned run finished or not.
    pub fn end(&mut self, complete: bool) {
        self.finished_utc = Some(utc_timestamp(now_unix_ms()));
        self.complete = complete;
    }

    /// The commit the session measured, `(uncommitted changes)` after it where the tree had
    /// some, or "not a git checkout".
    pub fn commit_line(&self) -> String {
        self.git.as_ref().map_or("not a git checkout".into(), |g| {
            let dirty = if g.dirty {
                " (uncommitted changes)"
            } else {
                ""
            };
            format!("{}{dirty}", g.commit)
        })
    }

    /// How the session came to be, in a few words: complete, incomplete, resumed, derived.
    pub fn status(&self) -> String {
        let mut parts = vec![
            if self.complete {
                "complete"
            } else {
                "incomplete"
            }
            .to_string(),
        ];
        if self.resumed > 0 {
            parts.push(format!(
                "resumed {} time{}",
                self.resumed,
                if self.resumed == 1 { "" } else { "s" }
            ));
        }
        if let Some(parent) = &self.derived_from {
            parts.push(format!("re-analysed from session {parent}"));
        }
        if self.damaged.is_some() {
            parts.push("damaged".to_string());
        }
        parts.join(", ")
    }
}

/// Where an imported session's values come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportRecord {
    /// The tool that measured them, with its version when its files record it.
    pub tool: String,
    pub version: Option<String>,
    /// Every file read, with its SHA-256.
    pub files: Vec<ImportedFile>,
    /// What the files record about the machine and the tool's settings.
    pub context: std::collections::BTreeMap<String, String>,
    /// Some benchmark had only a summary in its file, no raw values.
    pub summary_only: bool,
    /// The machine or build the files came from, as `lab import` told them apart (their
    /// host name, `machine-N`, or `--machine`'s label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// Every run's exit is the one its file records (hyperfine's `exit_codes`), so the exit
    /// check judges them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exit_codes: bool,
}

/// The bundle a received session came in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReceivedRecord {
    /// The bundle's file name as it was imported.
    pub bundle: String,
    /// SHA-256 of the bundle's index, which lists every member's digest: the same bundle
    /// imported again has the same one.
    pub index_sha256: String,
    /// The session's folder name on the machine that measured it.
    pub session: String,
    /// When it was imported here.
    pub received_utc: String,
}

/// A file `lab import` read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedFile {
    pub path: String,
    pub sha256: String,
}

/// The revisions a session measured side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Revisions {
    /// Base first, then the revision compared with it.
    pub revs: Vec<Revision>,
    /// Changes within ± this share count as noise.
    pub threshold: f64,
    /// The session whose regression this one was run to confirm (`--confirm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirms: Option<String>,
    /// `--until-decided MAX`: runs were added to the cells still inconclusive, up to MAX per
    /// cell, though lab.toml fixed the number of runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_decided: Option<u32>,
    /// `--duet`: each pair of runs, one of each revision, executed at the same time on these
    /// two disjoint CPU sets, and the comparison is the ratio taken per pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duet: Option<lab_config::DuetSides>,
    /// How the comparison pairs the two revisions' runs. Sessions recorded before pairing
    /// read back as [`Pairing::Unpaired`], and keep the verdicts they were published with.
    #[serde(default, skip_serializing_if = "Pairing::is_unpaired")]
    pub pairing: Pairing,
}

/// How a comparison across revisions pairs runs: each base run with the head run of the
/// same cell it was measured beside, so that what disturbed both cancels in their ratio.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// Each revision's runs resampled on their own (sessions recorded before pairing).
    #[default]
    Unpaired,
    /// The two runs of a cell in one shuffled block (the same repetition), which ran within
    /// one block's time of each other.
    Blocks,
    /// The two runs executed at the same time (`--duet`).
    Duet,
}

impl Pairing {
    fn is_unpaired(&self) -> bool {
        *self == Pairing::Unpaired
    }
}

/// A revision as the user named it and the commit it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Revision {
    pub name: String,
    pub commit: String,
}

/// What the build step did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildReport {
    pub command: Vec<String>,
    pub fingerprint: String,
    /// False when the inputs were unchanged and the outputs present.
    pub ran: bool,
    pub wall_ms: u64,
}

/// What the session-start calibration measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub timer_reported_resolution_ns: u64,
    pub timer_granularity_ns: u64,
    pub timer_read_ns: f64,
    /// Median wall time of running `true`.
    pub spawn_median_ns: u64,
    /// Interquartile range of the same: the noise any run's wall time carries.
    pub spawn_iqr_ns: u64,
    /// Median absolute deviation of the same: a spread that a few slow spawns cannot inflate.
    /// Sessions stored before it was recorded are judged on the IQR.
    pub spawn_mad_ns: Option<u64>,
    pub spawn_samples: usize,
    /// The start-up of the command lab.toml's `start_up` names, taken out of every run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_up: Option<StartUpCost>,
}

/// What starting a command with nothing to do costs (`sh -c ''`), measured at the session's
/// start and taken out of every run's wall time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartUpCost {
    pub argv: Vec<String>,
    pub median_ns: u64,
    pub mad_ns: u64,
    pub samples: usize,
}

impl StartUpCost {
    /// The standard error of the median, in seconds.
    pub fn standard_error_s(&self) -> f64 {
        lab_basis::median_standard_error(self.mad_ns as f64 / 1e9, self.samples)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GitState {
    pub commit: String,
    pub dirty: bool,
}

/// Facts about the machine, each `None` where it could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub name: String,
    pub cpu_model: Option<String>,
    pub logical_cpus: usize,
    pub allowed_cpus: Option<String>,
    pub governor: Option<String>,
    pub turbo: Option<String>,
    pub kernel: Option<String>,
    pub memory_total: Option<String>,
    /// The kernel's clock source (tsc, kvm-clock, hpet…): a clock read from user space costs
    /// nanoseconds on some and a system call on others. Sessions stored before it was
    /// recorded have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<String>,
}

/// A declared version command and what it printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolVersion {
    pub command: Vec<String>,
    pub output: String,
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The value of the `KEY: value` line of a file under /proc, trimmed.
pub(super) fn proc_field(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// Reads what can be read about this machine.
pub fn host() -> Host {
    let turbo = read_trimmed("/sys/devices/system/cpu/intel_pstate/no_turbo")
        .map(|v| {
            if v == "1" {
                "off".to_string()
            } else {
                "on".to_string()
            }
        })
        .or_else(|| {
            read_trimmed("/sys/devices/system/cpu/cpufreq/boost")
                .map(|v| if v == "1" { "on".into() } else { "off".into() })
        });
    Host {
        name: host_name(),
        cpu_model: proc_field("/proc/cpuinfo", "model name"),
        logical_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        allowed_cpus: proc_field("/proc/self/status", "Cpus_allowed_list"),
        governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        turbo,
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        memory_total: proc_field("/proc/meminfo", "MemTotal"),
        clocksource: read_trimmed(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        ),
    }
}

/// The host name, safe to use in a folder name.
pub fn host_name() -> String {
    let raw = read_trimmed("/proc/sys/kernel/hostname").unwrap_or_else(|| "host".to_string());
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The 1, 5 and 15 minute load averages.
pub fn load_average() -> String {
    read_trimmed("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The commit of the repository holding `dir`, and whether its work tree has changes.
pub fn git_state(dir: &Path) -> Option<GitState> {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    let commit = String::from_utf8_lossy(&git(&["rev-parse", "HEAD"])?.stdout)
        .trim()
        .to_string();
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|o| !o.stdout.is_empty());
    Some(GitState { commit, dirty })
}

/// Runs each declared version command, keeping the first lines it printed (stdout or stderr).
pub fn tool_versions(commands: &[Vec<String>], dir: &Path) -> Vec<ToolVersion> {
    commands
        .iter()
        .map(|argv| {
            let output = match Command::new(&argv[0])
                .args(&argv[1..])
                .current_dir(dir)
                .stdin(Stdio::null())
                .output()
            {
                Ok(o) => {
                    let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
                    text.push_str(&String::from_utf8_lossy(&o.stderr));
                    text.trim().lines().take(5).collect::<Vec<_>>().join("\n")
                }
                Err(e) => format!("cannot start `{}`: {e}", argv[0]),
            };
            ToolVersion {
                command: argv.clone(),
                output,
            }
        })
        .collect()
}

/// A UTC timestamp `YYYY-MM-DDTHH:MM:SSZ` from Unix milliseconds (civil-from-days, H. Hinnant).
pub fn utc_timestamp(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Now, in Unix milliseconds.
pub fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_timestamps_match_known_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        // 2026-11-29T22:43:46Z
        assert_eq!(utc_timestamp(1_795_992_226_000), "2026-11-29T22:43:46Z");
        // A leap day: 2024-02-29T12:00:00Z
        assert_eq!(utc_timestamp(1_709_208_000_000), "2024-02-29T12:00:00Z");
    }

    #[test]
    fn a_host_stored_before_the_clock_source_was_recorded_reads_and_writes_unchanged() {
        let text = r#"{"name":"vm","cpu_model":"AMD EPYC","logical_cpus":2,"allowed_cpus":"0-1","governor":null,"turbo":null,"kernel":"6.1.0","memory_total":"24683656 kB"}"#;
        let host: Host = serde_json::from_str(text).expect("old host");
        assert_eq!(host.clocksource, None);
        assert_eq!(serde_json::to_string(&host).expect("json"), text);
    }

    #[test]
    fn the_clock_source_is_read_where_the_kernel_names_it() {
        let path = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
        assert_eq!(host().clocksource, read_trimmed(path));
    }
}
