//! `lab import lab BUNDLE… [--into EXP]`: sessions measured on other machines, received as
//! bundles (`lab bundle`) and added to an experiment here. Each bundle is verified whole in a
//! hidden staging folder under data/ and renamed into place only when every check holds, so
//! a refused bundle leaves nothing behind. A bundle whose sealed lab.toml measures something
//! other than the experiment's is refused, and one already here is named and not added again.

use super::report::{ReportOptions, report};
use crate::error::{Exit, LabError, Result};
use crate::layout::Layout;
use lab_bundle::{self as bundle, Received};
use lab_config as config;
use lab_store::{self as store, Manifest, ReceivedRecord};
use std::path::{Path, PathBuf};

/// The tables of lab.toml that say what is measured: how it is built, what runs, with which
/// parameters, what is read from each run, and the profiles that change them. The title, the
/// hypothesis, the checks and notes.md may differ: each session is judged by its own.
const MEASURED: [&str; 5] = ["build", "variant", "params", "metric", "profile"];

/// The prefix of the staging folder's name under data/, followed by the process id.
const STAGING_PREFIX: &str = ".lab-receive-";

/// What became of one bundle.
enum Outcome {
    /// Put in place as this session folder.
    Added(PathBuf, Box<Manifest>),
    /// Already here, as this session folder.
    AlreadyHere(PathBuf),
}

/// Imports every bundle in turn; each is verified whole before anything of it is written.
pub(super) fn import_bundles(
    layout: &Layout,
    files: &[PathBuf],
    into: Option<&Path>,
    quiet: bool,
) -> Result<Exit> {
    let mut rendered: Vec<PathBuf> = Vec::new();
    for file in files {
        let (dir, outcome) = import_one(layout, file, into)?;
        match outcome {
            Outcome::Added(session, manifest) => {
                if !quiet {
                    println!("{}", added_line(file, &session, &manifest));
                }
                if !rendered.contains(&dir) {
                    rendered.push(dir);
                }
            }
            Outcome::AlreadyHere(session) => println!(
                "{} is already here as session {}: nothing was written",
                file.display(),
                session.display()
            ),
        }
    }
    if !rendered.is_empty() {
        report(
            layout,
            &ReportOptions {
                only: &rendered,
                session: None,
                quiet,
                summary: crate::chapter::summary::Wanted::Verdict,
            },
        )?;
    }
    Ok(Exit::Ok)
}

/// One bundle: verified in staging, checked against the experiment, then moved into place.
fn import_one(layout: &Layout, file: &Path, into: Option<&Path>) -> Result<(PathBuf, Outcome)> {
    let staging = Staging::new(&layout.data())?;
    let refused = |why: String| {
        LabError::Usage(format!(
            "refused {}: {why}\n  nothing was written",
            file.display()
        ))
    };
    let received = bundle::receive(file, &staging.dir).map_err(|e| refused(format!("{e:#}")))?;
    let name = into.map_or_else(
        || PathBuf::from(&received.index.experiment),
        Path::to_path_buf,
    );
    let dir = layout.experiment_dir(&name).map_err(|e| {
        refused(format!(
            "it holds a session of {}, and {e}",
            received.index.experiment
        ))
    })?;
    let exp_name = config::experiment_name(&dir);
    measured_alike(&staging.dir, &dir).map_err(refused)?;
    let data_dir = layout.data_dir(&exp_name);
    if let Some(existing) = already_here(&data_dir, &received) {
        return Ok((dir, Outcome::AlreadyHere(existing)));
    }
    let manifest = mark_received(&staging.dir, file, &received)?;
    let target = free_session_name(&data_dir, &received.index.session);
    staging.place(&target)?;
    Ok((dir, Outcome::Added(target, Box::new(manifest))))
}

/// The line saying what was added and where it was measured.
fn added_line(file: &Path, session: &Path, m: &Manifest) -> String {
    let h = &m.host;
    format!(
        "received {}: session {} of {} ({} runs), measured on {} ({}, {} logical CPUs, kernel {})",
        file.display(),
        session.display(),
        m.experiment,
        m.planned_runs,
        h.name,
        h.cpu_model.as_deref().unwrap_or("CPU not recorded"),
        h.logical_cpus,
        h.kernel.as_deref().unwrap_or("not recorded")
    )
}

/// `Err(why)` when the bundle's sealed lab.toml differs from the experiment's in what is
/// measured (see [`MEASURED`]), naming the first key that differs.
fn measured_alike(staged: &Path, experiment_dir: &Path) -> std::result::Result<(), String> {
    let theirs_path = staged.join(store::SEALED).join(config::FILE_NAME);
    let ours_path = experiment_dir.join(config::FILE_NAME);
    let parse = |path: &Path, whose: &str| -> std::result::Result<toml::Table, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {whose} lab.toml: {e}"))?;
        text.parse::<toml::Table>()
            .map_err(|e| format!("{whose} lab.toml does not parse: {e}"))
    };
    let theirs = parse(&theirs_path, "the bundle's sealed")?;
    let ours = parse(&ours_path, "the experiment's")?;
    for key in MEASURED {
        let empty = toml::Value::Table(toml::Table::new());
        let a = theirs.get(key).unwrap_or(&empty);
        let b = ours.get(key).unwrap_or(&empty);
        if let Some((path, x, y)) = first_difference(key, a, b) {
            return Err(format!(
                "its sealed lab.toml measures something else than {}: `{path}` is {x} in the bundle and {y} here\n  hint: a session is added only to the experiment it measured; check out the lab.toml it ran with (its sealed copy is in the bundle)",
                ours_path.display()
            ));
        }
    }
    Ok(())
}

/// The first key path where `a` and `b` differ, with each side's value (`absent` where one
/// lacks it), keys in sorted order and array items by position.
fn first_difference(
    path: &str,
    a: &toml::Value,
    b: &toml::Value,
) -> Option<(String, String, String)> {
    match (a, b) {
        (toml::Value::Table(x), toml::Value::Table(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(&format!("{path}.{k}"), p, q),
                (p, q) => Some((format!("{path}.{k}"), shown(p), shown(q))),
            })
        }
        (toml::Value::Array(x), toml::Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(&format!("{path}[{i}]"), p, q)),
        _ if a == b => None,
        _ => Some((path.to_string(), shown(Some(a)), shown(Some(b)))),
    }
}

/// A TOML value in a message, at most 80 characters.
fn shown(v: Option<&toml::Value>) -> String {
    let Some(v) = v else {
        return "absent".into();
    };
    let text = v.to_string();
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(79).collect::<String>())
    } else {
        text
    }
}

/// The session folder of `data_dir` that already holds the bundle's session: one received
/// in a bundle with the same index, or the session itself (same name, same rows).
fn already_here(data_dir: &Path, received: &Received) -> Option<PathBuf> {
    let runs = received
        .index
        .members
        .iter()
        .find(|m| m.path == store::RUNS)
        .map(|m| m.sha256.as_str());
    store::sessions(data_dir).into_iter().find(|dir| {
        let Ok(bytes) = store::read_regular(&dir.join(store::MANIFEST)) else {
            return false;
        };
        let Ok(m) = Manifest::from_json(&bytes) else {
            return false;
        };
        let same_bundle = m
            .received
            .as_ref()
            .is_some_and(|r| r.index_sha256 == received.index_sha256);
        let same_session = store::folder_name(dir) == received.index.session
            && store::read_regular(&dir.join(store::RUNS))
                .is_ok_and(|b| Some(store::sha256_hex(&b).as_str()) == runs);
        same_bundle || same_session
    })
}

/// Records in the staged manifest where the session came from; the manifest as written.
fn mark_received(staged: &Path, file: &Path, received: &Received) -> Result<Manifest> {
    let mut manifest = received.session.manifest.clone();
    manifest.received = Some(ReceivedRecord {
        bundle: file
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        index_sha256: received.index_sha256.clone(),
        session: received.index.session.clone(),
        received_utc: store::utc_timestamp(store::now_unix_ms()),
    });
    store::write_json(&staged.join(store::MANIFEST), &manifest.on_disk())
        .map_err(LabError::Other)?;
    Ok(manifest)
}

/// `data_dir/name`, or `name-2`, `name-3`, … where a different session has that name.
fn free_session_name(data_dir: &Path, name: &str) -> PathBuf {
    let wanted = data_dir.join(name);
    if !wanted.exists() {
        return wanted;
    }
    (2..)
        .map(|n| data_dir.join(format!("{name}-{n}")))
        .find(|candidate| !candidate.exists())
        .unwrap_or(wanted)
}

/// The hidden folder under data/ a bundle is verified in. Removed when dropped, with data/
/// itself when this import made it and left it empty.
struct Staging {
    dir: PathBuf,
    made_data: Option<PathBuf>,
}

impl Staging {
    fn new(data: &Path) -> Result<Staging> {
        let made_data = (!data.exists()).then(|| data.to_path_buf());
        std::fs::create_dir_all(data).map_err(|e| {
            LabError::Other(anyhow::anyhow!("cannot create {}: {e}", data.display()))
        })?;
        super::import::remove_abandoned_staging(data, STAGING_PREFIX);
        let dir = data.join(format!("{STAGING_PREFIX}{}", std::process::id()));
        store::remove_planted(&dir)
            .map_err(|e| LabError::Other(anyhow::anyhow!("cannot clear {}: {e}", dir.display())))?;
        Ok(Staging { dir, made_data })
    }

    /// Moves the staged session to `target`, creating the experiment's data folder.
    fn place(&self, target: &Path) -> Result<()> {
        let fail = |e: std::io::Error| {
            LabError::Other(anyhow::anyhow!(
                "cannot move the received session to {}: {e}",
                target.display()
            ))
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        std::fs::rename(&self.dir, target).map_err(fail)?;
        // Received whole and checked, it is sealed here as lab placed it.
        store::seal::record_closed(target).map_err(LabError::Other)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(data) = &self.made_data {
            let _ = std::fs::remove_dir(data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Value {
        toml::Value::Table(text.parse().unwrap())
    }

    #[test]
    fn the_first_measured_difference_is_named_by_its_key_path() {
        let a = table("[[variant]]\nname = \"x\"\nrun = [\"sh\", \"a\"]\n")["variant"].clone();
        let b = table("[[variant]]\nname = \"x\"\nrun = [\"sh\", \"b\"]\n")["variant"].clone();
        let (path, x, y) = first_difference("variant", &a, &b).unwrap();
        assert_eq!(path, "variant[0].run[1]");
        assert_eq!((x.as_str(), y.as_str()), ("\"a\"", "\"b\""));
        assert_eq!(first_difference("variant", &a, &a.clone()), None);
        let c = table("n = [1, 2]\n");
        let d = table("n = [1, 2, 3]\nm = 1\n");
        let (path, x, y) = first_difference("params", &c, &d).unwrap();
        assert_eq!(
            (path.as_str(), x.as_str(), y.as_str()),
            ("params.m", "absent", "1")
        );
    }
}
