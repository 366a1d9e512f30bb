#!/usr/bin/env python3
"""Per-cell bootstrap intervals of a lab session with pandas and SciPy: the reference that
`benches/compare-tools.sh` times `lab report` against.

Usage:
    python3 benches/scipy_cells.py data/NAME/SESSION [--metric ms] [--resamples 10000]
        [--seed 1] [--batch 100]

For every cell (variant and parameter values) of the session it computes what lab's analysis
computes for the metric: n, the median with its percentile bootstrap 95% interval and the
mean with its BCa bootstrap 95% interval (Efron 1987), both from `--resamples` resamples with
`scipy.stats.bootstrap`. Runs are read as lab stores them: runs.csv (one row per run, the
parameters between `variant` and `repetition`) and samples.csv (one row per value); warm-up
runs and runs that did not exit 0 or timed out are left out, and a run that printed several
values counts with their mean. `--metric wall_s` (also user_s, sys_s, cpu_s) reads the time
lab measured from runs.csv instead. It prints one CSV row per cell, sorted by cell.

`--batch` is how many resamples SciPy draws at a time: it bounds the memory (about
batch x n x 16 bytes) without changing the result. At 10 cells x 10,000 runs, 100 was as fast
as 500 and needed 270 MB instead of 400 MB, so 100 is the default.
"""

import argparse
import pathlib
import sys

import numpy as np
import pandas as pd
from scipy import stats

BUILT_IN = {
    "wall_s": ["wall_ns"],
    "user_s": ["user_ns"],
    "sys_s": ["sys_ns"],
    "cpu_s": ["user_ns", "sys_ns"],
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("session", type=pathlib.Path, help="a session folder: data/NAME/SESSION")
    p.add_argument("--metric", default="ms")
    p.add_argument("--resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--batch", type=int, default=100)
    args = p.parse_args(argv)
    if not (args.session / "runs.csv").is_file():
        p.error(f"{args.session}: no runs.csv there; pass a session folder data/NAME/SESSION")
    if args.resamples < 1 or args.batch < 1:
        p.error("--resamples and --batch must be at least 1")
    return args


def parameter_columns(runs):
    """The parameters: runs.csv holds them between `variant` and `repetition`."""
    columns = list(runs.columns)
    return columns[columns.index("variant") + 1 : columns.index("repetition")]


def measured_runs(session):
    runs = pd.read_csv(session / "runs.csv", dtype={"warmup": str, "timed_out": str})
    keep = (runs["warmup"] != "true") & (runs["exit_code"] == 0) & (runs["timed_out"] != "true")
    return runs[keep]


def values_per_run(session, runs, metric):
    """One value per run: the metric's values averaged within each run."""
    if metric in BUILT_IN:
        seconds = runs[BUILT_IN[metric]].sum(axis=1) / 1e9
        return runs.assign(value=seconds)
    samples = pd.read_csv(session / "samples.csv")
    samples = samples[samples["metric"] == metric]
    if samples.empty:
        sys.exit(f"{session / 'samples.csv'}: no values of metric `{metric}`; pass --metric")
    samples = samples.assign(value=pd.to_numeric(samples["value"], errors="coerce"))
    per_run = samples.groupby("run_id", sort=False)["value"].mean().rename("value")
    return runs.merge(per_run, left_on="run_id", right_index=True)


def interval(values, statistic, method, args, rng):
    result = stats.bootstrap(
        (values,),
        statistic,
        n_resamples=args.resamples,
        method=method,
        confidence_level=0.95,
        vectorized=True,
        batch=args.batch,
        rng=rng,
    )
    return result.confidence_interval


def main(argv):
    args = parse_args(argv)
    runs = measured_runs(args.session)
    params = parameter_columns(runs)
    table = values_per_run(args.session, runs, args.metric)
    rng = np.random.default_rng(args.seed)
    print("cell,n,median,median_lo,median_hi,mean,mean_lo,mean_hi")
    for key, group in table.groupby(["variant", *params], sort=True):
        values = group["value"].to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        key = key if isinstance(key, tuple) else (key,)
        cell = " ".join([str(key[0])] + [f"{p}={v}" for p, v in zip(params, key[1:])])
        if len(values) < 3:
            print(f"{cell},{len(values)},,,,,,")
            continue
        median_ci = interval(values, np.median, "percentile", args, rng)
        mean_ci = interval(values, np.mean, "BCa", args, rng)
        print(
            f"{cell},{len(values)},{np.median(values):.6g},{median_ci.low:.6g},"
            f"{median_ci.high:.6g},{np.mean(values):.6g},{mean_ci.low:.6g},{mean_ci.high:.6g}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
