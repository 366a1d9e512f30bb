//! Unit tests of `scaling`.

use super::super::points::count_marks as marks;
use super::*;

fn wide(c: &ScalingChart) -> Result<String, ChartError> {
    scaling_svg(c, Size::Wide)
}

fn chart(runs: usize, log_x: bool) -> ScalingChart {
    let names = ["nonfair", "fair", "spin", "<script>alert(1)</script>"];
    let series = names
        .iter()
        .enumerate()
        .map(|(i, name)| Series {
            name: name.to_string(),
            points: [1.0, 2.0, 3.0, 4.0, 8.0, 16.0]
                .iter()
                .map(|&x| {
                    let center = 50.0 / (x + i as f64);
                    let raw = (0..runs)
                        .map(|k| center * (1.0 + 0.02 * (k % 7) as f64))
                        .collect();
                    SeriesPoint {
                        x,
                        center,
                        lo: center * 0.97,
                        hi: center * 1.05,
                        raw,
                    }
                })
                .collect(),
        })
        .collect();
    ScalingChart {
        title: "scaling".into(),
        x_label: "threads".into(),
        y_label: "throughput (Mops/s)".into(),
        log_x,
        series,
        marks: Vec::new(),
    }
}

#[test]
fn names_ticks_and_labels_appear_escaped() {
    let svg = wide(&chart(5, true)).unwrap();
    // plotters writes text as ">\nTEXT\n</text>".
    for s in [
        "nonfair",
        "fair",
        "spin",
        "threads",
        "throughput (Mops/s)",
        ">\n16\n<",
        ">\n3\n<",
    ] {
        assert!(svg.contains(s), "{s} missing");
    }
    assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !svg.contains("<script>"));
}

#[test]
fn raw_runs_are_one_path_per_series() {
    let svg = wide(&chart(5, false)).unwrap();
    assert_eq!(svg.matches("stroke-linecap=\"round\"").count(), 4);
    // 4 series × 6 cells × 5 runs, distinct values and jitter offsets: no pixel collides.
    assert_eq!(marks(&svg), 120);
}

#[test]
fn ten_thousand_runs_stay_small_and_deterministic() {
    let c = chart(417, true);
    let svg = wide(&c).unwrap();
    assert!(svg.len() < 200_000, "{} bytes", svg.len());
    assert_eq!(svg, wide(&c).unwrap());
}

fn pt(x: f64, center: f64, raw: Vec<f64>) -> SeriesPoint {
    SeriesPoint {
        x,
        center,
        lo: center,
        hi: center,
        raw,
    }
}

/// A chart of one series with the given points.
fn single(log_x: bool, points: Vec<SeriesPoint>) -> ScalingChart {
    let series = vec![Series {
        name: "one".into(),
        points,
    }];
    ScalingChart {
        series,
        ..chart(0, log_x)
    }
}

#[test]
fn degenerate_input_does_not_panic() {
    let empty = ScalingChart {
        series: vec![],
        ..chart(0, true)
    };
    assert!(wide(&empty).unwrap().contains("no data"));
    for log_x in [false, true] {
        assert!(wide(&single(log_x, vec![pt(4.0, 7.0, vec![7.0; 3])])).is_ok());
        assert!(wide(&single(log_x, vec![pt(1.0, 0.0, vec![0.0])])).is_ok());
    }
    let bad = vec![
        pt(0.0, 1.0, vec![1.0]),
        pt(-2.0, 1.0, vec![]),
        SeriesPoint {
            x: 2.0,
            center: f64::NAN,
            lo: f64::NAN,
            hi: 3.0,
            raw: vec![f64::NAN, 0.0],
        },
    ];
    let svg = wide(&single(true, bad)).unwrap();
    assert_eq!(marks(&svg), 1, "only the finite raw value at a positive x");
    let nan_x = single(false, vec![pt(f64::NAN, 1.0, vec![])]);
    assert!(wide(&nan_x).unwrap().contains("no data"));
}

#[test]
fn both_renditions_fit_their_width_with_readable_text() {
    for log_x in [false, true] {
        let c = chart(5, log_x);
        for size in [Size::Wide, Size::Narrow] {
            points::assert_rendition(&scaling_svg(&c, size).unwrap(), size);
        }
    }
    let many = ScalingChart {
        series: (0..9)
            .map(|i| Series {
                name: format!("variant with a fairly long name number {i}"),
                ..chart(3, true).series[0].clone()
            })
            .collect(),
        ..chart(3, true)
    };
    let narrow = scaling_svg(&many, Size::Narrow).unwrap();
    points::assert_rendition(&narrow, Size::Narrow);
    assert!(narrow.contains("number 8"), "every legend entry is drawn");
}

#[test]
fn many_x_values_get_ticks_that_do_not_collide() {
    let xs: Vec<f64> = (1..=12).map(|k| f64::from(k * 100)).collect();
    let c = single(false, xs.iter().map(|x| pt(*x, 1.0, vec![1.0])).collect());
    let narrow = scaling_svg(&c, Size::Narrow).unwrap();
    let wide = wide(&c).unwrap();
    assert!(wide.contains(">\n1100\n<"));
    assert!(!narrow.contains(">\n200\n<"), "neighbouring labels thinned");
}

#[test]
fn no_interval_no_bar() {
    // Error bars are the only one-pixel lines in the series colour.
    let bar = format!(
        "stroke=\"{}\" stroke-width=\"1\"",
        style::hex(style::series_color(0))
    );
    let with = single(
        false,
        vec![pt(1.0, 5.0, vec![5.0]), pt(2.0, 6.0, vec![6.0])],
    );
    let with = ScalingChart {
        series: vec![Series {
            name: "one".into(),
            points: with.series[0]
                .points
                .iter()
                .map(|p| SeriesPoint {
                    lo: p.center - 1.0,
                    hi: p.center + 1.0,
                    ..p.clone()
                })
                .collect(),
        }],
        ..with
    };
    assert_eq!(wide(&with).unwrap().matches(&bar).count(), 6);
    let mut without = with.clone();
    without.series[0].points.iter_mut().for_each(|p| {
        p.lo = f64::NAN;
        p.hi = f64::NAN;
    });
    let svg = wide(&without).unwrap();
    assert_eq!(svg.matches(&bar).count(), 0);
    assert_eq!(points::count_marks(&svg), 2, "the runs are still drawn");
}

/// The points of every polyline drawn in the first series' colour two pixels wide: the
/// lines through the medians, and the legend's.
fn median_lines(svg: &str) -> Vec<usize> {
    let colour = style::series_color(0);
    let stroke = format!(
        "stroke=\"#{:02X}{:02X}{:02X}\"",
        colour.0, colour.1, colour.2
    );
    svg.split("<polyline")
        .skip(1)
        .filter(|p| {
            let element = &p[..p.find("/>").unwrap_or(p.len())];
            element.contains(&stroke) && element.contains("stroke-width=\"2\"")
        })
        .map(|p| {
            let points = p.split("points=\"").nth(1).unwrap_or("");
            points[..points.find('"').unwrap_or(0)]
                .split_whitespace()
                .count()
        })
        .collect()
}

#[test]
fn a_cell_with_no_valid_run_breaks_the_line_and_is_marked() {
    let missing = SeriesPoint {
        x: 3.0,
        center: f64::NAN,
        lo: f64::NAN,
        hi: f64::NAN,
        raw: vec![],
    };
    let points = vec![
        pt(1.0, 9.0, vec![9.0]),
        pt(2.0, 8.0, vec![8.0]),
        missing,
        pt(4.0, 6.0, vec![6.0]),
        pt(8.0, 5.0, vec![5.0]),
    ];
    let svg = wide(&single(false, points.clone())).unwrap();
    // Two stretches of two medians, none across x = 3; then the legend's sample line.
    assert_eq!(median_lines(&svg), vec![2, 2, 2]);
    assert!(svg.contains(MISSING), "the cell is marked: {svg}");
    let mut whole = points;
    whole[2] = pt(3.0, 7.0, vec![7.0]);
    let svg = wide(&single(false, whole)).unwrap();
    assert_eq!(median_lines(&svg), vec![5, 2]);
    assert!(!svg.contains(MISSING));
}
