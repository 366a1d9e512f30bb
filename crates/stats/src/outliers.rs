//! Outlier iterations within one run: the sliding-window rule of Barrett et al. 2017.
//!
//! Barrett, Bolz-Tereick, Killick, Mount & Tratt, "Virtual Machine Warmup Blows Hot and Cold",
//! OOPSLA 2017, §4.1, mark outliers before the changepoint analysis so that a single slow
//! iteration cannot make a segment of its own. The rule implemented here is the one of their
//! tool, softdevteam/warmup_stats, `warmup/outliers.py` (`_tukey_all_outliers`, window 200 as
//! in `bin/mark_outliers_in_json`):
//!
//! - iteration `i` is judged against the window `series[max(0, i − W/2) .. min(n, i + W/2)]`
//!   (W/2 rounded down);
//! - it is an outlier when it lies strictly outside `median ± 3 × (P90 − P10)` of that window,
//!   percentiles by linear interpolation (Hyndman & Fan 1996, definition 7, as the tool's
//!   `percentile`);
//! - iterations whose window starts at 0 and is not full (the first W/2) are never outliers:
//!   that is where warm-up lies, and warm-up is what the changepoints must find.
//!
//! One adaptation, for runs of fewer than 200 iterations: the tool's window of 200 would leave
//! every iteration of a 100-iteration run unjudged (each window starts at 0 and holds under
//! 200 values), so lab uses `W = min(200, n)`. Long runs get the tool's rule unchanged; a run of
//! `n < 200` iterations is judged from iteration `n/2` on, against windows of up to `n` values.

use super::summary::quantile_sorted;

/// The sliding window of warmup_stats (`bin/mark_outliers_in_json --window`, default 200).
pub const WINDOW: usize = 200;
/// The band's width in inter-decile ranges: `median ± 3 × (P90 − P10)`.
pub const BAND_WIDTHS: f64 = 3.0;

/// Indices (ascending) of the outlier iterations of one run's in-order series, with the
/// window `min(WINDOW, n)`. Series holding a non-finite value have none.
pub fn outliers(series: &[f64]) -> Vec<usize> {
    outliers_in_window(series, window_for(series.len()))
}

/// The window used for a run of `n` iterations: the tool's 200, or the whole run when shorter.
pub fn window_for(n: usize) -> usize {
    n.min(WINDOW)
}

/// Indices (ascending) of the outliers of `series` judged with sliding windows of `window`
/// values, as described in the module documentation. Windows under two values judge nothing.
pub fn outliers_in_window(series: &[f64], window: usize) -> Vec<usize> {
    if window < 2 || series.iter().any(|y| !y.is_finite()) {
        return Vec::new();
    }
    let half = window / 2;
    let mut sorted = SortedWindow::default();
    let (mut lo, mut hi) = (0, 0);
    let mut found = Vec::new();
    for (i, &y) in series.iter().enumerate() {
        let (l, r) = bounds(i, series.len(), half);
        if l == 0 && r < window {
            continue;
        }
        for &added in &series[hi.max(l)..r] {
            sorted.insert(added);
        }
        for &gone in &series[lo..l.min(hi)] {
            sorted.remove(gone);
        }
        (lo, hi) = (l, r);
        if sorted.excludes(y) {
            found.push(i);
        }
    }
    found
}

/// The window `[l, r)` around index `i` of a series of `n` values (warmup_stats'
/// `_clamp_window_size`).
fn bounds(i: usize, n: usize, half: usize) -> (usize, usize) {
    (i.saturating_sub(half), (i + half).min(n))
}

/// The values of the current window, kept sorted as it slides.
#[derive(Default)]
struct SortedWindow {
    values: Vec<f64>,
}

impl SortedWindow {
    fn insert(&mut self, y: f64) {
        let at = self.values.partition_point(|v| v.total_cmp(&y).is_lt());
        self.values.insert(at, y);
    }

    fn remove(&mut self, y: f64) {
        if let Ok(at) = self.values.binary_search_by(|v| v.total_cmp(&y)) {
            self.values.remove(at);
        }
    }

    /// Whether `y` lies strictly outside `median ± 3 × (P90 − P10)` of the window.
    fn excludes(&self, y: f64) -> bool {
        let median = quantile_sorted(&self.values, 0.5);
        let band =
            BAND_WIDTHS * (quantile_sorted(&self.values, 0.9) - quantile_sorted(&self.values, 0.1));
        y > median + band || y < median - band
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A warm-up of five iterations, then 1.0, 1.1, 1.2, 1.0, 1.1 repeated, one blip at 15.
    fn blip_series() -> Vec<f64> {
        let mut s = vec![5.0, 4.0, 3.0, 2.0, 1.5];
        for _ in 0..3 {
            s.extend([1.0, 1.1, 1.2, 1.0, 1.1]);
        }
        s[15] = 3.0;
        s
    }

    #[test]
    fn a_blip_outside_three_inter_decile_ranges_is_an_outlier() {
        // By hand, window 10 (half 5): iteration 15 is judged on s[10..20] =
        // {1.0, 1.0, 1.0, 1.1, 1.1, 1.1, 1.1, 1.2, 1.2, 3.0}: median 1.1, P10 (h = 0.9) 1.0,
        // P90 (h = 8.1) 1.2 + 0.1 × 1.8 = 1.38, band 3 × 0.38 = 1.14: 3.0 > 2.24 is an outlier.
        // Iterations 0–4 (the warm-up) have windows starting at 0 that are not full: unjudged.
        assert_eq!(outliers_in_window(&blip_series(), 10), vec![15]);
        // With the whole run as window (20 values, half 10), iterations 0–9 are unjudged and
        // the blip is still found.
        assert_eq!(outliers(&blip_series()), vec![15]);
    }

    #[test]
    fn matches_the_warmup_stats_rule_on_a_long_run() {
        // Expected indices from an independent transcription of warmup_stats'
        // `_tukey_all_outliers` (window 200) run on the same series in Python: the blip at 50
        // lies in the unjudged first half-window, 101.6 at 399 is inside its band
        // (median 100.5, P10 100.1, P90 100.91 around 150).
        let mut s: Vec<f64> = (0..400)
            .map(|i| 100.0 + ((i * 37) % 11) as f64 * 0.1)
            .collect();
        for (i, v) in s.iter_mut().enumerate().take(20) {
            *v = 200.0 - i as f64;
        }
        s[50] = 200.0;
        s[150] = 130.0;
        s[300] = 60.0;
        s[399] = 101.6;
        assert_eq!(outliers_in_window(&s, WINDOW), vec![150, 300]);
        assert_eq!(outliers(&s), vec![150, 300]);
    }

    #[test]
    fn short_runs_are_judged_against_the_whole_run() {
        // 30 warm-up iterations, 70 steady ones, a blip at 90. The tool's window of 200 judges
        // nothing in 100 iterations (Python transcription: []); min(200, n) finds the blip.
        let mut s: Vec<f64> = (0..100)
            .map(|i| {
                if i < 30 {
                    0.82 - 0.002 * i as f64
                } else {
                    0.344 + 0.002 * ((i * 7) % 5) as f64
                }
            })
            .collect();
        s[90] = 1.5;
        assert_eq!(outliers_in_window(&s, WINDOW), Vec::<usize>::new());
        assert_eq!(outliers(&s), vec![90]);
    }

    #[test]
    fn edges_judge_nothing() {
        assert!(outliers(&[]).is_empty());
        assert!(outliers(&[1.0]).is_empty());
        assert!(outliers(&[1.0, f64::NAN, 9.0, 1.0]).is_empty());
        // A second mode is not an outlier: it widens the inter-decile range.
        let two_levels: Vec<f64> = (0..60)
            .map(|i| if i % 3 == 0 { 2.0 } else { 1.0 })
            .collect();
        assert!(outliers(&two_levels).is_empty());
    }
}
