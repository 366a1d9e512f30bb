//! The Replications page of an experiment measured on several machines: each machine's
//! fingerprint, then per hypothesis its verdict and interval on each machine, the line that
//! counts where it held, and a forest chart of its ratio per machine.

use super::charts::{ForestChart, ForestRow, Verdict as ChartVerdict, forest_svg};
use super::figures::{ChartView, Figure, Text};
use anyhow::Result;
use lab_config::format::{ratio, ratio_interval};
use lab_findings::checks::{CheckResult, Verdict};
use lab_findings::replication::{Hypothesis, Machine, Replications};
use serde::Serialize;

/// The page's template context.
#[derive(Serialize)]
pub(crate) struct ReplicationsView {
    pub title: String,
    pub sentence: String,
    pub machines: Vec<MachineRow>,
    pub hypotheses: Vec<HypothesisView>,
}

#[derive(Serialize)]
pub(crate) struct MachineRow {
    pub label: String,
    pub session: String,
    pub cpu: String,
    pub cpus: String,
    pub kernel: String,
    pub governor: String,
    pub clocksource: String,
    /// The declared tools' versions, `command: first line`, joined.
    pub tools: String,
}

#[derive(Serialize)]
pub(crate) struct HypothesisView {
    pub name: String,
    pub line: String,
    pub outcomes: Vec<OutcomeRow>,
    pub chart: Option<ChartView>,
}

#[derive(Serialize)]
pub(crate) struct OutcomeRow {
    pub machine: String,
    /// The verdict badge (HTML lab composes, drawn by lab.css), or "not checked".
    pub mark: String,
    pub interval: String,
    pub needs: String,
}

/// The page's context and its figures (to be written beside it).
pub(crate) fn view(title: &str, r: &Replications) -> Result<(ReplicationsView, Vec<Figure>)> {
    let mut figures = Vec::new();
    let mut hypotheses = Vec::new();
    for (i, h) in r.hypotheses.iter().enumerate() {
        let figure = chart(i + 1, h, &r.machines)?;
        hypotheses.push(HypothesisView {
            name: h.name.clone(),
            line: h.line(&r.machines),
            outcomes: r
                .machines
                .iter()
                .zip(&h.outcomes)
                .map(|(m, c)| outcome_row(m, c.as_ref()))
                .collect(),
            chart: figure.as_ref().map(ChartView::of),
        });
        figures.extend(figure);
    }
    let received = r.machines.iter().filter(|m| m.received).count();
    let view = ReplicationsView {
        title: title.to_string(),
        sentence: format!(
            "This experiment was measured on {} machines ({} of them received as bundles); each machine stands for its latest session, judged by the lab.toml that session ran with.",
            r.machines.len(),
            received
        ),
        machines: r.machines.iter().map(machine_row).collect(),
        hypotheses,
    };
    Ok((view, figures))
}

/// A machine's line in the fingerprint table.
fn machine_row(m: &Machine) -> MachineRow {
    let fact = |name: &str| {
        m.facts
            .iter()
            .find(|(k, _)| k == name)
            .map_or_else(String::new, |(_, v)| v.clone())
    };
    let tools: Vec<String> = m
        .facts
        .iter()
        .skip(6)
        .map(|(command, version)| format!("{command}: {version}"))
        .collect();
    MachineRow {
        label: m.label.clone(),
        session: if m.received {
            format!("{} (received)", m.session)
        } else {
            m.session.clone()
        },
        cpu: fact("CPU model"),
        cpus: fact("logical CPUs"),
        kernel: fact("kernel"),
        governor: fact("governor"),
        clocksource: m
            .clocksource
            .clone()
            .unwrap_or_else(|| "not recorded".into()),
        tools: tools.join("; "),
    }
}

/// A hypothesis on one machine: its verdict, its ratio with the interval, what it needed.
fn outcome_row(m: &Machine, c: Option<&CheckResult>) -> OutcomeRow {
    let Some(c) = c else {
        return OutcomeRow {
            machine: m.label.clone(),
            mark: "not checked".into(),
            interval: String::new(),
            needs: String::new(),
        };
    };
    let (interval, needs) = match &c.ratio {
        Some(r) => (ratio_interval(r.ratio, r.lo, r.hi), r.needs.clone()),
        None => (c.evidence.clone(), String::new()),
    };
    OutcomeRow {
        machine: m.label.clone(),
        mark: super::marks::mark(c.verdict, c.untrusted),
        interval,
        needs,
    }
}

/// The hypothesis's ratio per machine with its interval and threshold; `None` when no
/// machine has a ratio for it.
fn chart(number: usize, h: &Hypothesis, machines: &[Machine]) -> Result<Option<Figure>> {
    let rows: Vec<ForestRow> = machines
        .iter()
        .zip(&h.outcomes)
        .filter_map(|(m, c)| {
            let c = c.as_ref()?;
            let r = c.ratio.as_ref()?;
            Some(ForestRow {
                label: m.label.clone(),
                ratio: r.ratio,
                lo: r.lo,
                hi: r.hi,
                threshold: Some(r.threshold),
                verdict: chart_verdict(c.verdict),
            })
        })
        .collect();
    let Some(first) = h.outcomes.iter().flatten().find_map(|c| c.ratio.as_ref()) else {
        return Ok(None);
    };
    let chart = ForestChart {
        title: h.name.clone(),
        x_label: format!("ratio {} / {}", first.a, first.b),
        rows,
    };
    let text = Text {
        heading: h.name.clone(),
        alt: format!(
            "The ratio {} / {} with its interval on each of {} machines, against the threshold {}",
            first.a,
            first.b,
            machines.len(),
            ratio(first.threshold)
        ),
        caption: format!(
            "One row per machine: the point is the ratio, the bar its interval, the dashed tick the threshold ({}).",
            first.needs
        ),
    };
    Figure::new(&format!("replication-{number}"), text, |size| {
        forest_svg(&chart, size)
    })
    .map(Some)
}

fn chart_verdict(v: Verdict) -> ChartVerdict {
    match v {
        Verdict::Pass => ChartVerdict::Pass,
        Verdict::Fail => ChartVerdict::Fail,
        Verdict::Inconclusive => ChartVerdict::Inconclusive,
        Verdict::NotRun => ChartVerdict::NotRun,
        Verdict::AtThreshold => ChartVerdict::AtThreshold,
    }
}
