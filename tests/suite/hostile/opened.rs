//! Files lab is given to read: a FIFO is refused at once (never waited on) and a link in a
//! folder lab was given is never followed out of it.

use super::stderr;
use crate::common::{self, Project};
use lab::Exit;
use std::path::Path;
use std::time::{Duration, Instant};

fn fixture(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(relative)
}

#[test]
fn a_fifo_given_to_import_is_refused_not_waited_on() {
    let project = Project::with_fixtures(&[]);
    let fifo = project.path("results.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for format in ["hyperfine", "jmh", "gbench", "pyperf"] {
        let started = Instant::now();
        let out = project.lab(&["import", format, "results.json", "--into", "imp"]);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{format} waited"
        );
        assert_ne!(common::exit_of(&out), Exit::Ok, "{format}");
        assert!(
            stderr(&out).contains("is a FIFO, not a regular file"),
            "{format}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_criterion_sample_linked_out_of_its_folder_is_not_followed() {
    let project = Project::with_fixtures(&[]);
    let bench = project.path("target/criterion/bench/new");
    std::fs::create_dir_all(&bench).unwrap();
    let from = fixture("criterion/criterion-0.2/new");
    std::fs::copy(from.join("benchmark.json"), bench.join("benchmark.json")).unwrap();
    // The sample lies outside the folder given, reached by a link.
    let outside = project.path("elsewhere.json");
    std::fs::copy(from.join("sample.json"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, bench.join("sample.json")).unwrap();
    let out = project.lab(&["import", "criterion", "target/criterion", "--into", "bench"]);
    assert_ne!(common::exit_of(&out), Exit::Ok, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("sample.json: cannot read: Too many levels of symbolic links"),
        "{}",
        stderr(&out)
    );
    assert!(project.sessions("bench").is_empty());
}
