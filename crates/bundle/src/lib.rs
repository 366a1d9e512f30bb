//! A sealed session as one portable file, beside the store: `lab bundle` writes it
//! ([`write_bundle`]) and `lab import lab` reads it back ([`receive`]) as hostile input.
//!
//! A bundle is a POSIX ustar archive ([`archive`]) whose first member, `bundle.json`, is the
//! index: the experiment, the session, and every other member's path, size and SHA-256, in
//! the order they follow. The members are the session's own files under their names in the
//! session folder: manifest.json (with the machine's fingerprint), plan.json, runs.csv,
//! samples.csv, sealed/lab.toml, sealed/notes.md, sealed/references.bib, and the runs' output (logs/stdout.pack and
//! logs/stderr.pack, or logs/rNNNN.out and .err in sessions from before the packs). Nothing
//! else is written, and nothing else is read back.

pub mod archive;
mod receive;
mod write;

pub use receive::{Received, receive};
pub use write::{Written, write_bundle};

use serde::{Deserialize, Serialize};

/// The index's own member name: always the first member.
pub const INDEX: &str = "bundle.json";
/// What the index's `format` field says.
pub const FORMAT: &str = "lab bundle";
/// The version of the layout this lab writes and reads.
pub const VERSION: u32 = 1;

/// The most bytes the index may hold: a session of 100,000 runs with a log file per run
/// stays well under it.
pub const MAX_INDEX_BYTES: u64 = 32 << 20;
/// The most bytes one member may hold.
pub const MAX_MEMBER_BYTES: u64 = 1 << 30;
/// The most bytes all members together may hold.
pub const MAX_TOTAL_BYTES: u64 = 2 << 30;
/// The most members a bundle may list (two log files per run of a 100,000-run session, and
/// the session's own files).
pub const MAX_MEMBERS: usize = 200_016;

/// The index: what the bundle holds, each member with its size and digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Index {
    pub format: String,
    pub version: u32,
    /// The experiment's name, as its data folder is named.
    pub experiment: String,
    /// The session's folder name where it was measured.
    pub session: String,
    /// The lab that wrote the bundle.
    pub lab_version: String,
    pub members: Vec<Member>,
}

/// One member of a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

/// The session files a bundle carries, besides the runs' own log files, in the order they
/// are written.
pub const SESSION_FILES: [&str; 9] = [
    lab_store::MANIFEST,
    lab_store::PLAN,
    lab_store::RUNS,
    lab_store::SAMPLES,
    "sealed/lab.toml",
    "sealed/notes.md",
    "sealed/references.bib",
    "logs/stdout.pack",
    "logs/stderr.pack",
];

/// The files a session must have for a bundle of it to mean anything.
pub const REQUIRED_FILES: [&str; 5] = [
    lab_store::MANIFEST,
    lab_store::PLAN,
    lab_store::RUNS,
    lab_store::SAMPLES,
    "sealed/lab.toml",
];

/// Whether `path` is a name a bundle may hold: one of [`SESSION_FILES`], or a run's own log
/// file `logs/rNNNN.out` or `logs/rNNNN.err` (four digits or more).
pub fn is_member_name(path: &str) -> bool {
    SESSION_FILES.contains(&path) || is_run_log(path)
}

/// `logs/r0042.out` or `logs/r0042.err`.
fn is_run_log(path: &str) -> bool {
    let Some(file) = path.strip_prefix("logs/r") else {
        return false;
    };
    let Some((digits, ext)) = file.split_once('.') else {
        return false;
    };
    digits.len() >= 4
        && digits.len() <= 9
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (ext == "out" || ext == "err")
}

/// Why a path cannot be a member: absolute, climbing out with `..`, or not a name lab
/// writes. `None` for a good name.
pub fn path_problem(path: &str) -> Option<String> {
    if path.starts_with('/') {
        return Some("is an absolute path".into());
    }
    if path.split('/').any(|part| part == "..") {
        return Some("climbs out of the session folder with `..`".into());
    }
    if path.split('/').any(|part| part.is_empty() || part == ".") || path.contains('\0') {
        return Some("is not a plain relative path".into());
    }
    (!is_member_name(path)).then(|| {
        "is not a file of a lab session (expected manifest.json, plan.json, runs.csv, samples.csv, sealed/lab.toml, sealed/notes.md, sealed/references.bib, logs/stdout.pack, logs/stderr.pack or logs/rNNNN.out/.err)".into()
    })
}

/// A size in words: "1.5 GiB", "312 KiB", "96 bytes".
pub fn size_words(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size {
            return format!("{:.1} {unit}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_names_a_session_holds_are_members() {
        for good in [
            "runs.csv",
            "sealed/lab.toml",
            "logs/r0042.out",
            "logs/r12345.err",
        ] {
            assert_eq!(path_problem(good), None, "{good}");
        }
        let problem = |p: &str| path_problem(p).unwrap();
        assert_eq!(problem("/etc/passwd"), "is an absolute path");
        assert!(problem("logs/../../x").contains("`..`"));
        assert!(problem("sealed/./lab.toml").contains("plain relative path"));
        for bad in [
            "logs/r42.out",
            "logs/r0042.sh",
            "x.csv",
            "sealed/lab.toml/x",
        ] {
            assert!(
                problem(bad).contains("not a file of a lab session"),
                "{bad}"
            );
        }
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(size_words(96), "96 bytes");
        assert_eq!(size_words(3 << 19), "1.5 MiB");
        assert_eq!(size_words(5 << 30), "5.0 GiB");
    }
}
