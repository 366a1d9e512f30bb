//! Exact Theil–Sen slope in O(n log n) time per step and O(n) memory, for series too long to
//! hold every pairwise slope (5·10⁹ of them at 100,000 runs).
//!
//! Slope selection by randomized interval contraction (Matoušek 1991, Inf. Process. Lett.
//! 39:183; Dillencourt, Mount & Netanyahu 1992, Int. J. Comput. Geom. Appl. 2:1): the number
//! of pairwise slopes at or below `t` is an inversion count of the points ordered by x, keyed
//! by y − t·x, counted by merge sort ([`super::inversions`]). A seeded sample of slopes
//! brackets the wanted rank, bisection narrows the bracket until at most a few n slopes lie
//! inside, and those are listed (the pairs whose order by y − lo·x and by y − hi·x differ) and
//! selected from. The answer is one of the computed slopes, so it equals the all-pairs median
//! unless two slopes differ by less than the rounding of y − t·x.

use super::inversions::{sort_counting, sort_visiting};
use rand::Rng;

/// Slopes sampled to bracket the wanted rank: two a point, at least 4,096 and at most 65,536.
const SAMPLE: usize = 1 << 16;
const SAMPLE_MIN: usize = 1 << 12;
const SAMPLE_PER_POINT: usize = 2;
/// Half-width of the sampled bracket in sample standard deviations of a rank (√(r/4)).
const BRACKET_SDS: f64 = 8.0;
/// Slopes listed at most per point once the bracket is narrow.
const LISTED_PER_POINT: u64 = 4;

/// Points sorted by x ascending (equal x: y descending), with what the counts need.
pub(super) struct Points {
    x: Vec<f64>,
    y: Vec<f64>,
    /// Pairs with equal x: they have no slope.
    same_x_pairs: u64,
    /// Pairs with a slope.
    pairs: u64,
}

impl Points {
    pub(super) fn new(xs: &[f64], ys: &[f64]) -> Points {
        let mut pts: Vec<(f64, f64)> = xs.iter().copied().zip(ys.iter().copied()).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut same_x_pairs = 0u64;
        let mut i = 0;
        while i < pts.len() {
            let run = pts[i..].iter().take_while(|p| p.0 == pts[i].0).count() as u64;
            same_x_pairs += run * (run - 1) / 2;
            i += run as usize;
        }
        let n = pts.len() as u64;
        Points {
            x: pts.iter().map(|p| p.0).collect(),
            y: pts.iter().map(|p| p.1).collect(),
            same_x_pairs,
            pairs: n * n.saturating_sub(1) / 2 - same_x_pairs,
        }
    }

    pub(super) fn pairs(&self) -> u64 {
        self.pairs
    }

    fn slope(&self, i: usize, j: usize) -> f64 {
        (self.y[j] - self.y[i]) / (self.x[j] - self.x[i])
    }

    /// Slopes at or below `t`: pairs i < j (x order) with y_i − t·x_i ≥ y_j − t·x_j, less the
    /// pairs with equal x (ordered by y descending, so all of them are counted).
    fn at_or_below(&self, t: f64, keys: &mut Vec<f64>, scratch: &mut Vec<f64>) -> u64 {
        keys.clear();
        keys.extend(self.x.iter().zip(&self.y).map(|(x, y)| y - t * x));
        sort_counting(keys, scratch, false, &f64::total_cmp) - self.same_x_pairs
    }

    /// Slopes strictly below `t`, for x all distinct: pairs i < j with y_i − t·x_i > y_j − t·x_j.
    fn strictly_below(&self, t: f64, keys: &mut Vec<f64>, scratch: &mut Vec<f64>) -> u64 {
        keys.clear();
        keys.extend(self.x.iter().zip(&self.y).map(|(x, y)| y - t * x));
        sort_counting(keys, scratch, true, &f64::total_cmp)
    }

    /// Where the slopes equal to `v` hold rank `k` (x all distinct): `v`, and `v` again as
    /// the next rank when that is `v` too. Ties of the values make many slopes exactly equal
    /// (0 for runs that took the same clock ticks), and no bracket narrower than one value
    /// can split them: the counts at `v` decide the rank at once instead.
    fn mass_at(
        &self,
        v: f64,
        k: u64,
        keys: &mut Vec<f64>,
        scratch: &mut Vec<f64>,
    ) -> Option<(f64, Option<f64>)> {
        if self.same_x_pairs != 0 || self.strictly_below(v, keys, scratch) > k {
            return None;
        }
        let at_or_below = self.at_or_below(v, keys, scratch);
        (at_or_below > k).then_some((v, (k + 1 < at_or_below).then_some(v)))
    }

    /// Slopes strictly below and strictly above `t`, for x all distinct (test only).
    #[cfg(test)]
    pub(super) fn count_around(&self, t: f64) -> (u64, u64) {
        assert_eq!(self.same_x_pairs, 0);
        let mut keys: Vec<f64> = self.x.iter().zip(&self.y).map(|(x, y)| y - t * x).collect();
        let below = sort_counting(&mut keys.clone(), &mut Vec::new(), true, &f64::total_cmp);
        let at_or_below = sort_counting(&mut keys, &mut Vec::new(), false, &f64::total_cmp);
        (below, self.pairs - at_or_below)
    }

    /// The extreme slopes: both are slopes of pairs adjacent in x, because the slope of i, k
    /// is a weighted mean of those of i, j and j, k when x_i < x_j < x_k.
    fn extremes(&self) -> (f64, f64) {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let groups = self.x_groups();
        for w in groups.windows(2) {
            let (a, b) = ((w[0].0, w[0].1), (w[1].0, w[1].1));
            // Within a group y falls, so its first point has the largest y and its last the
            // smallest.
            lo = lo.min(self.slope(a.0, b.1 - 1));
            hi = hi.max(self.slope(a.1 - 1, b.0));
        }
        (lo, hi)
    }

    /// Index ranges of equal x.
    fn x_groups(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.x.len() {
            let run = self.x[i..].iter().take_while(|&&x| x == self.x[i]).count();
            out.push((i, i + run));
            i += run;
        }
        out
    }
}

/// A bracket (lo, hi] holding slope rank `k`, with the number of slopes at or below each end.
#[derive(Clone, Copy, Debug)]
struct Bracket {
    lo: f64,
    hi: f64,
    below_lo: u64,
    below_hi: u64,
}

impl Bracket {
    /// The bracket cut at `t` (lo < t < hi), with `below` slopes at or below `t`: the side
    /// that still holds rank `k`.
    fn cut(self, t: f64, below: u64, k: u64) -> Bracket {
        if below > k {
            Bracket {
                hi: t,
                below_hi: below,
                ..self
            }
        } else {
            Bracket {
                lo: t,
                below_lo: below,
                ..self
            }
        }
    }
}

/// `b` narrowed around rank `k` by interpolation (regula falsi on the counts): where the
/// bracket is narrow the slopes in it are spread nearly evenly, so rank `k` lies near the
/// same fraction of the way from `lo` to `hi` as of the way from `below_lo` to `below_hi`.
/// The bracket is cut on either side of that estimate, about `limit / 2` slopes apart, so
/// one step narrows it many times where halving would narrow it twice. An end that would
/// not lie strictly inside is not counted; the caller halves a bracket this narrowed little.
fn interpolated(
    points: &Points,
    k: u64,
    b: Bracket,
    limit: u64,
    keys: &mut Vec<f64>,
    scratch: &mut Vec<f64>,
) -> Bracket {
    let width = (b.below_hi - b.below_lo) as f64;
    let at = ((k - b.below_lo) as f64 + 0.5) / width;
    let half = (limit as f64 / 4.0 / width).max(1.0 / 256.0);
    let mut out = b;
    for fraction in [at - half, at + half] {
        if fraction <= 0.0 || fraction >= 1.0 {
            continue;
        }
        let t = b.lo + (b.hi - b.lo) * fraction;
        if t > out.lo && t < out.hi {
            out = out.cut(t, points.at_or_below(t, keys, scratch), k);
        }
    }
    out
}

/// The slope of rank `k` (0-based, ascending) among all pairs with distinct x, and the slope
/// of rank `k + 1` when the slopes listed for rank `k` hold it too (`None` otherwise, or when
/// `k` is the last rank): the middle two of an even count come from one selection.
pub(super) fn select_with_next(points: &Points, k: u64, rng: &mut impl Rng) -> (f64, Option<f64>) {
    let n = points.x.len();
    let (mut keys, mut scratch) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (min, max) = points.extremes();
    if k == 0 {
        return (min, None);
    }
    let mut b = Bracket {
        lo: min,
        hi: max,
        below_lo: points.at_or_below(min, &mut keys, &mut scratch),
        below_hi: points.pairs,
    };
    if b.below_lo > k {
        return (min, None);
    }
    let (sampled, mut repeated) = sampled_bracket(points, k, b, rng, &mut keys, &mut scratch);
    b = sampled;
    let limit = LISTED_PER_POINT * n as u64;
    while b.below_hi - b.below_lo > limit {
        let before = b.below_hi - b.below_lo;
        b = interpolated(points, k, b, limit, &mut keys, &mut scratch);
        if b.below_hi - b.below_lo > before / 2 {
            // Slopes this unevenly spread may be one value many times over: the value the
            // sample repeated most near rank `k` is tried once.
            if let Some(v) = repeated.take().filter(|&v| v > b.lo && v <= b.hi)
                && let Some(found) = points.mass_at(v, k, &mut keys, &mut scratch)
            {
                return found;
            }
            // The slopes were too unevenly spread for the estimate: halve the bracket.
            let mid = b.lo + (b.hi - b.lo) / 2.0;
            if mid <= b.lo || mid >= b.hi {
                // lo and hi are neighbouring floats: every slope in (lo, hi] is hi.
                return (b.hi, None);
            }
            b = b.cut(mid, points.at_or_below(mid, &mut keys, &mut scratch), k);
        }
    }
    let mut inside = listed(points, b.lo, b.hi);
    let wanted = (k - b.below_lo) as usize;
    let at = wanted.min(inside.len().saturating_sub(1));
    if inside.is_empty() {
        return (b.hi, None);
    }
    // The next rank is the least slope above when the listing holds every slope the counts
    // place in the bracket (rounding can make the two disagree by a few).
    let whole = inside.len() as u64 == b.below_hi - b.below_lo;
    let (_, slope, above) = inside.select_nth_unstable_by(at, f64::total_cmp);
    let slope = *slope;
    let next = (whole && at == wanted)
        .then(|| above.iter().copied().min_by(f64::total_cmp))
        .flatten();
    (slope, next)
}

/// Narrows `b` to the sampled slopes around rank `k`, keeping each end only where the counts
/// confirm it (a sample can miss; the bracket then keeps that end as it was); with it, the
/// value the sample holds most often between those two ends, where one is held twice or more.
fn sampled_bracket(
    points: &Points,
    k: u64,
    b: Bracket,
    rng: &mut impl Rng,
    keys: &mut Vec<f64>,
    scratch: &mut Vec<f64>,
) -> (Bracket, Option<f64>) {
    let n = points.x.len();
    let size = (SAMPLE_PER_POINT * n).clamp(SAMPLE_MIN, SAMPLE);
    let mut sample = Vec::with_capacity(size);
    let mut tries = 0;
    while sample.len() < size && tries < 4 * size {
        tries += 1;
        let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
        if points.x[i] != points.x[j] {
            sample.push(points.slope(i.min(j), i.max(j)));
        }
    }
    if sample.len() < 2 {
        return (b, None);
    }
    let r = sample.len() as f64;
    let centre = k as f64 / points.pairs as f64 * r;
    let half = BRACKET_SDS * (r / 4.0).sqrt();
    let index = |at: f64| (at.max(0.0) as usize).min(sample.len() - 1);
    let (lo_at, hi_at) = (index(centre - half), index(centre + half));
    // The two order statistics of the sample, each by selection: no sort of the whole.
    let (_, &mut lo, above) = sample.select_nth_unstable_by(lo_at, f64::total_cmp);
    let hi = match hi_at - lo_at {
        0 => lo,
        d => *above.select_nth_unstable_by(d - 1, f64::total_cmp).1,
    };
    let repeated = most_repeated(&mut sample[lo_at..=hi_at]);
    let mut out = b;
    if lo > b.lo && lo < b.hi {
        let below = points.at_or_below(lo, keys, scratch);
        if below <= k {
            out.lo = lo;
            out.below_lo = below;
        }
    }
    if hi > out.lo && hi < b.hi {
        let below = points.at_or_below(hi, keys, scratch);
        if below > k {
            out.hi = hi;
            out.below_hi = below;
        }
    }
    (out, repeated)
}

/// The value `values` hold most often (the least of those held equally often), where one is
/// held at least twice.
fn most_repeated(values: &mut [f64]) -> Option<f64> {
    values.sort_unstable_by(f64::total_cmp);
    let mut best: Option<(usize, f64)> = None;
    for run in values.chunk_by(|a, b| a == b) {
        if run.len() >= 2 && best.is_none_or(|(count, _)| run.len() > count) {
            best = Some((run.len(), run[0]));
        }
    }
    best.map(|(_, v)| v)
}

/// The slopes in (lo, hi]: pairs ordered one way by y − lo·x and the other by y − hi·x.
/// Ties on y − lo·x (slope lo itself, or the same point twice) are ordered so they are not
/// inverted; ties on y − hi·x count when the earlier point has the smaller x (slope hi).
fn listed(points: &Points, lo: f64, hi: f64) -> Vec<f64> {
    let mut seq: Vec<(f64, f64, usize)> = (0..points.x.len())
        .map(|i| {
            let (x, y) = (points.x[i], points.y[i]);
            (y - lo * x, y - hi * x, i)
        })
        .collect();
    let by_hi = |a: &(f64, f64, usize), b: &(f64, f64, usize)| {
        a.1.total_cmp(&b.1)
            .then(points.x[b.2].total_cmp(&points.x[a.2]))
    };
    seq.sort_by(|a, b| a.0.total_cmp(&b.0).then(by_hi(a, b)));
    let mut out = Vec::new();
    sort_visiting(&mut seq, &mut Vec::new(), true, &by_hi, &mut |a, b| {
        let (i, j) = if points.x[a.2] < points.x[b.2] {
            (a.2, b.2)
        } else {
            (b.2, a.2)
        };
        if points.x[i] != points.x[j] {
            out.push(points.slope(i, j));
        }
    });
    out
}
