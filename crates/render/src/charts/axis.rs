//! Axis helpers: "nice" linear and log ticks, their labels (each exactly its tick's value,
//! written by [`lab_config::format`]), ticks thinned so labels never collide, an f64 axis with
//! our own ticks, and the value-axis setup (ticks, padded range, labels) the charts share.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;

use super::style::TICK;

/// Room a tick label keeps from its neighbours, in pixels.
const TICK_GAP: f64 = 8.0;

/// A value axis: ticks, the padded range they sit in, and the step between ticks.
pub(super) struct ValueAxis {
    pub ticks: Vec<f64>,
    pub range: (f64, f64),
    pub step: f64,
}

impl ValueAxis {
    /// About six nice ticks enclosing `[lo, hi]`.
    pub(super) fn new(lo: f64, hi: f64) -> ValueAxis {
        ValueAxis::with_target(lo, hi, 6)
    }

    /// About `target` nice ticks enclosing `[lo, hi]`.
    pub(super) fn with_target(lo: f64, hi: f64, target: usize) -> ValueAxis {
        let (ticks, step) = nice_ticks(lo, hi, target);
        let (first, last) = (ticks[0], ticks[ticks.len() - 1]);
        ValueAxis {
            range: pad_range(first, last),
            ticks,
            step,
        }
    }

    pub(super) fn coord(&self) -> Ticked<RangedCoordf64> {
        Ticked::new(self.range.0..self.range.1, self.ticks.clone())
    }

    /// The label of tick `v`: exactly its value, with the axis's one SI prefix.
    pub(super) fn label(&self, v: f64) -> String {
        let largest = self.ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
        lab_config::format::axis_label(v, largest, self.step)
    }

    /// Room for the tick labels plus the rotated axis title.
    pub(super) fn label_area(&self) -> i32 {
        let widest = self
            .ticks
            .iter()
            .map(|v| TICK.width(&self.label(*v)))
            .fold(0.0, f64::max);
        widest.ceil() as i32 + 34
    }
}

/// Ticks along an axis and how their labels are written; every label is exactly its
/// tick's value.
pub(super) struct Ticks {
    pub values: Vec<f64>,
    labels: Labels,
}

enum Labels {
    /// Evenly spaced ticks: one prefix for the axis, the decimals the step needs.
    Even { largest: f64, step: f64 },
    /// Ticks at given values (parameter values, log ladders): each written as itself.
    Exact,
}

impl Ticks {
    /// Ticks `step` apart, labelled alike (`0`, `0.5`, `1.0`).
    pub(super) fn even(values: Vec<f64>, step: f64) -> Ticks {
        let largest = values.iter().fold(0.0f64, |m, t| m.max(t.abs()));
        Ticks {
            values,
            labels: Labels::Even { largest, step },
        }
    }

    /// Ticks at arbitrary values, each labelled with exactly its value (`0.5`, `1.5`, `16`).
    pub(super) fn exact(values: Vec<f64>) -> Ticks {
        Ticks {
            values,
            labels: Labels::Exact,
        }
    }

    pub(super) fn label(&self, v: f64) -> String {
        match self.labels {
            Labels::Even { largest, step } => lab_config::format::axis_label(v, largest, step),
            Labels::Exact => exact_label(v),
        }
    }

    /// Keeps, left to right, the ticks whose labels clear the last kept label by a gap,
    /// so labels never overlap however narrow the axis; `px` maps a value to its pixel.
    pub(super) fn spaced(self, px: impl Fn(f64) -> f64) -> Ticks {
        let mut kept = Vec::new();
        let mut last_end = f64::NEG_INFINITY;
        for v in &self.values {
            let half = TICK.width(&self.label(*v)) / 2.0;
            let centre = px(*v);
            if centre - half >= last_end + TICK_GAP {
                kept.push(*v);
                last_end = centre + half;
            }
        }
        Ticks {
            values: kept,
            ..self
        }
    }
}

/// `v` written exactly, with the SI prefix its own size calls for: `0.5`, `1.5`, `16`, `100k`.
pub(super) fn exact_label(v: f64) -> String {
    lab_config::format::axis_label(v, v.abs(), v.abs())
}

/// Maps values in `[lo, hi]` to pixels `0..width` on a linear or logarithmic axis, to
/// judge label spacing before the chart is built.
pub(super) fn pixel_scale(lo: f64, hi: f64, width: f64, log: bool) -> impl Fn(f64) -> f64 {
    let f = move |v: f64| if log { v.ln() } else { v };
    let (a, b) = (f(lo), f(hi));
    move |v| {
        if b > a {
            (f(v) - a) / (b - a) * width
        } else {
            0.0
        }
    }
}

/// Smallest and largest finite value, or `None` when there is none.
pub(super) fn extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
    (lo <= hi).then_some((lo, hi))
}

/// Powers of two spanning `[min, max]`, thinned to about eight.
pub(super) fn log2_ticks(min: f64, max: f64) -> Vec<f64> {
    let (a, b) = (min.log2().floor() as i32, max.log2().ceil() as i32);
    let every = ((b - a) / 8).max(1) as usize;
    (a..=b).step_by(every).map(|e| 2f64.powi(e)).collect()
}

/// "Nice" linear ticks (1, 2, 5 × 10^k) covering `[lo, hi]`, about `target` of them.
/// Steps of 2.5 are left out: their ticks (125) need one more digit than the step suggests.
/// Returns the ticks and the step; the first and last tick enclose the range.
pub(super) fn nice_ticks(lo: f64, hi: f64, target: usize) -> (Vec<f64>, f64) {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, lo + 1.0)
    };
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    // Spans too small or too large for f64 steps: fall back to the bounds
    // rather than iterate over billions of ticks (or divide by zero).
    if !(step.is_finite() && step > 0.0 && (hi - lo) / step < 1000.0) {
        return (vec![lo, hi], (hi - lo).abs());
    }
    // The tolerance keeps a bound that sits on a tick (e.g. 0) from adding a tick beyond it.
    let first = (lo / step + 1e-9).floor() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    // Multiplying the integer index (not accumulating) avoids 0.30000000000000004-style drift.
    let ticks = (first..=last).map(|k| clean(k as f64 * step)).collect();
    (ticks, step)
}

/// Widens `[lo, hi]` by 2.5% each side so marks on the extreme ticks (a median
/// of 0.2 on a 0-based axis) are not drawn over the axis line.
pub(super) fn pad_range(lo: f64, hi: f64) -> (f64, f64) {
    let pad = (hi - lo) * 0.025;
    (lo - pad, hi + pad)
}

/// Rounds away floating-point noise from a computed tick value.
fn clean(v: f64) -> f64 {
    let s = format!("{v:.10e}");
    s.parse().unwrap_or(v)
}

/// Ticks for a logarithmic axis over `[lo, hi]` (both > 0): the coarsest of
/// 1–10, 1–2–5, 1–1.5–2–3–5–7 or a fine 1.1…9 ladder per decade giving ≥ 4 ticks.
pub(super) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    const LADDERS: [&[f64]; 4] = [
        &[1.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0],
        &[
            1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0,
        ],
    ];
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    // Absurd spans (ratios of 1e-200…1e200) get one tick every few decades.
    let decades = (hi.log10().ceil() - lo.log10().floor()) as usize;
    if decades > 12 {
        return ladder_ticks(&[1.0], lo, hi)
            .into_iter()
            .step_by(decades.div_ceil(10))
            .collect();
    }
    let mut best = Vec::new();
    for ladder in LADDERS {
        best = ladder_ticks(ladder, lo, hi);
        if best.len() >= 4 {
            break;
        }
    }
    best
}

fn ladder_ticks(ladder: &[f64], lo: f64, hi: f64) -> Vec<f64> {
    let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mut out = Vec::new();
    for d in d0..=d1 {
        for m in ladder {
            let v = clean(m * 10f64.powi(d));
            if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                out.push(v);
            }
        }
    }
    out
}

/// An f64 axis with ticks exactly where we put them. plotters' `WithKeyPoints`
/// loses the default label formatting of linear f64 axes, hence this wrapper.
pub(super) struct Ticked<R> {
    inner: R,
    ticks: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Ticked<R> {
    pub(super) fn new(inner: impl Into<R>, ticks: Vec<f64>) -> Self {
        Ticked {
            inner: inner.into(),
            ticks,
        }
    }
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    /// A value far outside a narrow range (a cell of one run, drawn on an axis a hair wide)
    /// would map past `i32` and overflow in plotters: it is held within ten widths of the
    /// range, already far off any chart.
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let r = self.inner.range();
        let (lo, hi) = (r.start.min(r.end), r.start.max(r.end));
        let margin = 10.0 * (hi - lo);
        let held = if margin > 0.0 {
            value.clamp(lo - margin, hi + margin)
        } else {
            *value
        };
        self.inner.map(&held, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Light (minor) grid lines are not wanted; bold points are the ticks.
        if hint.weight().allow_light_points() {
            return Vec::new();
        }
        // Ticks outside the range would be drawn past the axis ends.
        let r = self.inner.range();
        let (lo, hi) = (r.start.min(r.end), r.start.max(r.end));
        self.ticks
            .iter()
            .copied()
            .filter(|v| *v >= lo && *v <= hi)
            .collect()
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_labels_are_the_values() {
        let labels: Vec<String> = [1.0, 2.0, 4.0, 8.0, 16.0, 0.5, 1.5, 0.01, 1.1, 1e5, 2e-5]
            .iter()
            .map(|v| exact_label(*v))
            .collect();
        assert_eq!(
            labels,
            [
                "1", "2", "4", "8", "16", "0.5", "1.5", "0.01", "1.1", "100k", "20µ"
            ]
        );
        let ticks = Ticks::exact(log2_ticks(0.5, 1024.0));
        for v in &ticks.values {
            assert_eq!(
                lab_config::format::parse_prefixed(&ticks.label(*v)),
                Some(*v)
            );
        }
        for v in log_ticks(0.85, 1.3)
            .into_iter()
            .chain(log_ticks(0.002, 30.0))
        {
            let back = lab_config::format::parse_prefixed(&exact_label(v)).unwrap();
            assert!(
                (back - v).abs() <= v * 1e-9,
                "{v} labelled {}",
                exact_label(v)
            );
        }
    }

    #[test]
    fn spaced_ticks_do_not_collide() {
        let values: Vec<f64> = (1..=12).map(f64::from).collect();
        let px = pixel_scale(1.0, 12.0, 120.0, false);
        let kept = Ticks::exact(values.clone()).spaced(&px);
        assert!(kept.values.len() < values.len() && kept.values[0] == 1.0);
        for w in kept.values.windows(2) {
            assert!(px(w[1]) - px(w[0]) >= 16.0, "{:?}", kept.values);
        }
        let roomy = Ticks::exact(values.clone()).spaced(pixel_scale(1.0, 12.0, 800.0, false));
        assert_eq!(roomy.values, values);
        let even = Ticks::even(vec![0.0, 0.5, 1.0], 0.5);
        assert_eq!(even.label(1.0), "1.0");
    }

    #[test]
    fn nice_ticks_cover_range_without_noise() {
        let (t, step) = nice_ticks(0.0, 51.3, 6);
        assert_eq!(step, 10.0);
        assert_eq!(t, vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
        let (t, _) = nice_ticks(0.1, 0.7, 6);
        assert!(t.contains(&0.3), "{t:?}");
        let (t, _) = nice_ticks(5.0, 5.0, 6);
        assert!(t.len() >= 2);
    }

    #[test]
    fn log_ticks_pick_a_usable_density() {
        assert_eq!(
            log_ticks(0.01, 1000.0),
            vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
        );
        let narrow = log_ticks(0.85, 1.3);
        assert!(narrow.len() >= 4 && narrow.contains(&1.0), "{narrow:?}");
        assert!(log_ticks(0.0, 1.0).is_empty());
        assert!(log_ticks(1.0, f64::INFINITY).is_empty());
        assert!(log_ticks(1e-200, 1e200).len() <= 12);
    }

    #[test]
    fn extreme_spans_give_few_ticks() {
        for (lo, hi) in [
            (-1e308, 1e308),
            (1.0, 1.0 + 1e-15),
            (0.0, 5e-324),
            (1e300, 1e300),
        ] {
            let (t, _) = nice_ticks(lo, hi, 6);
            assert!(!t.is_empty() && t.len() < 1000, "{lo} {hi}: {}", t.len());
        }
    }

    #[test]
    fn value_axis_and_extent() {
        let a = ValueAxis::new(0.0, 51.0);
        assert!(a.range.0 < 0.0 && a.range.1 > 60.0);
        assert_eq!(a.label(20.0), "20");
        assert_eq!(extent([f64::NAN, 3.0, -1.0]), Some((-1.0, 3.0)));
        assert_eq!(extent([f64::NAN]), None);
        assert_eq!(log2_ticks(1.0, 16.0), vec![1.0, 2.0, 4.0, 8.0, 16.0]);
    }

    proptest::proptest! {
        /// Every tick label reads back as its tick's value, to within the label's last digit.
        #[test]
        fn tick_labels_parse_back(lo in -1e9f64..1e9, span_exp in -6i32..9, mant in 1.0f64..10.0) {
            let span = mant * 10f64.powi(span_exp) * lo.abs().max(1e-3);
            let (ticks, step) = nice_ticks(lo, lo + span, 6);
            let labels = lab_config::format::axis_labels(&ticks, step);
            for (t, l) in ticks.iter().zip(&labels) {
                let back = lab_config::format::parse_prefixed(l).expect("label parses");
                proptest::prop_assert!((back - t).abs() <= step * 1e-6,
                    "tick {} label {} reads {} (step {})", t, l, back, step);
            }
        }
    }
}
