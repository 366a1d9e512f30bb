//! The committed book is what the committed sessions render to: every experiment's data/ and
//! experiments/ folder copied into a temporary project, `lab report` run there, and each file
//! of its book/src compared byte for byte with the repository's book/src.

use crate::common::{self, Project};
use lab::Exit;
use std::path::Path;

/// The repository's root.
pub(crate) fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Copies `from` to `to`, leaving out the build outputs and locks git ignores.
fn copy_tracked(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let name = entry.file_name();
        if name == "build" || name == ".lab-build" || name == ".lab-build.log" || name == ".lock" {
            continue;
        }
        let target = to.join(&name);
        if entry.path().is_dir() {
            copy_tracked(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The folder `folder` of the repository as committed (HEAD), written to `to`: the README's
/// main command rewrites the working tree's chapter of lockstack-dip with a session of its own.
/// Outside a git checkout, the folder as it is.
pub(crate) fn committed_tree(folder: &str, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let archive = std::process::Command::new("git")
        .args(["archive", "--format=tar", "HEAD", folder])
        .current_dir(repository())
        .output();
    match archive {
        Ok(out) if out.status.success() => {
            let mut tar = std::process::Command::new("tar")
                .args(["-x", "--strip-components=1", "-C"])
                .arg(to)
                .stdin(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            std::io::Write::write_all(tar.stdin.as_mut().unwrap(), &out.stdout).unwrap();
            drop(tar.stdin.take());
            assert!(
                tar.wait().unwrap().success(),
                "tar could not unpack {folder}"
            );
        }
        _ => crate::common::copy_dir(&repository().join(folder), to),
    }
}

/// The experiments with a committed session, by name.
pub(crate) fn committed_experiments() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repository().join("data"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A project holding the repository's experiments, their committed sessions and the book's
/// settings, not yet rendered.
pub(crate) fn committed_project() -> Project {
    let project = Project::with_fixtures(&[]);
    for folder in ["data", "experiments"] {
        copy_tracked(&repository().join(folder), &project.path(folder));
    }
    std::fs::create_dir_all(project.path("book")).unwrap();
    for file in ["book.toml", "lab.css"] {
        std::fs::copy(
            repository().join("book").join(file),
            project.path("book").join(file),
        )
        .unwrap();
    }
    project
}

#[test]
fn every_committed_session_renders_to_the_committed_book_byte_for_byte() {
    let experiments = committed_experiments();
    assert_eq!(experiments.len(), 6, "{experiments:?}");
    let project = committed_project();
    project.lab_exits(&["report", "--quiet"], Exit::Ok);
    let rendered = common::tree(&project.path("book/src"));
    let committed = common::tree(&repository().join("book/src"));
    assert_eq!(
        rendered.keys().collect::<Vec<_>>(),
        committed.keys().collect::<Vec<_>>(),
        "the rendered book holds the committed book's files"
    );
    for name in &experiments {
        assert!(rendered.contains_key(&format!("{name}/index.md")), "{name}");
    }
    let differing: Vec<&String> = committed
        .iter()
        .filter(|(path, bytes)| rendered[*path] != **bytes)
        .map(|(path, _)| path)
        .collect();
    assert!(
        differing.is_empty(),
        "differ from the committed book: {differing:?}"
    );
}

/// Lines of `markdown` that start a heading right after a line of text or HTML: Markdown
/// (CommonMark's HTML blocks run to the next blank line) prints those as text, not headings.
fn glued_headings(markdown: &str) -> Vec<String> {
    let lines: Vec<&str> = markdown.lines().collect();
    lines
        .windows(2)
        .filter(|pair| pair[1].starts_with('#') && !pair[0].trim().is_empty())
        .map(|pair| format!("{:?} after {:?}", pair[1], pair[0]))
        .collect()
}

#[test]
fn every_heading_of_every_committed_chapter_starts_after_a_blank_line() {
    assert_eq!(glued_headings("text\n\n## a\n"), Vec::<String>::new());
    assert_eq!(glued_headings("<figure></figure>\n## Results\n").len(), 1);
    // The committed sessions rendered afresh: the README's main command adds a session and
    // rewrites its chapter in the repository's own book/.
    let project = committed_project();
    report_on(&project, "2");
    let pages: Vec<std::path::PathBuf> = committed_experiments()
        .iter()
        .flat_map(|name| std::fs::read_dir(project.path("book/src").join(name)).unwrap())
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    assert!(pages.len() >= 7, "{pages:?}");
    for page in pages {
        let glued = glued_headings(&std::fs::read_to_string(&page).unwrap());
        assert!(glued.is_empty(), "{}: {glued:?}", page.display());
    }
}

/// `lab report --quiet` of every experiment of `project` on `threads` threads.
fn report_on(project: &Project, threads: &str) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["report", "--quiet"])
        .current_dir(project.root())
        .env("NO_COLOR", "1")
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .expect("lab runs");
    common::assert_ended(&out, &["report", "--quiet"], Exit::Ok);
}

/// The analysis runs cells, runs and checks on as many threads as the machine has; each
/// result has its own seeded stream and is collected in a fixed order, so one thread and two
/// give the same analysis.json and chapter, byte for byte.
#[test]
fn the_committed_book_is_the_same_bytes_on_one_thread_and_on_two() {
    let committed = common::tree(&repository().join("book/src"));
    for threads in ["1", "2"] {
        let project = committed_project();
        report_on(&project, threads);
        let rendered = common::tree(&project.path("book/src"));
        let analyses = rendered
            .keys()
            .filter(|path| path.ends_with("analysis.json"))
            .count();
        assert_eq!(
            analyses, 6,
            "{threads} thread(s): every experiment's analysis.json"
        );
        let differing: Vec<&String> = committed
            .iter()
            .filter(|(path, bytes)| rendered.get(*path) != Some(*bytes))
            .map(|(path, _)| path)
            .collect();
        assert!(
            differing.is_empty(),
            "{threads} thread(s): differ from the committed book: {differing:?}"
        );
    }
}

/// Read with analysis 2 (each manifest given `"analysis": 2`), the committed sessions give
/// other intervals than the committed book's, and the same bytes on one thread and on two.
#[test]
fn the_committed_sessions_read_with_analysis_2_are_the_same_bytes_on_one_thread_and_on_two() {
    let mut books = Vec::new();
    for threads in ["1", "2"] {
        let project = committed_project();
        let mut manifests = 0;
        for experiment in std::fs::read_dir(project.path("data")).unwrap() {
            for session in std::fs::read_dir(experiment.unwrap().path()).unwrap() {
                let manifest = session.unwrap().path().join("manifest.json");
                let Ok(text) = std::fs::read_to_string(&manifest) else {
                    continue;
                };
                let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
                m.as_object_mut()
                    .unwrap()
                    .insert("analysis".into(), 2.into());
                std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
                manifests += 1;
            }
        }
        assert!(manifests >= 6, "{manifests} sessions");
        report_on(&project, threads);
        books.push(common::tree(&project.path("book/src")));
    }
    assert!(books[0] == books[1], "one thread and two differ");
    let committed = common::tree(&repository().join("book/src"));
    let moved = committed
        .iter()
        .filter(|(path, bytes)| {
            path.ends_with("analysis.json") && books[0].get(*path) != Some(*bytes)
        })
        .count();
    assert!(moved >= 1, "analysis 2 changed no committed analysis.json");
}
