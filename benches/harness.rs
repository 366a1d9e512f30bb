//! Lab's own cost per run: spawning `true` directly versus through lab's runner (process group,
//! watchdog thread, wait4, clocks) and through the whole per-run path (runner, metric parsing,
//! CSV append and flush). The differences are what lab adds to every measured run.

use criterion::{Criterion, criterion_group, criterion_main};
use lab::config;
use lab::exec::{self, ProcessRunner, Progress, RunRequest, Runner};
use lab::plan;
use lab::store::{self, SessionWriter};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const EXPERIMENT: &str = r#"
[experiment]
title = "no-op"
hypothesis = "lab adds little"
repetitions = 1
[params]
n = [1]
[[variant]]
name = "noop"
run = ["sh", "-c", "echo '{{\"v\": 1}}'"]
[metric.v]
json = "v"
"#;

fn raw_spawn(c: &mut Criterion) {
    c.bench_function("spawn true (std::process, no lab)", |b| {
        b.iter(|| {
            Command::new("true")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("true runs")
        })
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    c.bench_function("spawn the no-op JSON printer (std::process, no lab)", |b| {
        b.iter(|| {
            let stdout = std::fs::File::create(&out).expect("log file");
            Command::new("sh")
                .args(["-c", "echo '{\"v\": 1}'"])
                .stdout(stdout)
                .stderr(Stdio::null())
                .status()
                .expect("sh runs")
        })
    });
}

fn runner(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let argv = vec!["true".to_string()];
    let env = BTreeMap::new();
    let request = RunRequest {
        argv: &argv,
        env: std::borrow::Cow::Borrowed(&env),
        cwd: dir.path(),
        cpus: None,
        timeout: Duration::from_secs(10),
        stdin: None,
        stdout: &out,
        stderr: &err,
        held_output: None,
        counters: &[],
    };
    c.bench_function("spawn true (lab's ProcessRunner)", |b| {
        b.iter(|| ProcessRunner.run(&request))
    });
}

fn whole_run_path(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let experiment = config::parse(
        EXPERIMENT.trim_start(),
        Path::new("lab.toml"),
        dir.path(),
        None,
    )
    .expect("valid");
    let plan = plan::plan(&experiment);
    let progress = Progress::new(1, true);
    let session_dir = store::new_session_dir(&dir.path().join("bench"), 0);
    let sealed = store::Sealed {
        lab_toml: EXPERIMENT.to_string(),
        notes: None,
        references: None,
    };
    let mut session = SessionWriter::create(
        session_dir,
        &manifest_stub(),
        &plan,
        vec!["n".into()],
        &sealed,
    )
    .expect("session");
    c.bench_function(
        "the no-op JSON printer through lab (runner, metrics, digest, CSV append)",
        |b| {
            b.iter(|| {
                exec::execute(
                    &experiment,
                    &plan.runs,
                    &mut session,
                    &mut ProcessRunner,
                    &progress,
                )
                .expect("runs")
            })
        },
    );
}

fn manifest_stub() -> store::Manifest {
    store::Manifest {
        lab_version: "bench".into(),
        experiment: "bench".into(),
        experiment_file_hash: String::new(),
        profile: None,
        command: String::new(),
        seed: 1,
        order: "shuffled".into(),
        planned_runs: 1,
        git: None,
        host: store::host(),
        load_before: String::new(),
        load_after: None,
        started_utc: String::new(),
        finished_utc: None,
        complete: false,
        resumed: 0,
        derived_from: None,
        label: None,
        jobs: None,
        revisions: None,
        imported: None,
        received: None,
        damaged: None,
        versions: Vec::new(),
        build: None,
        calibration: None,
        cluster: None,
        isolation: None,
        counters: Default::default(),
        digests: Default::default(),
        analysis: store::ANALYSIS,
        waiting: None,
        time_stop: None,
        disturbers: Vec::new(),
        heap_unshifted: Vec::new(),
        sources: Default::default(),
    }
}

criterion_group!(benches, raw_spawn, runner, whole_run_path);
criterion_main!(benches);
