"""A session as `lab run` records it on a shared machine: `synthetic_session.py --realistic`.

What the clean synthetic session never has, each at a rate a busy two-CPU machine gives:
- two variants (`fast`, `slow`) times --cells / 2 values of a parameter `size`;
- one warm-up run per cell, before the measured runs;
- disturbed runs (5%, in bursts): their own tasks waited for a CPU for 8-30% of their wall
  time, over the recorded `busy_limit` of 5%; with --analysis 3 they keep their (stretched)
  timings, with --analysis 2 each is run again at once, the re-run naming it (`repeats`);
- failed runs (0.3%): exit status 1, nothing on stdout, a line on stderr;
- user and system time in 4 ms kernel ticks, so that runs tie on them; `ms` printed to three
  significant digits, so that its values tie too;
- perf counters (task-clock, context-switches, cpu-migrations, page-faults);
- three declared metrics: `ms` (one JSON line per iteration), `ops` (a count, the same for
  every run of a cell) and `checksum` (text);
- packed logs, stdout and stderr (a warning on stderr in one run of twenty);
- runs spread over three cluster nodes.
Only Python 3's standard library is used, and the same arguments always give the same bytes.
"""

import hashlib
import json
import math
import random

from synthetic_session import (EMPTY_SHA256, LAB_HEADER, PACK_HEADER, SPAWN_NS, START_UNIX,
                               utc)

NAME_COLUMNS = ["run_id", "position", "variant", "size"]
HEADER = NAME_COLUMNS + [
    "repetition", "warmup", "start_utc", "wall_ns", "boottime_ns", "user_ns", "sys_ns",
    "max_rss_kib", "voluntary_cs", "involuntary_cs", "exit_code", "signal", "spawn_error",
    "timed_out", "cpus", "stdout_sha256", "left_running", "host_busy_ns", "host_steal_ns",
    "host_capacity_ns", "psi_cpu_some_us", "psi_cpu_own_us", "busy_limit", "throttle_events",
    "samples", "node", "start_boottime_ns", "overlapped", "minor_faults", "major_faults",
    "block_in", "block_out", "counter_task_clock", "counter_context_switches",
    "counter_cpu_migrations", "counter_page_faults", "counter_instructions", "counter_cycles",
    "counter_cache_references", "counter_cache_misses", "counter_branch_misses",
    "counter_branches", "counter_callgrind_instructions", "counters_multiplexed",
] + PACK_HEADER + ["wait_ns", "wait_tasks", "wait_share"]
assert set(LAB_HEADER) <= set(HEADER)
VARIANTS = ["fast", "slow"]
NODES = ["node1", "node2", "node3"]
TICK_NS = 4_000_000
BUSY_LIMIT = 0.05
DISTURBED = 0.05
FAILED = 0.003
MAX_RUNS = 200_000


def lab_toml(args, sizes):
    values = ", ".join(str(s) for s in sizes)
    planned = 2 * len(sizes) * (args.runs + 1)
    # A plan over lab's default limit of 200,000 runs says so, as its user would have to.
    max_runs = f"max_runs = {planned}\n" if planned > MAX_RUNS else ""
    return f"""[experiment]
title = "Realistic: {args.cells} cells x {args.runs} runs x {args.iterations} iterations"
hypothesis = "The slow variant takes longer at every size; times grow with the size."
repetitions = {args.runs}
warmup_runs = 1
{max_runs}order = "shuffled"
seed = {args.seed}
timeout = "60s"
counters = ["task-clock", "context-switches", "cpu-migrations", "page-faults"]

[params]
size = [{values}]

[[variant]]
name = "fast"
run = ["prog", "--fast", "--size={{size}}"]

[[variant]]
name = "slow"
run = ["prog", "--slow", "--size={{size}}"]

[metric.ms]
json = "ms"
unit = "ms"
better = "lower"

[metric.ops]
json = "ops"
unit = "ops"
count = true

[metric.checksum]
json = "checksum"
text = true

[[check]]
name = "the time depends neither on run order nor on the previous run"
kind = "order"
metric = "ms"

[[check]]
name = "runs of a cell vary under 25%"
kind = "stable"
metric = "ms"
max_cv = "25%"
"""


def cells_of(args):
    sizes = list(range(1, max(1, args.cells // 2) + 1))
    return sizes, [(v, s) for v in VARIANTS for s in sizes]


def schedule(cells, args, rng):
    """Every run in execution order: (cell index, warm-up, kind, repeats-index or None)."""
    events = [(c, True, "quiet") for c in rng.sample(range(len(cells)), len(cells))]
    burst = 0
    for _ in range(args.runs):
        block = list(range(len(cells)))
        rng.shuffle(block)
        for c in block:
            if burst == 0 and rng.random() < DISTURBED / 4:
                burst = rng.randint(1, 7)
            kind = "disturbed" if burst else ("failed" if rng.random() < FAILED else "quiet")
            burst = max(0, burst - 1)
            events.append((c, False, kind))
    runs = []
    for c, warmup, kind in events:
        runs.append((c, warmup, kind, None))
        if kind == "disturbed" and args.analysis < 3:
            runs.append((c, warmup, "quiet", len(runs) - 1))
    return runs


def values_of(variant, size, iterations, rng):
    centre = (8.0 if variant == "fast" else 11.0) * (1.0 + (size - 1) / 5.0)
    level = centre * math.exp(rng.gauss(0.0, 0.03))
    return [
        f"{level * (1.0 + 0.3 * math.exp(-i / 3.0)) * (1.0 + rng.gauss(0.0, 0.02)):.3g}"
        for i in range(iterations)
    ]


def stdout_of(ms, ops, checksum):
    lines = [f'{{"ms": {v}}}\n' for v in ms]
    lines.append(f'{{"ops": {ops}, "checksum": "{checksum}"}}\n')
    return "".join(lines).encode()


def ticks(ns):
    return int(round(ns / TICK_NS)) * TICK_NS


def usage_fields(wall_ns, kind, rng):
    """user, sys, host busy/capacity, PSI, wait_ns, wait_share for a run of `wall_ns`."""
    own = wall_ns * 0.92
    user_ns = ticks(own * 0.9)
    sys_ns = ticks(own * 0.1)
    share = rng.uniform(0.08, 0.30) if kind == "disturbed" else rng.uniform(0.0, 0.01)
    others = wall_ns * (share * 3.0 if kind == "disturbed" else rng.uniform(0.0, 0.3))
    capacity = 2 * wall_ns // 10_000_000 * 10_000_000
    busy = min(capacity, int(user_ns + sys_ns + others)) // 10_000_000 * 10_000_000
    wait_ns = int(share * wall_ns)
    psi = int(wall_ns * (share + rng.uniform(0.0, 0.05)) / 1000)
    return user_ns, sys_ns, busy, capacity, psi, wait_ns, f"{share:.4f}"


def run_fields(ctx, n, event):
    """One runs.csv row and its stdout, stderr and samples."""
    args, rng, cells, width = ctx["args"], ctx["rng"], ctx["cells"], ctx["width"]
    c, warmup, kind, repeats = event
    variant, size = cells[c]
    run_id = f"r{n:0{width}d}"
    ms = [] if kind == "failed" else values_of(variant, size, args.iterations, rng)
    ops, checksum = 1000 * size, hashlib.sha256(f"{variant}{size}".encode()).hexdigest()[:16]
    stdout = b"" if kind == "failed" else stdout_of(ms, ops, checksum)
    stderr = (b"error: no such size\n" if kind == "failed"
              else b"warning: cache not warm\n" if rng.random() < 0.05 else b"")
    samples = [] if kind == "failed" else (
        [("ms", i, v) for i, v in enumerate(ms)] + [("ops", 0, ops), ("checksum", 0, checksum)])
    wall_ns = SPAWN_NS + int(sum(float(v) for v in ms) * 1e6) + rng.randint(0, 200_000)
    user, sys_, busy, capacity, psi, wait_ns, share = usage_fields(wall_ns, kind, rng)
    if kind == "disturbed" and args.analysis >= 3:
        wall_ns = int(wall_ns * (1 + float(share)))
    ctx["repetitions"][c] += 0 if warmup or repeats is not None else 1
    row = {
        "run_id": run_id, "position": n, "variant": variant, "size": size,
        "repetition": max(1, ctx["repetitions"][c]) if not warmup else 1,
        "warmup": "true" if warmup else "false", "start_utc": utc(ctx["clock_ns"] // 10**9),
        "wall_ns": wall_ns, "boottime_ns": wall_ns + 40, "user_ns": user, "sys_ns": sys_,
        "max_rss_kib": 4096 + 128 * rng.randint(0, 3), "voluntary_cs": rng.randint(0, 3),
        "involuntary_cs": rng.randint(0, 2) + (20 if kind == "disturbed" else 0),
        "exit_code": 1 if kind == "failed" else 0, "timed_out": "false",
        "stdout_sha256": hashlib.sha256(stdout).hexdigest(), "host_busy_ns": busy,
        "host_steal_ns": 0, "host_capacity_ns": capacity, "psi_cpu_some_us": psi,
        "busy_limit": BUSY_LIMIT, "samples": len(samples), "node": NODES[n % len(NODES)],
        "start_boottime_ns": ctx["clock_ns"] - START_UNIX * 10**9 + 5 * 10**9,
        "minor_faults": 180 + rng.randint(0, 4), "major_faults": 0, "block_in": 0,
        "block_out": 0, "counter_task_clock": user + sys_ + rng.randint(0, 99_999),
        "counter_context_switches": rng.randint(0, 3) + (20 if kind == "disturbed" else 0),
        "counter_cpu_migrations": rng.randint(0, 1), "counter_page_faults": 180,
        "wait_ns": wait_ns, "wait_tasks": 1, "wait_share": share,
    }
    ctx["clock_ns"] += wall_ns + SPAWN_NS
    plan = {"id": run_id, "position": n, "variant": variant, "params": {"size": size},
            "repetition": row["repetition"], "warmup": warmup,
            "argv": ["prog", f"--{variant}", f"--size={size}"]}
    if repeats is not None:
        plan["repeats"] = f"r{repeats + 1:0{width}d}"
    return row, plan, stdout, stderr, samples


def write_runs(args, session, cells, events):
    ctx = {"args": args, "rng": random.Random(args.seed + 1), "cells": cells,
           "width": max(4, len(str(len(events)))), "repetitions": [0] * len(cells),
           "clock_ns": START_UNIX * 10**9}
    logs = session / "logs"
    logs.mkdir()
    with open(session / "runs.csv", "w") as runs_csv, \
            open(session / "samples.csv", "w") as samples_csv, \
            open(session / "plan.json", "w") as plan_json, \
            open(logs / "stdout.pack", "wb") as out_pack, \
            open(logs / "stderr.pack", "wb") as err_pack:
        runs_csv.write(",".join(HEADER) + "\n")
        samples_csv.write("run_id,metric,iteration,value\n")
        plan_json.write(f'{{"order": "shuffled", "seed": {args.seed}, "runs": [\n')
        for n, event in enumerate(events, start=1):
            row, plan, stdout, stderr, samples = run_fields(ctx, n, event)
            samples_csv.write("".join(f"{row['run_id']},{m},{i},{v}\n" for m, i, v in samples))
            row.update({"stdout_offset": out_pack.tell(), "stdout_bytes": len(stdout),
                        "stderr_offset": err_pack.tell(), "stderr_bytes": len(stderr),
                        "stderr_sha256": hashlib.sha256(stderr).hexdigest()})
            out_pack.write(stdout)
            err_pack.write(stderr)
            runs_csv.write(",".join(str(row.get(h, "")) for h in HEADER) + "\n")
            plan_json.write(("," if n > 1 else "") + json.dumps(plan) + "\n")
        plan_json.write("]}\n")
    return ctx["clock_ns"]


def manifest(args, toml_text, planned, finished_ns):
    return {
        "lab_version": "0.1.0",
        "experiment": args.name,
        "experiment_file_hash": hashlib.sha256(toml_text.encode()).hexdigest(),
        "profile": None,
        "command": f"lab run experiments/{args.name}",
        "seed": args.seed,
        "order": "shuffled",
        "planned_runs": planned,
        "git": None,
        "host": {
            "name": "shared", "cpu_model": "synthetic", "logical_cpus": 2,
            "allowed_cpus": "0-1", "governor": None, "turbo": None, "kernel": None,
            "memory_total": None,
        },
        "load_before": "2.10 1.90 1.80",
        "load_after": "2.60 2.20 1.90",
        "started_utc": utc(START_UNIX),
        "finished_utc": utc(finished_ns // 10**9),
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
        "analysis": args.analysis,
    }


def main(args, experiment, session):
    if session.exists():
        raise SystemExit(f"{session} exists already: choose another --out or remove it")
    experiment.mkdir(parents=True, exist_ok=True)
    (session / "sealed").mkdir(parents=True)
    sizes, cells = cells_of(args)
    toml_text = lab_toml(args, sizes)
    (experiment / "lab.toml").write_text(toml_text)
    (session / "sealed" / "lab.toml").write_text(toml_text)
    events = schedule(cells, args, random.Random(args.seed))
    finished = write_runs(args, session, cells, events)
    text = json.dumps(manifest(args, toml_text, len(events), finished), indent=2) + "\n"
    (session / "manifest.json").write_text(text)
    print(f"wrote {session}: {len(events)} runs ({len(cells)} cells)")
