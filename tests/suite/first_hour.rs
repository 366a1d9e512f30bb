//! The first hour with lab: any command timed with no wrapper and no declared metric, numbers
//! read as programs print them, the answer in the terminal, and a scaffold that works.

use crate::common;
use crate::common::exit_of;
use lab::Exit;

use common::Project;
use std::process::Command;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn experiment(project: &Project, name: &str, lab_toml: &str) {
    let dir = project.path("experiments").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lab.toml"), lab_toml).unwrap();
}

/// Plain sort against numeric sort, timed with no declared metric.
const SORTING: &str = r#"[experiment]
max_busy = "100%"
title = "sort against sort -n"
hypothesis = "Numeric sort is not faster than plain sort on numbers."
repetitions = 4
timeout = "30s"

[[variant]]
name = "plain"
run = ["sort", "-o", "/dev/null", "data.txt"]

[[variant]]
name = "numeric"
run = ["sort", "-n", "-o", "/dev/null", "data.txt"]

[[check]]
name = "numeric sort takes some time too"
kind = "compare"
metric = "wall_s"
a = { variant = "numeric" }
b = { variant = "plain" }
expect = "a > 0.1 * b"
"#;

#[test]
fn sort_against_sort_n_needs_no_metric_and_answers_in_the_terminal() {
    let project = Project::with_fixtures(&[]);
    experiment(&project, "sorting", SORTING);
    // 300,000 numbers: long enough to time with either sort.
    let numbers: String = (0..300_000u64)
        .map(|i| format!("{}\n", (i * 2_654_435_761) % 1_000_003))
        .collect();
    std::fs::write(project.path("experiments/sorting/data.txt"), numbers).unwrap();
    let out = project.lab(&["run", "sorting", "--quiet"]);
    let text = stdout(&out);
    assert_eq!(
        exit_of(&out),
        Exit::Ok,
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("wall_s (s): median [95% CI]"), "{text}");
    assert!(text.contains("plain  ") && text.contains("n=4"), "{text}");
    assert!(
        text.contains("× [") && text.contains("plain: "),
        "relative speed: {text}"
    );
    assert!(
        text.contains("pass          numeric sort takes some time too"),
        "{text}"
    );
    assert!(
        text.contains("chapter: book/src/sorting/index.md"),
        "{text}"
    );

    // The same as JSON, and the built-in metrics in the stored analysis.
    let out = project.lab_exits(&["run", "sorting", "--quiet", "--json"], Exit::Ok);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["metric"], "wall_s");
    assert_eq!(summary["cells"].as_array().unwrap().len(), 2);
    assert!(summary["cells"][1]["relative"]["ratio"].as_f64().unwrap() > 0.0);
    assert_eq!(summary["failed"], false);
}

#[test]
fn a_declared_metric_cannot_take_a_built_in_name() {
    let project = Project::with_fixtures(&[]);
    experiment(
        &project,
        "clash",
        "[experiment]\ntitle = \"t\"\nhypothesis = \"h\"\n[[variant]]\nname = \"v\"\nrun = [\"true\"]\n[metric.wall_s]\njson = \"w\"\n",
    );
    let out = project.lab_exits(&["run", "clash"], Exit::Usage);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("lab.toml:7:1: `metric.wall_s`: `wall_s` is measured by lab for every run"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An ambiguous value is refused, naming the run: it fails the validity check that every run
/// reported every metric.
fn an_ambiguous_value_is_refused(project: &Project) {
    let dir = project.path("experiments/spsc/lab.toml");
    let text = std::fs::read_to_string(&dir)
        .unwrap()
        .replace(",253", "")
        .replace("5,$((194 + i))", "1,5");
    std::fs::write(&dir, text).unwrap();
    // The ambiguous value fails the validity check that every run reported every metric.
    project.lab_exits(&["run", "spsc", "--quiet"], Exit::CheckFailed);
    let check = project.lab(&["check", "spsc"]);
    assert!(
        stdout(&check).contains("run r0001: metric `ops`: stdout line 1: \"1,5\" is ambiguous"),
        "{}",
        stdout(&check)
    );
}

#[test]
fn thousands_separators_and_per_iteration_lines_are_read() {
    let project = Project::with_fixtures(&[]);
    // A Java-style harness: 20 iterations per run, each printing `ops/sec=5,194,253`.
    let script = "i=0; while [ $i -lt 20 ]; do echo \"ops/sec=5,$((194 + i)),253\"; i=$((i + 1)); done; sleep 0.2";
    experiment(
        &project,
        "spsc",
        &format!(
            r#"[experiment]
max_busy = "100%"
title = "SPSC"
hypothesis = "text harnesses are read"
repetitions = 3
timeout = "30s"

[[variant]]
name = "queue"
run = ["sh", "-c", {script:?}]

[metric.ops]
regex = 'ops/sec=(\S+)'
unit = "ops/s"
"#
        ),
    );
    project.lab_exits(&["run", "spsc", "--quiet"], Exit::Ok);
    let report = project.lab_exits(&["report", "spsc", "--json"], Exit::Ok);
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let cell = report["analysis"]["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "ops")
        .unwrap_or_else(|| panic!("{}", report["analysis"]["cells"]))
        .clone();
    assert_eq!(cell["n"], 3, "n counts processes");
    let values = &report["analysis"]["runs"][0]["values"]["ops"];
    assert_eq!(
        values.as_array().unwrap().len(),
        20,
        "20 iterations per run"
    );
    assert_eq!(values[0], "5194253");
    assert_eq!(values[19], "5213253");
    assert!(
        cell["steady"].is_object(),
        "the steady-state analysis applies: {cell}"
    );

    an_ambiguous_value_is_refused(&project);
}

fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn lab_new_writes_an_experiment_that_passes_every_check_in_each_language() {
    for (lang, tool) in [
        ("sh", "awk"),
        ("c", "cc"),
        ("python", "python3"),
        ("rust", "rustc"),
        ("java", "javac"),
    ] {
        if !installed(tool) {
            eprintln!("skipped lab new --lang {lang}: {tool} is not installed");
            continue;
        }
        let project = Project::with_fixtures(&[]);
        let name = format!("new-{lang}");
        let out = project.lab_exits(&["new", &name, "--lang", lang], Exit::Ok);
        assert!(
            stdout(&out).contains(&format!("next: lab run experiments/{name} --profile quick"))
        );
        project.lab_exits(&["new", &name, "--lang", lang], Exit::Usage);
        // Other tests share this machine: the quiet-machine guard has its own test.
        let toml = project.path(&format!("experiments/{name}/lab.toml"));
        let text = std::fs::read_to_string(&toml).unwrap();
        std::fs::write(
            &toml,
            text.replacen("[experiment]\n", "[experiment]\nmax_busy = \"100%\"\n", 1),
        )
        .unwrap();
        let run = project.lab(&["run", &name, "--profile", "quick"]);
        let text = stdout(&run);
        assert_eq!(
            exit_of(&run),
            Exit::Ok,
            "{lang}:\n{text}\n{}",
            String::from_utf8_lossy(&run.stderr)
        );
        // Every check passes on an idle machine; a test machine busy with other tests may
        // widen the one interval until it cannot decide, but nothing may fail.
        assert!(!text.contains("fail"), "{lang}:\n{text}");
        let undecided = text.matches("inconclusive").count();
        assert!(undecided <= 1, "{lang}:\n{text}");
        assert!(
            text.contains("pass          every run echoed the configuration it was asked for"),
            "{lang}:\n{text}"
        );
        let page = project.read(&format!("book/src/{name}/index.md"));
        assert!(
            page.contains("## Notes") && !page.contains("n/a ("),
            "{lang}: the notes render with data"
        );
    }
}

#[test]
fn completions_and_the_manual_are_printed() {
    let project = Project::with_fixtures(&[]);
    let bash = project.lab_exits(&["completions", "bash"], Exit::Ok);
    assert!(stdout(&bash).contains("reanalyze") && stdout(&bash).contains("complete -F"));
    let man = project.lab_exits(&["man"], Exit::Ok);
    assert!(
        stdout(&man).starts_with(".ie") || stdout(&man).contains(".TH lab"),
        "{}",
        &stdout(&man)[..200]
    );
    for command in [
        "run",
        "report",
        "check",
        "reanalyze",
        "list",
        "new",
        "book",
        "schema",
        "compare",
        "baseline",
        "history",
    ] {
        let help = project.lab_exits(&[command, "--help"], Exit::Ok);
        let help = stdout(&help);
        assert!(
            help.contains("Example: lab ") || help.contains("Examples: lab "),
            "{command} --help has an example"
        );
    }
}
