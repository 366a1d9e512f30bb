//! Where the records of two sessions differ: the machine, its kernel and governor, the
//! lab.toml, the profile and the tools can each make a comparison meaningless; the commit and
//! lab's version are what a comparison is usually about.

use lab_findings::compare::Difference;
use lab_store::Manifest;

/// A fact of a manifest: its name, how to read it, and whether a difference in it can make a
/// comparison meaningless.
type Fact = (&'static str, fn(&Manifest) -> String, bool);

/// Where two manifests differ: the machine, its kernel and governor, the lab.toml, the
/// profile and the tools' versions can each make a ratio meaningless; the commit and the
/// dirty flag are what a comparison is usually about, and are shown without alarm.
pub fn differences(a: &Manifest, b: &Manifest) -> Vec<Difference> {
    let readings: [Fact; 9] = [
        ("CPU model", |m| known(&m.host.cpu_model), true),
        ("logical CPUs", |m| m.host.logical_cpus.to_string(), true),
        ("kernel", |m| known(&m.host.kernel), true),
        ("governor", |m| known(&m.host.governor), true),
        ("turbo", |m| known(&m.host.turbo), true),
        ("lab.toml SHA-256", |m| short(&m.experiment_file_hash), true),
        (
            "profile",
            |m| m.profile.clone().unwrap_or_else(|| "default".into()),
            true,
        ),
        ("lab version", |m| m.lab_version.clone(), false),
        ("git commit", commit, false),
    ];
    let mut facts: Vec<(&str, String, String, bool)> = readings
        .iter()
        .map(|(what, read, invalidates)| (*what, read(a), read(b), *invalidates))
        .collect();
    // Sessions stored before the clock source was recorded lack it: only two readings differ.
    if let (Some(x), Some(y)) = (&a.host.clocksource, &b.host.clocksource) {
        facts.push(("clock source", x.clone(), y.clone(), true));
    }
    for tool in &b.versions {
        let before = a
            .versions
            .iter()
            .find(|t| t.command == tool.command)
            .map_or_else(|| "not recorded".to_string(), |t| t.output.clone());
        facts.push(("tool", before, tool.output.clone(), true));
    }
    facts
        .into_iter()
        .filter(|(_, x, y, _)| x != y)
        .map(|(what, x, y, invalidates)| Difference {
            what: what.to_string(),
            a: x,
            b: y,
            invalidates,
        })
        .collect()
}

/// A fact the manifest may lack.
fn known(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "unknown".into())
}

/// The commit a session was made at, marked when the tree had uncommitted changes.
pub fn commit(m: &Manifest) -> String {
    m.git.as_ref().map_or_else(
        || "not a git checkout".to_string(),
        |g| {
            format!(
                "{}{}",
                short(&g.commit),
                if g.dirty { " (dirty)" } else { "" }
            )
        },
    )
}

/// The first 12 hex digits of a hash: enough to tell two apart.
pub fn short(hash: &str) -> String {
    hash.chars().take(12).collect()
}
