//! Unit tests of `forest`.

use super::*;

fn wide(c: &ForestChart) -> Result<String, ChartError> {
    forest_svg(c, Size::Wide)
}

fn row(label: &str, ratio: f64, threshold: Option<f64>, verdict: Verdict) -> ForestRow {
    ForestRow {
        label: label.into(),
        ratio,
        lo: ratio * 0.95,
        hi: ratio * 1.05,
        threshold,
        verdict,
    }
}

fn chart(rows: Vec<ForestRow>) -> ForestChart {
    ForestChart {
        title: "checks".into(),
        x_label: "ratio a / b".into(),
        rows,
    }
}

#[test]
fn rows_labels_and_verdicts_appear() {
    let c = chart(vec![
        row("spin vs nonfair t=1", 1.47, Some(1.1), Verdict::Pass),
        row("fair vs nonfair t=2", 0.024, Some(0.9), Verdict::Fail),
        row("treiber vs spin t=4", 0.64, None, Verdict::Inconclusive),
        row(
            "<script>alert(1)</script>",
            f64::NAN,
            Some(1.0),
            Verdict::NotRun,
        ),
    ]);
    let svg = wide(&c).unwrap();
    for s in [
        "spin vs nonfair t=1",
        "PASS",
        "FAIL",
        "INCONCLUSIVE",
        "NOT RUN",
        "1.47 [1.40, 1.54]",
    ] {
        assert!(svg.contains(s), "{s} missing");
    }
    assert!(svg.contains("&lt;script&gt;") && !svg.contains("<script>"));
    assert!(svg.contains("ratio a / b (log scale)"));
    assert_eq!(svg, wide(&c).unwrap());
}

#[test]
fn x_extent_includes_one_and_thresholds() {
    let (lo, hi) = x_extent(&[row("a", 2.0, Some(3.0), Verdict::Pass)]);
    assert!(lo < 1.0 && hi > 3.0 * 1.05, "{lo} {hi}");
    let (lo, hi) = x_extent(&[row("a", -1.0, Some(0.0), Verdict::Fail)]);
    assert!(lo < 1.0 && hi > 1.0);
}

#[test]
fn degenerate_input_does_not_panic() {
    assert!(wide(&chart(vec![])).unwrap().contains("no checks"));
    let bad = ForestRow {
        label: "x".into(),
        ratio: 0.0,
        lo: -1.0,
        hi: f64::INFINITY,
        threshold: Some(f64::NAN),
        verdict: Verdict::Fail,
    };
    assert!(wide(&chart(vec![bad])).is_ok());
    assert!(wide(&chart(vec![row("one", 1.0, Some(1.0), Verdict::Pass)])).is_ok());
}

fn checks() -> ForestChart {
    chart(vec![
        row(
            "non-fair at 2 threads is under half of 1 thread",
            0.384,
            Some(0.5),
            Verdict::Pass,
        ),
        row(
            "Treiber keeps at least a tenth of its one-thread throughput at 16 threads",
            0.08,
            Some(0.1),
            Verdict::Fail,
        ),
        row("spin beats nonfair", 1.02, Some(1.1), Verdict::Inconclusive),
        row(
            "ticket lock at 64 threads",
            f64::NAN,
            Some(1.0),
            Verdict::NotRun,
        ),
    ])
}

#[test]
fn long_names_wrap_at_words_with_a_tooltip_when_cut() {
    for size in [Size::Wide, Size::Narrow] {
        let svg = forest_svg(&checks(), size).unwrap();
        points::assert_rendition(&svg, size);
        assert!(
            !svg.contains("of …") && !svg.contains("thr…"),
            "{size:?}: cut mid-word"
        );
        assert!(
            svg.contains(">non-fair at 2 threads is") || svg.contains(">non-fair at 2 threads")
        );
        // Text that was shortened keeps its full wording as a tooltip.
        for title in svg.split("<title>").skip(1) {
            let full = title.split("</title>").next().unwrap();
            assert!(checks().rows.iter().any(|r| r.label == full), "{full}");
        }
    }
}

#[test]
fn verdicts_use_the_page_colours() {
    let svg = wide(&checks()).unwrap();
    for (word, colour) in [
        ("PASS", style::VERDICT_PASS),
        ("FAIL", style::VERDICT_FAIL),
        ("INCONCLUSIVE", style::VERDICT_INCONCLUSIVE),
        ("NOT RUN", style::VERDICT_NOT_RUN),
    ] {
        let hex = style::hex(colour);
        assert!(
            svg.contains(&format!("fill=\"{hex}\">{word}</text>")),
            "{word} not in {hex}"
        );
    }
}

#[test]
fn no_interval_no_bar() {
    let bar = format!(
        "stroke=\"{}\" stroke-width=\"3\"",
        style::hex(style::VERDICT_PASS)
    );
    let with = chart(vec![row("a", 2.0, None, Verdict::Pass)]);
    assert_eq!(wide(&with).unwrap().matches(&bar).count(), 1);
    let mut without = with.clone();
    without.rows[0].lo = f64::NAN;
    without.rows[0].hi = f64::NAN;
    let svg = wide(&without).unwrap();
    assert_eq!(svg.matches(&bar).count(), 0);
    assert!(svg.contains("<circle"), "the ratio is still drawn");
    assert!(svg.contains(">2.00</text>"));
}

#[test]
fn control_characters_never_reach_the_svg() {
    let c = chart(vec![row(
        "red \u{1b}[31m bell \u{7}",
        2.0,
        None,
        Verdict::Pass,
    )]);
    for size in [Size::Wide, Size::Narrow] {
        let svg = forest_svg(&c, size).unwrap();
        assert!(!svg.contains('\u{1b}') && !svg.contains('\u{7}'));
        assert!(svg.contains("red \u{FFFD}[31m bell \u{FFFD}"));
    }
}

#[test]
fn the_key_breaks_between_items() {
    assert_eq!(key_lines(2000.0).len(), 1);
    let narrow = key_lines(336.0);
    assert!(narrow.len() > 1);
    assert_eq!(narrow.join(KEY_SEPARATOR), KEY.join(KEY_SEPARATOR));
}

#[test]
fn log_ticks_read_as_their_values() {
    let svg = wide(&chart(vec![row("a", 16.0, Some(0.5), Verdict::Pass)])).unwrap();
    for tick in ["0.5", "1", "2", "5", "10"] {
        assert!(svg.contains(&format!(">\n{tick}\n<")), "tick {tick}");
    }
}
