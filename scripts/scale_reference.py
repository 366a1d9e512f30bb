#!/usr/bin/env python3
"""Reference values for lab's near-linear statistics at sizes past their all-pairs cut-over.

Run:     python3 scripts/scale_reference.py   (writes crates/stats/tests/data/scale_reference.json)
Needs:   numpy and scipy.

The series are given by integer formulas (below and in src/stats/trend.rs's tests), so the
JSON holds only the answers: scipy.stats.theilslopes for the Theil–Sen slope, and
Mann–Kendall's S, Var(S), z and p by the textbook all-pairs formulas in numpy (as
scripts/stats_reference.py computes them), independent of lab's merge-sort counting.
"""

import json
import math
import pathlib

import numpy as np
from scipy import stats

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates" / "stats" / "tests" / "data" / "scale_reference.json"


def series(name, n):
    """Must match `series` in src/stats/trend.rs's tests: every operation is one IEEE step."""
    i = np.arange(n, dtype=np.int64)
    if name == "drift":
        return i.astype(float), ((i * 7919 + 13) % 1009).astype(float) / 100.0 + i * 0.003
    if name == "tied_x":
        return (i // 3).astype(float), ((i * 104729 + 7) % 997).astype(float) / 10.0 - i * 0.01
    if name == "tied_y":
        return i.astype(float), ((i * 31) % 7).astype(float)
    if name == "falling":
        return (i * 2).astype(float), 50.0 - i * 0.25 + ((i * 37) % 11).astype(float)
    raise ValueError(name)


def mann_kendall(y):
    n = len(y)
    diff = np.sign(y[None, :] - y[:, None])
    s = float(np.triu(diff, 1).sum())
    _, counts = np.unique(y, return_counts=True)
    ties = float(sum(t * (t - 1) * (2 * t + 5) for t in counts if t > 1))
    var_s = (n * (n - 1) * (2 * n + 5) - ties) / 18.0
    z = 0.0 if s == 0 or var_s <= 0 else (s - math.copysign(1.0, s)) / math.sqrt(var_s)
    p = math.erfc(abs(z) / math.sqrt(2.0))
    return {"s": s, "var_s": var_s, "z": z, "p": p}


def main():
    cases = []
    for name, n in [("drift", 3001), ("tied_x", 2500), ("tied_y", 2200), ("falling", 4000)]:
        x, y = series(name, n)
        slope = float(stats.theilslopes(y, x).slope)
        cases.append({"name": name, "n": n, "slope": slope, "mann_kendall": mann_kendall(y)})
    OUT.write_text(json.dumps({"cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
