//! Runs' output packed into `logs/stdout.pack` and `logs/stderr.pack`: `lab logs` prints any
//! run's bytes as it wrote them, a session of thousands of runs keeps a handful of files, an
//! uncommitted tail is set aside on `--resume`, and sessions from before the packs (a log file
//! per run and stream) read as they did.

use crate::common::{self, FakeRunner, Project, Reply, csv_rows, exit_of};
use lab::Exit;
use lab::layout::Layout;
use lab::store::Stream;
use std::path::Path;

/// An experiment whose every run prints its `n` on stdout with bytes that are not UTF-8 and no
/// final line break, and on stderr a line of its own.
const PRINTS: &str = r#"[experiment]
max_busy = "100%"
title = "packed"
hypothesis = "every run's output is kept whole"
repetitions = 2
seed = 5
timeout = "10s"

[params]
n = [1, 2, 3]

[[variant]]
name = "v"
run = ["sh", "-c", '''sleep 0.1; printf '{{"v": %s}}\n\377\376 end' $0; echo "err of $0" >&2''', "{n}"]

[metric.v]
json = "v"
"#;

fn printing_project() -> Project {
    crate::hostile::project_with("packed", PRINTS, &[])
}

/// What a run of `n` wrote on each stream.
fn expected(n: &str) -> (Vec<u8>, Vec<u8>) {
    let mut out = format!("{{\"v\": {n}}}\n").into_bytes();
    out.extend_from_slice(b"\xff\xfe end");
    (out, format!("err of {n}\n").into_bytes())
}

/// The names of the files under `dir`, recursively, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    common::tree(dir).into_keys().collect()
}

#[test]
fn lab_logs_prints_each_runs_output_byte_for_byte_from_two_packs() {
    let project = printing_project();
    project.lab_exits(&["run", "packed", "--quiet"], Exit::Ok);
    let session = project.session("packed");
    let mut logs: Vec<String> = files_under(&session.join("logs"));
    logs.sort();
    assert_eq!(logs, ["stderr.pack", "stdout.pack"]);
    let rows = csv_rows(&session.join("runs.csv"));
    assert_eq!(rows.len(), 6);
    for row in &rows {
        let (out, err) = expected(&row["n"]);
        let id = row["run_id"].as_str();
        let printed = project.lab_exits(&["logs", "packed", id], Exit::Ok);
        assert_eq!(printed.stdout, out, "{id}");
        let printed = project.lab_exits(&["logs", "packed", id, "--stderr"], Exit::Ok);
        assert_eq!(printed.stdout, err, "{id}");
        assert_eq!(row["stdout_bytes"], out.len().to_string());
        assert_eq!(row["stderr_sha256"], lab::store::sha256_hex(&err));
    }
    // A run by its position, and one that is not stored.
    let first = project.lab_exits(&["logs", "packed", "1"], Exit::Ok);
    assert_eq!(first.stdout, expected(&rows[0]["n"]).0);
    let missing = project.lab_exits(&["logs", "packed", "r0099"], Exit::Usage);
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("has no stored run \"r0099\" (its runs go from r0001 to r0006, 6 stored)"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}

#[test]
fn a_session_of_thousands_of_runs_keeps_a_handful_of_files() {
    let project = crate::hostile::project_with(
        "many",
        &PRINTS.replace("repetitions = 2", "repetitions = 1000"),
        &[],
    );
    let mut runner = FakeRunner::new(|run| {
        Reply::new(
            format!("{{\"v\": {}}}\n", run.nth),
            5_000_000 + run.nth as u64,
        )
    });
    lab::app::run(
        &Layout::new(project.root()),
        Path::new("many"),
        &common::quiet_run("many"),
        &mut runner,
    )
    .unwrap();
    let session = project.session("many");
    let rows = csv_rows(&session.join("runs.csv"));
    assert_eq!(rows.len(), 3000);
    let files = files_under(&session);
    assert!(files.len() <= 16, "{} files: {files:?}", files.len());
    assert_eq!(files.len(), 7, "{files:?}");
    // The last run's output is where its row says.
    let last = &rows[2999];
    let printed = common::run_stdout(&session, &last["run_id"]);
    assert!(
        printed.starts_with("{\"v\": ") && printed.ends_with("}\n"),
        "{printed}"
    );
}

/// As a kill between a run's output and its row leaves it: the last run's row is gone (torn
/// off runs.csv, its values off samples.csv, the session open again), its bytes are still at
/// the end of the packs. Returns the torn run's id.
fn tear_off_the_last_row(session: &std::path::Path) -> String {
    // As a kill between a run's output and its row leaves it: the last run's row is gone
    // (torn off runs.csv), its bytes are still at the end of the packs.
    let runs = session.join("runs.csv");
    let text = std::fs::read_to_string(&runs).unwrap();
    let kept: Vec<&str> = text.lines().collect();
    std::fs::write(&runs, kept[..kept.len() - 1].join("\n") + "\n").unwrap();
    let samples = session.join("samples.csv");
    let text = std::fs::read_to_string(&samples).unwrap();
    let last_run = kept.last().unwrap().split(',').next().unwrap().to_string();
    let others: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(&format!("{last_run},")))
        .collect();
    std::fs::write(&samples, others.join("\n") + "\n").unwrap();
    let manifest = session.join("manifest.json");
    let m = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("\"complete\": true", "\"complete\": false");
    std::fs::write(&manifest, m).unwrap();
    let strip_digests = |text: &str| -> String {
        let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["digests"] = serde_json::json!({});
        serde_json::to_string_pretty(&v).unwrap()
    };
    let m = strip_digests(&std::fs::read_to_string(&manifest).unwrap());
    std::fs::write(&manifest, m).unwrap();
    forget_seals(session);
    last_run
}

/// Drops lab's records of the sessions of the project `session` is in: the session reads as
/// one an older lab wrote, which sealed nothing outside the project.
fn forget_seals(session: &std::path::Path) {
    let project = session.ancestors().nth(3).unwrap();
    std::fs::remove_dir_all(project.join(".lab-state")).unwrap();
}

/// Every planned run exactly once, each with its own output.
fn assert_every_run_once_with_its_output(session: &std::path::Path, last_run: &str) {
    let rows = csv_rows(&session.join("runs.csv"));
    let ids: Vec<&str> = rows.iter().map(|r| r["run_id"].as_str()).collect();
    assert_eq!(ids, ["r0001", "r0002", "r0003", "r0004", "r0005", last_run]);
    for row in &rows {
        let (out, err) = expected(&row["n"]);
        assert_eq!(
            common::run_log(session, &row["run_id"], Stream::Stdout),
            out
        );
        assert_eq!(
            common::run_log(session, &row["run_id"], Stream::Stderr),
            err
        );
    }
}

#[test]
fn an_uncommitted_tail_of_a_pack_is_set_aside_on_resume_and_every_run_kept_whole() {
    let project = printing_project();
    project.lab_exits(&["run", "packed", "--quiet"], Exit::Ok);
    let session = project.session("packed");
    let last_run = tear_off_the_last_row(&session);
    let stdout_pack = std::fs::read(session.join("logs/stdout.pack")).unwrap();
    let out = project.lab(&["run", "packed", "--resume"]);
    assert_eq!(
        exit_of(&out),
        Exit::Ok,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (torn, _) = expected(&csv_rows(&session.join("runs.csv"))[5]["n"]);
    let aside = std::fs::read(session.join("set-aside/stdout.pack.1")).unwrap();
    assert_eq!(aside, torn, "the uncommitted run's output, set aside");
    assert!(stdout_pack.ends_with(&aside));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("logs/stdout.pack: "),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_every_run_once_with_its_output(&session, &last_run);
}

#[test]
fn a_session_from_before_the_packs_reads_as_it_did() {
    let project = printing_project();
    project.lab_exits(&["run", "packed", "--quiet"], Exit::Ok);
    let session = project.session("packed");
    let chapter = project.read("book/src/packed/index.md");
    // The same session as an older lab wrote it: a log file per run and stream, no pack
    // columns in runs.csv, no packs.
    for row in csv_rows(&session.join("runs.csv")) {
        let id = &row["run_id"];
        for (stream, ext) in [(Stream::Stdout, "out"), (Stream::Stderr, "err")] {
            let bytes = common::run_log(&session, id, stream);
            if !bytes.is_empty() {
                std::fs::write(session.join(format!("logs/{id}.{ext}")), bytes).unwrap();
            }
        }
    }
    for pack in ["stdout.pack", "stderr.pack"] {
        std::fs::remove_file(session.join("logs").join(pack)).unwrap();
    }
    common::strip_columns(
        &session.join("runs.csv"),
        &[
            "stdout_offset",
            "stdout_bytes",
            "stderr_offset",
            "stderr_bytes",
            "stderr_sha256",
        ],
    );
    let manifest = session.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["digests"] = serde_json::json!({});
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    forget_seals(&session);

    let out = project.lab_exits(&["logs", "packed", "r0002"], Exit::Ok);
    let n = &csv_rows(&session.join("runs.csv"))[1]["n"];
    assert_eq!(out.stdout, expected(n).0);
    project.lab_exits(&["report", "packed", "--quiet"], Exit::Ok);
    assert_eq!(project.read("book/src/packed/index.md"), chapter);
    // A derived session of it reads the same output.
    project.lab_exits(&["reanalyze", "packed", "--quiet"], Exit::Ok);
    let derived = project.session("packed");
    assert_ne!(derived, session);
    assert_eq!(
        common::run_log(&derived, "r0002", Stream::Stdout),
        expected(n).0
    );
}
