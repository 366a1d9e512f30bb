//! Unit tests of `strip`.

use super::*;

fn wide_svg(c: &StripChart) -> Result<String, ChartError> {
    strip_svg(c, Size::Wide)
}

fn cell(label: &str, group: usize, values: Vec<f64>) -> StripCell {
    StripCell {
        label: label.into(),
        group,
        values,
        median: 10.0,
        lo: 9.0,
        hi: 11.0,
        disturbed: Vec::new(),
    }
}

fn chart(cells: Vec<StripCell>) -> StripChart {
    StripChart {
        title: "runs".into(),
        y_label: "throughput (Mops/s)".into(),
        cells,
    }
}

/// Point marks: zero-length segments inside the round-capped point paths.
fn marks(svg: &str) -> usize {
    svg.lines()
        .filter(|l| l.contains("stroke-linecap=\"round\""))
        .map(|l| l.matches("h0").count())
        .sum()
}

#[test]
fn every_distinct_run_is_one_mark() {
    // Distinct values far apart in y cannot share a pixel.
    let c = chart(vec![
        cell("a t=1", 0, vec![1.0, 50.0, 100.0]),
        cell("b t=1", 1, vec![1.0, 50.0]),
    ]);
    let svg = wide_svg(&c).unwrap();
    assert_eq!(marks(&svg), 5);
    assert!(svg.contains("a t=1") && svg.contains("b t=1"));
    // One path per group, not one element per point.
    assert_eq!(svg.matches("stroke-linecap=\"round\"").count(), 2);
}

#[test]
fn ten_thousand_points_stay_small() {
    let cells = (0..24)
        .map(|i| {
            let values = (0..417)
                .map(|k| 10.0 + (k % 2) as f64 * 8.0 + (k as f64 * 0.37).sin())
                .collect();
            cell(&format!("variant{} t={}", i / 6, i % 6), i / 6, values)
        })
        .collect();
    let svg = wide_svg(&chart(cells)).unwrap();
    assert!(svg.len() < 200_000, "{} bytes", svg.len());
    assert!(marks(&svg) > 1000);
}

#[test]
fn deterministic_and_escaped() {
    let c = chart(vec![cell("<script>alert(1)</script>", 0, vec![1.0, 2.0])]);
    let a = wide_svg(&c).unwrap();
    assert_eq!(a, wide_svg(&c).unwrap());
    assert!(a.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!a.contains("<script>"));
}

#[test]
fn degenerate_input_does_not_panic() {
    assert!(wide_svg(&chart(vec![])).unwrap().contains("no data"));
    let nan = StripCell {
        label: "x".into(),
        group: 0,
        values: vec![f64::NAN],
        median: f64::NAN,
        lo: f64::NAN,
        hi: f64::NAN,
        disturbed: Vec::new(),
    };
    assert!(wide_svg(&chart(vec![nan])).is_ok());
    // Equal values are spread by the jitter, so all five remain visible.
    let svg = wide_svg(&chart(vec![cell("flat", 3, vec![10.0; 5])])).unwrap();
    assert_eq!(marks(&svg), 5);
}

#[test]
fn extreme_values_do_not_panic() {
    let huge = cell("huge", 0, vec![-1e308, 1e308, f64::INFINITY]);
    assert!(wide_svg(&chart(vec![huge])).is_ok());
    let tiny = cell("tiny", 0, vec![5e-324, 0.0]);
    assert!(
        wide_svg(&chart(vec![StripCell {
            median: 0.0,
            lo: 0.0,
            hi: 0.0,
            ..tiny
        }]))
        .is_ok()
    );
}

#[test]
fn both_renditions_fit_their_width_with_readable_text() {
    let cells: Vec<StripCell> = (0..24)
        .map(|i| {
            let label = format!("variant{} threads={}", i / 6, 1 << (i % 6));
            cell(&label, i / 6, vec![10.0 + i as f64, 12.0, 14.5])
        })
        .collect();
    for size in [Size::Wide, Size::Narrow] {
        let svg = strip_svg(&chart(cells.clone()), size).unwrap();
        points::assert_rendition(&svg, size);
        assert_eq!(marks(&svg), 24 * 3, "{size:?}");
        assert!(svg.contains(">variant3 threads=32<"), "{size:?}");
    }
}

#[test]
fn long_labels_wrap_and_keep_their_full_text() {
    let long = "a cell label much too long to fit under a column however it is slanted, \
                and too long even for two lines across the screen of a phone, which is saying something";
    let c = chart(vec![
        cell(long, 0, vec![1.0, 2.0]),
        cell("short", 1, vec![3.0]),
    ]);
    for size in [Size::Wide, Size::Narrow] {
        let svg = strip_svg(&c, size).unwrap();
        assert!(svg.contains(&format!("<title>{long}</title>")), "{size:?}");
        assert!(
            svg.contains(">a cell label much"),
            "{size:?}: wrapped at a word"
        );
    }
}

#[test]
fn no_interval_no_box() {
    let boxed = |lo: f64, hi: f64| {
        let c = chart(vec![StripCell {
            lo,
            hi,
            ..cell("a", 0, vec![9.0, 10.0, 11.0])
        }]);
        strip_svg(&c, Size::Wide).unwrap()
    };
    // The CI box is the only fill at 20% opacity.
    let fill = "opacity=\"0.2\"";
    assert_eq!(boxed(9.0, 11.0).matches(fill).count(), 1);
    let svg = boxed(f64::NAN, f64::NAN);
    assert!(!svg.contains(fill));
    assert_eq!(marks(&svg), 3, "the runs are still drawn");
    assert!(svg.contains("<line"), "and the median");
}
