#!/usr/bin/env python3
"""Reference values for the heap half of lab's layout check (src/checks/layout/tests.rs).

Run:     python3 scripts/layout_reference.py   (prints them; about ten seconds)
Needs:   the standard library only.

The cell of the tests: two variants with 4 runs at each of the 4 heap positions, the k-th run
(k = 0..3) at position p measuring value(p) * (1 + k/1000), padded above 2,048 bytes when
k + p is odd. Variant b is 2.1 times as slow at position 3 (48 bytes along a cache line).

* The percentile bootstrap interval of the ratio of medians, one position against the rest,
  each side resampled on its own (Efron & Tibshirani 1993, ch. 13), 200,000 draws.
* The permutation p-value of the largest |ln(median at a position / median elsewhere)|, the
  position labels shuffled within each half of the paddings (Westfall & Young 1993), counted
  as (1 + at least as large) / (1 + shuffles) (Phipson & Smyth 2010), 200,000 shuffles.

Both are Monte Carlo, as lab's are: they agree with lab's to the digits its evidence prints.
"""

import math
import random
import statistics

random.seed(1)
STEPS = [1 + k / 1000 for k in range(4)]


def bootstrap(these, others, level=0.95, draws=200_000):
    logs = sorted(
        math.log(
            statistics.median(random.choices(these, k=len(these)))
            / statistics.median(random.choices(others, k=len(others)))
        )
        for _ in range(draws)
    )
    at = lambda q: logs[min(len(logs) - 1, int(q * len(logs)))]
    ratio = statistics.median(these) / statistics.median(others)
    return ratio, math.exp(at((1 - level) / 2)), math.exp(at((1 + level) / 2))


def largest_difference(values, labels):
    best = 0.0
    for p in range(4):
        at = [v for v, l in zip(values, labels) if l == p]
        elsewhere = [v for v, l in zip(values, labels) if l != p]
        best = max(best, abs(math.log(statistics.median(at) / statistics.median(elsewhere))))
    return best


def permutation_p(runs, shuffles=200_000):
    values = [v for _, _, v in runs]
    labels = [p for p, _, _ in runs]
    observed = largest_difference(values, labels)
    halves = [[i for i, r in enumerate(runs) if r[1] == upper] for upper in (False, True)]
    hits = 0
    for _ in range(shuffles):
        shuffled = labels[:]
        for half in halves:
            drawn = [shuffled[i] for i in half]
            random.shuffle(drawn)
            for i, label in zip(half, drawn):
                shuffled[i] = label
        hits += largest_difference(values, shuffled) >= observed * (1 - 1e-12)
    return (1 + hits) / (1 + shuffles)


def cell(slow_at=None):
    return [
        (p, (k + p) % 2 == 1, (210.0 if p == slow_at else 100.0) * STEPS[k])
        for k in range(4)
        for p in range(4)
    ]


fast = [100 * s for s in STEPS]
slow = [210 * s for s in STEPS]
print("b, 48 bytes against the rest:", bootstrap(slow, fast * 3))
print("a, 0 bytes against the rest: ", bootstrap(fast, fast * 3))
print("b, permutation p:", permutation_p(cell(slow_at=3)))
