//! The four-way verdict of a comparison: on exact intervals, and on constructed cells whose
//! runs the ratio bootstrap resamples.

use super::*;

/// A cell of one metric whose runs each printed one value.
fn cell(label: &str, values: &[f64]) -> CellStats {
    crate::analysis::cell_of_values(label, "ms", values)
}

/// Twelve runs of about `ms`, spread evenly over ±0.5%.
fn runs(ms: f64) -> Vec<f64> {
    (0..12)
        .map(|i| ms * (1.0 + 0.005 * (f64::from(i) / 5.5 - 1.0)))
        .collect()
}

/// The change from a cell of `a_ms` to one of `b_ms`, lower better, against ±2%.
fn change_of(a_ms: f64, b_ms: f64) -> CellChange {
    change(
        &cell("a", &runs(a_ms)),
        &cell("b", &runs(b_ms)),
        Better::Lower,
        DEFAULT_THRESHOLD,
        7,
        0.95,
    )
}

#[test]
fn an_interval_straddling_the_band_edge_is_inconclusive_not_no_change() {
    // Under load a real +5% change measured 1.037 [1.003, 1.066]: consistent with +0.3% and
    // with +6.6%, so neither "slower" nor "same".
    assert_eq!(
        judge(1.003, 1.066, Better::Lower, 0.02),
        Change::Inconclusive
    );
    // An exact +2.0% change measured tightly still reaches across the edge.
    assert_eq!(
        judge(1.019, 1.021, Better::Lower, 0.02),
        Change::Inconclusive
    );
    // Wide enough to reach across both edges.
    assert_eq!(judge(0.95, 1.05, Better::Lower, 0.02), Change::Inconclusive);
}

#[test]
fn an_interval_inside_the_band_is_the_same_and_beyond_it_a_change() {
    assert_eq!(judge(0.99, 1.015, Better::Lower, 0.02), Change::Same);
    // The band's edges belong to it: 1/1.02 and 1.02 exactly.
    assert_eq!(judge(1.0 / 1.02, 1.02, Better::Lower, 0.02), Change::Same);
    assert_eq!(judge(1.021, 1.05, Better::Lower, 0.02), Change::Slower);
    assert_eq!(judge(1.021, 1.05, Better::Higher, 0.02), Change::Faster);
    assert_eq!(judge(0.90, 0.97, Better::Lower, 0.02), Change::Faster);
    assert_eq!(judge(0.90, 0.97, Better::Higher, 0.02), Change::Slower);
    assert!(Change::Same.decided() && Change::Slower.decided() && Change::Faster.decided());
    assert!(!Change::Inconclusive.decided() && !Change::TooFewRuns.decided());
}

#[test]
fn each_verdict_on_constructed_cells() {
    assert_eq!(change_of(100.0, 110.0).verdict, Change::Slower);
    assert_eq!(change_of(100.0, 90.0).verdict, Change::Faster);
    assert_eq!(change_of(100.0, 100.0).verdict, Change::Same);
    // +2.0% exactly: the ratio of medians is 1.02 and its interval reaches across 1.02.
    let edge = change_of(100.0, 102.0);
    assert_eq!(edge.verdict, Change::Inconclusive, "{edge:?}");
    let (lo, hi) = (edge.lo.unwrap(), edge.hi.unwrap());
    assert!((edge.ratio.unwrap() - 1.02).abs() < 1e-12, "{edge:?}");
    assert!(lo < 1.02 && hi > 1.02 && lo > 1.01 && hi < 1.03, "{edge:?}");
    assert_eq!(edge.straddles(0.02).as_deref(), Some("+2.0%"));
    assert_eq!(edge.verdict_text(0.02), "inconclusive: straddles +2.0%");
    let few = change(
        &cell("a", &runs(100.0)[..4]),
        &cell("b", &runs(100.0)),
        Better::Lower,
        0.02,
        7,
        0.95,
    );
    assert_eq!(few.verdict, Change::TooFewRuns);
    assert_eq!((few.half_width, few.ratio), (None, None));
    assert_eq!(few.resolution(), "n/a");
}

#[test]
fn the_half_width_is_half_the_interval_over_the_ratio() {
    let c = change_of(100.0, 110.0);
    let (r, lo, hi) = (c.ratio.unwrap(), c.lo.unwrap(), c.hi.unwrap());
    assert_eq!(c.half_width, Some((hi - lo) / 2.0 / r));
    // Runs spread over ±0.5% on each side: the interval of the ratio is within ±1%.
    assert!(c.half_width.unwrap() < 0.01, "{c:?}");
    let straddling = CellChange {
        ratio: Some(1.037),
        lo: Some(1.003),
        hi: Some(1.066),
        pairs: None,
        half_width: Some(lab_stats::relative_half_width(1.003, 1.066, 1.037)),
        verdict: Change::Inconclusive,
        ..c
    };
    // (1.066 − 1.003) / 2 / 1.037 = 0.0304.
    assert!((straddling.half_width.unwrap() - 0.030376).abs() < 1e-6);
    assert_eq!(straddling.resolution(), "±3.0%");
    assert_eq!(
        straddling.line(0.02),
        "b: inconclusive: 1.037 [1.003, 1.066] straddles +2.0%"
    );
    let both = CellChange {
        lo: Some(0.95),
        hi: Some(1.05),
        ..straddling.clone()
    };
    assert_eq!(both.straddles(0.02).as_deref(), Some("−2.0% and +2.0%"));
}

#[test]
fn the_summary_counts_all_four_verdicts() {
    let cells = [
        change_of(100.0, 110.0),
        change_of(100.0, 100.0),
        change_of(100.0, 100.0),
        change_of(100.0, 102.0),
    ];
    assert_eq!(
        summary(&cells, 0.02, "sessions", 0.9875),
        "4 cells in both sessions: 1 slower, 0 faster, 2 same, 1 inconclusive within ±2.0% (each interval at 98.8%, so that all 4 hold together at 95%)"
    );
}

#[test]
fn verdicts_stored_as_no_detectable_change_read_back_as_inconclusive() {
    let old: Change = serde_json::from_str("\"no_detectable_change\"").unwrap();
    assert_eq!(old, Change::Inconclusive);
    assert_eq!(serde_json::to_string(&Change::Same).unwrap(), "\"same\"");
}

#[test]
fn the_family_level_shares_the_look_level_among_the_compared_cells() {
    let (a, b) = (cell("a", &runs(100.0)), cell("b", &runs(100.0)));
    let few = cell("c", &runs(100.0)[..3]);
    let pairs = [(&a, &b), (&a, &b), (&a, &few)];
    assert!((family_level(&pairs, 0.95) - 0.975).abs() < 1e-12);
    assert!((family_level(&pairs, 0.99) - 0.995).abs() < 1e-12);
}

/// The manifest of tests/data with the clock source set as given.
fn manifest_with_clocksource(source: Option<&str>) -> Manifest {
    let text = include_str!("../../../store/tests/data/manifest.json");
    let mut m = Manifest::from_json(text.as_bytes()).expect("manifest");
    m.host.clocksource = source.map(str::to_string);
    m
}

#[test]
fn two_recorded_clock_sources_that_differ_make_a_comparison_doubtful() {
    let a = manifest_with_clocksource(Some("tsc"));
    let b = manifest_with_clocksource(Some("hpet"));
    let found = differences(&a, &b);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].what, "clock source");
    assert_eq!((found[0].a.as_str(), found[0].b.as_str()), ("tsc", "hpet"));
    assert!(found[0].invalidates);
}

#[test]
fn a_session_stored_before_clock_sources_were_recorded_is_not_said_to_differ() {
    let old = manifest_with_clocksource(None);
    let new = manifest_with_clocksource(Some("tsc"));
    assert!(differences(&old, &new).is_empty());
    assert!(differences(&new, &old).is_empty());
}

/// A cell of about `ms` whose runs waited for a CPU others had for `share` of their wall
/// time, and were slowed by all of it.
fn slowed_cell(label: &str, ms: f64, share: f64) -> CellStats {
    let stretched: Vec<f64> = runs(ms).iter().map(|v| v / (1.0 - share)).collect();
    CellStats {
        slowed: vec![share; stretched.len()],
        ..cell(label, &stretched)
    }
}

#[test]
fn a_change_the_waiting_could_explain_is_withheld_and_one_it_could_not_stands() {
    // B is A's program, its runs slowed 20% by the machine: +25% as measured, none in truth.
    let a = cell("a", &runs(100.0));
    let b = slowed_cell("b", 100.0, 0.2);
    let explained = change(&a, &b, Better::Lower, DEFAULT_THRESHOLD, 7, 0.95);
    assert_eq!(explained.verdict, Change::Inconclusive, "{explained:?}");
    assert_eq!(explained.busy, Some(0.2));
    assert!(
        (explained.ratio.unwrap() - 1.25).abs() < 1e-9,
        "the ratio as measured"
    );
    assert_eq!(
        explained.verdict_text(0.02),
        "inconclusive: machine busy (runs waited up to 20.0% of their wall time for a CPU others had)"
    );
    // B truly takes twice as long, and waited 20% besides: slower, whatever the waiting did.
    let b = slowed_cell("b", 200.0, 0.2);
    let unexplained = change(&a, &b, Better::Lower, DEFAULT_THRESHOLD, 7, 0.95);
    assert_eq!(unexplained.verdict, Change::Slower, "{unexplained:?}");
    assert_eq!(unexplained.busy, None);
}
