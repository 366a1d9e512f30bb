#!/usr/bin/env python3
"""Reference values for lab's statistics library (src/stats), computed independently.

Setup:   python3 -m venv venv && venv/bin/pip install numpy scipy diptest pymannkendall
Run:     venv/bin/python scripts/stats_reference.py   (writes crates/stats/tests/data/stats_reference.json)

Everything here uses FIXED inline data sets (or numpy data drawn once from a fixed seed and
written into the JSON), so the Rust tests never need Python. Bootstrap endpoints are the mean
over 20 scipy seeds together with their standard deviation (Monte-Carlo spread).
`diptest` (PyPI, wraps Maechler's C port of AS 217) and `pymannkendall` are optional.
"""

import json
import math
import pathlib

import numpy as np
import scipy
from scipy import stats

try:
    import diptest
except ImportError:  # optional
    diptest = None
try:
    import pymannkendall
except ImportError:  # optional
    pymannkendall = None

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates" / "stats" / "tests" / "data" / "stats_reference.json"
B = 10_000
SEEDS = range(20)

# ---- fixed data sets (timings in ms; include ties) -------------------------------------
D_NORMAL = [10.2, 9.8, 10.5, 10.1, 9.9, 10.0, 10.3, 10.1, 9.7, 10.4, 10.6, 9.9, 10.0,
            10.2, 10.1, 9.6, 10.8, 10.0, 10.2, 9.9, 10.3, 10.1, 10.0, 9.8, 10.5]
D_SKEW = [1.21, 1.05, 1.33, 1.02, 1.98, 1.11, 1.05, 1.47, 1.09, 2.75, 1.15, 1.08, 1.26,
          1.05, 1.61, 1.12, 1.03, 1.39, 1.18, 1.07, 3.40, 1.14, 1.22, 1.05, 1.31, 1.09,
          1.17, 1.55, 1.04, 1.10, 1.28]
D_BIMODAL = [5.1, 5.3, 4.9, 5.0, 5.2, 5.1, 4.8, 5.0, 5.4, 5.1, 5.0, 4.9, 5.2, 5.0, 5.1,
             5.3, 5.0, 4.9, 5.1, 5.2, 8.0, 8.3, 7.9, 8.1, 8.2, 8.0, 7.8, 8.1, 8.4, 8.0,
             8.2, 8.1, 7.9, 8.0, 8.3, 8.1, 8.0, 8.2, 7.9, 8.1]
D_TREND = [100, 101, 99, 102, 103, 101, 104, 104, 103, 105, 106, 104, 107, 108, 108,
           107, 109, 110, 108, 111, 112, 110, 113, 112, 114, 115, 113, 116, 116, 117]
D_NOTREND = [50, 52, 49, 51, 50, 53, 48, 50, 51, 52, 50, 49, 51, 50, 52, 48, 53, 50,
             49, 51, 50, 50, 52, 49]
D_DOWN = [30.5, 29.1, 28.7, 28.7, 27.9, 28.2, 26.5, 27.0, 26.1, 26.1, 25.4, 25.8, 24.9,
          25.2, 24.1, 24.4, 23.3, 23.9, 22.8, 22.8]
DATASETS = {"normal": D_NORMAL, "skewed": D_SKEW, "bimodal": D_BIMODAL}

RUNS_A = [[10.1, 10.3, 10.2, 10.4, 10.2], [11.0, 11.2, 10.9, 11.1, 11.0],
          [9.8, 9.9, 10.0, 9.7, 9.9], [10.6, 10.5, 10.7, 10.6, 10.8],
          [10.0, 10.2, 10.1, 10.0, 10.3], [11.4, 11.3, 11.5, 11.6, 11.4],
          [10.3, 10.4, 10.2, 10.5, 10.3], [9.9, 10.1, 10.0, 10.2, 10.0]]
RUNS_B = [[5.0, 5.2, 5.1], [5.9, 6.1], [5.4, 5.5, 5.3, 5.6], [4.8], [5.2, 5.0, 5.1, 5.3, 5.2, 5.1],
          [6.3, 6.2, 6.4], [5.5, 5.7], [5.1, 5.0, 5.2, 5.1]]


def spread(fn):
    """Mean and sd over SEEDS of the (lo, hi) endpoints returned by fn(seed)."""
    ends = np.array([fn(s) for s in SEEDS])
    return {"lo": float(ends[:, 0].mean()), "hi": float(ends[:, 1].mean()),
            "lo_sd": float(ends[:, 0].std(ddof=1)), "hi_sd": float(ends[:, 1].std(ddof=1))}


def scipy_boot(data, statistic, method):
    def one(seed):
        res = stats.bootstrap((np.asarray(data, float),), statistic, n_resamples=B,
                              confidence_level=0.95, method=method, random_state=seed)
        return res.confidence_interval.low, res.confidence_interval.high
    return spread(one)


def two_stage(runs, statistic):
    """Two-stage bootstrap (runs, then iterations within each run), pooled statistic."""
    arrs = [np.asarray(r, float) for r in runs]

    def one(seed):
        rng = np.random.default_rng(seed)
        out = np.empty(B)
        for b in range(B):
            pick = rng.integers(len(arrs), size=len(arrs))
            pooled = np.concatenate([arrs[i][rng.integers(len(arrs[i]), size=len(arrs[i]))]
                                     for i in pick])
            out[b] = statistic(pooled)
        return np.percentile(out, [2.5, 97.5])
    return spread(one)


# Spearman cases: (name, x, y); "ties" and "mops_waits" have tied values on both sides.
SPEARMAN = [
    ("monotone", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.0, 4.1, 4.0, 8.5, 9.0, 12.0]),
    ("ties", [1, 2, 2, 3, 3, 3, 4, 5, 5, 6], [10, 9, 9, 7, 8, 6, 6, 4, 5, 1]),
    ("mops_waits", [9.1, 8.7, 8.7, 7.9, 7.2, 7.2, 6.0, 6.1, 5.5, 5.5, 4.8, 4.8],
     [100, 120, 115, 180, 210, 210, 300, 290, 350, 340, 420, 420]),
    ("weak", [3.1, 2.7, 3.5, 2.9, 3.3, 3.0, 2.8, 3.4, 3.2, 2.6],
     [14, 11, 12, 15, 10, 13, 16, 12, 11, 14]),
]
# Strata (cells) of (x, y) pairs for the stratified bootstrap of Spearman's rho.
SPEARMAN_STRATA = [
    [(9.1, 100), (8.7, 220), (6.9, 115), (9.3, 305)],
    [(7.9, 180), (7.2, 310), (5.5, 200), (8.7, 185)],
    [(6.0, 300), (7.1, 190), (5.6, 320), (6.3, 230)],
    [(5.5, 350), (4.9, 240), (6.8, 420), (5.2, 300)],
]


def spearman_cases():
    out = []
    for name, x, y in SPEARMAN:
        out.append({"name": name, "x": x, "y": y, "rho": float(stats.spearmanr(x, y).statistic)})
    return out


def spearman_stratified():
    """Percentile interval of rho, resampling pairs within each stratum (numpy, 20 seeds)."""
    arrs = [np.asarray(s, float) for s in SPEARMAN_STRATA]

    def one(seed):
        rng = np.random.default_rng(seed)
        out = np.empty(B)
        for b in range(B):
            pooled = np.concatenate([a[rng.integers(len(a), size=len(a))] for a in arrs])
            out[b] = stats.spearmanr(pooled[:, 0], pooled[:, 1]).statistic
        return np.percentile(out, [2.5, 97.5])
    pooled = np.concatenate(arrs)
    return {"strata": SPEARMAN_STRATA,
            "rho": float(stats.spearmanr(pooled[:, 0], pooled[:, 1]).statistic), **spread(one)}


def icc1(runs):
    """ICC(1) from one-way ANOVA with unequal group sizes; Kish design effect."""
    groups = [np.asarray(r, float) for r in runs]
    k, n = len(groups), sum(len(g) for g in groups)
    grand = np.concatenate(groups).mean()
    msb = sum(len(g) * (g.mean() - grand) ** 2 for g in groups) / (k - 1)
    msw = sum(((g - g.mean()) ** 2).sum() for g in groups) / (n - k)
    n0 = (n - sum(len(g) ** 2 for g in groups) / n) / (k - 1)
    icc = (msb - msw) / (msb + (n0 - 1) * msw)
    return {"icc": float(icc), "effect": float(max(1.0, 1 + (n / k - 1) * max(icc, 0.0)))}


def mann_kendall(y):
    """Textbook Mann-Kendall (Gilbert 1987 §16.4.1) with tie correction."""
    y = np.asarray(y, float)
    n = len(y)
    s = sum(np.sign(y[j] - y[i]) for i in range(n) for j in range(i + 1, n))
    _, t = np.unique(y, return_counts=True)
    var = (n * (n - 1) * (2 * n + 5) - np.sum(t * (t - 1) * (2 * t + 5))) / 18.0
    z = 0.0 if s == 0 else (s - np.sign(s)) / math.sqrt(var)
    p = 2 * stats.norm.sf(abs(z))
    out = {"s": float(s), "var_s": float(var), "z": float(z), "p": float(p),
           "tau": float(s / (n * (n - 1) / 2))}
    if pymannkendall is not None:  # cross-check the textbook formula
        r = pymannkendall.original_test(y)
        assert r.s == s and abs(r.var_s - var) < 1e-9 and abs(r.z - z) < 1e-12, (r, out)
        assert abs(r.Tau - out["tau"]) < 1e-12
    return out


def median_ranks(n, level):
    """Largest j with P(j <= B <= n-j) >= level, B ~ Bin(n, 1/2)."""
    best = None
    for j in range(1, n // 2 + 2):
        cov = 1 - 2 * stats.binom.cdf(j - 1, n, 0.5)
        if cov >= level - 1e-12:
            best = (j, n + 1 - j, float(cov))
    return best


def holm(p):
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out.tolist()


def optimal_partition(y, penalty, minseg=2):
    """Exact optimal partitioning (Jackson et al. 2005) with the normal mean-and-variance
    cost m*ln(max(var_mle, 1e-8*var_total)); PELT must return the same segmentation."""
    y = np.asarray(y, float)
    n = len(y)
    floor = max(y.var() * 1e-8, np.finfo(float).tiny)
    def cost(a, b):
        return (b - a) * math.log(max(y[a:b].var(), floor))
    f = [math.inf] * (n + 1)
    f[0], last = -penalty, [0] * (n + 1)
    for t in range(minseg, n + 1):
        for s in [0] + list(range(minseg, t - minseg + 1)):
            v = f[s] + cost(s, t) + penalty
            if v < f[t]:
                f[t], last[t] = v, s
    starts, t = [], n
    while t > 0:
        t = last[t]
        starts.append(t)
    return starts[::-1]


def changepoint_cases():
    rng = np.random.default_rng(7)
    out = []
    specs = {"warmup": [(40, 150.0, 3.0), (160, 100.0, 1.0)],
             "three": [(50, 20.0, 0.5), (70, 25.0, 2.0), (80, 21.0, 0.5)],
             "flat": [(150, 10.0, 0.2)]}
    for name, parts in specs.items():
        y = np.round(np.concatenate([rng.normal(m, sd, size=k) for k, m, sd in parts]), 4)
        pen = 15 * math.log(len(y))
        out.append({"name": name, "data": y.tolist(), "penalty": pen,
                    "starts": optimal_partition(y, pen)})
    return out


def dip_cases():
    rng = np.random.default_rng(2024)
    cases = {
        "normal": D_NORMAL, "skewed": D_SKEW, "bimodal": D_BIMODAL, "trend": D_TREND,
        "ties": [1, 1, 1, 2, 2, 3, 3, 3, 3, 4, 5, 5, 6, 6, 6, 6],
        "two_points": [0.0] * 10 + [1.0] * 10,
        "small": [1.0, 2.0, 4.0, 8.0, 9.0],
    }
    for i in range(8):
        n = [4, 7, 12, 30, 60, 100, 250, 1000][i]
        x = rng.normal(size=n) if i % 2 else rng.uniform(size=n)
        if i >= 4:
            x = np.concatenate([x, rng.normal(3.0, 0.7, size=n // 2)])
        cases[f"random{i}"] = np.round(x, 6).tolist()
    out = []
    for name, x in cases.items():
        d = float(diptest.dipstat(np.asarray(x, float), allow_zero=False))
        out.append({"name": name, "data": [float(v) for v in x], "dip": d})
    return out


def main():
    ref = {"versions": {"numpy": np.__version__, "scipy": scipy.__version__}}
    ref["bootstrap_median"] = [
        {"name": k, "data": v, **scipy_boot(v, np.median, "percentile")} for k, v in DATASETS.items()]
    ref["bootstrap_bca_mean"] = [
        {"name": k, "data": v, **scipy_boot(v, np.mean, "BCa")} for k, v in DATASETS.items()]
    p90 = lambda x, axis=-1: np.percentile(x, 90, axis=axis)  # noqa: E731
    ref["bootstrap_p90"] = {"data": D_SKEW + D_NORMAL, **scipy_boot(D_SKEW + D_NORMAL, p90, "percentile")}
    ref["bootstrap_hierarchical"] = [
        {"name": name, "runs": runs, "mean": two_stage(runs, np.mean),
         "median": two_stage(runs, np.median)} for name, runs in [("a", RUNS_A), ("b", RUNS_B)]]
    ref["design_effect"] = [{"runs": r, **icc1(r)} for r in (RUNS_A, RUNS_B)]
    ref["mann_kendall"] = [{"name": k, "data": v, **mann_kendall(v)} for k, v in
                           [("trend", D_TREND), ("notrend", D_NOTREND), ("down", D_DOWN),
                            ("skewed", D_SKEW)]]
    ts = []
    for name, y in [("trend", D_TREND), ("down", D_DOWN), ("notrend", D_NOTREND)]:
        x = list(range(len(y)))
        ts.append({"name": name, "x": x, "y": y, "slope": float(stats.theilslopes(y, x).slope)})
    xt = [1, 2, 2, 3, 5, 5, 6, 8, 9, 9]  # tied x values
    yt = [2.0, 2.9, 3.3, 4.1, 5.8, 6.5, 6.9, 9.2, 9.8, 10.5]
    ts.append({"name": "tied_x", "x": xt, "y": yt, "slope": float(stats.theilslopes(yt, xt).slope)})
    ref["theil_sen"] = ts
    kw = [("three", [D_NORMAL[:10], D_NORMAL[10:20], [10.9, 11.0, 10.8, 11.2, 10.7]]),
          ("ties", [[1, 2, 2, 3, 3], [2, 3, 3, 4, 4, 4], [3, 4, 5, 5]]),
          ("two", [D_SKEW, D_NORMAL[:12]])]
    ref["kruskal"] = []
    for name, g in kw:
        r = stats.kruskal(*g)
        ref["kruskal"].append({"name": name, "groups": g, "h": float(r.statistic),
                               "p": float(r.pvalue), "df": len(g) - 1})
    ranks = []
    for level in (0.95, 0.99):
        for n in [5, 6, 7, 8, 9, 10, 11, 12, 15, 20, 25, 30, 50, 71, 100, 1000]:
            r = median_ranks(n, level)
            ranks.append({"n": n, "level": level, "lo_rank": r and r[0],
                          "hi_rank": r and r[1], "coverage": r and r[2]})
    ref["median_ci_ranks"] = ranks
    ref["holm"] = [{"p": p, "adjusted": holm(p)} for p in
                   ([0.01, 0.04, 0.03, 0.005], [0.2, 0.001, 0.04, 0.04, 0.9, 0.012])]
    ref["changepoint"] = changepoint_cases()
    ref["spearman"] = spearman_cases()
    ref["spearman_stratified"] = spearman_stratified()
    if diptest is not None:
        ref["dip"] = dip_cases()
        c = diptest.consts.Consts
        a = list(c._ALPHA)
        ref["dip_qdiptab"] = {"n": [int(v) for v in c._SAMPLE_SIZE[:15]],
                              "q95": [float(v) for v in c._CRIT_VALS[:15, a.index(0.95)]],
                              "q99": [float(v) for v in c._CRIT_VALS[:15, a.index(0.99)]]}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(ref, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
