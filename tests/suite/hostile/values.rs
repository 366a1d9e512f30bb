//! Output lab cannot use and programs that cannot start: values a run printed that are no
//! number (NaN, infinities, 1e400, null, arrays, objects, strings, a line too long to read),
//! scripts whose `#!` interpreter is missing, and a build that prints without end. Each is
//! reported as what it is, naming the run and the output line, never as "printed no value".

use super::{files_containing, minimal, problems, project_with, run_problems, stderr, stdout};
use crate::common::{self, Project, exit_of};
use lab::Exit;

/// One run (not three) printing `start` and then what `script` prints, with `extra` lab.toml.
fn one_run(script: &str, extra: &str) -> Project {
    let lab_toml = minimal(&format!("sleep 0.2; echo start; {script}"), extra)
        .replace("repetitions = 3", "repetitions = 1");
    project_with("exp", &lab_toml, &[])
}

/// A line as the chapter's table of invalid runs shows it.
fn as_in_chapter(problem: &str) -> String {
    problem.replace('`', "\\`").replace('"', "&quot;")
}

/// (what, what the run prints after `start`, more lab.toml, the run's one problem).
fn unusable_cases() -> Vec<(&'static str, &'static str, &'static str, String)> {
    [unusable_json_values(), unreadable_values()].concat()
}

/// JSON values that are no number lab can use.
fn unusable_json_values() -> Vec<(&'static str, &'static str, &'static str, String)> {
    let key_v = |what: &str| format!("metric `v`: stdout line 2: key \"v\" is {what}");
    vec![
        (
            "NaN",
            "echo '{\"v\": NaN}'",
            "",
            key_v("NaN, not a number lab can use"),
        ),
        (
            "Infinity",
            "echo '{\"v\": Infinity}'",
            "",
            key_v("Infinity, not a number lab can use"),
        ),
        (
            "-Infinity",
            "echo '{\"v\": -Infinity}'",
            "",
            key_v("-Infinity, not a number lab can use"),
        ),
        (
            "a number beyond a double",
            "echo '{\"v\": 1e400}'",
            "",
            key_v("1e400, beyond the largest number lab can hold (about 1.8e308)"),
        ),
        (
            "null",
            "echo '{\"v\": null}'",
            "",
            key_v("null, not a number lab can use"),
        ),
        (
            "an array",
            "echo '{\"v\": [1, 2]}'",
            "",
            key_v("an array, not a number lab can use"),
        ),
        (
            "an object",
            "echo '{\"v\": {\"mean\": 3}}'",
            "",
            key_v("an object, not a number lab can use"),
        ),
    ]
}

/// Values that are text, on a line too long to read, or read by a regex.
fn unreadable_values() -> Vec<(&'static str, &'static str, &'static str, String)> {
    let regex = "\n[metric.r]\nregex = 'r=(\\S+)'\n";
    let long_line =
        "printf '{\"v\": 3, \"pad\": \"'; head -c 2000000 /dev/zero | tr '\\0' x; printf '\"}\\n'";
    vec![
        (
            "a string",
            "echo '{\"v\": \"fast\"}'",
            "",
            "metric `v`: stdout line 2: \"fast\" is not a number".into(),
        ),
        (
            "a NaN among numbers",
            "echo '{\"v\": 1}'; echo '{\"v\": NaN}'",
            "",
            "metric `v`: stdout line 3: key \"v\" is NaN, not a number lab can use".into(),
        ),
        (
            "a JSON line over 1 MiB",
            long_line,
            "",
            "metric `v`: no value lab could read; stdout line 2 is 2000019 bytes long, over the 1 MiB lab reads a line of values up to (print each value on a short line of its own)".into(),
        ),
        (
            "1e400 read by a regex",
            "echo 'r=1e400'; echo '{\"v\": 1}'",
            regex,
            "metric `r`: stdout line 2: \"1e400\" is beyond the largest number lab can hold (about 1.8e308)".into(),
        ),
        (
            "NaN read by a regex",
            "echo 'r=NaN'; echo '{\"v\": 1}'",
            regex,
            "metric `r`: stdout line 2: \"NaN\" is NaN, not a number lab can use".into(),
        ),
    ]
}

#[test]
fn every_unusable_value_is_reported_as_what_it_is_with_its_run_and_line() {
    let mut failures = Vec::new();
    for (what, script, extra, expected) in unusable_cases() {
        let project = one_run(script, extra);
        let run = project.lab(&["run", "exp", "--quiet"]);
        let check = project.lab(&["check", "exp"]);
        let chapter = project.read("book/src/exp/index.md");
        let found = run_problems(&project);
        let reading = format!("run r0001: {expected}");
        let row = format!("| r0001 | v | {} |", as_in_chapter(&expected));
        if exit_of(&run) != Exit::CheckFailed
            || exit_of(&check) != Exit::CheckFailed
            || found != [vec![expected.clone()]]
            || !stdout(&check).contains(&reading)
            || !chapter.contains(&row)
            || !files_containing(&project.path("book"), b"printed no value").is_empty()
        {
            failures.push(format!(
                "{what}: run {:?}, check {:?}, problems {found:?}\nwanted {expected:?}\ncheck:\n{}",
                exit_of(&run),
                exit_of(&check),
                stdout(&check)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(unusable_cases().len(), 12);
}

#[test]
fn a_progress_line_rewritten_in_place_gives_the_value_the_terminal_shows() {
    let project = project_with(
        "exp",
        &minimal("sleep 0.2; printf 'progress 10%%\\r{\"v\": 3}\\n'", ""),
        &[],
    );
    project.lab_exits(&["run", "exp", "--quiet"], Exit::Ok);
    let values: Vec<String> = common::csv_rows(&project.session("exp").join("samples.csv"))
        .into_iter()
        .map(|s| s["value"].clone())
        .collect();
    assert_eq!(values, ["3", "3", "3"]);
    assert_eq!(problems(&project), Vec::<String>::new());
    let check = project.lab_exits(&["check", "exp"], Exit::Ok);
    assert!(
        stdout(&check).contains("pass          validity   every run reported every metric"),
        "{}",
        stdout(&check)
    );
}

fn executable(project: &Project, name: &str, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = project.path("experiments/exp").join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// What starting `./NAME` says when its first line is `#!/nonexistent/interp`.
fn missing_interpreter(name: &str) -> String {
    format!(
        "cannot start `./{name}`: it starts with `#!/nonexistent/interp`, and `/nonexistent/interp` does not exist (install it, or correct the script's first line)"
    )
}

/// A project whose variant runs `run` (a TOML array) instead of `sh -c`, with `extra`.
fn running(run: &str, extra: &str) -> Project {
    let lab_toml = minimal("", "").replacen(
        "run = [\"sh\", \"-c\", \"\", \"{n}\"]",
        &format!("run = {run}"),
        1,
    );
    assert!(lab_toml.contains(&format!("run = {run}\n")));
    project_with("exp", &format!("{lab_toml}{extra}"), &[])
}

#[test]
fn a_script_whose_interpreter_is_missing_is_named_as_such_not_as_missing() {
    let project = running("[\"./bench.sh\", \"{n}\"]", "");
    executable(
        &project,
        "bench.sh",
        "#!/nonexistent/interp\necho '{\"v\": 1}'\n",
    );
    project.lab_exits(&["run", "exp", "--quiet"], Exit::CheckFailed);
    let expected = missing_interpreter("bench.sh");
    let firsts: Vec<String> = run_problems(&project)
        .into_iter()
        .map(|p| p[0].clone())
        .collect();
    assert_eq!(
        firsts,
        [expected.clone(), expected.clone(), expected.clone()]
    );
    let check = project.lab_exits(&["check", "exp"], Exit::CheckFailed);
    assert!(
        stdout(&check).contains(&format!("run r0001: {expected}, and 2 more")),
        "{}",
        stdout(&check)
    );
    assert!(files_containing(&project.path("book"), b"No such file").is_empty());
}

#[test]
fn a_build_script_whose_interpreter_is_missing_is_named_as_such() {
    let project = running("[\"true\"]", "\n[build]\nrun = [\"./build.sh\"]\n");
    executable(&project, "build.sh", "#!/nonexistent/interp\nmake\n");
    let out = project.lab_exits(&["run", "exp", "--quiet"], Exit::Usage);
    assert_eq!(
        stderr(&out),
        format!(
            "error: the build could not start: {}\n",
            missing_interpreter("build.sh")
        )
    );
    assert!(project.sessions("exp").is_empty());
}

#[test]
fn a_failing_build_that_prints_100000_lines_shows_its_last_40_and_keeps_the_rest() {
    let script = "seq 1 100000 | sed 's/^/line /'\necho 'error: the last words' >&2\nexit 3\n";
    let project = running("[\"true\"]", "\n[build]\nrun = [\"sh\", \"build.sh\"]\n");
    std::fs::write(project.path("experiments/exp/build.sh"), script).unwrap();
    let out = project.lab_exits(&["run", "exp", "--quiet"], Exit::Usage);
    let tail: String = (99_962..=100_000).map(|i| format!("line {i}\n")).collect();
    assert_eq!(
        stderr(&out),
        format!(
            "error: the build `sh build.sh` failed (exit status: 3); its last 40 lines (99961 lines before them cut; the whole output is in experiments/exp/.lab-build.log):\n{tail}error: the last words\n"
        )
    );
    let log = project.read("experiments/exp/.lab-build.log");
    assert_eq!(log.lines().count(), 100_001);
    assert_eq!(log.lines().next(), Some("line 1"));
    assert!(project.sessions("exp").is_empty());
}
