//! The lab.toml `lab bench` writes for its commands: one variant per command, the parameter
//! lists and scans, and one `agree` hypothesis per command and parameter set against the
//! reference, so that sampling adds runs until each is decided. It is an ordinary
//! experiment: `--save NAME` keeps it as `experiments/NAME/lab.toml` to edit and rerun.

use super::spec::{BenchCommand, BenchParam, Runs};
use lab_config::raw::{
    self, RawCheck, RawExperiment, RawFile, RawIgnoreFailure, RawNumberOrText, RawParamValue,
    RawRepetitions, RawStartUp, RawVariant, spanless,
};
use std::collections::BTreeMap;
use toml::Spanned;

/// Everything the lab.toml is written from.
pub(super) struct BenchPlan<'a> {
    pub commands: &'a [BenchCommand],
    /// Per command: its variant name.
    pub names: &'a [String],
    pub params: &'a [BenchParam],
    pub hooks: &'a [Hooks],
    /// Per command: the variables set for its runs.
    pub env: &'a [BTreeMap<String, String>],
    /// The file every command reads as its standard input (`--input`).
    pub input: Option<String>,
    /// The shell the commands run through (`--shell`), whose start-up each run leaves out.
    pub shell: Option<Vec<String>>,
    /// Whether commands holding shell syntax are refused (not with `--no-shell-check`).
    pub shell_check: bool,
    pub runs: Runs,
    pub warmup: u32,
    pub seed: Option<u64>,
    pub timeout: Option<String>,
    pub max_busy: Option<String>,
    /// How long the runs may take, in whole seconds, when they are sampled.
    pub budget: u64,
    pub ignore_failure: IgnoreFailure,
    /// Changes within ± this share are "the same".
    pub threshold: f64,
    /// The folder the commands were typed in, relative to the experiment folder.
    pub workdir: String,
}

/// One command's hooks as argument lists.
#[derive(Debug, Clone, Default)]
pub(super) struct Hooks {
    pub prepare: Option<Vec<String>>,
    pub conclude: Option<Vec<String>>,
    pub setup: Option<Vec<String>>,
    pub cleanup: Option<Vec<String>>,
}

/// Which non-zero exit codes count as measurements (`-i`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum IgnoreFailure {
    None,
    All,
    Codes(Vec<i32>),
}

/// The lab.toml text of `plan`.
pub(super) fn lab_toml(plan: &BenchPlan) -> String {
    format!(
        "# Written by `lab bench`. Edit it and rerun with `lab run` on this folder.\n# Typed: {}\n\n{}",
        lab_config::format::terminal(&crate::app::typed_command()),
        tables(plan)
    )
}

/// The tables of `plan`'s lab.toml.
fn tables(plan: &BenchPlan) -> String {
    let file = RawFile {
        experiment: experiment(plan),
        params: raw::in_order(plan.params.iter().map(|p| {
            let values = p.values.iter().map(param_value).collect();
            (p.name.clone(), values)
        })),
        variants: variants(plan),
        checks: checks(plan),
        ..RawFile::default()
    };
    raw::to_toml(&file).unwrap_or_else(|e| format!("# not written: {e}\n"))
}

/// A `-L` or `-P` value as lab.toml types it (the command line gives integers, numbers or
/// text).
fn param_value(value: &toml::Value) -> RawParamValue {
    match value {
        toml::Value::Integer(i) => RawParamValue::Int(*i),
        toml::Value::Float(x) => RawParamValue::Float(*x),
        toml::Value::String(s) => RawParamValue::Text(s.clone()),
        other => RawParamValue::Text(other.to_string()),
    }
}

fn experiment(plan: &BenchPlan) -> RawExperiment {
    let labels: Vec<&str> = plan.commands.iter().map(|c| c.label.as_str()).collect();
    let hypothesis = match labels.as_slice() {
        [one] => format!("How long `{one}` takes, with its interval."),
        [reference, ..] => format!(
            "How long each command takes against the reference `{reference}`: faster, slower, or the same within ±{}.",
            lab_config::format::percent(plan.threshold)
        ),
        [] => String::new(),
    };
    let text = |t: &String| spanless(RawNumberOrText::Text(t.clone()));
    let sampled = matches!(plan.runs, Runs::Sampled { .. });
    RawExperiment {
        title: labels.join(" vs "),
        hypothesis,
        repetitions: Some(spanless(match plan.runs {
            Runs::Fixed(n) => RawRepetitions::Fixed(n),
            Runs::Sampled { min, max } => RawRepetitions::Range { min, max },
        })),
        warmup_runs: Some(plan.warmup),
        seed: plan.seed,
        timeout: plan.timeout.as_ref().map(text),
        max_busy: plan.max_busy.as_ref().map(text),
        budget: sampled.then(|| text(&format!("{}s", plan.budget))),
        workdir: Some(spanless(plan.workdir.clone())),
        ignore_failure: match &plan.ignore_failure {
            IgnoreFailure::None => RawIgnoreFailure::default(),
            IgnoreFailure::All => RawIgnoreFailure::All(true),
            IgnoreFailure::Codes(codes) => RawIgnoreFailure::Codes(codes.clone()),
        },
        start_up: Some(spanless(start_up(plan.shell.as_deref()))),
        ..RawExperiment::default()
    }
}

/// "included" (commands are timed whole), or the shell's empty command, whose start-up is
/// taken out of every run, as hyperfine takes it out.
fn start_up(shell: Option<&[String]>) -> RawStartUp {
    match shell {
        None => RawStartUp::Word("included".to_string()),
        Some(shell) => {
            let mut empty = shell.to_vec();
            empty.extend(["-c".to_string(), String::new()]);
            RawStartUp::Subtracted(empty)
        }
    }
}

fn variants(plan: &BenchPlan) -> Vec<RawVariant> {
    let command = |argv: &Option<Vec<String>>| argv.clone().map(spanless);
    plan.commands
        .iter()
        .zip(plan.names)
        .zip(plan.hooks)
        .zip(plan.env)
        .map(|(((c, name), hooks), env)| RawVariant {
            label: Some(c.label.clone()),
            run: Some(spanless(c.argv.clone())),
            env: env
                .iter()
                .map(|(k, v)| (spanless(k.clone()), spanless(v.clone())))
                .collect(),
            prepare: command(&hooks.prepare),
            conclude: command(&hooks.conclude),
            setup: command(&hooks.setup),
            cleanup: command(&hooks.cleanup),
            input: plan.input.clone(),
            // `false` with `--no-shell-check`: run the words as they are.
            shell_check: (!plan.shell_check).then_some(false),
            ..RawVariant::named(name.clone())
        })
        .collect()
}

/// One `agree` check per command after the reference and per parameter set: the command's
/// wall time against the reference's at the same parameters.
fn checks(plan: &BenchPlan) -> Vec<Spanned<RawCheck>> {
    let Some((reference, others)) = plan.names.split_first() else {
        return Vec::new();
    };
    let sets = parameter_sets(plan.params);
    let mut checks = Vec::new();
    for (i, name) in others.iter().enumerate() {
        for set in &sets {
            let cell = |variant: &str| {
                let mut table = set.clone();
                table.insert("variant".into(), toml::Value::String(variant.into()));
                Some(spanless(table))
            };
            let check_name = check_name(&plan.commands[i + 1], &plan.commands[0], set);
            let margin = lab_config::format::percent(plan.threshold);
            checks.push(spanless(RawCheck {
                class: Some(spanless("hypothesis".to_string())),
                metric: Some(spanless("wall_s".to_string())),
                margin: Some(spanless(RawNumberOrText::Text(margin))),
                a: cell(name),
                b: cell(reference),
                ..RawCheck::new(check_name, "agree")
            }));
        }
    }
    checks
}

/// "sort -n data against sort data (n=1)".
pub(super) fn check_name(
    command: &BenchCommand,
    reference: &BenchCommand,
    set: &CellValues,
) -> String {
    let values: Vec<String> = set
        .iter()
        .map(|(k, v)| format!("{k}={}", plain(v)))
        .collect();
    let at = if values.is_empty() {
        String::new()
    } else {
        format!(" ({})", values.join(", "))
    };
    format!("{} against {}{at}", command.label, reference.label)
}

fn plain(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A cell's parameter values, as a check's `a` or `b` names them.
type CellValues = BTreeMap<String, toml::Value>;

/// Every combination of the parameters' values, the first parameter varying slowest.
fn parameter_sets(params: &[BenchParam]) -> Vec<CellValues> {
    params.iter().fold(vec![CellValues::new()], |sets, p| {
        sets.iter()
            .flat_map(|set| {
                p.values.iter().map(move |v| {
                    let mut next = set.clone();
                    next.insert(p.name.clone(), v.clone());
                    next
                })
            })
            .collect()
    })
}

#[cfg(test)]
#[path = "toml_tests.rs"]
mod tests;
