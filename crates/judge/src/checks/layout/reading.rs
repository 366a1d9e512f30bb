//! What the layout check says: its reading for each verdict, and the evidence of every cell.

use super::effect::{CellEffect, Split};
use super::{LAYOUT, Verdict};
use lab_config::format::{grouped, percent, ratio_interval_fine, significant};
use lab_config::plan::layout::{CACHE_LINE, PAD_SPLIT};
use lab_config::{CheckClass, Metric};
use lab_findings::checks::CheckResult;

/// Units whose values are durations.
const TIME_UNITS: [&str; 6] = ["s", "ms", "us", "µs", "ns", "min"];

/// From this ratio on (or its inverse), an effect reads as a multiple: "2.10× slower".
const MULTIPLE: f64 = 1.5;

/// What every reading needs besides the comparisons.
pub(super) struct Context<'a> {
    pub(super) metric: &'a Metric,
    pub(super) tolerance: f64,
    pub(super) level: f64,
    /// Why some runs' heaps were not shifted.
    pub(super) unshifted: &'a [String],
}

pub(super) fn not_run(why: &str) -> CheckResult {
    let mut result =
        CheckResult::new(LAYOUT, "automatic", CheckClass::Validity, Verdict::NotRun).reading(why);
    result.automatic = true;
    result
}

/// `said`, followed by why some heaps were not shifted, where that happened.
pub(super) fn with_unshifted(said: String, cx: &Context<'_>) -> String {
    let mut parts: Vec<String> = (!said.is_empty()).then_some(said).into_iter().collect();
    parts.extend(cx.unshifted.iter().cloned());
    parts.join("; ")
}

/// "cell x=1: runs with ≥ 2,048 bytes of padding are 7.9% [6.1%, 9.8%] slower", and for the
/// heap "cell x=2: runs whose heap was shifted 48 bytes along a cache line (heap_shift mod 64
/// = 48) are 2.10× [1.95×, 2.26×] slower than the others: the result depends on where the heap
/// lands, not on the variant".
pub(super) fn failing(judged: &[CellEffect], metric: &Metric) -> String {
    let failed: Vec<&CellEffect> = judged
        .iter()
        .filter(|e| e.verdict == Verdict::Fail)
        .collect();
    let parts: Vec<String> = failed
        .iter()
        .map(|e| match e.split {
            Split::Padding => format!(
                "cell {}: runs with ≥ {} bytes of padding are {}",
                e.label,
                grouped(u64::from(PAD_SPLIT)),
                sized(e, metric)
            ),
            Split::HeapPosition(bytes) => format!(
                "cell {}: runs whose heap was shifted {bytes} bytes along a cache line (heap_shift mod {CACHE_LINE} = {bytes}) are {} than the others",
                e.label,
                sized(e, metric)
            ),
        })
        .collect();
    let heap = failed
        .iter()
        .any(|e| matches!(e.split, Split::HeapPosition(_)));
    let mut said = parts.join("; ");
    if heap {
        said.push_str(": the result depends on where the heap lands, not on the variant");
    }
    said
}

/// "7.9% [6.1%, 9.8%] slower", or "2.10× [1.95×, 2.26×] slower" for an effect of half as much
/// again or more: the effect's size and direction, its interval in the same direction.
fn sized(e: &CellEffect, metric: &Metric) -> String {
    // A metric in a unit of time reads as speed: a time that grows is slower. Any other (a
    // throughput, a count) is only higher or lower: `better` defaults to higher, so it cannot
    // tell a time declared without it from a throughput.
    let (up, down) = if TIME_UNITS.contains(&metric.unit.as_str()) {
        ("slower", "faster")
    } else {
        ("higher", "lower")
    };
    let (lo, hi) = (e.interval.lo, e.interval.hi);
    let times = |x: f64| format!("{}×", significant(x, 3));
    match e.ratio {
        r if r >= MULTIPLE => format!("{} [{}, {}] {up}", times(r), times(lo), times(hi)),
        r if r <= 1.0 / MULTIPLE => format!(
            "{} [{}, {}] {down}",
            times(1.0 / r),
            times(1.0 / hi),
            times(1.0 / lo)
        ),
        r if r >= 1.0 => format!(
            "{} [{}, {}] {up}",
            percent(r - 1.0),
            percent(lo - 1.0),
            percent(hi - 1.0)
        ),
        r => format!(
            "{} [{}, {}] {down}",
            percent(1.0 - r),
            percent(1.0 - hi),
            percent(1.0 - lo)
        ),
    }
}

/// The cells judged, each once, in order.
fn cells(judged: &[CellEffect], which: impl Fn(&CellEffect) -> bool) -> Vec<&str> {
    let mut labels: Vec<&str> = Vec::new();
    for e in judged.iter().filter(|e| which(e)) {
        if !labels.contains(&e.label.as_str()) {
            labels.push(&e.label);
        }
    }
    labels
}

/// "in all 4 cells the runs with larger paddings are within ±2.0% of those with smaller ones,
/// and the runs at each heap position within a cache line within ±2.0% of the others".
pub(super) fn passing(judged: &[CellEffect], tolerance: f64) -> String {
    let padded = cells(judged, |e| e.split == Split::Padding).len();
    let shifted = cells(judged, |e| e.split != Split::Padding).len();
    let band = percent(tolerance);
    let mut said = format!(
        "in {} the runs with larger paddings are within ±{band} of those with smaller ones",
        match padded {
            1 => "the one cell".to_string(),
            2 => "both cells".to_string(),
            n => format!("all {n} cells"),
        }
    );
    let within =
        format!("the runs at each heap position within a cache line within ±{band} of the others");
    match shifted {
        0 => {}
        n if n == padded => said.push_str(&format!(", and {within}")),
        n => said.push_str(&format!(", and in {n} of them {within}")),
    }
    said
}

/// Which cells' intervals reach past the band, and which cells had too few runs.
pub(super) fn open(judged: &[CellEffect], unjudged: &[String], tolerance: f64) -> String {
    let open = |e: &CellEffect| e.verdict == Verdict::Inconclusive;
    let labels = cells(judged, open);
    let mut parts = Vec::new();
    if !labels.is_empty() {
        let (intervals, reach) = if judged.iter().filter(|e| open(e)).count() == 1 {
            ("interval", "reaches")
        } else {
            ("intervals", "reach")
        };
        parts.push(format!(
            "the {intervals} of {} {reach} past ±{}: more runs would decide",
            labels.join(", "),
            percent(tolerance)
        ));
    }
    parts.extend(unjudged.iter().cloned());
    parts.join("; ")
}

/// "x=1: larger/smaller padding 1.079 [1.061, 1.098], heap at +48 bytes/others 1.003 [0.9921,
/// 1.014] (permutation p = 0.41); …; 95% CI, tolerance ±2.0%": each cell's padding and the
/// heap position farthest from its other runs, with the p-value of the positions' largest
/// difference.
pub(super) fn evidence(judged: &[CellEffect], cx: &Context<'_>) -> String {
    let fine = |e: &CellEffect| ratio_interval_fine(e.ratio, e.interval.lo, e.interval.hi);
    let mut described = Vec::new();
    for label in cells(judged, |_| true) {
        let of_cell = || judged.iter().filter(move |e| e.label == label);
        let mut parts = Vec::new();
        if let Some(e) = of_cell().find(|e| e.split == Split::Padding) {
            parts.push(format!("larger/smaller padding {}", fine(e)));
        }
        // The first of the farthest, so that equal ratios name the lowest position.
        let farthest = of_cell()
            .filter(|e| e.split != Split::Padding)
            .reduce(|a, b| {
                if b.ratio.ln().abs() > a.ratio.ln().abs() {
                    b
                } else {
                    a
                }
            });
        if let Some(
            e @ CellEffect {
                split: Split::HeapPosition(bytes),
                ..
            },
        ) = farthest
        {
            let test = e
                .p_value
                .map(|p| format!(" (permutation {})", lab_config::format::p_value(p)))
                .unwrap_or_default();
            parts.push(format!("heap at +{bytes} bytes/others {}{test}", fine(e)));
        }
        described.push(format!("{label}: {}", parts.join(", ")));
    }
    format!(
        "{}; {} CI, tolerance ±{}",
        described.join("; "),
        lab_config::format::level(cx.level),
        percent(cx.tolerance)
    )
}
