#!/usr/bin/env bash
# serve-idle.sh — what an idle `lab book --serve` costs in CPU over a large data/ folder.
#
# Writes a synthetic project with scripts/synthetic_session.py (one session of 10 cells × N
# runs, each run's stdout and stderr in logs/: 20 × N log files in one folder), then for each
# lab binary given: starts `lab book --serve` in it, waits until it answers, lets it settle
# for 5 s, and reads its CPU time (utime + stime of every thread, from /proc/PID/stat) before
# and after IDLE seconds in which nothing changes. Prints one line per binary: CPU seconds
# used and the share of one CPU. docs/src/topics/performance.md holds one run's figures.
#
# Usage: benches/serve-idle.sh [--lab PATH]... [--runs N] [--idle S] [--port P] [--scratch DIR]
#   --lab PATH     a lab binary to measure; give it more than once to compare binaries on the
#                  same data (default: `cargo build --release`, then target/release/lab)
#   --runs N       runs per cell of the synthetic session (default 5000: 100,000 log files)
#   --idle S       seconds of idling measured (default 30)
#   --port P       the loopback port to serve on (default 3917)
#   --scratch DIR  where to write the project (default: a fresh mktemp folder, removed at
#                  exit; a folder given here is kept, and must not exist yet)
# Needs python3. Exit status: 0, or 2 on a usage error.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LABS=()
RUNS=5000
IDLE=30
PORT=3917
SCRATCH=""
SERVER=""

die() {
    echo "serve-idle: $*" >&2
    exit 2
}

parse_args() {
    while (($#)); do
        case $1 in
            --lab) LABS+=("$(realpath "${2:?--lab needs a path}")"); shift 2 ;;
            --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
            --idle) IDLE=${2:?--idle needs seconds}; shift 2 ;;
            --port) PORT=${2:?--port needs a number}; shift 2 ;;
            --scratch) SCRATCH=${2:?--scratch needs a folder}; shift 2 ;;
            -h | --help) sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
            *) die "unknown option '$1' (see --help)" ;;
        esac
    done
    [[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs takes a whole number, not '$RUNS'"
    [[ $IDLE =~ ^[1-9][0-9]*$ ]] || die "--idle takes whole seconds, not '$IDLE'"
}

cleanup() {
    [[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null || true
    [[ -n ${REMOVE:-} ]] && rm -rf "$SCRATCH"
}

# cpu_ticks PID: utime + stime of the process, in clock ticks (fields 14 and 15 of its stat
# file, counted after the command name, which may hold spaces).
cpu_ticks() {
    local stat
    stat=$(<"/proc/$1/stat")
    awk '{ print $12 + $13 }' <<<"${stat##*) }"
}

# serving PORT: whether something answers on 127.0.0.1:PORT.
serving() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

measure() {
    local lab=$1 t0 t1 s0 s1
    (cd "$SCRATCH" && exec "$lab" book --serve --port "$PORT" --quiet 2>"$SCRATCH/serve.err") &
    SERVER=$!
    until serving "$PORT"; do
        kill -0 "$SERVER" 2>/dev/null || die "$lab stopped: $(cat "$SCRATCH/serve.err")"
        sleep 0.5
    done
    sleep 5
    t0=$(cpu_ticks "$SERVER") s0=$EPOCHREALTIME
    sleep "$IDLE"
    t1=$(cpu_ticks "$SERVER") s1=$EPOCHREALTIME
    kill "$SERVER"
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
    awk -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v s0="$s0" -v s1="$s1" -v lab="$lab" \
        'BEGIN { c = t / hz; printf "%s: %.2f s of CPU in %.1f s idle: %.2f%% of one CPU\n", lab, c, s1 - s0, 100 * c / (s1 - s0) }'
}

main() {
    parse_args "$@"
    if ((${#LABS[@]} == 0)); then
        cargo build --release --manifest-path "$ROOT/Cargo.toml" >&2
        LABS=("$ROOT/target/release/lab")
    fi
    if [[ -z $SCRATCH ]]; then
        SCRATCH=$(mktemp -d) REMOVE=1
    elif [[ -e $SCRATCH ]]; then
        die "$SCRATCH exists already"
    fi
    trap cleanup EXIT
    python3 "$ROOT/scripts/synthetic_session.py" --cells 10 --runs "$RUNS" --out "$SCRATCH" >&2
    echo "$(find "$SCRATCH/data" -type f | wc -l) files in $(find "$SCRATCH/data" -type d | wc -l) folders under data/" >&2
    for lab in "${LABS[@]}"; do
        measure "$lab"
    done
}

main "$@"
