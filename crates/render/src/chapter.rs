//! The chapter's template context: every number formatted once, here, from the analysis.

use super::escape::with_code_spans;
use super::figures::{ChartView, Figure};
use super::marks;
use super::numbering::Numbering;
use super::provenance::Ids;
use super::tables::{PercentileRow, Table};
use lab_config::format::{memory, millis, significant};
use lab_config::shell_syntax::shell_words;
use lab_config::units::Nanos;
use lab_config::{CheckClass, Experiment};
use lab_findings::analysis::Analysis;
use lab_findings::checks::{CheckResult, Verdict};
use lab_store::Manifest;
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct ChapterContext {
    pub title: String,
    /// Which session the chapter shows: its name, profile, state, date and host.
    pub shown: String,
    /// What the reader must know about the record itself, one line each.
    pub notices: Vec<String>,
    /// What differs today from what the session measured (Markdown lab composes).
    pub outdated: Option<String>,
    pub hypothesis: String,
    /// The answer block: every hypothesis in one line, and what makes the record untrusted.
    pub answer: String,
    pub checks: Vec<CheckRow>,
    /// "Table 1." above the checks, with its anchor (HTML lab composes).
    pub checks_caption: String,
    /// How many hypothesis passes chance alone could explain, when several were decided,
    /// its figures linked (Markdown lab composes).
    pub multiplicity_md: Option<String>,
    /// A sampled session's looks and why sampling stopped.
    pub sampling: Option<super::sampling::SamplingView>,
    /// Tail percentiles of cells with enough values (latency-like metrics).
    pub percentiles: Vec<PercentileRow>,
    pub percentiles_caption: String,
    /// The chart that shows the answer, right under it.
    pub lead_chart: Option<ChartView>,
    pub charts: Vec<ChartView>,
    pub tables: Vec<Table>,
    /// The experiment's notes.md, rendered with the analysis (Markdown).
    pub notes: Option<String>,
    /// The session before this one, compared with it.
    pub compared: Option<super::compared::ComparedView>,
    /// The sentence that leads to the Replications page, when the experiment has one.
    pub replications: Option<String>,
    pub invalid_runs: Vec<InvalidRun>,
    pub variants: Vec<VariantRow>,
    pub environment: Vec<KeyValue>,
    pub session: String,
    pub counts: String,
    pub reproduce: String,
    pub resamples: usize,
    pub seed: u64,
    /// From analysis 2 on, "drawn from xoshiro256++ streams (analysis 2)"; empty for a
    /// session of analysis 1, whose chapter reads as it always did.
    pub generator: String,
    /// Fewest valid runs for an interval.
    pub min_runs: usize,
    /// "Cite this chapter": its BibTeX entry in a fenced code block (Markdown lab composes).
    pub cite: String,
}

/// What the percentiles table holds, after its number.
const PERCENTILES_CAPTION: &str = "Tail percentiles of every recorded value.";

/// The chart under the answer and those of the chart sections, numbered and anchored.
fn chart_views(figures: &[Figure], numbering: &Numbering) -> (Option<ChartView>, Vec<ChartView>) {
    let mut views: Vec<ChartView> = figures
        .iter()
        .map(|f| ChartView::placed(f, numbering.place(f)))
        .collect();
    let lead = (!views.is_empty()).then(|| views.remove(0));
    (lead, views)
}

/// What the chapter shows beside the analysis: its charts, results tables and percentiles,
/// the rendered notes, and the numbers of its figures and tables.
pub(crate) struct Parts<'a> {
    pub figures: Vec<Figure>,
    pub tables: Vec<Table>,
    pub percentiles: Vec<PercentileRow>,
    pub notes: Option<String>,
    pub numbering: Numbering,
    /// The ids of the chapter's numbers: the links of the checks' ratios and ρs.
    pub ids: &'a Ids,
}

#[derive(Serialize)]
pub(crate) struct CheckRow {
    /// The verdict badge (HTML lab composes).
    pub mark: String,
    pub name: String,
    pub kind: String,
    /// One plain sentence (Markdown lab composes, `code` spans shown as code).
    pub reading_md: String,
    /// Short evidence shown under the sentence (hypothesis checks).
    pub evidence_md: String,
    /// Long evidence folded away (validity checks' statistics).
    pub details_md: String,
    /// The id of the ratio it decided on, on the chapter's page of where each number
    /// comes from.
    pub ratio_id: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct InvalidRun {
    pub id: String,
    pub cell: String,
    pub reasons: String,
}

#[derive(Serialize)]
pub(crate) struct VariantRow {
    pub name: String,
    pub label: Option<String>,
    pub command: String,
    pub extra: String,
}

#[derive(Serialize)]
pub(crate) struct KeyValue {
    pub key: String,
    pub value: String,
}

pub(crate) fn context(exp: &Experiment, item: &super::Rendered, parts: Parts) -> ChapterContext {
    let Parts {
        figures,
        mut tables,
        percentiles,
        notes,
        numbering,
        ids,
    } = parts;
    let (lead_chart, charts) = chart_views(&figures, &numbering);
    numbering.caption_results(&mut tables);
    let analysis = item.analysis;
    let checks = &item.findings.checks;
    ChapterContext {
        shown: shown(analysis),
        notices: item
            .notices
            .iter()
            .map(|n| super::escape::with_code_spans(n))
            .collect(),
        outdated: item.outdated.map(with_code_spans),
        title: exp.title.clone(),
        hypothesis: exp
            .hypothesis
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        answer: super::answer::answer(checks, &|name| ids.decided(name)),
        checks: check_rows(checks, analysis.counts.finished, ids, &|name| {
            super::sampling::check_note(exp, item.looks, name, analysis.manifest.keeps_disturbed())
        }),
        multiplicity_md: item
            .findings
            .multiplicity
            .as_deref()
            .map(|m| linked_multiplicity(m, ids.multiplicity())),
        sampling: super::sampling::view(exp, item.looks, &|name| ids.decided(name)),
        checks_caption: numbering.table_caption("checks", "The checks and their verdicts."),
        percentiles_caption: numbering.table_caption("percentiles", PERCENTILES_CAPTION),
        percentiles,
        lead_chart,
        charts,
        tables,
        notes,
        compared: None,
        replications: None,
        invalid_runs: invalid_runs(exp, analysis),
        variants: variants(exp),
        environment: environment(analysis),
        session: analysis.session.clone(),
        counts: counts_line(analysis),
        reproduce: analysis.manifest.command.clone(),
        resamples: analysis.resampling.resamples,
        seed: analysis.resampling.seed,
        generator: generator_words(analysis),
        min_runs: lab_findings::analysis::MIN_RUNS,
        cite: super::cite::cite_block(&exp.name, &exp.title, analysis),
    }
}

/// "40 of 40 planned runs finished, 4 warm-up, 36 valid, 0 excluded".
fn counts_line(analysis: &Analysis) -> String {
    let c = &analysis.counts;
    format!(
        "{} of {} planned runs finished, {} warm-up, {} valid, {} excluded",
        c.finished, c.planned, c.warmup, c.valid, c.invalid
    )
}

/// How the resamples were drawn, when not by analysis 1's generator.
fn generator_words(analysis: &Analysis) -> String {
    match analysis.resampling.generator {
        lab_basis::Generator::ChaCha8 => String::new(),
        lab_basis::Generator::Xoshiro256PlusPlus => format!(
            ", drawn from xoshiro256++ streams (analysis {})",
            analysis.manifest.analysis
        ),
    }
}

/// "Session X (profile quick; complete), started 2026-11-29T23:31:37Z on vm." — Markdown lab
/// composes, so every part in it is escaped here.
fn shown(analysis: &Analysis) -> String {
    use super::escape::{html, markdown};
    let m = &analysis.manifest;
    let safe = |text: &str| html(&markdown(text));
    if let Some(import) = &m.imported {
        let version = import
            .version
            .as_deref()
            .map_or_else(String::new, |v| format!(" {v}"));
        let machine = match m.host.name.as_str() {
            "not recorded" => "a machine the files do not name".to_string(),
            name => safe(name),
        };
        return format!(
            "Session {} ({}), imported from {}{} at {}; measured by {} on {machine}.",
            safe(&analysis.session),
            safe(&m.status()),
            safe(&import.tool),
            safe(&version),
            safe(&m.started_utc),
            safe(&import.tool),
        );
    }
    format!(
        "Session {} (profile {}; {}), started {} on {}.",
        safe(&analysis.session),
        safe(m.profile.as_deref().unwrap_or("default")),
        safe(&m.status()),
        safe(&m.started_utc),
        safe(&m.host.name)
    )
}

/// The checks table: passing automatic checks folded into one row, every other check in its
/// own row.
/// Every row of the checks table; `sampled` gives a hypothesis its note on the looks.
fn check_rows(
    checks: &[CheckResult],
    runs: usize,
    ids: &Ids,
    sampled: &dyn Fn(&str) -> Option<String>,
) -> Vec<CheckRow> {
    let passing_automatic: Vec<&CheckResult> = checks
        .iter()
        .filter(|c| c.automatic && c.verdict == Verdict::Pass)
        .collect();
    let mut rows = Vec::new();
    if !passing_automatic.is_empty() {
        rows.push(automatic_row(&passing_automatic, runs));
    }
    rows.extend(
        checks
            .iter()
            .filter(|c| !(c.automatic && c.verdict == Verdict::Pass))
            .map(|c| linked_row(check_row(c, sampled), ids, c)),
    );
    rows
}

/// A check's row with the number it decided on linked where its text shows it, and the link
/// to how its ratio was computed.
fn linked_row(row: CheckRow, ids: &Ids, c: &CheckResult) -> CheckRow {
    let name = &c.name;
    let decided = ids.decided(name);
    let evidence = linked_markdown(&row.evidence_md, decided.as_ref());
    let reading = match linked_markdown(&row.reading_md, decided.as_ref()) {
        same if same == row.reading_md => linked_estimate(same, decided.as_ref()),
        linked => linked,
    };
    // Bounds that print as the decided interval does are left unlinked: its link holds them.
    let undisturbed = ids.undisturbed(name).filter(|(shown, _)| {
        !decided
            .as_ref()
            .is_some_and(|(_, d)| d.contains(shown.as_str()))
    });
    CheckRow {
        reading_md: linked_markdown(&linked_modes(reading, &c.cells, ids), undisturbed.as_ref()),
        evidence_md: linked_figures(
            linked_markdown(
                &linked_sides(evidence, ids.sides(name)),
                undisturbed.as_ref(),
            ),
            c,
        ),
        details_md: linked_figures(row.details_md, c),
        ratio_id: ids.check(name),
        ..row
    }
}

/// `markdown` (as [`with_code_spans`] writes it) with each figure of the check linked to its
/// provenance where it shows, the number only: each is looked for after the one before, as
/// the check lists them in the order its evidence prints them.
fn linked_figures(markdown: String, c: &CheckResult) -> String {
    let mut out = String::new();
    let mut rest = markdown.as_str();
    for figure in &c.figures {
        let shown = with_code_spans(&figure.shown());
        let Some(at) = rest.find(&shown) else {
            continue;
        };
        let (head, number) = (
            with_code_spans(&figure.label),
            with_code_spans(&figure.text()),
        );
        let id = super::check_numbers::figure_id(&c.name, &figure.name);
        out.push_str(&rest[..at]);
        out.push_str(&format!("{head}[{number}](provenance.md#{id})"));
        rest = &rest[at + shown.len()..];
    }
    out.push_str(rest);
    out
}

/// `markdown` (as [`with_code_spans`] writes it) with the first place it shows `number`'s
/// text made a link to its provenance.
fn linked_markdown(markdown: &str, number: Option<&(String, String)>) -> String {
    let Some((id, text)) = number else {
        return markdown.to_string();
    };
    super::answer::link_first(markdown, &with_code_spans(text), |shown| {
        format!("[{shown}](provenance.md#{id})")
    })
}

/// `markdown` with the decided ratio's estimate linked where it shows as `0.265×` (a reading
/// that names the ratio without its interval).
fn linked_estimate(markdown: String, number: Option<&(String, String)>) -> String {
    let Some((id, text)) = number else {
        return markdown;
    };
    let estimate = text.split(" [").next().unwrap_or(text);
    super::answer::link_first(&markdown, &format!("{estimate}×"), |_| {
        format!("[{estimate}](provenance.md#{id})×")
    })
}

/// `markdown` with each mode of a cell the check names linked to its median where it reads
/// `CELL has two modes …: … of runs at 20.9 Mops/s and … of runs at 35.7 Mops/s`.
fn linked_modes(markdown: String, cells: &[String], ids: &Ids) -> String {
    cells.iter().fold(markdown, |text, label| {
        let opening = with_code_spans(&format!("{label} has two modes"));
        let Some(at) = text.find(&opening) else {
            return text;
        };
        let (head, tail) = text.split_at(at);
        let tail = ids
            .modes(label)
            .iter()
            .fold(tail.to_string(), |t, (value, id)| {
                super::answer::link_first(&t, &format!("of runs at {value} "), |_| {
                    format!("of runs at [{value}](provenance.md#{id}) ")
                })
            });
        format!("{head}{tail}")
    })
}

/// The multiplicity sentence made inert, each of its figures linked where it first shows
/// after the one before.
fn linked_multiplicity(sentence: &str, figures: &[(String, String)]) -> String {
    let mut done = String::new();
    let mut rest = with_code_spans(sentence);
    for (shown, id) in figures {
        let Some(at) = rest.find(shown.as_str()) else {
            continue;
        };
        let after = rest.split_off(at + shown.len());
        rest.truncate(at);
        done.push_str(&format!("{rest}[{shown}](provenance.md#{id})"));
        rest = after;
    }
    done + &rest
}

/// `markdown` with the median of each cell of a check's ratio linked where it shows as
/// `CELL = VALUE`: the number only, the cell's label and the unit left as they are.
fn linked_sides(markdown: String, sides: &[(String, String)]) -> String {
    sides.iter().fold(markdown, |text, (shown, id)| {
        let Some((label, number)) = shown.rsplit_once(" = ") else {
            return text;
        };
        let whole = with_code_spans(shown);
        let head = with_code_spans(&format!("{label} = "));
        super::answer::link_first(&text, &whole, |found| {
            let number_md = found.strip_prefix(head.as_str()).unwrap_or(number);
            format!("{head}[{number_md}](provenance.md#{id})")
        })
    })
}

/// "all 144 runs: every run exited normally · no run timed out · …", details folded.
fn automatic_row(passing: &[&CheckResult], runs: usize) -> CheckRow {
    let names: Vec<&str> = passing.iter().map(|c| c.name.as_str()).collect();
    let details: Vec<String> = passing
        .iter()
        .map(|c| linked_figures(with_code_spans(&format!("{}: {}", c.name, c.evidence)), c))
        .collect();
    CheckRow {
        mark: marks::mark(Verdict::Pass, false),
        name: format!(
            "{} automatic check{}",
            passing.len(),
            if passing.len() == 1 { "" } else { "s" }
        ),
        kind: "validity, automatic".into(),
        reading_md: with_code_spans(&format!("all {runs} runs: {}", names.join(" · "))),
        evidence_md: String::new(),
        details_md: details.join("; "),
        ratio_id: None,
    }
}

fn check_row(c: &CheckResult, sampled: &dyn Fn(&str) -> Option<String>) -> CheckRow {
    let class = match (c.class, c.automatic) {
        (CheckClass::Validity, true) => "validity, automatic".to_string(),
        (CheckClass::Validity, false) => format!("validity, {}", c.kind),
        (CheckClass::Hypothesis, _) => format!("hypothesis, {}", c.kind),
    };
    let (evidence, details) = match c.class {
        CheckClass::Hypothesis => (
            match sampled(&c.name) {
                Some(note) => format!("{}; {note}", c.evidence),
                None => c.evidence.clone(),
            },
            String::new(),
        ),
        CheckClass::Validity => (String::new(), c.evidence.clone()),
    };
    CheckRow {
        mark: marks::mark(c.verdict, c.untrusted),
        name: c.name.clone(),
        kind: class,
        reading_md: with_code_spans(&c.reading),
        evidence_md: with_code_spans(&evidence),
        details_md: with_code_spans(&details),
        ratio_id: None,
    }
}

fn invalid_runs(exp: &Experiment, analysis: &Analysis) -> Vec<InvalidRun> {
    analysis
        .runs
        .iter()
        .filter(|r| !r.is_valid())
        .map(|r| InvalidRun {
            id: r.id.clone(),
            cell: format!(
                "{}{}",
                lab_findings::analysis::cell_label(exp, &r.cell),
                if r.warmup { " (warm-up)" } else { "" }
            ),
            reasons: if r.timing_discarded() {
                format!(
                    "{} (timing discarded; outputs judged)",
                    r.problems.join("; ")
                )
            } else {
                r.problems.join("; ")
            },
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
                command: if v.argv.is_empty() {
                    format!(
                        "(measured by {})",
                        exp.imported.as_deref().unwrap_or("another tool")
                    )
                } else {
                    shell_words(&v.argv)
                },
                extra: extra.join("; "),
            }
        })
        .collect()
}

/// `/proc/meminfo`'s "24684092 kB" as "23.5 GiB"; anything else as it was recorded.
fn readable_memory(recorded: &str) -> String {
    let parsed = recorded
        .strip_suffix("kB")
        .and_then(|n| n.trim().parse::<f64>().ok());
    parsed.map_or_else(|| recorded.to_string(), |kib| memory(kib * 1024.0))
}

fn environment(analysis: &Analysis) -> Vec<KeyValue> {
    let m = &analysis.manifest;
    let mut rows = machine_rows(m);
    rows.extend(session_rows(m));
    rows.extend(calibration_rows(m));
    rows.extend(cluster_rows(m));
    rows.extend(build_rows(m));
    rows.extend(layout_rows(analysis));
    rows.extend(counter_rows(m));
    rows.into_iter()
        .map(|(k, v)| KeyValue {
            key: k.to_string(),
            value: v,
        })
        .collect()
}

type Row = (&'static str, String);

/// Where each counter came from (the kernel's perf events, or valgrind's callgrind), and
/// which the machine lacked.
fn counter_rows(m: &Manifest) -> Vec<Row> {
    const CALLGRIND: &str = "callgrind-instructions";
    let mut perf = Vec::new();
    let mut unavailable = Vec::new();
    let mut rows = Vec::new();
    for (name, state) in &m.counters {
        match (name.as_str(), state.strip_prefix("available")) {
            (CALLGRIND, Some(version)) => rows.push(("instructions", callgrind_source(version))),
            (_, Some(_)) => perf.push(name.as_str()),
            (_, None) => unavailable.push(format!(
                "{name} ({})",
                state.trim_start_matches("unavailable: ")
            )),
        }
    }
    if !perf.is_empty() {
        let source = "perf_event_open, per run, its child processes included";
        rows.insert(0, ("counters", format!("{} ({source})", perf.join(", "))));
    }
    if !unavailable.is_empty() {
        rows.push(("counters unavailable", unavailable.join("; ")));
    }
    rows
}

/// How `callgrind-instructions` was counted, and what that did to the runs' times.
fn callgrind_source(version: &str) -> String {
    let version = version.trim_start_matches(": ");
    let version = if version.is_empty() {
        "valgrind"
    } else {
        version
    };
    format!(
        "callgrind-instructions counted by {version} --tool=callgrind (user-space instructions of the run and every process it started); every run ran under valgrind, so its times are valgrind's, typically 20–100× the native ones"
    )
}

/// The machine the session ran on; the clock source where the session recorded it.
fn machine_rows(m: &Manifest) -> Vec<Row> {
    let mut rows = host_rows(m);
    if let Some(source) = &m.host.clocksource {
        rows.push(("clock source", source.clone()));
    }
    rows
}

fn host_rows(m: &Manifest) -> Vec<Row> {
    vec![
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
        (
            "memory",
            m.host
                .memory_total
                .as_deref()
                .map_or_else(String::new, readable_memory),
        ),
    ]
}

/// When and from what the session ran.
fn session_rows(m: &Manifest) -> Vec<Row> {
    vec![
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
        ("git", m.commit_line()),
        ("lab.toml SHA-256", m.experiment_file_hash.clone()),
        (
            "profile",
            m.profile.clone().unwrap_or_else(|| "default".into()),
        ),
        ("order", format!("{}, seed {}", m.order, m.seed)),
    ]
}

/// How the memory layout varied, for a session that randomised it: "randomised: environment
/// padding 0–4,095 bytes per run (LAB_LAYOUT_PAD), drawn from seed 1; 12–4,071 bytes drawn
/// (runs.csv column env_padding)", then how the heaps were shifted, and why some were not.
fn layout_rows(analysis: &Analysis) -> Vec<Row> {
    use lab_config::plan::layout::{PAD_RANGE, PAD_VAR};
    let drawn: Vec<u32> = analysis.runs.iter().filter_map(|r| r.env_padding).collect();
    let (Some(low), Some(high)) = (drawn.iter().min(), drawn.iter().max()) else {
        return Vec::new();
    };
    let bytes = |n: u32| lab_config::format::grouped(u64::from(n));
    let mut said = format!(
        "randomised: environment padding 0–{} bytes per run ({PAD_VAR}), drawn from seed {}; {}–{} bytes drawn (runs.csv column env_padding)",
        bytes(PAD_RANGE - 1),
        analysis.manifest.seed,
        bytes(*low),
        bytes(*high)
    );
    said.push_str(&heap_shifts(analysis));
    vec![("memory layout", said)]
}

/// "; heap shifted 0–4,080 bytes per run by a preloaded shim (LAB_HEAP_SHIFT), 16–4,064 bytes
/// drawn in 28 of 28 runs (runs.csv column heap_shift)", and why some heaps were not; nothing
/// for a session recorded before lab shifted heaps.
fn heap_shifts(analysis: &Analysis) -> String {
    use lab_config::plan::layout::{HEAP_RANGE, HEAP_STEP, HEAP_VAR};
    let bytes = |n: u32| lab_config::format::grouped(u64::from(n));
    let shifts: Vec<u32> = analysis.runs.iter().filter_map(|r| r.heap_shift).collect();
    let mut said = match (shifts.iter().min(), shifts.iter().max()) {
        (Some(low), Some(high)) => format!(
            "; heap shifted 0–{} bytes per run in steps of {HEAP_STEP} by a preloaded shim ({HEAP_VAR}), {}–{} bytes in {} of {} runs (runs.csv column heap_shift)",
            bytes(HEAP_RANGE - HEAP_STEP),
            bytes(*low),
            bytes(*high),
            shifts.len(),
            analysis.runs.len()
        ),
        _ => String::new(),
    };
    for why in &analysis.manifest.heap_unshifted {
        said.push_str("; ");
        said.push_str(why);
    }
    said
}

/// The timer and spawn cost measured before the runs.
fn calibration_rows(m: &Manifest) -> Vec<Row> {
    let mut rows = Vec::new();
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
                millis(Nanos(c.spawn_median_ns)),
                millis(Nanos(c.spawn_iqr_ns)),
                c.spawn_samples
            ),
        ));
        if let Some(s) = &c.start_up {
            rows.push((
                "start-up left out",
                format!(
                    "every wall_s leaves out starting {}: median {}, MAD {} ({} samples); its standard error {} widens every wall-time interval",
                    crate::shell_words(&s.argv),
                    millis(Nanos(s.median_ns)),
                    millis(Nanos(s.mad_ns)),
                    s.samples,
                    millis(Nanos((s.standard_error_s() * 1e9) as u64))
                ),
            ));
        }
    }
    rows
}

/// The cluster's jobs and nodes, for a session measured on one.
fn cluster_rows(m: &Manifest) -> Vec<Row> {
    let mut rows = Vec::new();
    if let Some(cluster) = &m.cluster {
        rows.push((
            "cluster",
            format!(
                "{} job{} {}; runs measured on {}",
                cluster.engine,
                if cluster.jobs.len() == 1 { "" } else { "s" },
                cluster.jobs.join(", "),
                cluster
                    .nodes
                    .iter()
                    .map(|n| format!(
                        "{} ({}, kernel {}, governor {})",
                        n.name,
                        n.host.cpu_model.as_deref().unwrap_or("CPU unknown"),
                        n.host.kernel.as_deref().unwrap_or("unknown"),
                        n.host.governor.as_deref().unwrap_or("not readable")
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        ));
    }
    rows
}

/// The build command and each version command's first line.
fn build_rows(m: &Manifest) -> Vec<Row> {
    let mut rows = Vec::new();
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
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_findings::checks::CheckFigure;

    fn figure(name: &str, shown: &str, number: &str) -> CheckFigure {
        CheckFigure {
            name: name.into(),
            label: shown.strip_suffix(number).unwrap().into(),
            number: number.into(),
            interval: None,
            what: String::new(),
            method: String::new(),
            runs: String::new(),
        }
    }

    #[test]
    fn a_checks_figures_link_in_order_each_where_it_shows_after_the_one_before() {
        let mut c = CheckResult::new("no order", "order", CheckClass::Validity, Verdict::Pass);
        c.evidence =
            "trend: p = 0.5 (Holm-adjusted 1.0); `mops` Q(1) = 0.21, p = 0.5 (Holm-adjusted 1.0)"
                .into();
        c.figures = vec![
            figure("trend.p", "p = 0.5", "0.5"),
            figure("trend.adjusted-p", "Holm-adjusted 1.0", "1.0"),
            figure("sequence.q", "Q(1) = 0.21", "0.21"),
            figure("sequence.p", "p = 0.5", "0.5"),
            figure("sequence.adjusted-p", "Holm-adjusted 1.0", "1.0"),
            figure("first-of-cell.p", "p = 0.9", "0.9"),
        ];
        let linked = linked_figures(with_code_spans(&c.evidence), &c);
        let link = |id: &str| format!("(provenance.md#check.no-order.{id})");
        assert_eq!(
            linked,
            format!(
                "trend: p = [0.5]{} (Holm-adjusted [1.0]{}); <code>mops</code> Q(1) = [0.21]{}, p = [0.5]{} (Holm-adjusted [1.0]{})",
                link("trend.p"),
                link("trend.adjusted-p"),
                link("sequence.q"),
                link("sequence.p"),
                link("sequence.adjusted-p"),
            )
        );
    }

    #[test]
    fn the_environment_says_where_counters_came_from_and_which_were_unavailable() {
        let mut m = Manifest::from_json(include_bytes!("../../store/tests/data/manifest.json"))
            .expect("manifest fixture");
        assert!(counter_rows(&m).is_empty(), "no counters asked for");
        m.counters = [
            ("task-clock", "available"),
            ("page-faults", "available"),
            (
                "cycles",
                "unavailable: No such file or directory (os error 2)",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(
            counter_rows(&m),
            vec![
                (
                    "counters",
                    "page-faults, task-clock (perf_event_open, per run, its child processes included)"
                        .to_string()
                ),
                (
                    "counters unavailable",
                    "cycles (No such file or directory (os error 2))".to_string()
                ),
            ]
        );
        m.counters.insert(
            "callgrind-instructions".into(),
            "available: valgrind-3.19.0".into(),
        );
        let rows = counter_rows(&m);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1].0, "instructions");
        assert!(
            rows[1]
                .1
                .starts_with("callgrind-instructions counted by valgrind-3.19.0 --tool=callgrind"),
            "{}",
            rows[1].1
        );
        assert!(rows[1].1.contains("its times are valgrind's"));
    }
}
