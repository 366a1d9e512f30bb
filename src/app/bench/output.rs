//! What `lab bench` prints, in hyperfine's shape: per command and parameter set its time
//! (here the median with its interval first, then hyperfine's mean ± σ, user and system time
//! and range), then each command against the reference — faster, slower, or the same within
//! the threshold, decided on the interval of the ratio (one command across parameter values:
//! each value against the fastest) — then lab's validity checks that apply, and where the
//! session and its chapter are. The exports are written from the same [`Report`].

use super::figures::{Timed, directed, mean, range, sd};
use super::shown::{SortOrder, TimeUnit};
use crate::assess::Assessed;
use crate::error::Exit;
use crate::layout::Layout;
use lab_config::format::{percent, significant, terminal};
use lab_config::{CheckClass, template::substitute};
use lab_judge::checks::{CheckResult, Verdict};
use lab_store::RunRow;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A command against the reference at one parameter set, as its `agree` check decided it.
pub(super) struct Against {
    pub name: String,
    pub verdict: Verdict,
    pub ratio: Option<(f64, f64, f64, f64)>,
    pub reading: String,
    /// What the runs waited for a CPU, where that could explain the ratio (the verdict was
    /// withheld).
    pub busy: Option<String>,
    /// The same comparison on CPU time, where the wall time's was withheld and the runs kept
    /// a CPU busy.
    pub on_cpu: Option<String>,
    /// Where it was left open: what more runs would likely do for it.
    pub outlook: Option<String>,
}

/// How the report is shown: hyperfine's `--time-unit` and `--sort`, and what reruns it.
pub(super) struct View {
    pub unit: Option<TimeUnit>,
    pub sort: SortOrder,
    pub again: String,
}

/// Everything `lab bench` reports about its session.
pub(super) struct Report {
    pub timed: Vec<Timed>,
    pub against: Vec<Against>,
    /// One command across parameter values: each value against the fastest.
    pub across: Vec<String>,
    /// Commands timed whole though shorter than the timing floor: what that means.
    pub start_up: Option<String>,
    pub unit: Option<TimeUnit>,
    pub sort: SortOrder,
    pub threshold: Option<String>,
    pub validity: Vec<CheckResult>,
    pub sampling: Option<String>,
    pub session_dir: String,
    pub chapter: String,
    pub reproduce: String,
}

/// The hypotheses that compare the commands, each as the report states it.
fn against(a: &Assessed) -> Vec<Against> {
    a.findings
        .checks
        .iter()
        .filter(|c| c.kind == "agree" && c.class == CheckClass::Hypothesis)
        .map(|c| Against {
            name: c.name.clone(),
            verdict: c.verdict,
            ratio: c.ratio.as_ref().map(|r| (r.ratio, r.lo, r.hi, r.level)),
            reading: c.reading.clone(),
            busy: c.busy.clone(),
            on_cpu: super::cpu::companion(a, c),
            outlook: a.looks.last().and_then(|s| s.outlook_of(&c.name)),
        })
        .collect()
}

impl Report {
    /// The report of the assessed session `a`, shown as `view` says.
    pub(super) fn of(a: &Assessed, layout: &Layout, view: &View) -> Report {
        let rows: BTreeMap<&str, &RunRow> = a
            .session
            .runs
            .iter()
            .map(|r| (r.run_id.as_str(), r))
            .collect();
        let timed: Vec<Timed> = a
            .analysis
            .cells
            .iter()
            .filter(|c| c.metric == "wall_s")
            .map(|c| timed(a, c, &rows))
            .collect();
        let start_up = super::short::start_up_note(a, &timed);
        let against = against(a);
        let threshold = a.experiment.checks.iter().find_map(|c| match &c.kind {
            lab_config::CheckKind::Agree { margin, .. } => Some(percent(*margin)),
            _ => None,
        });
        Report {
            across: super::short::across_values(a),
            timed,
            against,
            start_up,
            unit: view.unit,
            sort: view.sort,
            threshold,
            validity: a
                .findings
                .checks
                .iter()
                .filter(|c| c.class == CheckClass::Validity)
                .cloned()
                .collect(),
            sampling: a.looks.last().map(|s| s.sentence(&a.experiment)),
            session_dir: a.session.dir.display().to_string(),
            chapter: layout
                .book()
                .join("src")
                .join(&a.experiment.name)
                .join("index.md")
                .display()
                .to_string(),
            reproduce: view.again.clone(),
        }
    }

    /// The reference's label: the first command's.
    pub(super) fn reference_label(&self) -> String {
        self.timed
            .first()
            .map(|t| t.label.clone())
            .unwrap_or_default()
    }

    /// Each command's label once, in the commands' order.
    pub(super) fn labels(&self) -> Vec<String> {
        let mut labels: Vec<String> = Vec::new();
        for t in &self.timed {
            if !labels.contains(&t.label) {
                labels.push(t.label.clone());
            }
        }
        labels
    }

    /// The exit status: 1 when a validity check failed or nothing was timed, else 0 (a
    /// command slower than another is an answer, not a failure).
    pub(super) fn exit(&self) -> Exit {
        let invalid = self.validity.iter().any(|c| c.verdict == Verdict::Fail);
        let nothing = self.timed.iter().all(|t| t.times.is_empty());
        Exit::failed_if(invalid || nothing)
    }

    /// The whole terminal report.
    pub(super) fn text(&self) -> String {
        let mut out = String::new();
        for (i, t) in self.timed.iter().enumerate() {
            out.push_str(&block(i + 1, t, self.unit));
        }
        if let Some(note) = &self.start_up {
            let _ = writeln!(out, "{}\n", terminal(note));
        }
        out.push_str(&self.summary());
        out.push_str(&self.across());
        out.push_str(&self.checks());
        if let Some(s) = &self.sampling {
            let _ = writeln!(out, "{}", terminal(s));
        }
        let _ = writeln!(
            out,
            "session {} · chapter {} · again: {}",
            self.session_dir, self.chapter, self.reproduce
        );
        out
    }

    fn summary(&self) -> String {
        let Some(threshold) = &self.threshold else {
            return String::new();
        };
        let mut out =
            format!("Summary (wall time against the reference; the same within ±{threshold})\n");
        let mut against: Vec<&Against> = self.against.iter().collect();
        if self.sort != SortOrder::Command {
            // hyperfine's `auto` and `mean-time` order the comparison by time.
            against.sort_by(|a, b| {
                let r = |x: &Against| x.ratio.map_or(f64::INFINITY, |r| r.0);
                r(a).total_cmp(&r(b))
            });
        }
        for a in against {
            let _ = writeln!(out, "  {}", terminal(&a.line()));
            if let Some(cpu) = &a.on_cpu {
                let _ = writeln!(out, "    {}", terminal(cpu));
            }
        }
        out.push('\n');
        out
    }

    fn across(&self) -> String {
        if self.across.is_empty() {
            return String::new();
        }
        let mut out = String::from("Summary (wall time across the parameter values)\n");
        for line in &self.across {
            let _ = writeln!(out, "  {}", terminal(line));
        }
        out.push('\n');
        out
    }

    /// The validity checks that apply: those not run (nothing to judge, as a configuration
    /// echo for a program that prints none) are left to the chapter.
    fn checks(&self) -> String {
        let mut out = String::new();
        let passed: Vec<&str> = self
            .validity
            .iter()
            .filter(|c| c.verdict == Verdict::Pass)
            .map(|c| c.name.as_str())
            .collect();
        if !passed.is_empty() {
            let _ = writeln!(out, "  pass          {}", terminal(&passed.join(" · ")));
        }
        let failed_or_open = self
            .validity
            .iter()
            .filter(|c| !matches!(c.verdict, Verdict::Pass | Verdict::NotRun));
        for c in failed_or_open {
            let _ = writeln!(
                out,
                "  {:<13} {}: {}",
                c.verdict.word(),
                terminal(&c.name),
                terminal(&c.reading)
            );
        }
        if let Some(t) = self.timed.iter().find(|t| t.failed && t.times.is_empty()) {
            let why = t.first_problem.clone().unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} failed in every run ({why}); lab bench -i counts runs with a non-zero exit code as measurements",
                terminal(&t.command)
            );
        }
        out
    }
}

impl Against {
    /// "sort -n data against sort data: 1.95× [1.90, 2.01] faster (95% CI)".
    fn line(&self) -> String {
        let Some((r, lo, hi, level)) = self.ratio else {
            return format!("{}: {} ({})", self.name, self.verdict.word(), self.reading);
        };
        let level = lab_config::format::level(level);
        let directed = directed(r, lo, hi);
        // An undecided ratio is given as measured, with no direction: it has none yet.
        let fine = |x: f64| significant(x, 4);
        let undirected = format!("{}× [{}, {}]", fine(r), fine(lo), fine(hi));
        match (self.verdict, &self.busy) {
            (Verdict::Pass, _) => format!("{}: the same ({directed}, {level} CI)", self.name),
            (Verdict::Fail, _) => format!("{}: {directed} ({level} CI)", self.name),
            (Verdict::Inconclusive, Some(busy)) => format!(
                "{}: machine busy ({undirected}, {level} CI, as measured): {busy}, enough to explain it; quiet the machine or add runs (-M)",
                self.name
            ),
            (Verdict::Inconclusive, None) => format!(
                "{}: cannot tell yet ({undirected}, {level} CI: no difference beyond ±{}); {}",
                self.name,
                lab_config::format::percent((hi - 1.0).max(1.0 / lo - 1.0)),
                self.outlook
                    .as_deref()
                    .unwrap_or("more runs (-M, --budget) or a wider --threshold")
            ),
            (Verdict::NotRun, _) => format!("{}: not decided ({})", self.name, self.reading),
            (Verdict::AtThreshold, _) => format!(
                "{}: at the edge of the band ({undirected}, {level} CI): {}",
                self.name, self.reading
            ),
        }
    }
}

/// One command's block, numbered as hyperfine numbers them, its times in `unit` (else each
/// in the unit that suits it).
fn block(number: usize, t: &Timed, unit: Option<TimeUnit>) -> String {
    let shown = |x: f64| match unit {
        Some(u) => u.format_duration(lab_config::units::Seconds(x)),
        None => seconds(x),
    };
    let mut out = format!("Benchmark {number}: {}\n", terminal(&t.command));
    match (t.median, t.interval) {
        (Some(m), Some((lo, hi, level))) => {
            let _ = writeln!(
                out,
                "  Time (median [{} CI]):  {} [{}, {}]",
                lab_config::format::level(level),
                shown(m),
                shown(lo),
                shown(hi)
            );
        }
        (Some(m), None) => {
            let _ = writeln!(out, "  Time (median):          {}", shown(m));
        }
        _ => {}
    }
    let n = t.times.len();
    if n > 0 {
        let mean = mean(&t.times);
        let _ = writeln!(
            out,
            "  Time (mean ± σ):        {} ± {}    [User: {}, System: {}]",
            shown(mean),
            shown(sd(&t.times)),
            shown(self::mean(&t.user)),
            shown(self::mean(&t.system))
        );
        let (min, max) = range(&t.times);
        let _ = writeln!(
            out,
            "  Range (min … max):      {} … {}    {n} run{}",
            shown(min),
            shown(max),
            if n == 1 { "" } else { "s" }
        );
    }
    if t.invalid > 0 {
        let _ = writeln!(
            out,
            "  {} run{} not timed: {}",
            t.invalid,
            if t.invalid == 1 { "" } else { "s" },
            terminal(t.first_problem.as_deref().unwrap_or(""))
        );
    }
    out.push('\n');
    out
}

fn timed(
    a: &Assessed,
    cell: &lab_judge::analysis::CellStats,
    rows: &BTreeMap<&str, &RunRow>,
) -> Timed {
    let valid: Vec<&RunRow> = cell
        .run_ids
        .iter()
        .filter_map(|id| rows.get(id.as_str()).copied())
        .collect();
    let seconds_of = |f: fn(&RunRow) -> u64| valid.iter().map(|r| f(r) as f64 / 1e9).collect();
    let variant = a.experiment.variant(&cell.cell.variant);
    let label = variant
        .and_then(|v| v.label.clone())
        .unwrap_or_else(|| cell.cell.variant.clone());
    let first_problem = a.analysis.first_problem(&cell.cell).map(str::to_string);
    let failed = a
        .analysis
        .timed_runs(&cell.cell)
        .any(|r| r.problems.iter().any(|p| p.starts_with("exit code ")));
    Timed {
        command: substitute(&label, &cell.cell.params),
        label,
        params: cell
            .cell
            .params
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect(),
        times: cell
            .runs
            .iter()
            .filter_map(|values| values.first().copied())
            .collect(),
        user: seconds_of(|r| r.user_ns),
        system: seconds_of(|r| r.sys_ns),
        memory_bytes: valid.iter().map(|r| r.max_rss_kib * 1024).collect(),
        exit_codes: valid.iter().map(|r| r.exit_code).collect(),
        median: cell.median(),
        interval: cell.median_ci.as_ref().map(|i| (i.lo, i.hi, i.level)),
        invalid: cell.invalid_runs,
        first_problem,
        failed,
    }
}

/// A time as hyperfine prints it, in the unit that suits it: `1.23 s`, `51.2 ms`, `845 µs`
/// (three significant digits, lab's way).
fn seconds(x: f64) -> String {
    let (scaled, unit) = match x.abs() {
        a if a >= 1.0 || a == 0.0 => (x, "s"),
        a if a >= 1e-3 => (x * 1e3, "ms"),
        _ => (x * 1e6, "µs"),
    };
    format!("{} {unit}", significant(scaled, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_in_the_unit_that_suits_them() {
        assert_eq!(seconds(1.2345), "1.23 s");
        assert_eq!(seconds(0.0512), "51.2 ms");
        assert_eq!(seconds(0.000845), "845 µs");
        assert_eq!(seconds(0.0), "0 s");
    }
}
