#!/usr/bin/env python3
"""Writes a synthetic experiment and one complete session of it, as `lab run` would have.

Usage:
    python3 scripts/synthetic_session.py --cells 10 --runs 10000 --iterations 1 \
        --seed 1 --out /tmp/synth
    cd /tmp/synth && lab report synthetic

The project folder OUT gets `experiments/NAME/lab.toml` (one variant, a parameter `size` with
one value per cell, a metric `ms` read from JSON lines, an order, a stable and, with more than
one iteration, a steady check) and `data/NAME/20261130T000000Z-synthetic/` with manifest.json,
plan.json, sealed/lab.toml, runs.csv, samples.csv and logs/ (each run's stdout, one JSON line
per iteration, appended to logs/stdout.pack with its offset and length in runs.csv, and an
empty stderr; with --old-layout, a file per run and stream as lab wrote before the packs). Only Python 3's standard library is used, and the same
arguments always give the same bytes.

The data: runs in blocked shuffled order (each block holds every cell once); cell `size = c`
centres on 10 * (1 + (c - 1) / 10) ms; each run's level is that times a log-normal factor
(sigma 0.03); a run's iterations start 50% slower and settle with a time constant of ten
iterations, each with 2% Gaussian noise.

For other tools, everything is in two CSV files:
    runs.csv     one row per run: run_id, position, variant, size, repetition, ..., samples
    samples.csv  one row per value: run_id, metric, iteration, value
e.g. pandas: samples.merge(runs[["run_id", "size"]]).groupby(["size", "run_id"]).value.mean()

Options:
    --cells N         cells (parameter values), default 10
    --runs N          runs per cell, default 1000
    --iterations N    values each run prints, default 1
    --seed N          seed of the data and of the run order, default 1
    --out DIR         project folder to write (created; must not hold the session yet)
    --name NAME       experiment name, default "synthetic"
    --no-logs         skip logs/ (lab then reads no stdout: a faster but less faithful session)
    --old-layout      logs/RUN.out and logs/RUN.err per run, as sessions before the packs
    --analysis N      the analysis its manifest records: 2 (default) or 1 (no `analysis`
                      key, as sessions recorded before analysis 2); with --realistic, 3 (as
                      `lab run` records now: disturbed runs keep their timings) or 2 (each
                      disturbed run is run again, the re-run naming it in plan.json)
    --realistic       a session as `lab run` records it on a shared machine, written by
                      scripts/realistic_session.py: two variants, --cells / 2 parameter
                      values, warm-up runs, disturbed runs, failed runs, timer-tick ties,
                      counters, three declared metrics (one printed every iteration), stderr,
                      several nodes (--runs stays runs per cell, warm-ups and re-runs aside)
"""

import argparse
import hashlib
import json
import math
import pathlib
import random
import sys

SESSION = "20261130T000000Z-synthetic"
START_UNIX = 1_795_996_800  # 2026-11-30T00:00:00Z
SPAWN_NS = 1_000_000
METRIC = "ms"
LAB_HEADER = [
    "run_id", "position", "variant", "size", "repetition", "warmup", "start_utc", "wall_ns",
    "boottime_ns", "user_ns", "sys_ns", "max_rss_kib", "voluntary_cs", "involuntary_cs",
    "exit_code", "signal", "spawn_error", "timed_out", "cpus", "stdout_sha256", "left_running",
    "host_busy_ns", "host_steal_ns", "host_capacity_ns", "psi_cpu_some_us", "throttle_events",
    "samples",
]
PACK_HEADER = ["stdout_offset", "stdout_bytes", "stderr_offset", "stderr_bytes", "stderr_sha256"]
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", type=int, default=10)
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--iterations", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=pathlib.Path, required=True)
    p.add_argument("--name", default="synthetic")
    p.add_argument("--no-logs", action="store_true")
    p.add_argument("--old-layout", action="store_true")
    p.add_argument("--realistic", action="store_true")
    p.add_argument("--analysis", type=int, default=None,
                   help="the analysis recorded in the manifest (see --help's text above)")
    args = p.parse_args(argv)
    if args.analysis is None:
        args.analysis = 3 if args.realistic else 2
    for key in ("cells", "runs", "iterations"):
        if getattr(args, key) < 1:
            p.error(f"--{key} must be at least 1")
    return args


def lab_toml(args):
    sizes = ", ".join(str(c) for c in range(1, args.cells + 1))
    text = f"""[experiment]
title = "Synthetic: {args.cells} cells x {args.runs} runs x {args.iterations} iterations"
hypothesis = "Each cell holds steady around its own level; nothing depends on run order."
repetitions = {args.runs}
warmup_runs = 0
order = "shuffled"
seed = {args.seed}
timeout = "60s"

[params]
size = [{sizes}]

[[variant]]
name = "prog"
run = ["prog", "--size={{size}}"]

[metric.{METRIC}]
json = "{METRIC}"
unit = "ms"
better = "lower"

[[check]]
name = "the time depends neither on run order nor on the previous run"
kind = "order"
metric = "{METRIC}"

[[check]]
name = "runs of a cell vary under 25%"
kind = "stable"
metric = "{METRIC}"
max_cv = "25%"
"""
    if args.iterations > 1:
        text += f"""
[[check]]
name = "every run settles within 100 iterations"
kind = "steady"
metric = "{METRIC}"
within = 100
"""
    return text


def blocked_order(cells, runs, rng):
    """Cell indexes in run order: `runs` blocks, each every cell once, shuffled."""
    order = []
    for _ in range(runs):
        block = list(range(cells))
        rng.shuffle(block)
        order.extend(block)
    return order


def iteration_values(size, iterations, rng):
    centre = 10.0 * (1.0 + (size - 1) / 10.0)
    level = centre * math.exp(rng.gauss(0.0, 0.03))
    return [
        level * (1.0 + 0.5 * math.exp(-i / 10.0)) * (1.0 + rng.gauss(0.0, 0.02))
        for i in range(iterations)
    ]


def utc(unix_s):
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(unix_s))


def write_session(args, toml_text, session):
    rng = random.Random(args.seed)
    order = blocked_order(args.cells, args.runs, rng)
    width = max(4, len(str(len(order))))
    plan_runs = []
    repetitions = [0] * args.cells
    clock_ns = START_UNIX * 10**9
    logs = session / "logs"
    if not args.no_logs:
        logs.mkdir()
    packed = not args.no_logs and not args.old_layout
    header = LAB_HEADER + (PACK_HEADER if packed else [])
    pack = open(logs / "stdout.pack", "wb") if packed else None
    if packed:
        (logs / "stderr.pack").write_bytes(b"")
    with open(session / "runs.csv", "w", newline="") as runs_csv, \
            open(session / "samples.csv", "w", newline="") as samples_csv:
        runs_csv.write(",".join(header) + "\n")
        samples_csv.write("run_id,metric,iteration,value\n")
        for position, cell in enumerate(order, start=1):
            size = cell + 1
            repetitions[cell] += 1
            run_id = f"r{position:0{width}d}"
            argv = ["prog", f"--size={size}"]
            plan_runs.append({
                "id": run_id, "position": position, "variant": "prog",
                "params": {"size": size}, "repetition": repetitions[cell], "warmup": False,
                "argv": argv,
            })
            values = [f"{v:.6g}" for v in iteration_values(size, args.iterations, rng)]
            stdout = "".join(f'{{"{METRIC}": {v}}}\n' for v in values).encode()
            samples_csv.write("".join(
                f"{run_id},{METRIC},{i},{v}\n" for i, v in enumerate(values)))
            wall_ns = SPAWN_NS + int(sum(float(v) for v in values) * 1e6)
            user_ns = wall_ns * 9 // 10
            fields = [
                run_id, position, "prog", size, repetitions[cell], "false",
                utc(clock_ns // 10**9), wall_ns, wall_ns, user_ns, wall_ns - user_ns, 4096, 2, 1,
                0, "", "", "false", "", hashlib.sha256(stdout).hexdigest(), "", "", "", "", "",
                "", len(values),
            ]
            if packed:
                fields += [pack.tell(), len(stdout), 0, 0, EMPTY_SHA256]
                pack.write(stdout)
            runs_csv.write(",".join(str(f) for f in fields) + "\n")
            clock_ns += wall_ns + SPAWN_NS
            if args.old_layout and not args.no_logs:
                (logs / f"{run_id}.out").write_bytes(stdout)
                (logs / f"{run_id}.err").write_bytes(b"")
    if pack:
        pack.close()
    plan = {"order": "shuffled", "seed": args.seed, "runs": plan_runs}
    (session / "plan.json").write_text(json.dumps(plan, indent=2, ensure_ascii=False) + "\n")
    manifest = {
        "lab_version": "0.1.0",
        "experiment": args.name,
        "experiment_file_hash": hashlib.sha256(toml_text.encode()).hexdigest(),
        "profile": None,
        "command": f"lab run experiments/{args.name}",
        "seed": args.seed,
        "order": "shuffled",
        "planned_runs": len(order),
        "git": None,
        "host": {
            "name": "synthetic", "cpu_model": "synthetic", "logical_cpus": 2,
            "allowed_cpus": "0-1", "governor": None, "turbo": None, "kernel": None,
            "memory_total": None,
        },
        "load_before": "0.00 0.00 0.00",
        "load_after": "0.00 0.00 0.00",
        "started_utc": utc(START_UNIX),
        "finished_utc": utc(clock_ns // 10**9),
        "complete": True,
        "resumed": 0,
        "derived_from": None,
        "damaged": None,
        "versions": [],
        "build": None,
        "calibration": {
            "timer_reported_resolution_ns": 1, "timer_granularity_ns": 20,
            "timer_read_ns": 30.0, "spawn_median_ns": SPAWN_NS, "spawn_iqr_ns": 50_000,
            "spawn_mad_ns": 25_000, "spawn_samples": 30,
        },
    }
    if args.analysis != 1:
        manifest["analysis"] = args.analysis
    (session / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def main(argv):
    args = parse_args(argv)
    experiment = args.out / "experiments" / args.name
    session = args.out / "data" / args.name / SESSION
    if args.realistic:
        import realistic_session

        return realistic_session.main(args, experiment, session)
    if session.exists():
        sys.exit(f"{session} exists already: choose another --out or remove it")
    experiment.mkdir(parents=True, exist_ok=True)
    (session / "sealed").mkdir(parents=True)
    toml_text = lab_toml(args)
    (experiment / "lab.toml").write_text(toml_text)
    (session / "sealed" / "lab.toml").write_text(toml_text)
    write_session(args, toml_text, session)
    total = args.cells * args.runs
    print(f"wrote {session}: {total} runs, {total * args.iterations} values")


if __name__ == "__main__":
    main(sys.argv[1:])
