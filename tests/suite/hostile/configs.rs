//! Hostile lab.toml files: each is refused before anything is built, run or written, with the
//! file, line, column and key (or the experiment) and a reason.

use super::{minimal, project_with, stderr};
use crate::common::exit_of;
use lab::Exit;

/// One refused lab.toml: what is wrong with it, the file, and the error text expected on
/// stderr.
type Case = (&'static str, String, &'static str);

/// A run that prints metric `v` as a JSON line.
const PRINTS: &str = "sleep 0.2; echo '{\"v\": 1}'";

/// The minimal experiment with `line` added to its variant.
fn with_variant(line: &str) -> String {
    minimal(PRINTS, "").replace(
        "[[variant]]\nname = \"v\"\n",
        &format!("[[variant]]\nname = \"v\"\n{line}\n"),
    )
}

/// The minimal experiment with one check.
fn with_check(check: &str) -> String {
    minimal(PRINTS, &format!("\n[[check]]\nname = \"c\"\n{check}\n"))
}

/// The minimal experiment with `params` for its parameter list.
fn with_params(params: &str) -> String {
    minimal(PRINTS, "").replace("n = [1]", params)
}

/// The minimal experiment with its metric named `name`.
fn with_metric(name: &str) -> String {
    minimal(PRINTS, "").replace("[metric.v]", &format!("[metric.{name:?}]"))
}

/// The minimal experiment with a second variant whose environment is a table of its own.
fn with_second_env(entry: &str) -> String {
    minimal(
        PRINTS,
        &format!("\n[[variant]]\nname = \"w\"\nrun = [\"true\"]\n\n[variant.env]\n{entry}\n"),
    )
}

/// Every case, in the order they are tried.
fn cases() -> Vec<Case> {
    let mut cases = [
        cpu_cases(),
        plan_cases(),
        check_cases(),
        metric_name_cases(),
        name_cases(),
        env_cases(),
    ]
    .concat();
    cases.push((
        "a string where a number is needed",
        minimal("true", "").replace("repetitions = 3", "repetitions = \"3\""),
        "lab.toml:5:15",
    ));
    cases
}

/// CPUs the machine cannot give.
fn cpu_cases() -> Vec<Case> {
    vec![
        (
            "a CPU beyond the kernel's set",
            with_variant("cpus = \"1024\""),
            "lab.toml:14:8: `variant[1].cpus`: not a CPU list",
        ),
        (
            "a CPU range of a hundred million",
            with_variant("cpus = \"0-99999999\""),
            "`variant[1].cpus`: not a CPU list",
        ),
        (
            "a CPU this machine does not have",
            with_variant("cpus = \"999\""),
            "lab.toml:14:8: `variant[1].cpus` of v: CPU 999 cannot be used on this machine",
        ),
    ]
}

/// Parameters and plans no session could hold.
fn plan_cases() -> Vec<Case> {
    let thousand: String = (0..1000)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    vec![
        (
            "NaN parameters",
            with_params("n = [nan, nan]"),
            "`params.n`: NaN is not a finite number",
        ),
        (
            "an infinite parameter",
            with_params("n = [inf]"),
            "`params.n`: inf is not a finite number",
        ),
        (
            "a negative infinite parameter",
            with_params("n = [-inf]"),
            "`params.n`: -inf is not a finite number",
        ),
        (
            "a control character in a parameter",
            with_params("n = [\"a\\u001b[31m\"]"),
            "holds a control character",
        ),
        (
            "four billion repetitions",
            minimal("true", "").replace("repetitions = 3", "repetitions = 4000000000"),
            "`experiment.repetitions`: the plan has 4000000000 runs, more than the limit of 200000",
        ),
        (
            "three 1,000-value parameters",
            with_params(&format!(
                "n = [{thousand}]\na = [{thousand}]\nb = [{thousand}]"
            )),
            "`params.a`: the plan has 3000000000 runs",
        ),
        (
            "a plan over its declared max_runs",
            minimal("true", "").replace("seed = 1", "seed = 1\nmax_runs = 2"),
            "`experiment.max_runs`: the plan has 3 runs, more than the limit of 2",
        ),
    ]
}

/// Checks with settings that mean nothing.
fn check_cases() -> Vec<Case> {
    vec![
        (
            "a duration tolerance of 200%",
            with_check("kind = \"duration\"\nexpect = \"1\"\ntolerance = \"200%\""),
            "`check[1].tolerance`: 200% is too large",
        ),
        (
            "a duration tolerance of exactly 100%",
            with_check("kind = \"duration\"\nexpect = \"1\"\ntolerance = \"100%\""),
            "`check[1].tolerance`: 100% is too large",
        ),
        (
            "an agree margin of 150%",
            with_check(
                "kind = \"agree\"\nmetric = \"v\"\na = { n = 1 }\nb = { n = 1 }\nmargin = \"150%\"",
            ),
            "`check[1].margin`: 150% is too large",
        ),
        (
            "a max_cv of 5000%",
            with_check("kind = \"stable\"\nmetric = \"v\"\nmax_cv = \"5000%\""),
            "`check[1].max_cv`: 5000% is too large",
        ),
        (
            "an alpha of 2",
            with_check("kind = \"order\"\nmetric = \"v\"\nalpha = 2.0"),
            "alpha must lie strictly between 0 and 1",
        ),
    ]
}

/// Metric names that cannot name a file or a column.
fn metric_name_cases() -> Vec<Case> {
    vec![
        (
            "a metric named to escape the project",
            with_metric("../../../../outside/ESCAPED"),
            "`metric.../../../../outside/ESCAPED`: metric name",
        ),
        (
            "a metric name with a slash",
            with_metric("ops/s"),
            "metric name \"ops/s\" may hold only letters",
        ),
        (
            "a metric name starting with a dash",
            with_metric("-x"),
            "must start with a letter, a digit or '_'",
        ),
        (
            "a metric name starting with a dot",
            with_metric(".hidden"),
            "must start with a letter, a digit or '_'",
        ),
        (
            "a 65-character metric name",
            with_metric(&"m".repeat(65)),
            "is longer than 64 characters",
        ),
    ]
}

/// Variant and parameter names that cannot name a file or a column.
fn name_cases() -> Vec<Case> {
    vec![
        (
            "a variant named ../x",
            minimal("true", "").replace("name = \"v\"", "name = \"../x\""),
            "`variant[1].name`: variant name \"../x\" must start",
        ),
        (
            "a variant name with a space",
            minimal("true", "").replace("name = \"v\"", "name = \"a b\""),
            "variant name \"a b\" may hold only",
        ),
        (
            "a variant name with a bell",
            minimal("true", "").replace("name = \"v\"", "name = \"a\\u0007\""),
            "variant name \"a\\u{7}\" may hold only",
        ),
        (
            "an empty variant name",
            minimal("true", "").replace("name = \"v\"", "name = \"\""),
            "variant name \"\" is empty",
        ),
        (
            "a variant name with dots only",
            minimal("true", "").replace("name = \"v\"", "name = \"..\""),
            "variant name \"..\" must start",
        ),
        (
            "a parameter named with a slash",
            with_params("\"a/b\" = [1]").replace("\"{n}\"", "\"{a/b}\""),
            "parameter name \"a/b\"",
        ),
    ]
}

/// Environment variables no process can be given.
fn env_cases() -> Vec<Case> {
    vec![
        (
            "an environment variable name holding '='",
            with_variant("env = { \"A=B\" = \"1\" }"),
            "lab.toml:14:9: `variant[1].env.\"A=B\"`: the variable name \"A=B\" holds '='\n  hint: a variable's name ends at its first '=', so this would set \"A\" to \"B=1\"",
        ),
        (
            "an environment variable name holding '=' in a table of its own",
            with_second_env("\"LD_PRELOAD=/tmp/x.so\" = \"\""),
            "lab.toml:24:1: `variant[2].env.\"LD_PRELOAD=/tmp/x.so\"`: the variable name",
        ),
        (
            "an environment variable name holding NUL",
            with_variant("env = { OK = \"1\", \"A\\u0000B\" = \"1\" }"),
            "lab.toml:14:19: `variant[1].env.\"A\\0B\"`: the variable name \"A\\0B\" holds a NUL character\n  hint: a program gets each variable as a C string, which ends at a NUL: remove it",
        ),
        (
            "an environment variable name holding NUL in a table of its own",
            with_second_env("\"\\u0000\" = \"1\""),
            "lab.toml:24:1: `variant[2].env.\"\\0\"`: the variable name \"\\0\" holds a NUL character",
        ),
        (
            "an environment variable value holding NUL",
            with_variant("env = { A = \"x\\u0000y\" }"),
            "lab.toml:14:13: `variant[1].env.A`: the value holds a NUL character\n  hint: a program gets each variable as a C string, which ends at a NUL, so it would see only \"x\": remove it",
        ),
        (
            "an environment variable value holding NUL in a table of its own",
            with_second_env("JAVA_OPTS = \"-Xmx1g\\u0000-Xmx9g\""),
            "lab.toml:24:13: `variant[2].env.JAVA_OPTS`: the value holds a NUL character",
        ),
    ]
}

#[test]
fn every_hostile_config_is_refused_with_its_place_and_nothing_is_written() {
    let mut failures = Vec::new();
    for (what, lab_toml, expected) in cases() {
        let project = project_with("exp", &lab_toml, &[]);
        for args in [&["run", "exp"][..], &["run", "exp", "--dry-run"][..]] {
            let out = project.lab(args);
            let err = stderr(&out);
            if exit_of(&out) != Exit::Usage || !err.contains(expected) {
                failures.push(format!(
                    "{what} ({args:?}): {:?}, stderr:\n{err}",
                    exit_of(&out)
                ));
            }
        }
        if project.path("book").exists() || !project.sessions("exp").is_empty() {
            failures.push(format!("{what}: something was written"));
        }
        if project.root().parent().unwrap().join("outside").exists() {
            failures.push(format!("{what}: a file was written outside the project"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(cases().len(), 33);
}

#[test]
fn an_experiment_folder_that_is_not_a_name_is_refused() {
    for folder in ["lock stack", "lock\u{1b}stack", "-dash"] {
        let project = project_with(folder, &minimal("true", ""), &[]);
        let out = project.lab(&["run", &format!("experiments/{folder}")]);
        assert_eq!(exit_of(&out), Exit::Usage, "{folder}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("the experiment folder name"),
            "{folder}: {}",
            stderr(&out)
        );
        assert!(!project.path("data").exists() && !project.path("book").exists());
    }
}

#[test]
fn a_lab_toml_that_is_a_fifo_or_a_folder_is_named_as_what_it_is() {
    let project = project_with("exp", &minimal(PRINTS, ""), &[]);
    let path = project.path("experiments/exp/lab.toml");
    for (kind, make) in [("a FIFO", "mkfifo"), ("a folder", "mkdir")] {
        std::fs::remove_file(&path).unwrap_or_else(|_| std::fs::remove_dir(&path).unwrap());
        let made = std::process::Command::new(make).arg(&path).status();
        assert!(made.is_ok_and(|s| s.success()), "{make}");
        for args in [["run", "exp", "--quiet"], ["check", "exp", "--quiet"]] {
            let out = project.lab(&args);
            assert_eq!(exit_of(&out), Exit::Usage, "{args:?}");
            assert_eq!(
                stderr(&out).lines().next().unwrap_or_default(),
                format!(
                    "error: experiments/exp/lab.toml: it is {kind}, not a regular file; put the \
                     file itself there"
                ),
                "{args:?}"
            );
        }
    }
}
