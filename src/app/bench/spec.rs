//! `lab bench`'s command line read into what it measures: the commands (the reference first),
//! their names, the parameter lists and scans, the hooks and the runs per command. Every
//! mistake is a usage error naming the argument, before anything is written or run.

use crate::error::{LabError, Result};
use lab_config::identifier_problem;
use std::path::Path;

/// The most values one `-L` list or `-P` scan may give.
const MOST_VALUES: usize = 1_000;

/// One command to time.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct BenchCommand {
    /// What the person typed (or `-n`'s name): the label everywhere.
    pub label: String,
    /// The command as typed.
    pub text: String,
    /// What lab executes: the typed command split into arguments, or `SHELL -c TEXT`.
    pub argv: Vec<String>,
}

/// A parameter and its values, typed as TOML will hold them.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct BenchParam {
    pub name: String,
    pub values: Vec<toml::Value>,
}

/// How many runs each command gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Runs {
    Fixed(u32),
    /// At least `min`, then more until every comparison is decided, at most `max`.
    Sampled {
        min: u32,
        max: u32,
    },
}

/// How commands are turned into argument lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Shell {
    /// Split like a shell splits words (quotes, backslashes), nothing expanded or run by one.
    None,
    /// Run through this shell's command line (`sh`, `bash --norc`) with `-c`.
    Program(Vec<String>),
}

impl Shell {
    /// The argument list of `text`, or why it has none. `what` names it in messages.
    pub(super) fn argv(&self, text: &str, what: &str) -> Result<Vec<String>> {
        if text.trim().is_empty() {
            return Err(LabError::Usage(format!(
                "{what} is empty\n  hint: give the command to time, e.g. lab bench 'sleep 0.1'"
            )));
        }
        match self {
            Shell::Program(shell) => {
                let mut argv = shell.clone();
                argv.extend(["-c".to_string(), text.to_string()]);
                Ok(argv)
            }
            Shell::None => shlex::split(text).ok_or_else(|| {
                LabError::Usage(format!(
                    "{what} {text:?} has an unclosed quote or a trailing backslash\n  hint: close the quote, or use --shell to have a shell read it"
                ))
            }),
        }
    }
}

/// A `-L NAME a,b,c` list: the values typed as integers when all are, then as numbers, else
/// as text.
pub(super) fn list_param(name: &str, values: &str) -> Result<BenchParam> {
    check_param_name(name, "-L")?;
    let items: Vec<&str> = values.split(',').collect();
    if items.iter().any(|v| v.is_empty()) || items.len() > MOST_VALUES {
        return Err(LabError::Usage(format!(
            "-L {name} {values:?}: give 1 to {MOST_VALUES} comma-separated values, none empty"
        )));
    }
    Ok(BenchParam {
        name: name.to_string(),
        values: typed(&items),
    })
}

fn typed(items: &[&str]) -> Vec<toml::Value> {
    if let Some(ints) = items
        .iter()
        .map(|v| v.parse::<i64>().ok())
        .collect::<Option<Vec<_>>>()
    {
        return ints.into_iter().map(toml::Value::Integer).collect();
    }
    let floats: Option<Vec<f64>> = items
        .iter()
        .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    match floats {
        Some(fs) => fs.into_iter().map(toml::Value::Float).collect(),
        None => items
            .iter()
            .map(|v| toml::Value::String(v.to_string()))
            .collect(),
    }
}

/// A `-P NAME LOW HIGH [-D STEP]` scan: integers from LOW to HIGH by 1 (or STEP), or numbers
/// when any of them has a fraction, HIGH included when the steps reach it.
pub(super) fn scan_param(
    name: &str,
    low: &str,
    high: &str,
    step: Option<&str>,
) -> Result<BenchParam> {
    check_param_name(name, "-P")?;
    let bad = |why: &str| {
        LabError::Usage(format!(
            "-P {name} {low} {high}{}: {why}",
            step.map(|s| format!(" -D {s}")).unwrap_or_default()
        ))
    };
    let ints = (
        low.parse::<i64>(),
        high.parse::<i64>(),
        step.map_or(Ok(1), str::parse::<i64>),
    );
    if let (Ok(lo), Ok(hi), Ok(by)) = ints {
        if by <= 0 || hi < lo {
            return Err(bad("needs LOW ≤ HIGH and a step above 0"));
        }
        let count = ((hi - lo) / by + 1) as usize;
        if count > MOST_VALUES {
            return Err(bad(&format!(
                "gives {count} values, more than {MOST_VALUES}"
            )));
        }
        let values = (0..count as i64).map(|i| toml::Value::Integer(lo + i * by));
        return Ok(BenchParam {
            name: name.to_string(),
            values: values.collect(),
        });
    }
    let number = |t: &str| t.parse::<f64>().ok().filter(|x| x.is_finite());
    let (Some(lo), Some(hi)) = (number(low), number(high)) else {
        return Err(bad("LOW and HIGH must be numbers"));
    };
    let Some(by) = step.map_or(Some(1.0), number).filter(|s| *s > 0.0) else {
        return Err(bad("the step (-D) must be a number above 0"));
    };
    if hi < lo {
        return Err(bad("needs LOW ≤ HIGH"));
    }
    // A step that lands on HIGH up to rounding (0.1 + 0.1 + 0.1) still includes it.
    let count = ((hi - lo) / by + 1e-9).floor() as usize + 1;
    if count > MOST_VALUES {
        return Err(bad(&format!(
            "gives {count} values, more than {MOST_VALUES}"
        )));
    }
    let values = (0..count).map(|i| toml::Value::Float(round_decimal(lo + i as f64 * by)));
    Ok(BenchParam {
        name: name.to_string(),
        values: values.collect(),
    })
}

/// `x` rounded to 12 significant digits, so that 0.1 + 2 × 0.1 reads 0.3.
fn round_decimal(x: f64) -> f64 {
    format!("{x:.12e}").parse().unwrap_or(x)
}

fn check_param_name(name: &str, flag: &str) -> Result<()> {
    match identifier_problem(name) {
        Some(why) => Err(LabError::Usage(format!(
            "{flag} {name:?}: the parameter name {why}\n  hint: use letters, digits, _ and -, e.g. {flag} size …"
        ))),
        None => Ok(()),
    }
}

/// `text` with every brace doubled except around a declared parameter's name, so that lab
/// replaces `{NAME}` and passes any other brace (`awk '{print}'`) as typed.
pub(super) fn escape_braces(text: &str, params: &[BenchParam]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let placeholder = params.iter().find(|p| {
            after.starts_with('{')
                && after[1..].starts_with(p.name.as_str())
                && after[1 + p.name.len()..].starts_with('}')
        });
        match placeholder {
            Some(p) => {
                let len = p.name.len() + 2;
                out.push_str(&after[..len]);
                rest = &after[len..];
            }
            None => {
                let brace = &after[..1];
                out.push_str(brace);
                out.push_str(brace);
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// An error when `argv`'s program cannot be found: a path that is not there, or a name on
/// no folder of `PATH`. A program whose name holds a placeholder is found when it runs.
pub(super) fn check_program(argv: &[String], what: &str, cwd: &Path) -> Result<()> {
    let Some(program) = argv.first() else {
        return Ok(());
    };
    if program.contains('{') {
        return Ok(());
    }
    let found = lab_exec::locate_program(program, cwd, &Default::default()).is_some();
    if found {
        return Ok(());
    }
    Err(LabError::Usage(format!(
        "{what}: the program {program:?} was not found{}\n  hint: check its spelling; shell builtins and syntax (cd, |, &&, $VAR) need --shell",
        if program.contains('/') {
            String::new()
        } else {
            " on PATH".to_string()
        }
    )))
}

/// Shells by name: a `--shell` value whose program is none of these (nor ends in `sh`) was
/// more likely a command hyperfine 2.0's value-less `-S` came before.
const SHELLS: [&str; 9] = [
    "busybox",
    "cmd",
    "cmd.exe",
    "elvish",
    "fish",
    "nu",
    "pwsh",
    "xonsh",
    "powershell",
];

/// Whether `program` names a shell: its file name ends in `sh` (sh, bash, dash, zsh, ksh,
/// mksh, tcsh…) or is another shell's.
pub(super) fn is_a_shell(program: &str) -> bool {
    let name = Path::new(program)
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    name.ends_with("sh") || SHELLS.contains(&name.as_str())
}

/// An error when `text`, which runs without a shell, holds syntax only a shell acts on (a
/// pipe, `&&`, a redirection, a variable, a glob): split into words, the program would get
/// it as arguments and lab would time something else than what was typed.
pub(super) fn refuse_shell_syntax(text: &str, what: &str) -> Result<()> {
    let Some(found) = lab_config::shell_syntax::in_text(text) else {
        return Ok(());
    };
    let quoted = lab_render::shell_words(&[text.to_string()]);
    Err(LabError::Usage(format!(
        "{what} {text:?} holds {found}, which only a shell acts on: lab runs commands without a shell, so the program would get it as an argument
  hint: run it through a shell: lab bench --shell=sh {quoted} (or -S sh); --no-shell-check runs it without one anyway"
    )))
}

/// hyperfine 2.0's time and memory metrics, which every lab run records whatever `--metrics`
/// asks (wall, CPU, user and system time; peak resident memory).
const RECORDED_METRICS: [&str; 5] = [
    "time_wall_clock",
    "time_cpu",
    "time_user",
    "time_system",
    "memory_peak_resident",
];

/// hyperfine 2.0's perf counter metrics, which lab reads through lab.toml's `counters`.
const COUNTER_METRICS: [&str; 5] = [
    "cpu_cycles",
    "instructions",
    "cache_references",
    "cache_misses",
    "branch_misses",
];

/// hyperfine 2.0's `--metrics`: a preset or metrics with optional units. Those lab records in
/// every run are accepted; counters are refused with lab's way to read them.
pub(super) fn check_metrics(text: &str) -> Result<()> {
    if ["default", "time", "all"].contains(&text) {
        return Ok(());
    }
    for item in text.split(',') {
        let name = item.split(':').next().unwrap_or("").trim();
        if RECORDED_METRICS.contains(&name) {
            continue;
        }
        let why = if COUNTER_METRICS.contains(&name) {
            format!(
                "lab reads perf counters through lab.toml: keep the experiment with --save NAME, then add counters = [\"{}\"] to its [experiment]",
                name.replace('_', "-")
            )
        } else {
            format!(
                "hyperfine's metrics are default, time, all or {}",
                RECORDED_METRICS.join(", ")
            )
        };
        return Err(LabError::Usage(format!(
            "--metrics {text:?}: {name:?} is not a metric lab bench records\n  hint: {why}"
        )));
    }
    Ok(())
}

/// One hook per command from a flag given never, once (for every command) or once per
/// command, as hyperfine takes `--prepare` and `--conclude`.
pub(super) fn per_command(
    given: &[String],
    commands: usize,
    flag: &str,
) -> Result<Vec<Option<String>>> {
    match given.len() {
        0 => Ok(vec![None; commands]),
        1 => Ok(vec![Some(given[0].clone()); commands]),
        n if n == commands => Ok(given.iter().cloned().map(Some).collect()),
        n => Err(LabError::Usage(format!(
            "{flag} was given {n} times for {commands} commands\n  hint: give it once for every command, or once per command in their order"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(p: &BenchParam) -> Vec<String> {
        p.values.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn lists_are_typed_as_integers_numbers_or_text() {
        assert_eq!(
            values(&list_param("n", "1,2,10").unwrap()),
            ["1", "2", "10"]
        );
        assert_eq!(values(&list_param("x", "0.5,1").unwrap()), ["0.5", "1.0"]);
        assert_eq!(
            values(&list_param("mode", "fast,1").unwrap()),
            ["\"fast\"", "\"1\""]
        );
        let empty = list_param("n", "1,,2").unwrap_err().to_string();
        assert_eq!(
            empty,
            "-L n \"1,,2\": give 1 to 1000 comma-separated values, none empty"
        );
        let bad = list_param("a b", "1").unwrap_err().to_string();
        assert!(bad.starts_with("-L \"a b\": the parameter name"), "{bad}");
    }

    #[test]
    fn scans_step_from_low_to_high() {
        assert_eq!(
            values(&scan_param("n", "1", "4", None).unwrap()),
            ["1", "2", "3", "4"]
        );
        assert_eq!(
            values(&scan_param("n", "0", "10", Some("5")).unwrap()),
            ["0", "5", "10"]
        );
        assert_eq!(
            values(&scan_param("t", "0.1", "0.3", Some("0.1")).unwrap()),
            ["0.1", "0.2", "0.3"]
        );
        assert_eq!(
            scan_param("n", "5", "1", None).unwrap_err().to_string(),
            "-P n 5 1: needs LOW ≤ HIGH and a step above 0"
        );
        assert_eq!(
            scan_param("n", "1", "5000", None).unwrap_err().to_string(),
            "-P n 1 5000: gives 5000 values, more than 1000"
        );
    }

    #[test]
    fn braces_stay_literal_except_around_parameters() {
        let n = list_param("n", "1").unwrap();
        assert_eq!(
            escape_braces("awk '{print $1}' f{n}.txt", &[n]),
            "awk '{{print $1}}' f{n}.txt"
        );
        assert_eq!(escape_braces("echo {m}", &[]), "echo {{m}}");
    }

    #[test]
    fn commands_split_like_words_without_a_shell() {
        let argv = Shell::None
            .argv("sort -k 2 'my file'", "command 1")
            .unwrap();
        assert_eq!(argv, ["sort", "-k", "2", "my file"]);
        let sh = Shell::Program(vec!["sh".into()])
            .argv("a | b", "command 1")
            .unwrap();
        assert_eq!(sh, ["sh", "-c", "a | b"]);
        assert_eq!(
            Shell::None.argv("  ", "command 2").unwrap_err().to_string(),
            "command 2 is empty\n  hint: give the command to time, e.g. lab bench 'sleep 0.1'"
        );
        assert!(Shell::None.argv("echo 'open", "command 1").is_err());
    }

    #[test]
    fn shells_are_told_from_commands() {
        for shell in [
            "sh",
            "bash",
            "/bin/dash",
            "zsh",
            "fish",
            "/usr/local/bin/ksh",
        ] {
            assert!(is_a_shell(shell), "{shell}");
        }
        for command in ["sleep", "echo", "./bench", "python3"] {
            assert!(!is_a_shell(command), "{command}");
        }
    }

    #[test]
    fn a_missing_program_is_named() {
        let here = Path::new(".");
        assert!(check_program(&["sh".into()], "command 1", here).is_ok());
        let error = check_program(&["no-such-program-xyz".into()], "command 1", here)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(
                "command 1: the program \"no-such-program-xyz\" was not found on PATH"
            ),
            "{error}"
        );
    }

    #[test]
    fn hooks_are_given_once_or_per_command() {
        assert_eq!(per_command(&[], 2, "--prepare").unwrap(), [None, None]);
        let one = per_command(&["sync".into()], 2, "--prepare").unwrap();
        assert_eq!(one, [Some("sync".to_string()), Some("sync".to_string())]);
        assert!(per_command(&["a".into(), "b".into()], 3, "--prepare").is_err());
    }
}
