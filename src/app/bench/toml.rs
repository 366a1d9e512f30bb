//! The lab.toml `lab bench` writes for its commands: one variant per command, the parameter
//! lists and scans, and one `agree` hypothesis per command and parameter set against the
//! reference, so that sampling adds runs until each is decided. It is an ordinary
//! experiment: `--save NAME` keeps it as `experiments/NAME/lab.toml` to edit and rerun.

use super::spec::{BenchCommand, BenchParam, Runs};
use lab_import::lab_toml::InOrder;
use serde::Serialize;
use std::collections::BTreeMap;

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

/// `ignore_failure` as lab.toml writes it: `true` or a list of codes.
#[derive(Serialize)]
#[serde(untagged)]
enum IgnoreFailureValue {
    All(bool),
    Codes(Vec<i32>),
}

#[derive(Serialize)]
struct File {
    experiment: ExperimentTable,
    #[serde(skip_serializing_if = "is_empty")]
    params: InOrder<Vec<toml::Value>>,
    variant: Vec<VariantTable>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    check: Vec<CheckTable>,
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_empty<T>(map: &InOrder<T>) -> bool {
    map.0.is_empty()
}

#[derive(Serialize)]
struct ExperimentTable {
    title: String,
    hypothesis: String,
    repetitions: Repetitions,
    warmup_runs: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_busy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget: Option<String>,
    workdir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    ignore_failure: Option<IgnoreFailureValue>,
    /// "included" (commands are timed whole), or the shell's empty command, whose start-up
    /// is taken out of every run, as hyperfine takes it out.
    start_up: StartUpValue,
}

#[derive(Serialize)]
#[serde(untagged)]
enum StartUpValue {
    Included(&'static str),
    Subtracted(Vec<String>),
}

#[derive(Serialize)]
#[serde(untagged)]
enum Repetitions {
    Fixed(u32),
    Sampled { min: u32, max: u32 },
}

#[derive(Serialize)]
struct VariantTable {
    name: String,
    label: String,
    run: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prepare: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    conclude: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    setup: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cleanup: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<String>,
    /// `false` with `--no-shell-check`: run the words as they are.
    #[serde(skip_serializing_if = "is_true")]
    shell_check: bool,
}

#[derive(Serialize)]
struct CheckTable {
    name: String,
    kind: &'static str,
    class: &'static str,
    metric: &'static str,
    a: toml::Table,
    b: toml::Table,
    margin: String,
}

/// The lab.toml text of `plan`.
pub(super) fn lab_toml(plan: &BenchPlan) -> String {
    let file = File {
        experiment: experiment(plan),
        params: InOrder(
            plan.params
                .iter()
                .map(|p| (p.name.clone(), p.values.clone()))
                .collect(),
        ),
        variant: variants(plan),
        check: checks(plan),
    };
    let body = toml::to_string(&file).unwrap_or_else(|e| format!("# not written: {e}\n"));
    format!(
        "# Written by `lab bench`. Edit it and rerun with `lab run` on this folder.\n# Typed: {}\n\n{body}",
        lab_config::format::terminal(&crate::app::typed_command())
    )
}

fn experiment(plan: &BenchPlan) -> ExperimentTable {
    let labels: Vec<&str> = plan.commands.iter().map(|c| c.label.as_str()).collect();
    let hypothesis = match labels.as_slice() {
        [one] => format!("How long `{one}` takes, with its interval."),
        [reference, ..] => format!(
            "How long each command takes against the reference `{reference}`: faster, slower, or the same within ±{}.",
            lab_config::format::percent(plan.threshold)
        ),
        [] => String::new(),
    };
    ExperimentTable {
        title: labels.join(" vs "),
        hypothesis,
        repetitions: match plan.runs {
            Runs::Fixed(n) => Repetitions::Fixed(n),
            Runs::Sampled { min, max } => Repetitions::Sampled { min, max },
        },
        warmup_runs: plan.warmup,
        seed: plan.seed,
        timeout: plan.timeout.clone(),
        max_busy: plan.max_busy.clone(),
        budget: matches!(plan.runs, Runs::Sampled { .. }).then(|| format!("{}s", plan.budget)),
        workdir: plan.workdir.clone(),
        ignore_failure: match &plan.ignore_failure {
            IgnoreFailure::None => None,
            IgnoreFailure::All => Some(IgnoreFailureValue::All(true)),
            IgnoreFailure::Codes(codes) => Some(IgnoreFailureValue::Codes(codes.clone())),
        },
        start_up: match &plan.shell {
            None => StartUpValue::Included("included"),
            Some(shell) => {
                let mut empty = shell.clone();
                empty.extend(["-c".to_string(), String::new()]);
                StartUpValue::Subtracted(empty)
            }
        },
    }
}

fn variants(plan: &BenchPlan) -> Vec<VariantTable> {
    plan.commands
        .iter()
        .zip(plan.names)
        .zip(plan.hooks)
        .zip(plan.env)
        .map(|(((command, name), hooks), env)| VariantTable {
            name: name.clone(),
            label: command.label.clone(),
            run: command.argv.clone(),
            env: env.clone(),
            prepare: hooks.prepare.clone(),
            conclude: hooks.conclude.clone(),
            setup: hooks.setup.clone(),
            cleanup: hooks.cleanup.clone(),
            input: plan.input.clone(),
            shell_check: plan.shell_check,
        })
        .collect()
}

/// One `agree` check per command after the reference and per parameter set: the command's
/// wall time against the reference's at the same parameters.
fn checks(plan: &BenchPlan) -> Vec<CheckTable> {
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
                table
            };
            checks.push(CheckTable {
                name: check_name(&plan.commands[i + 1], &plan.commands[0], set),
                kind: "agree",
                class: "hypothesis",
                metric: "wall_s",
                a: cell(name),
                b: cell(reference),
                margin: lab_config::format::percent(plan.threshold),
            });
        }
    }
    checks
}

/// "sort -n data against sort data (n=1)".
pub(super) fn check_name(
    command: &BenchCommand,
    reference: &BenchCommand,
    set: &toml::Table,
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

/// Every combination of the parameters' values, the first parameter varying slowest.
fn parameter_sets(params: &[BenchParam]) -> Vec<toml::Table> {
    params.iter().fold(vec![toml::Table::new()], |sets, p| {
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
