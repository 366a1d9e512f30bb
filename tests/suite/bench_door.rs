//! `lab bench` as a hyperfine user comes to it: a command that needs a shell is refused with
//! the fix, commands of any length answer, hyperfine's flags mean what they mean there, one
//! command across parameter values gets a summary, nothing is written where the person stands
//! outside a project, earlier sessions are found again, and the answer holds no noise.

use crate::common::{Project, exit_of};
use lab::Exit;
use std::path::Path;
use std::process::{Command, Output};

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn printed(out: &Output) -> String {
    format!("{}\n{}", stdout(out), stderr(out))
}

/// `lab bench ARGS` in `project` (made a project: it holds `experiments/`), tolerant of the
/// other tests sharing the machine.
fn bench(project: &Project, args: &[&str]) -> Output {
    std::fs::create_dir_all(project.path("experiments")).expect("experiments/");
    let mut all = vec!["bench", "--max-busy", "100%"];
    all.extend_from_slice(args);
    project.lab(&all)
}

/// `lab bench ARGS` in `dir`, keeping its sessions under `data_home`.
fn bench_in(dir: &Path, data_home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("bench")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", data_home)
        .output()
        .expect("lab runs")
}

#[test]
fn a_command_holding_shell_syntax_is_refused_with_the_fix() {
    let project = Project::with_fixtures(&[]);
    let piped = bench(&project, &["echo 1 | wc -l"]);
    assert_eq!(exit_of(&piped), Exit::Usage, "{}", printed(&piped));
    assert_eq!(
        stderr(&piped),
        "error: command 1 \"echo 1 | wc -l\" holds a pipe `|`, which only a shell acts on: lab runs commands without a shell, so the program would get it as an argument\n  hint: run it through a shell: lab bench --shell=sh 'echo 1 | wc -l' (or -S sh); --no-shell-check runs it without one anyway\n"
    );
    let chained = bench(&project, &["sleep 0.01 && sleep 0.01"]);
    assert_eq!(exit_of(&chained), Exit::Usage);
    assert!(
        stderr(&chained).contains("--shell=sh"),
        "{}",
        stderr(&chained)
    );
    assert!(
        !project.path(".lab").exists(),
        "nothing is written before a refusal"
    );

    let shell_only = bench(&project, &["--shell", "a && b"]);
    assert_eq!(exit_of(&shell_only), Exit::Usage);
    assert_eq!(
        stderr(&shell_only),
        "error: --shell took \"a && b\" as the shell to run the commands with, and no command is left to time\n  hint: name the shell, then the command: lab bench --shell=sh 'a && b' (or -S sh …)\n"
    );

    let through_sh = bench(&project, &["-r", "3", "--shell=sh", "echo 1 | wc -l"]);
    assert_eq!(exit_of(&through_sh), Exit::Ok, "{}", printed(&through_sh));
    let text = stdout(&through_sh);
    assert!(text.starts_with("Benchmark 1: echo 1 | wc -l\n"), "{text}");
    assert!(
        text.contains("Times leave out starting sh -c '' (")
            && text.contains("as hyperfine leaves out its shell's start-up; each interval is widened by that median's error (standard error "),
        "the shell's start-up is measured and taken out: {text}"
    );
    let chapter = text
        .rsplit(" · chapter ")
        .next()
        .and_then(|rest| rest.split(" · ").next())
        .expect("the chapter's path");
    let page = std::fs::read_to_string(project.path(chapter)).expect("the chapter");
    assert!(
        page.contains(
            "| start-up left out | every wall_s leaves out starting sh -c &#39;&#39;: median "
        ),
        "the chapter says what its times leave out"
    );
    let insisted = bench(&project, &["-r", "2", "--no-shell-check", "echo 1 | wc -l"]);
    assert_eq!(exit_of(&insisted), Exit::Ok, "{}", printed(&insisted));
}

#[test]
fn commands_shorter_than_the_floor_are_timed_whole_and_say_so() {
    let project = Project::with_fixtures(&[]);
    let out = bench(
        &project,
        &["-i", "--export-json", "tf.json", "true", "false"],
    );
    assert_eq!(exit_of(&out), Exit::Ok, "{}", printed(&out));
    let text = stdout(&out);
    assert!(
        text.contains("true, false: under ") && text.contains("so each is timed whole, start-up included (as hyperfine times a command run without a shell): starting an empty program takes "),
        "{text}"
    );
    assert!(!text.contains("too short"), "{text}");
    let summary = text
        .lines()
        .find(|l| l.starts_with("  false against true: "))
        .unwrap_or_else(|| panic!("a verdict for false: {text}"));
    assert!(!summary.contains("not run"), "{summary}");
    let exported: serde_json::Value = serde_json::from_str(&project.read("tf.json")).expect("JSON");
    for result in exported["results"].as_array().unwrap() {
        let mean = result["mean"].as_f64().unwrap();
        assert!(mean > 0.0 && mean < 0.05, "{result}");
        assert!(result["times"].as_array().unwrap().len() >= 5);
    }
    // Without -i, `false` failing every run is the answer: exit 1, never "too short".
    let failing = bench(&project, &["-r", "3", "true", "false"]);
    assert_eq!(
        exit_of(&failing),
        Exit::CheckFailed,
        "{}",
        printed(&failing)
    );
    assert!(stdout(&failing).contains("false failed in every run (exit code 1)"));
}

#[test]
fn one_command_across_parameter_values_is_summarised_against_the_fastest() {
    let project = Project::with_fixtures(&[]);
    let out = bench(&project, &["-r", "5", "-L", "t", "0.02,0.06", "sleep {t}"]);
    assert_eq!(exit_of(&out), Exit::Ok, "{}", printed(&out));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("  sleep 0.02 is "))
        .unwrap_or_else(|| panic!("a summary across values: {text}"));
    assert!(line.ends_with("faster than sleep 0.06 (95% CI)"), "{line}");
    let factor: f64 = line["  sleep 0.02 is ".len()..]
        .split('×')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((2.3..3.1).contains(&factor), "{line}");
}

#[test]
fn outside_a_project_nothing_is_written_where_you_stand() {
    let here = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let out = bench_in(
        here.path(),
        data.path(),
        &["--max-busy", "100%", "-r", "3", "sleep 0.01"],
    );
    assert_eq!(exit_of(&out), Exit::Ok, "{}", printed(&out));
    assert_eq!(
        std::fs::read_dir(here.path()).unwrap().count(),
        0,
        "the folder stays empty"
    );
    let store = data.path().join("lab/bench");
    assert!(
        stderr(&out).contains(&format!(
            "lab bench keeps its sessions in {}, as no folder here or above holds experiments/",
            store.display()
        )),
        "{}",
        stderr(&out)
    );
    assert!(store.join("data").is_dir() && store.join("book").is_dir());
    let again = bench_in(
        here.path(),
        data.path(),
        &["--max-busy", "100%", "-r", "3", "sleep 0.01"],
    );
    assert!(
        !stderr(&again).contains("keeps its sessions in"),
        "said once"
    );

    let listed = bench_in(here.path(), data.path(), &["--list"]);
    assert_eq!(exit_of(&listed), Exit::Ok);
    let list = stdout(&listed);
    let sessions: Vec<&str> = list.lines().filter(|l| l.contains(" bench-")).collect();
    assert_eq!(sessions.len(), 2, "{list}");
    assert!(sessions[0].contains("sleep 0.01"), "{list}");
    let opened = bench_in(here.path(), data.path(), &["--open"]);
    assert_eq!(exit_of(&opened), Exit::Ok, "{}", printed(&opened));
    assert!(stdout(&opened).starts_with("Benchmark 1: sleep 0.01\n"));
    assert_eq!(std::fs::read_dir(here.path()).unwrap().count(), 0);
}

/// --input, --output, --cleanup, -u and the AsciiDoc and Org exports.
fn input_output_cleanup_and_exports_mean_what_they_mean_there(project: &Project) {
    std::fs::write(project.path("in.txt"), "three\nlines\nhere\n").unwrap();
    let out = bench(
        project,
        &[
            "-r",
            "3",
            "--input",
            "in.txt",
            "--output",
            "last.txt",
            "--cleanup",
            "touch cleaned",
            "-u",
            "microsecond",
            "--export-asciidoc",
            "out.adoc",
            "--export-orgmode",
            "out.org",
            "wc -l",
        ],
    );
    assert_eq!(exit_of(&out), Exit::Ok, "{}", printed(&out));
    assert_eq!(
        project.read("last.txt").trim(),
        "3",
        "the last run read in.txt"
    );
    assert!(project.path("cleaned").exists(), "--cleanup ran");
    let text = stdout(&out);
    let mean = text
        .lines()
        .find(|l| l.contains("Time (mean ± σ)"))
        .unwrap();
    assert!(mean.contains(" µs ± ") && !mean.contains(" ms"), "{mean}");
    assert!(project.read("out.adoc").starts_with("[cols="));
    assert!(project.read("out.org").starts_with("| Command "));
}

/// --show-output, --style none, -i=CODE, --prepare and --env.
fn output_style_exit_codes_and_hooks_mean_what_they_mean_there(project: &Project) {
    let shown = bench(
        project,
        &["-r", "2", "--show-output", "echo visible-output"],
    );
    assert_eq!(exit_of(&shown), Exit::Ok, "{}", printed(&shown));
    assert_eq!(stderr(&shown).matches("visible-output").count(), 2);

    let none = bench(project, &["-r", "2", "--style", "none", "true"]);
    assert_eq!(exit_of(&none), Exit::Ok);
    assert_eq!(printed(&none).trim(), "", "--style none prints nothing");

    let codes = bench(project, &["-r", "2", "-i=3", "sh -c 'exit 3'"]);
    assert_eq!(exit_of(&codes), Exit::Ok, "{}", printed(&codes));
    let other = bench(project, &["-r", "2", "-i=4", "sh -c 'exit 3'"]);
    assert_eq!(exit_of(&other), Exit::CheckFailed, "{}", printed(&other));

    let hooks = bench(
        project,
        &[
            "-r",
            "2",
            "--prepare",
            "echo ran >> prepared.txt",
            "--env",
            "A=1 B='x y'",
            "sh -c 'test \"$B\" = \"x y\"'",
        ],
    );
    assert_eq!(
        exit_of(&hooks),
        Exit::Ok,
        "hooks run through sh, --env takes assignments: {}",
        printed(&hooks)
    );
    assert_eq!(project.read("prepared.txt"), "ran\nran\n");
}

/// hyperfine 2.0's -S with a value, its perf metrics and --min-benchmarking-time are refused
/// with what to write instead; its time and memory metrics are recorded.
fn what_lab_cannot_do_is_refused_with_a_hint(project: &Project) {
    let value_less = bench(project, &["-S", "sleep 0.01 && sleep 0.01", "true"]);
    assert_eq!(exit_of(&value_less), Exit::Usage);
    assert!(
        stderr(&value_less).contains("it is not a shell lab knows")
            && stderr(&value_less).contains("hyperfine 2.0's -S takes no value"),
        "{}",
        stderr(&value_less)
    );
    let counters = bench(project, &["--metrics", "instructions", "true"]);
    assert_eq!(exit_of(&counters), Exit::Usage);
    assert!(
        stderr(&counters).contains("add counters = [\"instructions\"]"),
        "{}",
        stderr(&counters)
    );
    let recorded = bench(
        project,
        &[
            "-r",
            "2",
            "--metrics",
            "time_cpu,memory_peak_resident:MiB",
            "true",
        ],
    );
    assert_eq!(exit_of(&recorded), Exit::Ok, "{}", printed(&recorded));

    let refused = bench(project, &["--min-benchmarking-time", "3", "true"]);
    assert_eq!(exit_of(&refused), Exit::Usage);
    assert!(stderr(&refused).contains("hint: give the time with --budget"));
}

#[test]
fn hyperfines_flags_mean_what_they_mean_there() {
    let project = Project::with_fixtures(&[]);
    input_output_cleanup_and_exports_mean_what_they_mean_there(&project);
    output_style_exit_codes_and_hooks_mean_what_they_mean_there(&project);
    what_lab_cannot_do_is_refused_with_a_hint(&project);
}

#[test]
fn the_answer_holds_no_noise() {
    let project = Project::with_fixtures(&[]);
    let quiet_lines = bench(&project, &["-r", "3", "sleep 0.01"]);
    assert_eq!(exit_of(&quiet_lines), Exit::Ok, "{}", printed(&quiet_lines));
    let progress = stderr(&quiet_lines);
    assert!(
        !progress.contains("(rep ") && !progress.contains("runs to go"),
        "no line per run or note off a terminal: {progress}"
    );
    let text = stdout(&quiet_lines);
    assert!(!text.contains("echoed the configuration"), "{text}");
    let verbose = bench(&project, &["-r", "3", "--verbose", "sleep 0.01"]);
    assert_eq!(
        stderr(&verbose).matches("sleep-0.01 (rep ").count(),
        3,
        "{}",
        stderr(&verbose)
    );
}
