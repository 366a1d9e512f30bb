//! The chapter's template context: every number formatted once, here, from the analysis.

use super::figures::Figure;
use crate::analysis::{Analysis, CellStats};
use crate::checks::{CheckResult, Verdict};
use crate::config::{CheckClass, Experiment};
use crate::format::{percent, significant, value};
use serde::Serialize;

#[derive(Serialize)]
pub struct ChapterContext {
    pub title: String,
    pub hypothesis: String,
    pub banner: String,
    pub checks: Vec<CheckRow>,
    /// How many hypothesis passes chance alone could explain, when several were decided.
    pub multiplicity: Option<String>,
    /// Tail percentiles of cells with enough values (latency-like metrics).
    pub percentiles: Vec<PercentileRow>,
    pub charts: Vec<Figure>,
    pub tables: Vec<Table>,
    /// The experiment's notes.md, rendered with the analysis (Markdown).
    pub notes: Option<String>,
    pub invalid_runs: Vec<InvalidRun>,
    pub variants: Vec<VariantRow>,
    pub environment: Vec<KeyValue>,
    pub session: String,
    pub counts: String,
    pub reproduce: String,
    pub resamples: usize,
    pub seed: u64,
}

#[derive(Serialize)]
pub struct CheckRow {
    pub mark: String,
    pub name: String,
    pub kind: String,
    pub evidence: String,
    pub reading: String,
}

#[derive(Serialize)]
pub struct Table {
    pub metric: String,
    pub unit: String,
    /// The parameters that take several values: one column each.
    pub params: Vec<String>,
    pub rows: Vec<TableRow>,
}

#[derive(Serialize)]
pub struct TableRow {
    pub variant: String,
    pub params: Vec<String>,
    pub median: String,
    pub exact: String,
    pub mean: String,
    pub shape: String,
    pub n: usize,
    pub cv: String,
    pub range: String,
    pub excluded: usize,
}

#[derive(Serialize)]
pub struct PercentileRow {
    pub metric: String,
    pub cell: String,
    pub n: usize,
    pub p50: String,
    pub p90: String,
    pub p99: String,
    pub p999: String,
    pub max: String,
}

#[derive(Serialize)]
pub struct InvalidRun {
    pub id: String,
    pub cell: String,
    pub reasons: String,
}

#[derive(Serialize)]
pub struct VariantRow {
    pub name: String,
    pub label: Option<String>,
    pub command: String,
    pub extra: String,
}

#[derive(Serialize)]
pub struct KeyValue {
    pub key: String,
    pub value: String,
}

/// Makes text safe inside one Markdown table cell (HTML escaping is Tera's job).
pub fn cell_text(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

pub fn context(
    exp: &Experiment,
    analysis: &Analysis,
    charts: Vec<Figure>,
    notes: Option<String>,
) -> ChapterContext {
    ChapterContext {
        title: exp.title.clone(),
        hypothesis: exp
            .hypothesis
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        banner: banner(&analysis.checks),
        checks: analysis.checks.iter().map(check_row).collect(),
        multiplicity: analysis.multiplicity.clone(),
        percentiles: percentile_rows(exp, analysis),
        charts,
        tables: tables(exp, analysis),
        notes,
        invalid_runs: invalid_runs(exp, analysis),
        variants: variants(exp),
        environment: environment(analysis),
        session: analysis.session.clone(),
        counts: format!(
            "{} of {} planned runs finished, {} warm-up, {} valid, {} excluded",
            analysis.counts.finished,
            analysis.counts.planned,
            analysis.counts.warmup,
            analysis.counts.valid,
            analysis.counts.invalid
        ),
        reproduce: analysis.manifest.command.clone(),
        resamples: analysis.resampling.resamples,
        seed: analysis.resampling.seed,
    }
}

/// The verdict strip: counts per verdict, and the untrusted warning when it applies.
pub fn banner(checks: &[CheckResult]) -> String {
    let count = |v: Verdict| checks.iter().filter(|c| c.verdict == v).count();
    let mut text = format!(
        "**Verdicts:** {} ✅ pass · {} ❌ fail · {} ⚠️ inconclusive · {} ⏸️ not run.",
        count(Verdict::Pass),
        count(Verdict::Fail),
        count(Verdict::Inconclusive),
        count(Verdict::NotRun)
    );
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| c.class == CheckClass::Validity && c.verdict == Verdict::Fail)
        .map(|c| c.name.as_str())
        .collect();
    if !failed.is_empty() {
        text.push_str(&format!(
            " **Untrusted:** the validity check{} “{}” failed, so the hypothesis verdicts below may rest on broken measurements.",
            if failed.len() > 1 { "s" } else { "" },
            failed.join("”, “")
        ));
    }
    text
}

fn check_row(c: &CheckResult) -> CheckRow {
    let class = match (c.class, c.automatic) {
        (CheckClass::Validity, true) => "validity, automatic".to_string(),
        (CheckClass::Validity, false) => format!("validity, {}", c.kind),
        (CheckClass::Hypothesis, _) => format!("hypothesis, {}", c.kind),
    };
    let untrusted = if c.untrusted { " (untrusted)" } else { "" };
    CheckRow {
        mark: format!("{} {}{untrusted}", c.verdict.mark(), c.verdict.word()),
        name: cell_text(&c.name),
        kind: class,
        evidence: cell_text(&c.evidence),
        reading: cell_text(&c.reading),
    }
}

fn tables(exp: &Experiment, analysis: &Analysis) -> Vec<Table> {
    exp.metrics
        .iter()
        .filter(|m| !m.text)
        .map(|m| Table {
            metric: m.name.clone(),
            unit: m.unit.clone(),
            params: varying(exp).iter().map(|p| cell_text(p)).collect(),
            rows: analysis
                .cells
                .iter()
                .filter(|c| c.metric == m.name)
                .map(|c| table_row(exp, c))
                .collect(),
        })
        .collect()
}

/// Names of the parameters that take more than one value.
fn varying(exp: &Experiment) -> Vec<String> {
    exp.params
        .iter()
        .filter(|p| p.values.len() > 1)
        .map(|p| p.name.clone())
        .collect()
}

fn table_row(exp: &Experiment, c: &CellStats) -> TableRow {
    let number = |x: f64| significant(x, 3);
    let median = match (&c.summary, &c.median_ci) {
        (Some(s), Some(ci)) => format!(
            "{} [{}, {}]",
            number(s.median),
            number(ci.lo),
            number(ci.hi)
        ),
        (Some(s), None) => number(s.median),
        _ => "no valid run".into(),
    };
    TableRow {
        exact: c.exact_median_ci.as_ref().map_or("–".into(), |e| {
            format!(
                "[{}, {}] ({})",
                number(e.interval.lo),
                number(e.interval.hi),
                percent(e.coverage)
            )
        }),
        mean: match (&c.summary, &c.mean_ci) {
            (Some(s), Some(ci)) => {
                format!("{} [{}, {}]", number(s.mean), number(ci.lo), number(ci.hi))
            }
            (Some(s), None) => number(s.mean),
            _ => "–".into(),
        },
        shape: cell_text(&shape_note(c)),
        variant: cell_text(&c.cell.variant),
        params: varying(exp)
            .iter()
            .map(|p| cell_text(c.cell.params.get(p).map_or("", String::as_str)))
            .collect(),

        median,
        n: c.n,
        cv: c
            .summary
            .as_ref()
            .filter(|s| s.n > 1 && s.cv.is_finite())
            .map_or("–".into(), |s| percent(s.cv)),
        range: c.summary.as_ref().map_or("–".into(), |s| {
            format!("{}–{}", number(s.min), number(s.max))
        }),
        excluded: c.invalid_runs,
    }
}

/// What the modality, drift and steady-state analyses found in a cell, in a few words.
fn shape_note(c: &CellStats) -> String {
    let mut notes = Vec::new();
    if let Some(dip) = c.modes.as_ref().filter(|d| d.second_mode_detected) {
        let modes: Vec<String> = dip
            .modes
            .iter()
            .map(|m| format!("{} ({})", significant(m.median, 3), percent(m.share)))
            .collect();
        notes.push(format!("{} modes: {}", dip.modes.len(), modes.join(", ")));
    }
    if let Some(drift) = c.drift.as_ref().filter(|d| d.test.p_value < 0.05) {
        notes.push(format!(
            "drift: {} per run position (Mann–Kendall p = {})",
            significant(drift.slope_per_position, 2),
            significant(drift.test.p_value, 2)
        ));
    }
    if let Some(steady) = &c.steady {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for state in &steady.states {
            let name = format!("{state:?}").to_lowercase();
            match counts.iter_mut().find(|(n, _)| *n == name) {
                Some((_, k)) => *k += 1,
                None => counts.push((name, 1)),
            }
        }
        let parts: Vec<String> = counts.iter().map(|(n, k)| format!("{k} {n}")).collect();
        notes.push(format!(
            "runs: {}{}",
            parts.join(", "),
            if steady.consistent {
                ""
            } else {
                " (inconsistent)"
            }
        ));
    }
    if let Some(d) = c
        .design_effect
        .as_ref()
        .filter(|d| d.naive_ci_understatement > 1.5)
    {
        notes.push(format!(
            "pooling iterations would understate the CI {}×",
            significant(d.naive_ci_understatement, 2)
        ));
    }
    notes.join("; ")
}

fn percentile_rows(exp: &Experiment, analysis: &Analysis) -> Vec<PercentileRow> {
    let show = |e: &crate::stats::PercentileEstimate, unit: &str| match &e.ci {
        Some(ci) => format!(
            "{} [{}, {}]",
            value(e.value, unit),
            significant(ci.lo, 3),
            significant(ci.hi, 3)
        ),
        None => value(e.value, unit),
    };
    analysis
        .cells
        .iter()
        .filter_map(|c| {
            let p = c.percentiles.as_ref()?;
            let unit = exp.metric(&c.metric).map_or("", |m| m.unit.as_str());
            Some(PercentileRow {
                metric: c.metric.clone(),
                cell: cell_text(&c.label),
                n: p.n,
                p50: show(&p.p50, unit),
                p90: show(&p.p90, unit),
                p99: show(&p.p99, unit),
                p999: show(&p.p999, unit),
                max: value(p.max, unit),
            })
        })
        .collect()
}

fn invalid_runs(exp: &Experiment, analysis: &Analysis) -> Vec<InvalidRun> {
    analysis
        .runs
        .iter()
        .filter(|r| !r.is_valid())
        .map(|r| InvalidRun {
            id: r.id.clone(),
            cell: cell_text(&format!(
                "{}{}",
                crate::analysis::cell_label(exp, &r.cell),
                if r.warmup { " (warm-up)" } else { "" }
            )),
            reasons: cell_text(&r.problems.join("; ")),
        })
        .collect()
}

fn variants(exp: &Experiment) -> Vec<VariantRow> {
    exp.variants
        .iter()
        .map(|v| {
            let mut extra = Vec::new();
            if !v.env.is_empty() {
                extra.push(format!(
                    "env {}",
                    v.env
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                ));
            }
            if let Some(cpus) = &v.cpus {
                extra.push(format!(
                    "pinned to CPUs {}",
                    cpus.iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                ));
            }
            VariantRow {
                name: v.name.clone(),
                label: v.label.clone(),
                command: shell_words(&v.argv),
                extra: extra.join("; "),
            }
        })
        .collect()
}

/// An argv shown as a POSIX shell would need it typed, quoting elements that need it.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=./:,{}@%+".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn environment(analysis: &Analysis) -> Vec<KeyValue> {
    let m = &analysis.manifest;
    let mut rows = vec![
        ("lab version", m.lab_version.clone()),
        ("host", m.host.name.clone()),
        (
            "CPU",
            m.host.cpu_model.clone().unwrap_or_else(|| "unknown".into()),
        ),
        (
            "logical CPUs",
            format!(
                "{} (allowed: {})",
                m.host.logical_cpus,
                m.host.allowed_cpus.clone().unwrap_or_default()
            ),
        ),
        (
            "governor",
            m.host
                .governor
                .clone()
                .unwrap_or_else(|| "not readable".into()),
        ),
        (
            "turbo",
            m.host
                .turbo
                .clone()
                .unwrap_or_else(|| "not readable".into()),
        ),
        ("kernel", m.host.kernel.clone().unwrap_or_default()),
        ("memory", m.host.memory_total.clone().unwrap_or_default()),
        (
            "load before / after",
            format!(
                "{} / {}",
                m.load_before,
                m.load_after.clone().unwrap_or_else(|| "–".into())
            ),
        ),
        (
            "started / finished",
            format!(
                "{} / {}",
                m.started_utc,
                m.finished_utc
                    .clone()
                    .unwrap_or_else(|| "unfinished".into())
            ),
        ),
        (
            "git",
            m.git.as_ref().map_or("not a git checkout".into(), |g| {
                format!(
                    "{}{}",
                    g.commit,
                    if g.dirty {
                        " (uncommitted changes)"
                    } else {
                        ""
                    }
                )
            }),
        ),
        ("lab.toml SHA-256", m.experiment_file_hash.clone()),
        (
            "profile",
            m.profile.clone().unwrap_or_else(|| "default".into()),
        ),
        ("order", format!("{}, seed {}", m.order, m.seed)),
    ];
    if let Some(c) = &m.calibration {
        rows.push((
            "timer",
            format!(
                "granularity {} ns, read cost {} ns",
                c.timer_granularity_ns,
                significant(c.timer_read_ns, 3)
            ),
        ));
        rows.push((
            "process spawn",
            format!(
                "median {}, IQR {} ({} samples)",
                value(c.spawn_median_ns as f64 / 1e6, "ms"),
                value(c.spawn_iqr_ns as f64 / 1e6, "ms"),
                c.spawn_samples
            ),
        ));
    }
    if let Some(b) = &m.build {
        rows.push((
            "build",
            format!(
                "{} ({})",
                shell_words(&b.command),
                if b.ran {
                    format!("ran, {} ms", b.wall_ms)
                } else {
                    "unchanged, skipped".into()
                }
            ),
        ));
    }
    for v in &m.versions {
        rows.push((
            "version",
            format!(
                "{}: {}",
                shell_words(&v.command),
                v.output.lines().next().unwrap_or("")
            ),
        ));
    }
    rows.into_iter()
        .map(|(k, v)| KeyValue {
            key: k.to_string(),
            value: cell_text(&v),
        })
        .collect()
}
