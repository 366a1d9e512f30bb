//! Whether a session still describes the experiment as it is: the files that define its
//! measurement (recorded when it started) compared with the experiment folder, and on the
//! machine that ran it, the toolchain's versions compared with today's.

use lab_config::Experiment;
use lab_judge::bisect::short;
use lab_store::{Manifest, ToolVersion};

/// At most this many changes are named one by one; the rest are counted.
const NAMED: usize = 5;

/// What differs today from what the session of manifest `m` measured, one phrase each
/// ("src/LockStack.java changed"), in the experiment `exp` as the session ran it. Empty when
/// nothing does, and for sessions that measured no files of this folder: across revisions, or
/// imported.
pub fn changes(exp: &Experiment, m: &Manifest) -> Vec<String> {
    if m.revisions.is_some() || m.imported.is_some() {
        return Vec::new();
    }
    let here = m.host.name == lab_store::host_name();
    if m.sources.is_empty() {
        return build_changes(exp, m);
    }
    let mut found: Vec<String> = lab_exec::source_changes(exp, &m.sources, here)
        .iter()
        .map(ToString::to_string)
        .collect();
    if here {
        found.extend(toolchain_changes(exp, &m.versions));
    }
    found
}

/// For a session recorded before lab kept each file's digest: whether its build's inputs
/// or command differ, from the build's fingerprint.
fn build_changes(exp: &Experiment, m: &Manifest) -> Vec<String> {
    let (Some(build), Some(recorded)) = (&exp.build, &m.build) else {
        return Vec::new();
    };
    if !lab_exec::build_changed(exp, &recorded.fingerprint) {
        return Vec::new();
    }
    vec![format!(
        "the build's inputs ({}) or its command changed",
        build.inputs.join(", ")
    )]
}

/// Each version command whose first line of output differs from the session's.
fn toolchain_changes(exp: &Experiment, then: &[ToolVersion]) -> Vec<String> {
    let now = lab_store::tool_versions(&exp.versions, &exp.dir);
    then.iter()
        .filter_map(|before| {
            let today = now.iter().find(|v| v.command == before.command)?;
            let (was, is) = (first_line(&before.output), first_line(&today.output));
            (was != is).then(|| {
                format!(
                    "`{}` prints \"{is}\" (it printed \"{was}\")",
                    before.command.join(" ")
                )
            })
        })
        .collect()
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

/// What an up-to-date session was compared on: "its 6 sources and 1 built file", "its
/// build's inputs", or that it recorded nothing to compare.
pub fn compared(m: &Manifest) -> String {
    if m.revisions.is_some() || m.imported.is_some() {
        return "it measured no files of this folder (imported, or across revisions)".into();
    }
    if m.sources.is_empty() {
        return match m.build {
            Some(_) => "its build's inputs and command are as it built them".into(),
            None => "it recorded no files to compare (recorded before lab kept them)".into(),
        };
    }
    let n = m.sources.len();
    format!(
        "the {n} file{} that define{} its measurement are as it ran them{}",
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" },
        if m.versions.is_empty() || m.host.name != lab_store::host_name() {
            ""
        } else {
            ", and so are its toolchain's versions"
        }
    )
}

/// The banner's sentence: what changed since session `name` (of manifest `m`) ran, at which
/// commit, and how to measure again. `changes` is not empty.
pub fn banner(name: &str, m: &Manifest, experiment: &str, changes: &[String]) -> String {
    let commit = m
        .git
        .as_ref()
        .map(|g| {
            let dirty = if g.dirty {
                ", with uncommitted changes"
            } else {
                ""
            };
            format!(" at commit {}{dirty}", short(&g.commit))
        })
        .unwrap_or_default();
    format!(
        "Since session {name} ran{commit}, {}. Its numbers describe the experiment as it was then; `lab run {experiment}` measures it again.",
        listed(changes)
    )
}

/// "a, b and c", or "a, b, c, d, e and 3 more".
fn listed(changes: &[String]) -> String {
    let mut named: Vec<String> = changes.iter().take(NAMED).cloned().collect();
    if changes.len() > NAMED {
        named.push(format!("{} more", changes.len() - NAMED));
    }
    match named.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_listed_in_words_and_counted_past_five() {
        let words = |n: usize| (1..=n).map(|i| format!("f{i} changed")).collect::<Vec<_>>();
        assert_eq!(listed(&words(1)), "f1 changed");
        assert_eq!(listed(&words(2)), "f1 changed and f2 changed");
        assert_eq!(
            listed(&words(7)),
            "f1 changed, f2 changed, f3 changed, f4 changed, f5 changed and 2 more"
        );
    }
}
