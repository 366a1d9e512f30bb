//! `lab bench`'s command line composed into the lab.toml of its experiment: the commands (the
//! reference first), their names, parameters, hooks, input, environment and runs. Every
//! mistake is a usage error naming the argument, before anything is written or run; a
//! command that holds shell syntax but would run without a shell is one.

use super::args::BenchArgs;
use super::place::Place;
use super::spec::{self, BenchCommand, BenchParam, Runs, Shell};
use super::toml;
use crate::error::{LabError, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// Runs per command when a single command is timed (nothing to decide): hyperfine's minimum.
const SINGLE_RUNS: u32 = 10;
/// The first look's runs per command when commands are compared.
const MIN_RUNS: u32 = 5;
/// The most runs per command sampling may reach.
const MAX_RUNS: u32 = 40;
/// How long a bench's runs may take while sampling, in seconds: about what hyperfine takes
/// for two commands of a tenth of a second, and time for 40 runs of each.
const BUDGET_S: u64 = 20;

impl BenchArgs {
    /// The lab.toml of this command line, for an experiment `depth` folders below `place`'s
    /// root.
    pub(super) fn lab_toml(&self, place: &Place, depth: usize) -> Result<String> {
        let shell = self.shell()?;
        let (commands, params) = self.commands(&shell, &place.cwd)?;
        let labels: Vec<&str> = commands.iter().map(|c| c.label.as_str()).collect();
        let names = lab_import::names::short_names(&labels);
        let hooks = self.hooks(&commands, &shell, &params)?;
        Ok(toml::lab_toml(&toml::BenchPlan {
            commands: &commands,
            names: &names,
            params: &params,
            hooks: &hooks,
            env: &self.environment(commands.len())?,
            input: self.input_file(&place.cwd)?,
            shell: match &shell {
                Shell::Program(words) => Some(words.clone()),
                Shell::None => None,
            },
            shell_check: !self.no_shell_check,
            runs: self.runs(commands.len())?,
            warmup: self.warmup,
            seed: self.seed,
            timeout: self.timeout.clone(),
            max_busy: self.max_busy.clone(),
            budget: self.budget.map_or(BUDGET_S, |b| b.as_secs().max(1)),
            ignore_failure: self.ignored_failures()?,
            threshold: self.threshold,
            workdir: place.workdir(depth),
        }))
    }

    /// How commands become argument lists: `--shell` (a name, a command line such as
    /// `bash --norc`, `default` for sh, `none`), or split into words.
    pub(super) fn shell(&self) -> Result<Shell> {
        let Some(given) = &self.shell else {
            return Ok(Shell::None);
        };
        if self.commands.is_empty() {
            return Err(LabError::Usage(format!(
                "--shell took {given:?} as the shell to run the commands with, and no command is left to time\n  hint: name the shell, then the command: lab bench --shell=sh {} (or -S sh …)",
                lab_render::shell_words(std::slice::from_ref(given))
            )));
        }
        let words = match given.as_str() {
            "none" => return Ok(Shell::None),
            "default" => vec!["sh".to_string()],
            text => shlex::split(text).filter(|w| !w.is_empty()).ok_or_else(|| {
                LabError::Usage(format!("--shell {text:?} is not a shell's command line\n  hint: write e.g. --shell=sh or --shell='bash --norc'"))
            })?,
        };
        if !spec::is_a_shell(&words[0]) {
            return Err(LabError::Usage(format!(
                "--shell took {given:?} as the shell to run the commands with, and it is not a shell lab knows (sh, bash, dash, zsh, ksh, fish, …)\n  hint: name the shell, then the command: lab bench -S sh 'CMD' (hyperfine 2.0's -S takes no value and means sh: write -S sh here)"
            )));
        }
        spec::check_program(&words, "--shell", Path::new(".")).map_err(|e| {
            LabError::Usage(format!(
                "{e}\n  --shell takes the shell first: lab bench --shell=sh 'CMD'"
            ))
        })?;
        Ok(Shell::Program(words))
    }

    /// The commands in order, the reference first.
    fn commands(&self, shell: &Shell, cwd: &Path) -> Result<(Vec<BenchCommand>, Vec<BenchParam>)> {
        if self.commands.is_empty() {
            return Err(LabError::Usage(
                "no command to time\n  hint: give one or more, e.g. lab bench 'sleep 0.1' 'sleep 0.2'; lab bench --list shows earlier sessions".into(),
            ));
        }
        let params = self.params()?;
        let offset = usize::from(self.reference.is_some());
        if self.command_name.len() > self.commands.len() {
            return Err(LabError::Usage(format!(
                "-n/--command-name was given {} times for {} commands",
                self.command_name.len(),
                self.commands.len()
            )));
        }
        let typed: Vec<&String> = self.reference.iter().chain(&self.commands).collect();
        let mut commands = Vec::new();
        for (i, text) in typed.iter().enumerate() {
            let what = match i.checked_sub(offset) {
                None => "the reference command".to_string(),
                Some(k) => format!("command {}", k + 1),
            };
            let label = match i.checked_sub(offset) {
                None => self.reference_name.clone(),
                Some(k) => self.command_name.get(k).cloned(),
            };
            commands.push(self.command(text, label, &what, shell, &params, cwd)?);
        }
        refuse_twice(&commands)?;
        Ok((commands, params))
    }

    /// One typed command as it will run.
    fn command(
        &self,
        text: &str,
        label: Option<String>,
        what: &str,
        shell: &Shell,
        params: &[BenchParam],
        cwd: &Path,
    ) -> Result<BenchCommand> {
        let argv = shell.argv(text, what)?;
        if *shell == Shell::None {
            if !self.no_shell_check {
                spec::refuse_shell_syntax(text, what)?;
            }
            spec::check_program(&argv, what, cwd)?;
        }
        Ok(BenchCommand {
            label: label.unwrap_or_else(|| text.to_string()),
            text: text.to_string(),
            argv: argv
                .iter()
                .map(|a| spec::escape_braces(a, params))
                .collect(),
        })
    }

    /// The -L lists and -P scans, in the order given (lists first).
    fn params(&self) -> Result<Vec<BenchParam>> {
        let mut params = Vec::new();
        for pair in self.parameter_list.chunks(2) {
            params.push(spec::list_param(&pair[0], &pair[1])?);
        }
        for triple in self.parameter_scan.chunks(3) {
            params.push(spec::scan_param(
                &triple[0],
                &triple[1],
                &triple[2],
                self.step.as_deref(),
            )?);
        }
        if let Some(p) = params
            .iter()
            .enumerate()
            .find(|(i, p)| params[..*i].iter().any(|q| q.name == p.name))
        {
            return Err(LabError::Usage(format!(
                "the parameter {} is given twice",
                p.1.name
            )));
        }
        Ok(params)
    }

    /// The untimed commands around each command's runs, each through a shell.
    fn hooks(
        &self,
        commands: &[BenchCommand],
        shell: &Shell,
        params: &[BenchParam],
    ) -> Result<Vec<toml::Hooks>> {
        let n = commands.len();
        let prepare = spec::per_command(&self.prepare, n, "--prepare")?;
        let conclude = spec::per_command(&self.conclude, n, "--conclude")?;
        let cleanup = spec::per_command(&self.cleanup, n, "--cleanup")?;
        // hyperfine runs its hooks through a shell whether or not the commands get one: the
        // one --shell names, else sh.
        let hook_shell = match shell {
            Shell::Program(_) => shell.clone(),
            Shell::None => Shell::Program(vec!["sh".to_string()]),
        };
        let argv = |text: &Option<String>, flag: &str| -> Result<Option<Vec<String>>> {
            text.as_ref()
                .map(|t| {
                    let argv = hook_shell.argv(t, flag)?;
                    Ok(argv
                        .iter()
                        .map(|a| spec::escape_braces(a, params))
                        .collect())
                })
                .transpose()
        };
        (0..n)
            .map(|i| {
                Ok(toml::Hooks {
                    prepare: argv(&prepare[i], "--prepare")?,
                    conclude: argv(&conclude[i], "--conclude")?,
                    setup: argv(&self.setup, "--setup")?,
                    cleanup: argv(&cleanup[i], "--cleanup")?,
                })
            })
            .collect()
    }

    /// The `--env` variables per command: each value holds assignments separated by spaces,
    /// quoted as a shell quotes them (hyperfine 2.0's `--env 'A=1 B="x y"'`), given once for
    /// every command or once per command.
    fn environment(&self, commands: usize) -> Result<Vec<BTreeMap<String, String>>> {
        let given = spec::per_command(&self.env, commands, "--env")?;
        given
            .iter()
            .map(|text| text.as_deref().map_or(Ok(BTreeMap::new()), assignments))
            .collect()
    }

    /// `--input FILE` as an absolute path (`null`: none); the file must exist.
    fn input_file(&self, cwd: &Path) -> Result<Option<String>> {
        match self.input.as_deref() {
            None | Some("null") => Ok(None),
            Some(file) => {
                let path = cwd.join(file);
                if !path.is_file() {
                    return Err(LabError::Usage(format!(
                        "--input {file:?}: no such file\n  hint: name a file the commands read as their standard input, or --input null"
                    )));
                }
                Ok(Some(path.display().to_string()))
            }
        }
    }

    /// `-i`: every non-zero exit code (`all-non-zero`) or those listed (`1,2`).
    fn ignored_failures(&self) -> Result<toml::IgnoreFailure> {
        let Some(mode) = self.ignore_failure.as_deref() else {
            return Ok(toml::IgnoreFailure::None);
        };
        if mode == "all-non-zero" {
            return Ok(toml::IgnoreFailure::All);
        }
        mode.split(',')
            .map(|code| code.trim().parse::<i32>().ok().filter(|c| *c != 0))
            .collect::<Option<Vec<i32>>>()
            .map(toml::IgnoreFailure::Codes)
            .ok_or_else(|| {
                LabError::Usage(format!(
                    "--ignore-failure={mode:?} is neither all-non-zero nor a list of exit codes\n  hint: write -i, -i=all-non-zero or e.g. -i=1,2"
                ))
            })
    }

    /// Runs per command: fixed for one command or with --runs, sampled otherwise.
    fn runs(&self, commands: usize) -> Result<Runs> {
        if let Some(n) = self.runs {
            return Ok(Runs::Fixed(n));
        }
        if commands == 1 {
            return Ok(Runs::Fixed(self.min_runs.unwrap_or(SINGLE_RUNS)));
        }
        let min = self.min_runs.unwrap_or(MIN_RUNS);
        let max = self.max_runs.unwrap_or(MAX_RUNS.max(min));
        match min.cmp(&max) {
            std::cmp::Ordering::Less => Ok(Runs::Sampled { min, max }),
            std::cmp::Ordering::Equal => Ok(Runs::Fixed(min)),
            std::cmp::Ordering::Greater => Err(LabError::Usage(format!(
                "--min-runs {min} is above --max-runs {max}"
            ))),
        }
    }
}

/// `A=1 B="x y"`: the variables an `--env` value sets.
fn assignments(text: &str) -> Result<BTreeMap<String, String>> {
    let bad = || {
        LabError::Usage(format!(
            "--env {text:?} is not a list of NAME=VALUE assignments\n  hint: write e.g. --env LC_ALL=C or --env 'A=1 B=\"x y\"'"
        ))
    };
    let words = shlex::split(text)
        .filter(|w| !w.is_empty())
        .ok_or_else(bad)?;
    words
        .iter()
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
            _ => Err(bad()),
        })
        .collect()
}

/// An error when two commands would carry the same label.
fn refuse_twice(commands: &[BenchCommand]) -> Result<()> {
    let Some((_, twice)) = commands
        .iter()
        .enumerate()
        .find(|(i, c)| commands[..*i].iter().any(|d| d.label == c.label))
    else {
        return Ok(());
    };
    Err(LabError::Usage(format!(
        "the command {:?} is given twice\n  hint: time each command once, or tell them apart with -n NAME",
        twice.label
    )))
}
