//! Snapshots of what one fake-runner session of the tiny fixture leaves for readers: the whole
//! chapter, its analysis.json, the terminal summary `lab run` prints and `lab check --json`,
//! each compared whole with its snapshot under tests/suite/snapshots/. What differs between
//! two runs of the same session is redacted: the project's path, session names and times,
//! and the machine (host name, CPU, kernel, memory, load, timer).

use crate::common::{self, FakeRunner, Project};
use crate::fake_runner::scored;
use lab::Exit;
use lab::app;
use lab::layout::Layout;
use std::path::Path;

/// The tiny fixture run once with the fake that scores FACTOR × n.
fn tiny_session() -> Project {
    let project = Project::with_fixtures(&["tiny"]);
    let layout = Layout::new(project.root());
    let mut fake = FakeRunner::new(scored);
    let code = app::run(
        &layout,
        Path::new("tiny"),
        &common::quiet_run("tiny"),
        &mut fake,
    )
    .unwrap();
    assert_eq!(code, Exit::CheckFailed);
    project
}

/// Snapshot settings that redact what differs between two runs of one session.
fn redacted(project: &Project) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    let root = project.root().to_string_lossy().into_owned();
    settings.add_filter(&regex::escape(&root), "[project]");
    settings.add_filter(r"\b\d{8}T\d{6}Z(-[A-Za-z0-9_.-]+)?", "[session]");
    settings.add_filter(
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?( ?UTC|Z|[+-]\d{2}:?\d{2})?",
        "[time]",
    );
    // The year the session started, in the chapter's BibTeX entry.
    settings.add_filter(r"\n  year = \{\d{4}\},", "\n  year = {[year]},");
    // The machine, as the chapter's environment table and analysis.json describe it.
    settings.add_filter(
        r"\| (CPU|logical CPUs|governor|turbo|kernel|memory|load before / after|timer) \| [^|\n]* \|",
        "| $1 | [host] |",
    );
    settings.add_filter(
        r#""(cpu_model|logical_cpus|allowed_cpus|governor|turbo|kernel|memory_total|load_before|load_after|timer_reported_resolution_ns|timer_granularity_ns|timer_read_ns)": [^,\n]*"#,
        r#""$1": "[host]""#,
    );
    // Recorded only where the kernel names it (not in every container).
    settings.add_filter(r#",\n\s*"clocksource": "[^"\n]*""#, "");
    settings.add_filter(r"\n\| clock source \| [^|\n]* \|", "");
    settings.add_filter(
        r"timer granularity [\d.]+ [nµm]?s × \d+ = [\d.]+ [nµm]?s",
        "timer granularity [host]",
    );
    // What protected the runs depends on lab's privileges here, and a session run inside this
    // test process shares the process's record with the sessions other tests run beside it:
    // the record is left out (tests/suite/hostile/isolation.rs judges it). The files' digests depend on
    // the times recorded in them.
    settings.add_filter(r#"\n\s*"isolation": \{[^}]*\},"#, "");
    settings.add_filter(r#",\n\s*"disturbers": \[[^\]]*\]"#, "");
    settings.add_filter(
        r#"("[a-z/]+\.(csv|json|toml|md)"): "[0-9a-f]{64}""#,
        r#"$1: "[sha256]""#,
    );
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host = host.trim();
    if !host.is_empty() {
        settings.add_filter(&format!(r"\b{}\b", regex::escape(host)), "[host]");
    }
    settings
}

#[test]
fn the_chapter_of_a_fake_session() {
    let project = tiny_session();
    let page = project.read("book/src/tiny/index.md");
    redacted(&project).bind(|| insta::assert_snapshot!("tiny_chapter", page));
}

#[test]
fn the_analysis_json_of_a_fake_session() {
    let project = tiny_session();
    let analysis = project.read("book/src/tiny/analysis.json");
    redacted(&project).bind(|| insta::assert_snapshot!("tiny_analysis_json", analysis));
}

#[test]
fn the_terminal_summary_of_a_fake_session() {
    let project = tiny_session();
    let layout = Layout::new(project.root());
    let dir = layout.experiment_dir(Path::new("tiny")).unwrap();
    let assessed = app::assess_chosen(&layout, &dir, None).unwrap().unwrap();
    let chapter = layout.book().join("src/tiny/index.md");
    let printed = app::summarise(&assessed, &chapter, app::SummaryWanted::Printed);
    let text = app::summary_text(&printed);
    redacted(&project).bind(|| insta::assert_snapshot!("tiny_summary", text));
    // Where no summary is printed, none of its cells is worked out; the exit code it decides
    // is the same.
    let verdict = app::summarise(&assessed, &chapter, app::SummaryWanted::Verdict);
    assert!(verdict.cells.is_empty() && !printed.cells.is_empty());
    assert_eq!(verdict.failed, printed.failed);
}

#[test]
fn lab_check_json_of_a_fake_session() {
    let project = tiny_session();
    let out = project.lab_exits(&["check", "tiny", "--json"], Exit::CheckFailed);
    let json = String::from_utf8(out.stdout).unwrap();
    redacted(&project).bind(|| insta::assert_snapshot!("tiny_check_json", json));
}
