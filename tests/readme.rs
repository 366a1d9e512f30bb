//! The README's quick command, as a newcomer runs it: the flagship experiment's quick profile
//! ends with a complete chapter (exit 0 or 1, never 2) and leaves no check undecided for want
//! of runs.

mod common;

use common::{Project, copy_dir};
use std::process::Command;

#[test]
fn the_quick_profile_of_the_flagship_writes_a_complete_chapter() {
    if Command::new("javac").arg("-version").output().is_err() {
        eprintln!("skipped: javac is not installed (lockstack-dip is a Java experiment)");
        return;
    }
    let project = Project::with_fixtures(&[]);
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/lockstack-dip");
    let target = project.path("experiments/lockstack-dip");
    copy_dir(&source, &target);
    let _ = std::fs::remove_dir_all(target.join("build"));
    let _ = std::fs::remove_file(target.join(".lab-build"));
    let started = std::time::Instant::now();
    let out = project.lab(&[
        "run",
        "experiments/lockstack-dip",
        "--profile",
        "quick",
        "--quiet",
    ]);
    eprintln!(
        "the quick profile took {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "exit {code:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = project.read("book/src/lockstack-dip/index.md");
    assert!(page.contains("(profile quick; complete)"), "{page}");
    assert!(page.contains("## Notes"), "the notes are rendered");
    // Three runs per cell: every check can be decided (pass, fail or inconclusive).
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("lockstack-dip — session") && !summary.contains("not run"),
        "{summary}"
    );
    assert!(
        project
            .read("book/src/SUMMARY.md")
            .contains("lockstack-dip/index.md")
    );
}
