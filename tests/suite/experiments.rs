//! Every experiment under `experiments/`, as a newcomer runs it: its quick profile, in a copy
//! of the folder inside a temporary project (the repository's data/ and book/ stay untouched),
//! ends with exit 1 exactly when a check fails (a failed hypothesis is a result; a usage error or
//! a crash is not),
//! a complete chapter that gives every declared check a verdict, and a session holding exactly
//! the runs its plan lists. The experiments run one after another: they time things.
//!
//! An experiment whose toolchain (the programs its build and variants start) is not on PATH is
//! skipped with a message, or fails the test when `CI` is set.

use crate::common;

use common::{Project, copy_dir, csv_rows, exit_of};
use lab::Exit;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The experiment folders of the repository (those holding a lab.toml), by name.
fn experiments() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", root.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("lab.toml").is_file())
        .collect();
    found.sort();
    found
}

/// The programs an experiment starts by name (its build command's and every variant's first
/// word); a path such as `./build/bench` is the experiment's own output, not a toolchain.
fn toolchain(exp: &lab::config::Experiment) -> Vec<String> {
    let mut programs: Vec<String> = exp
        .build
        .iter()
        .map(|b| &b.argv)
        .chain(exp.variants.iter().map(|v| &v.argv))
        .filter_map(|argv| argv.first())
        .filter(|program| !program.contains('/'))
        .cloned()
        .collect();
    programs.sort();
    programs.dedup();
    programs
}

/// Whether `program` is an executable file in one of PATH's folders.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// A copy of the experiment folder in a new temporary project, without its build outputs
/// (`build/` and lab's build stamp, both ignored by git), so the build runs as on a fresh
/// checkout.
fn project_with(source: &Path, name: &str) -> Project {
    let project = Project::with_fixtures(&[]);
    let target = project.path(&format!("experiments/{name}"));
    std::fs::create_dir_all(&target).expect("create the experiment folder");
    for entry in std::fs::read_dir(source)
        .expect("read the experiment")
        .flatten()
    {
        let file_name = entry.file_name();
        if file_name == "build" || file_name == ".lab-build" || file_name == ".lab-build.log" {
            continue;
        }
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target.join(&file_name));
        } else {
            std::fs::copy(entry.path(), target.join(&file_name)).expect("copy a file");
        }
    }
    project
}

/// The verdict the chapter's checks table gives the check named `name`, if it has a row.
fn verdict_in(page: &str, name: &str) -> Option<String> {
    // As the chapter shows it: escaped for Markdown by lab, then for HTML by Tera.
    let mut shown = Vec::new();
    tera::escape_html(&lab::render::escape::markdown(name), &mut shown).expect("into memory");
    let cell = format!("| **{}**<br>", String::from_utf8_lossy(&shown));
    page.lines()
        .filter(|line| line.contains(&cell))
        .find_map(|line| {
            let rest = line.strip_prefix("| <span class=\"lab-verdict lab-")?;
            let (_, after) = rest.split_once("\">")?;
            let (word, _) = after.split_once("</span>")?;
            Some(word.to_string())
        })
}

/// The chapter is of a complete quick session, renders the notes, gives every check a
/// verdict, and the book's summary links it.
fn assert_chapter_complete(project: &Project, exp: &lab::config::Experiment) {
    let name = &exp.name;
    let page = project.read(&format!("book/src/{name}/index.md"));
    assert!(
        page.contains("(profile quick; complete)"),
        "{name}: the chapter is not of a complete quick session:\n{page}"
    );
    assert!(page.contains("## Notes"), "{name}: the notes are rendered");
    for check in &exp.checks {
        let verdict = verdict_in(&page, &check.name);
        assert!(
            matches!(
                verdict.as_deref(),
                Some("pass" | "fail" | "inconclusive" | "not run")
            ),
            "{name}: check {:?} has no verdict in the chapter (found {verdict:?}):\n{page}",
            check.name
        );
    }
    assert!(
        project
            .read("book/src/SUMMARY.md")
            .contains(&format!("{name}/index.md")),
        "{name}: the book's summary links the chapter"
    );
}

/// runs.csv holds every run plan.json lists, each once, and no other.
fn assert_plan_stored_once(session: &Path, name: &str) {
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("plan.json")).unwrap())
            .unwrap_or_else(|e| panic!("{name}: plan.json: {e}"));
    let planned: Vec<&str> = plan["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: plan.json has no runs"))
        .iter()
        .map(|r| r["id"].as_str().expect("a run id"))
        .collect();
    let mut stored: BTreeMap<String, usize> = BTreeMap::new();
    for row in csv_rows(&session.join("runs.csv")) {
        *stored.entry(row["run_id"].clone()).or_default() += 1;
    }
    assert!(!planned.is_empty(), "{name}: the plan holds runs");
    for id in &planned {
        assert_eq!(
            stored.get(*id),
            Some(&1),
            "{name}: planned run {id} is stored {} times",
            stored.get(*id).unwrap_or(&0)
        );
    }
    assert_eq!(
        stored.len(),
        planned.len(),
        "{name}: runs.csv holds runs the plan does not list"
    );
}

/// Runs one experiment's quick profile and asserts what a finished session must hold.
fn quick_profile_finishes(source: &Path, exp: &lab::config::Experiment) {
    let name = &exp.name;
    let project = project_with(source, name);
    let started = std::time::Instant::now();
    let out = project.lab(&[
        "run",
        &format!("experiments/{name}"),
        "--profile",
        "quick",
        "--quiet",
    ]);
    eprintln!(
        "{name}: the quick profile took {:.0} s, {:?}",
        started.elapsed().as_secs_f64(),
        exit_of(&out)
    );
    // The quick profile times real programs, so whether a check fails depends on the machine;
    // what does not is that lab exits CheckFailed exactly when one of its verdicts is a fail.
    let failed = common::verdicts(&project, &format!("experiments/{name}"))
        .iter()
        .any(|check| check["verdict"] == "fail");
    assert_eq!(
        exit_of(&out),
        Exit::failed_if(failed),
        "{name}: lab run --profile quick\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains(&format!("{name} — session")),
        "{name}: {summary}"
    );

    assert_chapter_complete(&project, exp);

    assert_plan_stored_once(&project.session(name), name);
}

#[test]
fn every_experiment_s_quick_profile_writes_a_complete_chapter() {
    let in_ci = std::env::var_os("CI").is_some();
    let mut missing = Vec::new();
    let mut ran = 0;
    // One after another in this one test: the experiments are timing-sensitive.
    for source in experiments() {
        let exp = lab::config::load(&source, Some("quick"))
            .unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        let absent: Vec<String> = toolchain(&exp)
            .into_iter()
            .filter(|p| !on_path(p))
            .collect();
        if !absent.is_empty() {
            let why = format!("{}: skipped, {} not on PATH", exp.name, absent.join(", "));
            eprintln!("{why}");
            missing.push(why);
            continue;
        }
        quick_profile_finishes(&source, &exp);
        ran += 1;
    }
    assert!(
        !in_ci || missing.is_empty(),
        "CI is set, so every experiment must run: {}",
        missing.join("; ")
    );
    eprintln!("{ran} experiments ran their quick profile");
}
