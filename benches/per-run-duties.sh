#!/usr/bin/env bash
# What each of lab's per-run duties costs, in µs of wall time per run.
#
#   benches/per-run-duties.sh [--runs N] [--sessions K]
#
# Builds lab with the `duty-timing` feature (into target/duty-timing, so the ordinary build is
# left alone), writes an experiment that runs `true` N times (default 2000) with lab's guard
# against a busy machine on, as a user's session has it, runs K sessions of it (default 3) and
# prints each session's Markdown table: for each duty of the run loop, the wall time from its
# start to the next duty's, summed over the session and divided by its runs. The marks are
# read on the run loop's thread with `Instant::now`; the duties partition the loop, so the
# rows add up to the time between one run's start and the next, of which "the run" is the
# timed interval and the rest is what lab adds. Lab's start (calibration) and end (analysis,
# chapter) happen once a session and are not in the table. In a build without the feature the
# marks compile to nothing.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=2000
SESSIONS=3
while (($#)); do
    case $1 in
        --runs) RUNS=$2; shift 2 ;;
        --sessions) SESSIONS=$2; shift 2 ;;
        *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done

echo "building lab with the duty-timing feature…" >&2
cargo build --release --quiet --features duty-timing --target-dir "$ROOT/target/duty-timing" \
    --manifest-path "$ROOT/Cargo.toml"
LAB=$ROOT/target/duty-timing/release/lab

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

for ((i = 1; i <= SESSIONS; i++)); do
    echo "session $i of $SESSIONS: $RUNS runs of true" >&2
    (cd "$SCRATCH" && "$LAB" run spawn --quiet 2>&1 >/dev/null || true) | grep -E '^(\||\()'
    echo
done
