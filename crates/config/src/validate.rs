//! From the raw mirror to a trusted `Experiment`: profiles, matrix, variants, metrics.

use super::MAX_RUNS;
use super::checks::validate_checks;
use super::duration::{LONGEST_SECONDS, duration_seconds};
use super::env::validate_env;
use super::error::{ConfigError, Locator};
use super::identifier::{IDENTIFIER_HINT, identifier_problem};
use super::model::*;
use super::params::{declared_values, validate_params, validate_restrictions};
use super::raw::*;
use super::shell_syntax;
use super::template::placeholders;
use crate::isolation::Wanted;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use toml::Spanned;

type Result<T> = std::result::Result<T, ConfigError>;

const DEFAULT_REPETITIONS: u32 = 5;
const DEFAULT_SEED: u64 = 1;
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// A run that waited for a CPU others had for more than a tenth of its wall time is counted
/// disturbed (drawn apart, and the next run waits for the machine to calm): background
/// daemons stay far below it, a process competing for one of two cores far above.
pub(crate) const DEFAULT_MAX_BUSY: f64 = 0.10;
/// The default of `max_busy` when it was others' share of a run's CPUs, before lab judged
/// waiting: sessions recorded then keep the rule they were recorded under.
pub(crate) const LEGACY_MAX_BUSY: f64 = 0.25;
/// How long a run waits for a busy machine to calm by default: long enough for a burst of
/// other work to pass, short enough that a machine that stays busy costs one such wait.
const DEFAULT_CALM_WAIT: Duration = Duration::from_secs(2);
/// A sampled session's first look needs an interval in every cell: three runs.
const MIN_SAMPLED: u32 = 3;
/// Stopping once intervals are narrow favours samples that happen to be tight; from 8 runs per
/// cell the self-test's coverage stays above 95% (`stats::coverage`), from 5 it fell to 93.5%.
const MIN_SAMPLED_FOR_PRECISION: u32 = 8;
/// The largest `requeue` older files declare (the key is no longer used).
const MAX_REQUEUE: u32 = 10;

/// Identity of the experiment that is not in the file itself.
pub(crate) struct Origin {
    pub name: String,
    pub dir: std::path::PathBuf,
    pub source_hash: String,
}

/// Validates a parsed file, applying `profile` first.
pub(crate) fn validate(
    mut raw: RawFile,
    origin: Origin,
    profile: Option<&str>,
    loc: &Locator,
) -> Result<Experiment> {
    let (declared, overrides) = declared(&mut raw, profile, loc)?;
    let (experiment, sampled_to) = experiment(&raw, origin, profile, &overrides, declared, loc)?;
    with_checks_and_sampling(experiment, &raw, sampled_to, &overrides, loc)
}

/// What the experiment varies and measures: its parameters (in declared order, a profile's
/// lists applied), variants, counters and metrics.
struct Declared {
    params: Vec<Param>,
    declared_values: BTreeMap<String, Vec<ParamValue>>,
    variants: Vec<Variant>,
    counters: Vec<crate::counter::Counter>,
    metrics: Vec<Metric>,
}

/// The parameters, variants, counters and metrics of `raw`, with `profile` applied to it;
/// and what the profile changes besides.
fn declared(
    raw: &mut RawFile,
    profile: Option<&str>,
    loc: &Locator,
) -> Result<(Declared, Overrides)> {
    // Declared order, taken before a profile replaces some lists with its own.
    let param_order = declared_order(&raw.params);
    let base_params = validate_params(&raw.params, loc)?;
    let overrides = apply_profile(raw, profile, loc)?;
    let mut params = validate_params(&raw.params, loc)?;
    let declared_values = declared_values(&base_params, &params);
    params.sort_by_key(|p| param_order.iter().position(|n| *n == p.name));
    let variants = validate_variants(
        &raw.variants,
        &params,
        raw.experiment.imported.is_some(),
        loc,
    )?;
    let counters = super::counters::validate_counters(&raw.experiment.counters, loc)?;
    let metrics = validate_metrics(&raw.metrics, &counters, loc)?;
    let declared = Declared {
        params,
        declared_values,
        variants,
        counters,
        metrics,
    };
    Ok((declared, overrides))
}

/// The experiment `[experiment]` describes, over what it declares (its checks and sampling
/// still to come), and the most repetitions a sampled session may reach.
fn experiment(
    raw: &RawFile,
    origin: Origin,
    profile: Option<&str>,
    overrides: &Overrides,
    declared: Declared,
    loc: &Locator,
) -> Result<(Experiment, Option<u32>)> {
    let e = &raw.experiment;
    let declared_max_busy = parse_max_busy(e.max_busy.as_ref(), loc)?;
    let timeout = match overrides.timeout.as_ref().or(e.timeout.as_ref()) {
        Some(t) => parse_timeout(t, loc)?,
        None => DEFAULT_TIMEOUT,
    };
    let (repetitions, sampled_to) = repetitions_of(e, overrides, profile, loc)?;
    let workdir = validate_workdir(e.workdir.as_ref(), &origin.dir, loc)?;
    let experiment = Experiment {
        name: origin.name,
        run_root: workdir
            .as_ref()
            .map_or_else(|| origin.dir.clone(), |w| origin.dir.join(w)),
        dir: origin.dir,
        file: loc.file.to_path_buf(),
        source_hash: origin.source_hash,
        title: e.title.trim().to_string(),
        hypothesis: e.hypothesis.trim().to_string(),
        repetitions,
        warmup_runs: overrides.warmup_runs.or(e.warmup_runs).unwrap_or(0),
        order: order_of(e.order.as_ref()),
        seed: e.seed.unwrap_or(DEFAULT_SEED),
        timeout,
        max_busy: declared_max_busy.unwrap_or(DEFAULT_MAX_BUSY),
        legacy_max_busy: declared_max_busy.unwrap_or(LEGACY_MAX_BUSY),
        calm_wait: calm_wait_of(e, loc)?,
        max_output: super::size::max_output_of(e.max_output.as_ref(), loc)?,
        sampling: None,
        versions: validate_versions(&e.versions, loc)?,
        build: validate_build(raw.build.as_ref(), loc)?,
        params: declared.params,
        declared_values: declared.declared_values,
        variants: declared.variants,
        metrics: declared.metrics,
        checks: Vec::new(),
        profile: profile.map(str::to_string),
        warnings: Vec::new(),
        revision_dirs: BTreeMap::new(),
        duet: None,
        imported: e.imported.clone(),
        isolation: isolation_of(e.isolation.as_ref(), loc),
        workdir,
        ignore_failure: e.ignore_failure == RawIgnoreFailure::All(true),
        ignored_exit_codes: e.ignore_failure.codes(),
        start_up: start_up_of(e.start_up.as_ref(), loc)?,
        layout: layout_of(e, loc)?,
        counters_declared_at: e.counters.first().map(|c| place(c.span(), loc)),
        counters: declared.counters,
        skip_checks: super::skip::validate_skip_checks(&e.skip_checks, loc)?,
    };
    Ok((experiment, sampled_to))
}

/// `experiment` with its checks, sampling and warnings, once its name and plan size pass.
fn with_checks_and_sampling(
    mut experiment: Experiment,
    raw: &RawFile,
    sampled_to: Option<u32>,
    overrides: &Overrides,
    loc: &Locator,
) -> Result<Experiment> {
    let e = &raw.experiment;
    check_folder_name(&experiment.name, loc)?;
    let sources = SizeSources {
        max: e.max_runs.as_ref(),
        params: &raw.params,
        repetitions: e.repetitions.as_ref().map(Spanned::span),
    };
    check_plan_size(&experiment, sampled_to, &sources, loc)?;
    experiment.checks = validate_checks(&raw.checks, &experiment, loc)?;
    let budget = budget_of(overrides.budget.as_ref().or(e.budget.as_ref()), loc)?;
    experiment.sampling =
        sampling(&experiment, sampled_to, e.stop.as_ref(), loc)?.map(|s| Sampling { budget, ..s });
    experiment.warnings = argv_warnings(raw, loc);
    Ok(experiment)
}

/// `FILE:LINE:COLUMN` of the start of `span`.
fn place(span: std::ops::Range<usize>, loc: &Locator) -> String {
    let (line, column) = super::error::line_column(loc.source, span.start);
    format!("{}:{line}:{column}", loc.file.display())
}

/// The protection lab.toml asks for, with where it asks (for the refusal of `strict`).
fn isolation_of(value: Option<&Spanned<RawIsolation>>, loc: &Locator) -> Isolation {
    let Some(value) = value else {
        return Isolation::default();
    };
    let (line, column) = super::error::line_column(loc.source, value.span().start);
    Isolation {
        wanted: match value.get_ref() {
            RawIsolation::Auto => Wanted::Auto,
            RawIsolation::Strict => Wanted::Strict,
            RawIsolation::None => Wanted::None,
        },
        declared_at: Some(format!("{}:{line}:{column}", loc.file.display())),
    }
}

/// `layout` and its `layout_tolerance`: a share above 0 and below 100%, only with
/// `layout = "randomized"` (a tolerance without the padding it judges would judge nothing).
fn layout_of(e: &RawExperiment, loc: &Locator) -> Result<Option<Layout>> {
    let randomized = e.layout == Some(RawLayout::Randomized);
    let Some(value) = &e.layout_tolerance else {
        return Ok(randomized.then_some(Layout {
            tolerance: DEFAULT_LAYOUT_TOLERANCE,
        }));
    };
    let key = "experiment.layout_tolerance";
    if !randomized {
        return Err(loc.hinted(
            value.span(),
            key,
            "a tolerance for an effect of the memory layout, which is not randomised",
            "add layout = \"randomized\" to [experiment], or remove layout_tolerance",
        ));
    }
    match super::duration::parse_fraction(&value.get_ref().text()) {
        Some(tolerance) if tolerance > 0.0 && tolerance < 1.0 => Ok(Some(Layout { tolerance })),
        _ => Err(loc.hinted(
            value.span(),
            key,
            "not a share above 0 and below 100%",
            "write e.g. \"2%\" or 0.02: the medians of runs with larger and smaller paddings may differ by this much",
        )),
    }
}

/// The run order: shuffled unless lab.toml asks for sequential.
fn order_of(order: Option<&RawOrder>) -> Order {
    match order {
        Some(RawOrder::Sequential) => Order::Sequential,
        _ => Order::Shuffled,
    }
}

/// The repetitions per cell, and the most a sampled session may reach: the profile's when it
/// sets them, the experiment's otherwise.
fn repetitions_of(
    e: &RawExperiment,
    overrides: &Overrides,
    profile: Option<&str>,
    loc: &Locator,
) -> Result<(u32, Option<u32>)> {
    match (&overrides.repetitions, profile) {
        (Some(r), Some(name)) => {
            parse_repetitions(Some(r), &format!("profile.{name}.repetitions"), loc)
        }
        _ => parse_repetitions(e.repetitions.as_ref(), "experiment.repetitions", loc),
    }
}

/// Refuses an experiment folder whose name cannot name its data folder and chapter.
fn check_folder_name(name: &str, loc: &Locator) -> Result<()> {
    match identifier_problem(name) {
        Some(why) => Err(loc.hinted(
            0..0,
            "",
            format!("the experiment folder name {name:?} {why}"),
            "rename the folder: it names the data folder and the book chapter",
        )),
        None => Ok(()),
    }
}

/// What a profile changes besides parameter lists (which it replaces in place).
#[derive(Default)]
struct Overrides {
    repetitions: Option<Spanned<RawRepetitions>>,
    warmup_runs: Option<u32>,
    timeout: Option<Spanned<RawNumberOrText>>,
    budget: Option<Spanned<RawNumberOrText>>,
}

fn apply_profile(raw: &mut RawFile, profile: Option<&str>, loc: &Locator) -> Result<Overrides> {
    let Some(name) = profile else {
        return Ok(Overrides::default());
    };
    let Some(spanned) = raw.profiles.remove(name) else {
        let known: Vec<&str> = raw.profiles.keys().map(String::as_str).collect();
        let hint = if known.is_empty() {
            "declare it as a [profile.NAME] table".to_string()
        } else {
            format!("profiles declared here: {}", known.join(", "))
        };
        return Err(loc.hinted(0..0, "profile", format!("no profile named {name:?}"), hint));
    };
    let profile = spanned.into_inner();
    for (param, values) in profile.params {
        if !raw.params.contains_key(&param) {
            let key = format!("profile.{name}.params.{param}");
            return Err(loc.error(
                values.span(),
                &key,
                "this parameter is not declared in [params]",
            ));
        }
        raw.params.insert(param, values);
    }
    Ok(Overrides {
        repetitions: profile.repetitions,
        warmup_runs: profile.warmup_runs,
        timeout: profile.timeout,
        budget: profile.budget,
    })
}

/// `max_busy`: a share above 0 and at most 100% (which turns the guard off).
fn parse_max_busy(value: Option<&Spanned<RawNumberOrText>>, loc: &Locator) -> Result<Option<f64>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match super::duration::parse_fraction(&value.get_ref().text()) {
        Some(share) if share > 0.0 && share <= 1.0 => Ok(Some(share)),
        _ => Err(loc.hinted(
            value.span(),
            "experiment.max_busy",
            "not a share between 0 and 100%",
            "write e.g. \"10%\" or 0.1: a run that waited for a CPU others had for more of its wall time is disturbed; \"100%\" turns the guard off",
        )),
    }
}

/// `repetitions`: runs per cell, and the most a sampled session may reach.
fn parse_repetitions(
    value: Option<&Spanned<RawRepetitions>>,
    key: &str,
    loc: &Locator,
) -> Result<(u32, Option<u32>)> {
    let Some(value) = value else {
        return Ok((DEFAULT_REPETITIONS, None));
    };
    let fail = |message: String, hint: &str| Err(loc.hinted(value.span(), key, message, hint));
    match *value.get_ref() {
        RawRepetitions::Fixed(0) => Err(loc.error(value.span(), key, "must be at least 1")),
        RawRepetitions::Fixed(n) => Ok((n, None)),
        RawRepetitions::Range { min, .. } if min < MIN_SAMPLED => fail(
            format!("`min = {min}` is too few to look at"),
            "an interval needs at least 3 runs per cell: write min = 3 or more",
        ),
        RawRepetitions::Range { min, max } if max < min => fail(
            format!("`max = {max}` is below `min = {min}`"),
            "max is the most runs per cell lab may reach; make it at least min",
        ),
        RawRepetitions::Range { min, max } => Ok((min, Some(max))),
    }
}

/// The stopping rule of a session with `repetitions = { min, max }`; `stop` needs a range.
fn sampling(
    exp: &Experiment,
    sampled_to: Option<u32>,
    stop: Option<&Spanned<RawStop>>,
    loc: &Locator,
) -> Result<Option<Sampling>> {
    let Some(max) = sampled_to else {
        return match stop {
            Some(s) => Err(loc.hinted(
                s.span(),
                "experiment.stop",
                "`stop` needs runs to add",
                "write repetitions = { min = 5, max = 40 } (the profile's repetitions may have fixed it)",
            )),
            None => Ok(None),
        };
    };
    let span = stop.map_or(0..0, Spanned::span);
    let goal = match stop.map(Spanned::get_ref) {
        None => Goal::Decided,
        Some(RawStop::Goal(g)) if g == "decided" => Goal::Decided,
        Some(RawStop::Goal(g)) => {
            return Err(loc.hinted(
                span,
                "experiment.stop",
                format!("unknown goal {g:?}"),
                "write \"decided\" or { half_width = \"2%\" }",
            ));
        }
        Some(RawStop::Precision { half_width, metric }) => {
            precision_goal(exp, half_width, metric.as_deref(), span.clone(), loc)?
        }
    };
    // Without a hypothesis, "decided" can only be about a session across revisions, which
    // decides its comparison: `lab run` without `--revs` refuses it before anything runs.
    Ok(Some(Sampling {
        max,
        goal,
        budget: None,
    }))
}

/// `budget`: how long a sampled session's runs may take, a duration of a second or more.
fn budget_of(value: Option<&Spanned<RawNumberOrText>>, loc: &Locator) -> Result<Option<Duration>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let seconds = match value.get_ref() {
        RawNumberOrText::Number(s) => Some(*s),
        RawNumberOrText::Text(t) => duration_seconds(t),
    };
    match seconds {
        Some(s) if (1.0..LONGEST_SECONDS).contains(&s) => Ok(Some(Duration::from_secs_f64(s))),
        _ => Err(loc.hinted(
            value.span(),
            "experiment.budget",
            "not a time budget",
            "write how long the runs may take, e.g. \"10m\" or \"90s\" (at least a second)",
        )),
    }
}

/// `stop = { half_width, metric }`: a share above 0 and below 100%, of a numeric metric.
fn precision_goal(
    exp: &Experiment,
    half_width: &RawNumberOrText,
    metric: Option<&str>,
    span: std::ops::Range<usize>,
    loc: &Locator,
) -> Result<Goal> {
    let fraction = match super::duration::parse_fraction(&half_width.text()) {
        Some(f) if f > 0.0 && f < 1.0 => f,
        _ => {
            return Err(loc.hinted(
                span,
                "experiment.stop.half_width",
                "not a share between 0 and 100%",
                "write e.g. \"2%\": lab adds runs until every interval of the median is within ±2% of it",
            ));
        }
    };
    let metric = match metric {
        Some(name) => exp.metric(name).filter(|m| !m.text),
        None => exp.primary_metric(),
    };
    let Some(metric) = metric else {
        return Err(loc.hinted(
            span,
            "experiment.stop.metric",
            "no numeric metric by that name",
            "name a metric declared under [metric.NAME] that is not text",
        ));
    };
    if exp.repetitions < MIN_SAMPLED_FOR_PRECISION {
        return Err(loc.hinted(
            span,
            "experiment.stop",
            format!(
                "stopping on precision needs `min` of at least {MIN_SAMPLED_FOR_PRECISION} runs per cell, not {}",
                exp.repetitions
            ),
            "with fewer, a narrow interval is often luck and the interval covers less often than it says: raise min",
        ));
    }
    Ok(Goal::HalfWidth {
        fraction,
        metric: metric.name.clone(),
    })
}

/// `calm_wait`: how long a run may wait for a busy machine to calm. `requeue`, which older
/// files declare, is still read and bounded, and no longer used: disturbed runs keep their
/// timings instead of running again.
fn calm_wait_of(e: &RawExperiment, loc: &Locator) -> Result<Duration> {
    parse_requeue(e.requeue.as_ref(), loc)?;
    let Some(value) = &e.calm_wait else {
        return Ok(DEFAULT_CALM_WAIT);
    };
    let wait = match value.get_ref() {
        RawNumberOrText::Number(s) if s.is_finite() && (0.0..=3600.0).contains(s) => {
            Some(Duration::from_secs_f64(*s))
        }
        RawNumberOrText::Number(_) => None,
        RawNumberOrText::Text(t) => super::duration::parse_wait(t),
    };
    wait.ok_or_else(|| {
        loc.hinted(
            value.span(),
            "experiment.calm_wait",
            "not a wait of an hour or less",
            "write e.g. \"2s\", \"500ms\", or \"0s\" to run without waiting",
        )
    })
}

/// `requeue`: bounded as it was when it counted re-runs.
fn parse_requeue(value: Option<&Spanned<u32>>, loc: &Locator) -> Result<u32> {
    match value {
        None => Ok(0),
        Some(n) if *n.get_ref() <= MAX_REQUEUE => Ok(*n.get_ref()),
        Some(n) => Err(loc.hinted(
            n.span(),
            "experiment.requeue",
            format!("{} re-runs is too many", n.get_ref()),
            format!(
                "use at most {MAX_REQUEUE}; 0 keeps a busy run invalid without running it again"
            ),
        )),
    }
}

/// A duration as text with its unit, or a number of seconds.
fn parse_timeout(value: &Spanned<RawNumberOrText>, loc: &Locator) -> Result<Duration> {
    let seconds = match value.get_ref() {
        RawNumberOrText::Number(s) if s.is_finite() && *s > 0.0 => Some(*s),
        RawNumberOrText::Number(_) => None,
        RawNumberOrText::Text(t) => duration_seconds(t),
    };
    match seconds {
        Some(s) if s < LONGEST_SECONDS => Ok(Duration::from_secs_f64(s)),
        Some(_) => Err(loc.hinted(
            value.span(),
            "timeout",
            "longer than lab can wait for (at most 1e9 s, about 31 years)",
            "write the longest a run may take, e.g. \"10m\" or \"2h\"",
        )),
        None => Err(loc.hinted(
            value.span(),
            "timeout",
            "not a duration",
            "write e.g. \"60s\", \"500ms\", \"2m\" or a number of seconds",
        )),
    }
}

fn validate_variants(
    raw: &[RawVariant],
    params: &[Param],
    imported: bool,
    loc: &Locator,
) -> Result<Vec<Variant>> {
    if raw.is_empty() {
        let hint = "add a [[variant]] table with a name and a run = [\"program\", \"arg\"] command";
        return Err(loc.hinted(
            0..0,
            "variant",
            "no variants: there is nothing to run",
            hint,
        ));
    }
    let mut variants: Vec<Variant> = Vec::new();
    for (i, v) in raw.iter().enumerate() {
        let key = format!("variant[{}]", i + 1);
        let name = variant_name(v, &key, &variants, loc)?;
        let argv = variant_argv(v, &name, &key, params, imported, loc)?;
        variants.push(Variant {
            name,
            label: v.label.clone(),
            argv,
            env: validate_env(&v.env, &format!("{key}.env"), loc)?,
            cpus: v
                .cpus
                .as_ref()
                .map(|c| parse_cpus(c, &key, loc))
                .transpose()?,
            cpus_declared_at: v.cpus.as_ref().map(|c| place(c.span(), loc)),
            only: validate_restrictions(&v.params, params, &key, loc)?,
            hooks: validate_hooks(v, &key, params, loc)?,
            shell_check: v.shell_check.unwrap_or(true),
            input: v.input.as_ref().map(PathBuf::from),
        });
    }
    Ok(variants)
}

/// A variant's untimed commands around its runs, each checked like `run`.
fn validate_hooks(v: &RawVariant, key: &str, params: &[Param], loc: &Locator) -> Result<Hooks> {
    let hook = |raw: &Option<Spanned<Vec<String>>>, field: &str| -> Result<Option<Vec<String>>> {
        raw.as_ref()
            .map(|argv| {
                let key = format!("{key}.{field}");
                check_argv(argv, &key, params, loc)?;
                refuse_shell_syntax(argv, &key, v.shell_check.unwrap_or(true), loc)?;
                Ok(argv.get_ref().clone())
            })
            .transpose()
    };
    Ok(Hooks {
        prepare: hook(&v.prepare, "prepare")?,
        conclude: hook(&v.conclude, "conclude")?,
        setup: hook(&v.setup, "setup")?,
        cleanup: hook(&v.cleanup, "cleanup")?,
    })
}

/// `start_up`: `"included"` (runs are timed whole) or the command whose start-up each run's
/// time leaves out; anything else is a mistake.
fn start_up_of(raw: Option<&Spanned<RawStartUp>>, loc: &Locator) -> Result<StartUp> {
    let Some(raw) = raw else {
        return Ok(StartUp::Floor);
    };
    match raw.get_ref() {
        RawStartUp::Word(w) if w == "included" => Ok(StartUp::Included),
        RawStartUp::Subtracted(argv) if !argv.is_empty() && !argv[0].is_empty() => {
            Ok(StartUp::Subtracted(argv.clone()))
        }
        other => Err(loc.hinted(
            raw.span(),
            "experiment.start_up",
            format!("{other:?} is not a way of counting start-up"),
            "write start_up = \"included\" to time runs whole, or a command (start_up = [\"sh\", \"-c\", \"\"]) whose start-up is taken out of every run, or leave it out",
        )),
    }
}

/// The folder runs start in, as lab.toml names it: relative to the experiment folder or
/// absolute; it must exist when lab.toml is read.
fn validate_workdir(
    raw: Option<&Spanned<String>>,
    dir: &std::path::Path,
    loc: &Locator,
) -> Result<Option<PathBuf>> {
    let Some(text) = raw else { return Ok(None) };
    let workdir = PathBuf::from(text.get_ref().trim());
    if text.get_ref().trim().is_empty() {
        return Err(loc.hinted(
            text.span(),
            "experiment.workdir",
            "empty workdir",
            "name a folder, relative to the experiment folder (\"../..\") or absolute; or remove the key to run in the experiment folder",
        ));
    }
    if !dir.join(&workdir).is_dir() {
        return Err(loc.hinted(
            text.span(),
            "experiment.workdir",
            format!(
                "workdir {:?} is not a folder",
                dir.join(&workdir).display().to_string()
            ),
            "name an existing folder, relative to the experiment folder or absolute",
        ));
    }
    Ok(Some(workdir))
}

/// A variant's name, trimmed, when it is a valid identifier no earlier variant has.
fn variant_name(v: &RawVariant, key: &str, earlier: &[Variant], loc: &Locator) -> Result<String> {
    let name = v.name.get_ref().trim().to_string();
    if let Some(why) = identifier_problem(&name) {
        let msg = format!("variant name {name:?} {why}");
        return Err(loc.hinted(v.name.span(), &format!("{key}.name"), msg, IDENTIFIER_HINT));
    }
    if earlier.iter().any(|w| w.name == name) {
        let msg = format!("duplicate variant name {name:?}");
        return Err(loc.hinted(
            v.name.span(),
            &format!("{key}.name"),
            msg,
            "give every variant its own name",
        ));
    }
    Ok(name)
}

/// A variant's command, checked; an imported experiment's variants may have none.
fn variant_argv(
    v: &RawVariant,
    name: &str,
    key: &str,
    params: &[Param],
    imported: bool,
    loc: &Locator,
) -> Result<Vec<String>> {
    match (&v.run, imported) {
        (Some(run), _) => {
            let key = format!("{key}.run");
            check_argv(run, &key, params, loc)?;
            refuse_shell_syntax(run, &key, v.shell_check.unwrap_or(true), loc)?;
            Ok(run.get_ref().clone())
        }
        (None, true) => Ok(Vec::new()),
        (None, false) => {
            let msg = format!("variant {name:?} has no `run` command");
            Err(loc.hinted(
                v.name.span(),
                &format!("{key}.run"),
                msg,
                "add run = [\"program\", \"arg\"]: the command lab runs for this variant",
            ))
        }
    }
}

/// Checks an argv: non-empty, and every placeholder names a parameter.
fn check_argv(
    argv: &Spanned<Vec<String>>,
    key: &str,
    params: &[Param],
    loc: &Locator,
) -> Result<()> {
    if argv.get_ref().is_empty() || argv.get_ref()[0].trim().is_empty() {
        let hint = "write the command as an array: run = [\"program\", \"--flag=value\"]";
        return Err(loc.hinted(argv.span(), key, "empty command", hint));
    }
    for element in argv.get_ref() {
        let names = placeholders(element).map_err(|m| loc.error(argv.span(), key, m))?;
        if let Some(unknown) = names.iter().find(|n| !params.iter().any(|p| &p.name == *n)) {
            let declared: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            let msg = format!("unknown placeholder {{{unknown}}} in {element:?}");
            let hint = format!(
                "placeholders name parameters declared in [params]: {}; write {{{{ and }}}} for literal braces (\"{{{{\\\"x\\\": 1}}}}\" passes {{\"x\": 1}})",
                declared.join(", ")
            );
            return Err(loc.hinted(argv.span(), key, msg, hint));
        }
    }
    Ok(())
}

/// Refuses a command whose words show that its author expected a shell to read them (a `|`
/// or `>` as a word, `cd` first): lab runs an argv without one, so the program would get them
/// as arguments. `shell_check = false` on the variant (`check` false) lets it through.
fn refuse_shell_syntax(
    argv: &Spanned<Vec<String>>,
    key: &str,
    check: bool,
    loc: &Locator,
) -> Result<()> {
    let words = argv.get_ref();
    let Some(found) = shell_syntax::in_argv(words).filter(|_| check) else {
        return Ok(());
    };
    let word = &words[found.offset];
    let effect = if found.offset == 0 {
        format!("it would look for a program named {word:?}")
    } else {
        format!("{:?} would get {word:?} as an argument", words[0])
    };
    let field = key.rsplit('.').next().unwrap_or("run");
    let line = shell_syntax::as_shell_line(words);
    Err(loc.hinted(
        loc.element_span(argv.span(), found.offset),
        key,
        format!("this command needs a shell for {found}, and lab runs it without one: {effect}"),
        format!("to run it in a shell, write {field} = [\"sh\", \"-c\", {line:?}]; to run the words as they are, set shell_check = false on this variant"),
    ))
}

/// CPU numbers a CPU list may name: the size of the kernel's `cpu_set_t`.
const MAX_CPU: usize = libc::CPU_SETSIZE as usize;

fn parse_cpus(text: &Spanned<String>, key: &str, loc: &Locator) -> Result<Vec<usize>> {
    let bad = || {
        loc.hinted(
            text.span(),
            &format!("{key}.cpus"),
            "not a CPU list",
            "write e.g. \"0\", \"0-3\" or \"0,2\" (CPU numbers under 1024)",
        )
    };
    let mut cpus = Vec::new();
    for part in text.get_ref().split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
                if a > b || b >= MAX_CPU {
                    return Err(bad());
                }
                cpus.extend(a..=b);
            }
            None => match part.parse::<usize>() {
                Ok(c) if c < MAX_CPU => cpus.push(c),
                _ => return Err(bad()),
            },
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

fn validate_metrics(
    raw: &BTreeMap<String, Spanned<RawMetric>>,
    counters: &[crate::counter::Counter],
    loc: &Locator,
) -> Result<Vec<Metric>> {
    let mut metrics = Vec::new();
    for name in declared_order(raw) {
        let spanned = &raw[&name];
        metrics.push(declared_metric(name, spanned, counters, loc)?);
    }
    metrics.extend(BUILTIN_METRICS.iter().map(|(name, unit, _)| Metric {
        name: name.to_string(),
        extractor: Extractor::Builtin,
        unit: unit.to_string(),
        better: Better::Lower,
        text: false,
        count: COUNTED_BUILTINS.contains(name),
        optional: false,
        warmup_iterations: 0,
    }));
    metrics.extend(counters.iter().map(|c| Metric {
        name: c.def().metric.to_string(),
        extractor: Extractor::Builtin,
        unit: c.def().unit.to_string(),
        better: Better::Lower,
        text: false,
        count: c.def().counted,
        optional: false,
        warmup_iterations: 0,
    }));
    super::derived::resolve(&mut metrics, raw, loc)?;
    Ok(metrics)
}

/// The metric `[metric.NAME]` declares: a name no built-in metric or counter has, and one way
/// to read it.
fn declared_metric(
    name: String,
    spanned: &Spanned<RawMetric>,
    counters: &[crate::counter::Counter],
    loc: &Locator,
) -> Result<Metric> {
    let key = format!("metric.{name}");
    if let Some(why) = identifier_problem(&name) {
        let msg = format!("metric name {name:?} {why}");
        return Err(loc.hinted(spanned.span(), &key, msg, IDENTIFIER_HINT));
    }
    if BUILTIN_METRICS.iter().any(|(b, _, _)| *b == name)
        || counters.iter().any(|c| c.def().metric == name)
    {
        let msg = format!(
            "`{name}` is measured by lab for every run; a declared metric cannot take its name"
        );
        let hint = "use the built-in one in checks as it is, or give yours another name";
        return Err(loc.hinted(spanned.span(), &key, msg, hint));
    }
    let m = spanned.get_ref();
    Ok(Metric {
        extractor: extractor_of(spanned, &key, loc)?,
        name,
        unit: m.unit.clone().unwrap_or_default(),
        better: match m.better {
            Some(RawBetter::Lower) => Better::Lower,
            _ => Better::Higher,
        },
        text: m.text,
        count: m.count,
        optional: m.optional,
        warmup_iterations: m.warmup_iterations.unwrap_or(0) as usize,
    })
}

/// How a declared metric is read: from `of` and `per`, a JSON key or a regex, exactly one.
fn extractor_of(spanned: &Spanned<RawMetric>, key: &str, loc: &Locator) -> Result<Extractor> {
    let m = spanned.get_ref();
    match (
        super::derived::extractor(spanned, key, loc)?,
        &m.json,
        &m.regex,
    ) {
        (Some(derived), _, _) => Ok(derived),
        (None, Some(k), None) => Ok(Extractor::Json(k.clone())),
        (None, None, Some(r)) => Ok(Extractor::Regex(check_regex(r, key, loc)?)),
        _ => {
            let hint = "write json = \"key\" to read a JSON line, regex = 'value=(\\S+)', or of = \"voluntary_cs\" with per = \"ops\" to divide two metrics";
            Err(loc.hinted(
                spanned.span(),
                key,
                "give exactly one of `json`, `regex` or `of` with `per`",
                hint,
            ))
        }
    }
}

fn check_regex(r: &Spanned<String>, key: &str, loc: &Locator) -> Result<String> {
    let key = format!("{key}.regex");
    let compiled = regex::Regex::new(r.get_ref())
        .map_err(|e| loc.error(r.span(), &key, format!("bad regular expression: {e}")))?;
    if compiled.captures_len() < 2 {
        let hint = "put the value in parentheses, e.g. 'mops=(\\S+)'";
        return Err(loc.hinted(r.span(), &key, "the regex has no capture group", hint));
    }
    Ok(r.get_ref().clone())
}

fn validate_versions(raw: &[Spanned<Vec<String>>], loc: &Locator) -> Result<Vec<Vec<String>>> {
    raw.iter()
        .map(|argv| match argv.get_ref().first() {
            Some(p) if !p.trim().is_empty() => Ok(argv.get_ref().clone()),
            _ => Err(loc.error(argv.span(), "experiment.versions", "empty command")),
        })
        .collect()
}

fn validate_build(raw: Option<&RawBuild>, loc: &Locator) -> Result<Option<Build>> {
    let Some(b) = raw else { return Ok(None) };
    if b.run.get_ref().first().is_none_or(|p| p.trim().is_empty()) {
        let hint = "write the build command as an array: run = [\"javac\", \"-d\", \"build\", \"Main.java\"]";
        return Err(loc.hinted(b.run.span(), "build.run", "empty command", hint));
    }
    Ok(Some(Build {
        argv: b.run.get_ref().clone(),
        inputs: b.inputs.clone(),
        outputs: b.outputs.clone(),
    }))
}

/// Warns about argv elements that look like several arguments in one (seed 000, trap 5).
fn argv_warnings(raw: &RawFile, loc: &Locator) -> Vec<String> {
    let commands = raw
        .variants
        .iter()
        .enumerate()
        .filter_map(|(i, v)| Some((format!("variant[{}].run", i + 1), v.run.as_ref()?)))
        .chain(raw.build.iter().map(|b| ("build.run".to_string(), &b.run)));
    let mut warnings = Vec::new();
    for (key, argv) in commands {
        for (i, element) in argv.get_ref().iter().enumerate() {
            if looks_like_several_arguments(element, i == 0) {
                let e = loc.hinted(argv.span(), &key, format!("the argument {element:?} contains a space"),
                    "it is passed as ONE argument (no shell splits it); if you meant several, write them as separate strings");
                warnings.push(e.to_string());
            }
        }
    }
    warnings
}

/// An argument with a space that probably meant several: the program itself, options on both
/// sides of the space, or an option followed by a placeholder (`"--block {block}"`), whatever
/// the placeholder's value will look like.
fn looks_like_several_arguments(element: &str, is_program: bool) -> bool {
    let mut words = element.split_whitespace();
    let first = words.next().unwrap_or("");
    let rest: Vec<&str> = words.collect();
    if rest.is_empty() {
        return false;
    }
    let placeholder = |w: &&str| w.starts_with('{') && !w.starts_with("{{");
    is_program
        || (first.starts_with('-') && rest.iter().any(|w| w.starts_with('-') || placeholder(w)))
}

/// Refuses a plan larger than `max_runs` (default [`MAX_RUNS`]) before anything is allocated.
/// A sampled session (`sampled_to` runs per cell at most) is judged by its largest plan.
fn check_plan_size(
    exp: &Experiment,
    sampled_to: Option<u32>,
    sources: &SizeSources,
    loc: &Locator,
) -> Result<()> {
    let max = sources.max;
    let repetitions = sampled_to.unwrap_or(exp.repetitions);
    let limit = max.map_or(MAX_RUNS, |m| *m.get_ref());
    let cells = exp.variants.iter().try_fold(0u64, |sum, v| {
        let per_variant = exp.params.iter().try_fold(1u64, |product, p| {
            let values = v.only.get(&p.name).map_or(p.values.len(), Vec::len);
            product.checked_mul(values as u64)
        })?;
        sum.checked_add(per_variant)
    });
    let runs =
        cells.and_then(|c| c.checked_mul(u64::from(repetitions) + u64::from(exp.warmup_runs)));
    match runs {
        Some(n) if n <= limit => Ok(()),
        found => {
            let (span, key) = sources.shown_at();
            Err(loc.hinted(
                span,
                &key,
                format!(
                    "the plan has {} runs{}, more than the limit of {limit}",
                    found.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
                    if sampled_to.is_some() { " at most" } else { "" }
                ),
                "lower repetitions or the parameter lists in [params], or raise `max_runs` in [experiment] if you mean it",
            ))
        }
    }
}

/// What sets the size of a plan, with where lab.toml says it.
struct SizeSources<'a> {
    max: Option<&'a Spanned<u64>>,
    params: &'a BTreeMap<String, Spanned<Vec<RawParamValue>>>,
    repetitions: Option<std::ops::Range<usize>>,
}

impl SizeSources<'_> {
    /// Where a plan over its run limit is shown: the `max_runs` it exceeds, else the longest
    /// list of `[params]` (the first such), else the repetitions when no list holds two values.
    fn shown_at(&self) -> (std::ops::Range<usize>, String) {
        if let Some(max) = self.max {
            return (max.span(), "experiment.max_runs".into());
        }
        let longest = self
            .params
            .iter()
            .rev()
            .max_by_key(|(_, values)| values.get_ref().len())
            .filter(|(_, values)| values.get_ref().len() > 1);
        match (longest, &self.repetitions) {
            (Some((name, values)), _) => (values.span(), format!("params.{name}")),
            (None, Some(span)) => (span.clone(), "experiment.repetitions".into()),
            (None, None) => (0..0, "params".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_arguments_in_one_element_are_spotted() {
        assert!(looks_like_several_arguments("--algo bmm --block 4", false));
        assert!(looks_like_several_arguments("prog --x", true));
        assert!(!looks_like_several_arguments("--name=a b", false));
        assert!(!looks_like_several_arguments("--threads=2", false));
    }
}
