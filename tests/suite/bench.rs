//! `lab bench`: hyperfine's command line, lab's answers. Commands timed with no file, compared
//! against the reference until decided, parameter lists and scans, hyperfine's exports read
//! back by lab's own importer, `--save` as an experiment that reruns, and failing commands.

use crate::common::{Project, exit_of};
use lab::Exit;
use serde_json::Value;
use std::process::Output;

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `lab bench ARGS` in `project` (a project: it holds `experiments/`), tolerant of the other
/// tests sharing the machine.
fn bench(project: &Project, args: &[&str]) -> Output {
    std::fs::create_dir_all(project.path("experiments")).expect("experiments/");
    let mut all = vec!["bench", "--quiet", "--max-busy", "100%"];
    all.extend_from_slice(args);
    project.lab(&all)
}

/// What `lab bench` printed on both streams, for a failing assertion.
fn printed(out: &Output) -> String {
    format!("{}\n{}", stdout(out), stderr(out))
}

fn json(project: &Project, file: &str) -> Value {
    serde_json::from_str(&project.read(file)).expect("valid JSON")
}

/// The ratio and interval of a summary line "NAME: 2.91× [2.80, 3.02] slower (…)".
fn times_of(line: &str) -> (f64, f64, f64) {
    let after = line.split(": ").nth(1).expect("a verdict after the name");
    let number = |t: &str| {
        t.trim_matches(|c: char| !c.is_ascii_digit() && c != '.')
            .parse::<f64>()
            .unwrap()
    };
    let mut words = after.split_whitespace();
    let r = number(words.next().unwrap());
    let lo = number(words.next().unwrap());
    let hi = number(words.next().unwrap());
    (r, lo, hi)
}

/// hyperfine 1.x's JSON: the same keys as hyperfine 1.20 writes, in seconds.
fn assert_hyperfines_json(project: &Project) -> Vec<Value> {
    let exported = json(project, "out.json");
    let results = exported["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    let fixture: Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/hyperfine/hyperfine-1.20.json"
    )))
    .unwrap();
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let mut ours = keys(&results[0]);
    let mut theirs = keys(&fixture["results"][0]);
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs);
    assert_eq!(results[0]["command"], "sleep 0.1");
    let times = results[1]["times"].as_array().unwrap();
    assert!(times.len() >= 5, "{times:?}");
    assert_eq!(
        results[1]["exit_codes"].as_array().unwrap().len(),
        times.len()
    );
    let mean = results[1]["mean"].as_f64().unwrap();
    assert!((0.3..0.45).contains(&mean), "{mean}");

    results.clone()
}

/// lab's own importer reads the JSON back, every timed run a run; the Markdown and CSV exports
/// are hyperfine's.
fn imported_again_with_the_other_exports(project: &Project, results: &[Value]) {
    // lab's own importer reads it back, every timed run a run.
    project.lab_exits(
        &[
            "import",
            "hyperfine",
            "out.json",
            "--into",
            "again",
            "--quiet",
        ],
        Exit::Ok,
    );
    let runs = crate::common::csv_rows(&project.session("again").join("runs.csv"));
    let timed: usize = results
        .iter()
        .map(|r| r["times"].as_array().unwrap().len())
        .sum();
    assert_eq!(runs.len(), timed);

    assert!(project.read("out.md").starts_with(
        "| Command | Mean [ms] | Min [ms] | Max [ms] | Relative to fastest |\n|:---|---:|---:|---:|---:|\n| `sleep 0.1` | "
    ));
    assert!(
        project
            .read("out.csv")
            .starts_with("command,mean,stddev,median,user,system,min,max\nsleep 0.1,")
    );
}

/// The session is an ordinary sealed one, its runs interleaved by the shuffle.
fn assert_one_sealed_experiment(project: &Project) {
    let session = project
        .path(".lab/bench")
        .read_dir()
        .unwrap()
        .next()
        .expect("the bench experiment")
        .unwrap()
        .path();
    assert!(session.join("lab.toml").is_file());
    let benches = project
        .path("data")
        .read_dir()
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("bench-")
        })
        .count();
    assert_eq!(benches, 1, "one experiment's sessions");
}

#[test]
fn two_commands_are_decided_against_the_first_and_exported_as_hyperfine_writes() {
    let project = Project::with_fixtures(&[]);
    let out = bench(
        &project,
        &[
            "--export-json",
            "out.json",
            "--export-markdown",
            "out.md",
            "--export-csv",
            "out.csv",
            "sleep 0.1",
            "sleep 0.3",
        ],
    );
    let text = stdout(&out);
    assert_eq!(exit_of(&out), Exit::Ok, "{}", printed(&out));
    assert!(
        text.starts_with("Benchmark 1: sleep 0.1\n  Time (median [9"),
        "{text}"
    );
    assert!(text.contains("\nBenchmark 2: sleep 0.3\n"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("  sleep 0.3 against sleep 0.1: "))
        .expect("the comparison line");
    assert!(line.contains(" slower ("), "{line}");
    let (r, lo, hi) = times_of(line);
    // 300 ms against 100 ms plus the same spawn cost: a little under 3×.
    assert!((2.5..3.1).contains(&r) && lo <= r && r <= hi, "{line}");
    assert!(
        text.contains("  pass          every run exited normally"),
        "{text}"
    );

    let results = assert_hyperfines_json(&project);

    imported_again_with_the_other_exports(&project, &results);

    assert_one_sealed_experiment(&project);
}

#[test]
fn parameter_lists_and_scans_make_one_benchmark_per_value() {
    let project = Project::with_fixtures(&[]);
    let out = bench(
        &project,
        &[
            "-r",
            "3",
            "-L",
            "t",
            "0.1,0.2",
            "--export-json",
            "list.json",
            "sleep {t}",
        ],
    );
    assert_eq!(exit_of(&out), Exit::Ok, "{}", printed(&out));
    let text = stdout(&out);
    assert!(text.contains("Benchmark 1: sleep 0.1\n"), "{text}");
    assert!(text.contains("Benchmark 2: sleep 0.2\n"), "{text}");
    let list = json(&project, "list.json");
    assert_eq!(list["results"][0]["parameters"]["t"], "0.1");
    assert_eq!(list["results"][1]["parameters"]["t"], "0.2");
    assert_eq!(list["results"][1]["times"].as_array().unwrap().len(), 3);

    let scan = bench(
        &project,
        &[
            "-r",
            "2",
            "-P",
            "n",
            "1",
            "5",
            "-D",
            "2",
            "--export-csv",
            "scan.csv",
            "sleep 0.{n}",
        ],
    );
    assert_eq!(exit_of(&scan), Exit::Ok, "{}", printed(&scan));
    let csv = project.read("scan.csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "command,mean,stddev,median,user,system,min,max,parameter_n"
    );
    let commands: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(commands, ["sleep 0.1", "sleep 0.3", "sleep 0.5"]);
    assert!(lines[3].ends_with(",5"), "{csv}");
}

#[test]
fn a_reference_comes_first_and_hooks_run_around_every_run() {
    let project = Project::with_fixtures(&[]);
    let out = bench(
        &project,
        &[
            "-r",
            "6",
            "--reference",
            "sleep 0.3",
            "--prepare",
            "sh -c 'echo p >> prepared.log'",
            "--conclude",
            "sh -c 'echo c >> concluded.log'",
            "-n",
            "short",
            "sleep 0.1",
        ],
    );
    let text = stdout(&out);
    assert_eq!(exit_of(&out), Exit::Ok, "{}", printed(&out));
    assert!(text.starts_with("Benchmark 1: sleep 0.3\n"), "{text}");
    assert!(text.contains("\nBenchmark 2: short\n"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("  short against sleep 0.3: "))
        .expect("the comparison line");
    assert!(line.contains(" faster ("), "{line}");
    // 6 runs of each of the two commands, each with its hook.
    assert_eq!(project.read("prepared.log").lines().count(), 12);
    assert_eq!(project.read("concluded.log").lines().count(), 12);
}

#[test]
fn saved_benchmarks_are_experiments_that_rerun() {
    let project = Project::with_fixtures(&[]);
    let out = bench(
        &project,
        &["-r", "3", "--save", "sleepers", "sleep 0.1", "sleep 0.2"],
    );
    assert_eq!(exit_of(&out), Exit::Ok, "{}", printed(&out));
    let saved = project.read("experiments/sleepers/lab.toml");
    assert!(saved.contains("workdir = \"../..\""), "{saved}");
    assert!(saved.contains("run = [\"sleep\", \"0.2\"]"), "{saved}");
    let again = project.lab(&["run", "sleepers", "--quiet"]);
    // Its hypothesis that 200 ms takes the time of 100 ms fails, as it should.
    assert_eq!(exit_of(&again), Exit::CheckFailed, "{}", printed(&again));
    assert_eq!(project.sessions("sleepers").len(), 2);
    // The same name for other commands is refused, the saved file untouched.
    let other = bench(&project, &["-r", "3", "--save", "sleepers", "sleep 0.3"]);
    assert_eq!(exit_of(&other), Exit::Usage);
    assert!(stderr(&other).contains("already exists and holds another experiment"));
    assert_eq!(project.read("experiments/sleepers/lab.toml"), saved);
}

#[test]
fn failing_commands_fail_unless_ignored() {
    let project = Project::with_fixtures(&[]);
    // Each run sleeps long enough to time, then fails.
    let failing = bench(&project, &["-r", "3", "sh -c 'sleep 0.1; exit 3'"]);
    assert_eq!(exit_of(&failing), Exit::CheckFailed);
    let text = stdout(&failing);
    assert!(
        text.contains("  fail          every run exited normally: "),
        "{text}"
    );
    assert!(text.contains("failed in every run (exit code 3)"), "{text}");
    assert!(text.contains("lab bench -i"), "{text}");

    let ignored = bench(
        &project,
        &[
            "-r",
            "3",
            "-i",
            "--export-json",
            "i.json",
            "sh -c 'sleep 0.1; exit 3'",
        ],
    );
    assert_eq!(exit_of(&ignored), Exit::Ok, "{}", printed(&ignored));
    let exported = json(&project, "i.json");
    assert_eq!(
        exported["results"][0]["exit_codes"],
        serde_json::json!([3, 3, 3])
    );
}

#[test]
fn missing_and_empty_commands_are_refused_before_anything_is_written() {
    let project = Project::with_fixtures(&[]);
    let missing = bench(&project, &["sleep 0.01", "no-such-program-here --fast"]);
    assert_eq!(exit_of(&missing), Exit::Usage);
    assert_eq!(
        stderr(&missing).lines().next().unwrap(),
        "error: command 2: the program \"no-such-program-here\" was not found on PATH"
    );
    let empty = bench(&project, &["sleep 0.01", ""]);
    assert_eq!(exit_of(&empty), Exit::Usage);
    assert!(
        stderr(&empty).starts_with("error: command 2 is empty"),
        "{}",
        stderr(&empty)
    );
    assert!(!project.path(".lab").exists() && !project.path("data").exists());
}

#[test]
fn sampling_stops_at_the_first_look_when_a_command_fails_every_run() {
    let project = Project::with_fixtures(&[]);
    let out = bench(&project, &["sleep 0.1", "sh -c 'sleep 0.1; exit 3'"]);
    assert_eq!(exit_of(&out), Exit::CheckFailed, "{}", printed(&out));
    let text = stdout(&out);
    assert!(
        text.contains("no cell it depends on can take more runs; still open: sh -c 'sleep 0.1; exit 3' against sleep 0.1; every run of "),
        "{text}"
    );
    assert!(text.contains(" failed (exit code 3)."), "{text}");
    let name = project
        .path("data")
        .read_dir()
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("bench-"))
        .expect("the bench experiment's data");
    let session = project.session(&name);
    // The first look's 5 runs of each command, and no more.
    assert_eq!(crate::common::csv_rows(&session.join("runs.csv")).len(), 10);
}

#[test]
fn a_failing_prepare_command_stops_the_session_naming_it() {
    let project = Project::with_fixtures(&[]);
    let out = bench(
        &project,
        &[
            "-r",
            "3",
            "--prepare",
            "echo cannot prepare >&2; exit 4",
            "sleep 0.1",
        ],
    );
    assert_eq!(exit_of(&out), Exit::Usage, "{}", printed(&out));
    let error = stderr(&out);
    assert!(
        error.contains("error: the prepare command of variant sleep-0.1 (sh -c 'echo cannot prepare >&2; exit 4') failed before run r0001: exit code 4\n    cannot prepare\n"),
        "{error}"
    );
}

#[test]
fn the_help_shows_its_examples_as_they_are_typed() {
    let project = Project::with_fixtures(&[]);
    let out = project.lab_exits(&["bench", "--help"], Exit::Ok);
    let help = stdout(&out);
    assert!(
        help.contains("lab bench -L count 10,100 'seq {count}' --export-json out.json"),
        "a parameter in braces prints as typed: {help}"
    );
}
