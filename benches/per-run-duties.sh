#!/usr/bin/env bash
# What each of lab's per-run duties costs, in µs of lab's own CPU time per run.
#
#   benches/per-run-duties.sh [--lab PATH] [--runs N]
#
# Writes an experiment that runs `true` N times (default 2000) with lab's guard against a busy
# machine on, as a user's session has it, runs it under `perf record` (the cpu-clock software
# event, which needs no PMU, with DWARF call graphs, so a release build without frame pointers
# unwinds), and prints a Markdown table: for each duty, the share of lab's main thread's
# samples spent in it (its function and everything it calls) times that thread's CPU time,
# divided by the runs. The spawned programs are other processes and are not counted; neither
# are lab's start (calibration) and end (analysis, chapter), which happen once a session.
# Needs perf (Debian: linux-perf) and a lab built with `cargo build --release`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LAB=$ROOT/target/release/lab
RUNS=2000
while (($#)); do
    case $1 in
        --lab) LAB=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
command -v perf >/dev/null || { echo "error: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
[[ -x $LAB ]] || { echo "error: $LAB is not built (cargo build --release)" >&2; exit 1; }

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
mkdir -p "$SCRATCH/experiments/spawn"
cat >"$SCRATCH/experiments/spawn/lab.toml" <<TOML
[experiment]
title = "spawn"
hypothesis = "lab adds little to a run"
repetitions = $RUNS
warmup_runs = 0

[[variant]]
name = "true"
run = ["true"]
TOML

FREQ=4999
(cd "$SCRATCH" && perf record -q -e cpu-clock -F $FREQ --call-graph dwarf,8192 -o perf.data \
    "$LAB" run spawn --quiet >lab.out 2>&1) || true
RAN=$(($(wc -l <"$(ls -d "$SCRATCH"/data/spawn/*/)runs.csv") - 1))
perf script -i "$SCRATCH/perf.data" -F pid,tid,ip,sym 2>/dev/null | python3 -c '
import sys
freq, runs = int(sys.argv[1]), int(sys.argv[2])
duties = [
    ("preparing the process (argv, environment, folder; before the clock starts)", "lab::exec::spawn::prepare"),
    ("starting the process (clone until execve)", "lab::exec::spawn::Ready::start"),
    ("waiting for it and reaping it (pidfd, wait4, rusage)", "lab::exec::process::wait_blocking"),
    ("sampling the machine before and after (/proc/stat, PSI)", "lab::exec::machine::sample"),
    ("looking for processes the run left behind", "lab::exec::orphans::reap_leftovers"),
    ("checking the session files were not touched", "lab::store::writer::SessionWriter::verify"),
    ("packing its output (spools into the packs, SHA-256)", "lab::store::writer::SessionWriter::pack_spooled"),
    ("reading its values from its output", "lab::exec::metrics::MetricReader::read_values"),
    ("appending and flushing its row and values", "lab::store::writer::SessionWriter::append"),
    ("checking the disk has room", "lab::exec::refuse_on_full_disk"),
    ("deciding whether to run it again, and planning it", "lab::exec::plan_again"),
    ("the progress line", "lab::exec::progress::Progress::finished"),
]
main, samples, stack = None, [], []
def flush():
    if stack:
        samples.append(stack[:])
for line in sys.stdin:
    if not line.strip():
        flush(); stack.clear(); continue
    if not line.startswith((" ", "\t")):
        pid, tid = line.split()[0].split("/")
        main = main or pid
        stack.clear(); stack.append(tid == main)
    else:
        stack.append(line.split(None, 1)[1].strip() if len(line.split(None, 1)) > 1 else "")
flush()
ours = [s[1:] for s in samples if s and s[0]]
us = lambda n: n / freq * 1e6 / runs
print("| duty (per run) | µs of lab CPU |")
print("|---|---|")
for label, sym in duties:
    n = sum(any(f.startswith(sym + "+") or f == sym for f in s) for s in ours)
    print(f"| {label} | {us(n):.1f} |")
print(f"| all of lab main thread, its start and end included, per run | {us(len(ours)):.1f} |")
print()
print(f"{runs} runs stored; {len(ours)} samples of lab main thread at {freq} Hz")
' "$FREQ" "$RAN"
