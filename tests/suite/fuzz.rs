//! Property tests over the two parsers that read what users and runs write: the lab.toml loader
//! and the session readers. Whatever the bytes, they answer with a value or an error, never a
//! panic. The cases are few enough to run in seconds on every test run.

use proptest::prelude::*;
use std::path::Path;

const VALID: &str = include_str!("../fixtures/tiny/lab.toml");

fn parse(source: &str) {
    let _ = lab::config::parse(
        source,
        Path::new("lab.toml"),
        Path::new("experiments/x"),
        None,
    );
    let _ = lab::config::parse(
        source,
        Path::new("lab.toml"),
        Path::new("experiments/x"),
        Some("quick"),
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_text_is_an_experiment_or_an_error(source in "\\PC{0,400}") {
        parse(&source);
    }

    #[test]
    fn a_valid_file_with_bytes_changed_never_panics(
        edits in proptest::collection::vec((0usize..2000, any::<char>()), 1..8)
    ) {
        let mut chars: Vec<char> = VALID.chars().collect();
        for (at, c) in edits {
            let at = at % chars.len();
            chars[at] = c;
        }
        parse(&chars.into_iter().collect::<String>());
    }

    #[test]
    fn a_valid_file_with_lines_swapped_or_dropped_never_panics(
        picks in proptest::collection::vec(0usize..64, 0..40)
    ) {
        let lines: Vec<&str> = VALID.lines().collect();
        let source: Vec<&str> = picks.iter().map(|i| lines[i % lines.len()]).collect();
        parse(&source.join("\n"));
    }

    #[test]
    fn any_session_files_read_as_a_session_or_an_error(
        runs in proptest::collection::vec(any::<u8>(), 0..600),
        samples in "[a-z0-9,\\n\" ]{0,300}",
        manifest in "\\PC{0,200}",
        cut in 0usize..2000,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let good = fixture_session();
        for (name, bytes) in &good {
            std::fs::write(dir.path().join(name), bytes).unwrap();
        }
        let mut good_runs = good[0].1.clone();
        good_runs.truncate(cut % (good_runs.len() + 1));
        good_runs.extend(&runs);
        std::fs::write(dir.path().join("runs.csv"), &good_runs).unwrap();
        std::fs::write(dir.path().join("samples.csv"), samples.as_bytes()).unwrap();
        let _ = lab::store::load_session(dir.path());
        let _ = lab::store::repair(dir.path());
        std::fs::write(dir.path().join("manifest.json"), manifest).unwrap();
        let _ = lab::store::load_session(dir.path());
    }
}

/// (file, bytes) of a small real session written by the tiny fixture's format.
fn fixture_session() -> Vec<(&'static str, Vec<u8>)> {
    let runs = "run_id,position,variant,n,repetition,warmup,start_utc,wall_ns,boottime_ns,user_ns,sys_ns,max_rss_kib,voluntary_cs,involuntary_cs,exit_code,signal,spawn_error,timed_out,cpus,stdout_sha256,left_running,samples\n\
r0001,1,double,1,1,false,2026-11-30T00:00:00Z,100000000,100000000,1,1,1,0,0,0,,,false,,x,,1\n";
    let samples = "run_id,metric,iteration,value\nr0001,score,0,2\n";
    let plan = r#"{"order":"sequential","seed":1,"runs":[{"id":"r0001","position":1,"variant":"double","params":{"n":1},"repetition":1,"warmup":false,"argv":["sh"]}]}"#;
    vec![
        ("runs.csv", runs.as_bytes().to_vec()),
        ("samples.csv", samples.as_bytes().to_vec()),
        ("plan.json", plan.as_bytes().to_vec()),
        (
            "manifest.json",
            include_bytes!("../../crates/store/tests/data/manifest.json").to_vec(),
        ),
    ]
}
