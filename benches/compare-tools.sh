#!/usr/bin/env bash
# compare-tools.sh — lab's performance side by side with other tools, on one machine, in one run.
#
# Measures, and prints as a Markdown table of ratios (absolute figures only as detail):
#   1. session cost per run: a whole `lab run` session (calibration, N runs of `true`, analysis,
#      book) against `hyperfine -N --runs N true` and a bare posix_spawn + waitpid loop in C;
#   2. timing agreement: lab's mean wall time of a fixed C busy loop (about 0.2 s of CPU)
#      against hyperfine's mean for the same command, in short alternating blocks (target ±3%);
#   3. lab's own CPU time per 2 s run: each run of a 2 s C busy loop reads lab's CPU-time clock
#      as it ends; consecutive readings differ by what lab spent on one run, with nothing of
#      its start or end (calibration, analysis, book) in it (target ≤ 0.05% of the run);
#      hyperfine's, read the same way, beside it;
#   4. `lab report` on a synthetic session of 10 cells × 10,000 runs (scripts/synthetic_session.py)
#      against benches/scipy_cells.py (pandas + scipy.stats.bootstrap, the same per-cell
#      intervals: median by percentile, mean by BCa, 10,000 resamples): time and peak memory;
#   5. the same on a realistic session of as many runs (`synthetic_session.py --realistic`:
#      a session as `lab run` records it on a shared machine, with disturbed and failed runs,
#      three iterations a run, counters, three nodes), against the same script.
# Each is repeated --rounds times, the tools' order rotated from round to round in 1–3,
# lab and SciPy alternating in 4; the medians count.
# docs/src/topics/performance.md explains each measurement and holds one run's output.
#
# Usage: benches/compare-tools.sh [--lab PATH] [--runs N] [--rounds R] [--scratch DIR]
#                                 [--report-runs N] [--parts LIST]
#   --lab PATH        the lab binary to measure (default: `cargo build --release`, then
#                     target/release/lab)
#   --runs N          runs of `true` per session in measurement 1 (default 2000)
#   --rounds R        repetitions of each measurement (default 3; measurement 2 makes four
#                     blocks of 5 runs per tool a round, measurement 4 alternates lab and SciPy)
#   --scratch DIR     where to work (default: a fresh mktemp folder, removed at exit; a folder
#                     given here is kept, and must not exist yet or be empty)
#   --report-runs N   runs per cell of the synthetic session in measurement 4 (default 10000)
#   --parts LIST      which measurements to make, e.g. 1,2 (default 1,2,3,4,5)
#   --hyperfine PATH  the hyperfine binary to compare with (default: hyperfine on PATH), e.g. a
#                     2.0 installed with `cargo install hyperfine --version 2.0.0
#                     --ignore-rust-version --root /opt/hf2` as /opt/hf2/bin/hyperfine
# Needs: hyperfine, a C compiler as `cc`, GNU time as /usr/bin/time, python3 with numpy,
# scipy and pandas. It installs nothing; it names what is missing and how to install it.
# Took 10 minutes on a busy 2-core machine, most of it in measurement 4; removing the scratch
# folder (200,000 log files) can take minutes more. Progress goes to stderr; the report alone
# to stdout: `benches/compare-tools.sh > result.md`.
# Exit status: 0 when no row fails (an INCONCLUSIVE row, too noisy to decide, does not), 1 when
# one does, 2 on a usage error or a missing tool.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB=""
RUNS=2000
ROUNDS=3
SCRATCH=""
REPORT_RUNS=10000
REPORT_CELLS=10
PARTS="1,2,3,4,5"
HYPERFINE=hyperfine
AGREE_BLOCK=5    # runs per tool and block in measurement 2, four blocks a round
CPU_RUNS=5       # runs per tool and round in measurement 3

# usage STATUS: the header above, to stdout for --help and to stderr after a mistake.
usage() {
    if (($1 == 0)); then
        sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    else
        sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    fi
    exit "$1"
}

die() {
    echo "compare-tools: $*" >&2
    exit 2
}

say() {
    echo "[compare-tools] $*" >&2
}

positive_integer() {
    [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 takes a whole number of at least 1, not '$2'"
}

parse_args() {
    while (($#)); do
        case $1 in
            --lab) LAB=${2:?--lab needs a path}; shift 2 ;;
            --runs) positive_integer "$1" "${2:-}"; RUNS=$2; shift 2 ;;
            --rounds) positive_integer "$1" "${2:-}"; ROUNDS=$2; shift 2 ;;
            --scratch) SCRATCH=${2:?--scratch needs a folder}; shift 2 ;;
            --report-runs) positive_integer "$1" "${2:-}"; REPORT_RUNS=$2; shift 2 ;;
            --parts) PARTS=${2:?--parts needs a list such as 1,2}; shift 2 ;;
            --hyperfine) HYPERFINE=${2:?--hyperfine needs a path}; shift 2 ;;
            -h | --help) usage 0 ;;
            *) echo "compare-tools: unknown option '$1'" >&2; usage 2 ;;
        esac
    done
    [[ $PARTS =~ ^[1-5](,[1-5])*$ ]] || die "--parts takes numbers 1 to 5 separated by commas, not '$PARTS'"
}

wants() {
    [[ ,$PARTS, == *,$1,* ]]
}

# ---------------------------------------------------------------------------------------------
# Tools

check_tools() {
    local missing=()
    command -v "$HYPERFINE" >/dev/null || missing+=("$HYPERFINE: apt-get install hyperfine (or cargo install hyperfine)")
    command -v cc >/dev/null || missing+=("a C compiler as cc: apt-get install gcc")
    [[ -x /usr/bin/time ]] && /usr/bin/time -f '%e' true >/dev/null 2>&1 ||
        missing+=("GNU time as /usr/bin/time: apt-get install time")
    if ! command -v python3 >/dev/null; then
        missing+=("python3: apt-get install python3 python3-pip")
    elif ! python3 -c 'import numpy, scipy, pandas' 2>/dev/null; then
        missing+=("python3 modules numpy, scipy, pandas: pip install scipy pandas (or apt-get install python3-scipy python3-pandas)")
    fi
    if [[ -z $LAB ]] && ! command -v cargo >/dev/null; then
        missing+=("cargo, to build lab (or pass --lab PATH): see https://rustup.rs")
    fi
    if { wants 4 || wants 5; } && [[ ! -f $ROOT/scripts/synthetic_session.py ]]; then
        missing+=("scripts/synthetic_session.py (part of this repository): run from a full checkout")
    fi
    if ((${#missing[@]})); then
        echo "compare-tools: missing what the measurements need:" >&2
        printf '  - %s\n' "${missing[@]}" >&2
        exit 2
    fi
}

resolve_lab() {
    if [[ -z $LAB ]]; then
        say "building lab: cargo build --release"
        (cd "$ROOT" && cargo build --release --quiet) >&2
        LAB=${CARGO_TARGET_DIR:-$ROOT/target}/release/lab
    fi
    [[ -x $LAB ]] || die "--lab $LAB: not an executable file"
    LAB=$(cd "$(dirname "$LAB")" && pwd)/$(basename "$LAB")
}

prepare_scratch() {
    if [[ -z $SCRATCH ]]; then
        SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/compare-tools.XXXXXX")
        trap 'rm -rf -- "$SCRATCH"' EXIT
    else
        [[ ! -e $SCRATCH || -z $(ls -A "$SCRATCH") ]] || die "--scratch $SCRATCH: exists and is not empty"
        mkdir -p "$SCRATCH"
        SCRATCH=$(cd "$SCRATCH" && pwd)
    fi
    # Paths are written into lab.toml as literal strings.
    [[ $SCRATCH != *[\'$'\n']* ]] || die "the scratch folder's path holds a quote or a newline: pass --scratch"
}

# Two small C programs: a bare spawn loop (the floor of spawning a process) and a fixed amount
# of work that takes the same CPU time whatever else the machine does.
build_programs() {
    mkdir -p "$SCRATCH/bin"
    cat >"$SCRATCH/bin/spawnloop.c" <<'EOF'
/* spawnloop N PROGRAM [ARG...]: posix_spawnp + waitpid, N times, nothing else. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
extern char **environ;
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: spawnloop N PROGRAM [ARG...]\n"); return 2; }
    long n = atol(argv[1]);
    for (long i = 0; i < n; i++) {
        pid_t pid;
        int rc = posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ);
        if (rc != 0) { fprintf(stderr, "spawnloop: cannot start %s\n", argv[2]); return 1; }
        int status;
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "spawnloop: %s failed\n", argv[2]);
            return 1;
        }
    }
    return 0;
}
EOF
    cat >"$SCRATCH/bin/busy.c" <<'EOF'
/* busy ITERATIONS [FILE]: a fixed number of xorshift steps; with FILE, then appends to it the
   CPU time of its parent process (the tool that started it) in nanoseconds, read from the
   parent's CPU-time clock (clock_getcpuclockid).
   busy --calibrate SECONDS: prints how many steps take SECONDS of this process's CPU time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static volatile uint64_t sink;
static void work(uint64_t steps) {
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < steps; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
    sink = x;
}
static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--calibrate") == 0) {
        double target = atof(argv[2]), took = 0;
        uint64_t steps = 1000000;
        while (took < 0.25) {
            steps *= 2;
            double start = cpu_seconds();
            work(steps);
            took = cpu_seconds() - start;
        }
        printf("%llu\n", (unsigned long long)(steps * (target / took)));
        return 0;
    }
    if (argc != 2 && argc != 3) { fprintf(stderr, "usage: busy ITERATIONS [FILE] | busy --calibrate SECONDS\n"); return 2; }
    work(strtoull(argv[1], NULL, 10));
    if (argc == 3) {
        clockid_t parent;
        struct timespec t;
        FILE *out = fopen(argv[2], "a");
        if (!out || clock_getcpuclockid(getppid(), &parent) != 0 || clock_gettime(parent, &t) != 0) {
            fprintf(stderr, "busy: cannot read the parent's CPU time into %s\n", argv[2]);
            return 1;
        }
        fprintf(out, "%lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
        fclose(out);
    }
    return 0;
}
EOF
    cc -O2 -o "$SCRATCH/bin/spawnloop" "$SCRATCH/bin/spawnloop.c"
    cc -O2 -o "$SCRATCH/bin/busy" "$SCRATCH/bin/busy.c"
}

# ---------------------------------------------------------------------------------------------
# Small helpers

# Seconds since an $EPOCHREALTIME reading.
since() {
    awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f", b - a }'
}

# The median of the numbers given as arguments.
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# calc EXPRESSION: awk arithmetic, printed with %.6g unless a format is given.
calc() {
    awk "BEGIN { printf \"${2:-%.6g}\", ($1) }"
}

# write_experiment PROJECT NAME REPETITIONS WARMUP GUARD ARGV...: a one-variant lab.toml.
# GUARD "off" sets max_busy to 100% and requeue to 0, so that every planned run is measured
# and counted, as it is by the tool lab is compared with.
write_experiment() {
    local project=$1 name=$2 repetitions=$3 warmup=$4 guard=$5
    shift 5
    local dir=$project/experiments/$name argv="" arg
    mkdir -p "$dir"
    for arg in "$@"; do argv+="${argv:+, }'$arg'"; done
    {
        echo '[experiment]'
        echo "title = \"$name\""
        echo 'hypothesis = "lab measures this command as other tools do"'
        echo "repetitions = $repetitions"
        echo "warmup_runs = $warmup"
        echo 'timeout = "120s"'
        if [[ $guard == off ]]; then
            echo 'max_busy = "100%"'
            echo 'requeue = 0'
        fi
        echo
        echo '[[variant]]'
        echo 'name = "cmd"'
        echo "run = [$argv]"
    } >"$dir/lab.toml"
}

# lab_session PROJECT NAME: `lab run NAME --quiet` in PROJECT; exit 0 or 1 (a check failed,
# e.g. runs of `true` too short to time) is a finished session, anything else stops the script.
lab_session() {
    local rc=0
    (cd "$1" && "$LAB" run "$2" --quiet) >"$1/lab.log" 2>&1 || rc=$?
    ((rc <= 1)) || die "lab run $2 exited $rc: see $1/lab.log
$(tail -5 "$1/lab.log")"
}

# The one session folder of a project's experiment.
session_dir() {
    local dirs=("$1"/data/"$2"/*/)
    [[ ${#dirs[@]} == 1 && -f ${dirs[0]}runs.csv ]] || die "$1/data/$2: expected one session"
    echo "${dirs[0]%/}"
}

# runs_csv FILE walls|cpu_mean: from lab's runs.csv, over measured (not warm-up) runs, every
# wall time in seconds, one a line, or the mean CPU time (user + system) in seconds.
runs_csv() {
    python3 - "$1" "$2" <<'EOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["warmup"] != "true"]
walls = [int(r["wall_ns"]) / 1e9 for r in rows]
if sys.argv[2] == "walls":
    print("\n".join(f"{w:.9f}" for w in walls))
else:
    print(f"{sum(int(r['user_ns']) + int(r['sys_ns']) for r in rows) / len(rows) / 1e9:.9f}")
EOF
}

ROWS=()
FAILED=0

# row WHAT LAB OTHER RATIO TARGET OK: one line of the results table; OK is 1 (PASS), 0 (FAIL)
# or "inconclusive" (the data cannot decide: too noisy).
row() {
    local verdict=PASS
    case $6 in
        1) ;;
        inconclusive) verdict=INCONCLUSIVE ;;
        *) verdict=FAIL; FAILED=1 ;;
    esac
    ROWS+=("| $1 | $2 | $3 | $4 | $5 | $verdict |")
}

# ---------------------------------------------------------------------------------------------
# 1. Session cost per run

measure_session_cost() {
    local lab_s=() hf_s=() raw_s=() round tool start project
    for ((round = 1; round <= ROUNDS; round++)); do
        say "1. session cost, round $round of $ROUNDS: lab, hyperfine and the spawn loop, $RUNS runs of true each"
        project=$SCRATCH/p1/round$round
        write_experiment "$project" spawn "$RUNS" 0 on true
        for tool in $(rotate "$round" lab hyperfine raw); do
            start=$EPOCHREALTIME
            case $tool in
                lab) lab_session "$project" spawn; lab_s+=("$(since "$start")") ;;
                hyperfine)
                    "$HYPERFINE" -N --runs "$RUNS" --style none true >/dev/null 2>&1
                    hf_s+=("$(since "$start")")
                    ;;
                raw) "$SCRATCH/bin/spawnloop" "$RUNS" true; raw_s+=("$(since "$start")") ;;
            esac
        done
    done
    local lab hf raw
    lab=$(median "${lab_s[@]}") hf=$(median "${hf_s[@]}") raw=$(median "${raw_s[@]}")
    local per_run="ms a run (median of $ROUNDS)"
    local vs_hf vs_raw
    vs_hf=$(calc "$lab / $hf" %.3f) vs_raw=$(calc "$lab / $raw" %.3f)
    row "whole session of $RUNS runs of \`true\` (calibration, analysis, book included) against \`hyperfine -N --runs $RUNS true\`" \
        "$(calc "$lab * 1000 / $RUNS" %.3f) $per_run" "$(calc "$hf * 1000 / $RUNS" %.3f) $per_run" \
        "$vs_hf" "≤ 1.05" "$(calc "$vs_hf <= 1.05" %d)"
    row "the same session against a bare posix_spawn + waitpid loop in C" \
        "$(calc "$lab * 1000 / $RUNS" %.3f) $per_run" "$(calc "$raw * 1000 / $RUNS" %.3f) $per_run" \
        "$vs_raw" "≤ 1.10" "$(calc "$vs_raw <= 1.10" %d)"
}

# rotate ROUND WORDS...: the words, starting at word ROUND (cyclically), so no tool is always first.
rotate() {
    local round=$1
    shift
    local words=("$@") n=$# i
    for ((i = 0; i < n; i++)); do echo "${words[(round - 1 + i) % n]}"; done
}

# ---------------------------------------------------------------------------------------------
# 2. Timing agreement on a fixed command

measure_agreement() {
    local steps project tool block blocks=$((4 * ROUNDS)) lab_walls=() hf_walls=() json session walls
    steps=$("$SCRATCH/bin/busy" --calibrate 0.2)
    # Short blocks, alternating, so that a disturbance of a few seconds falls on both tools.
    for ((block = 1; block <= blocks; block++)); do
        say "2. timing agreement, block $block of $blocks: $AGREE_BLOCK runs of a 0.2 s busy loop through lab and through hyperfine"
        project=$SCRATCH/p2/block$block
        json=$SCRATCH/p2/hyperfine$block.json
        write_experiment "$project" busy "$AGREE_BLOCK" 1 off "$SCRATCH/bin/busy" "$steps"
        for tool in $(rotate "$block" lab hyperfine); do
            case $tool in
                lab)
                    lab_session "$project" busy
                    session=$(session_dir "$project" busy)
                    walls=$(runs_csv "$session/runs.csv" walls)
                    mapfile -t -O "${#lab_walls[@]}" lab_walls <<<"$walls"
                    runs_csv "$session/runs.csv" cpu_mean >>"$SCRATCH/p2/cpu"
                    ;;
                hyperfine)
                    "$HYPERFINE" -N --warmup 1 --runs "$AGREE_BLOCK" --style none --export-json "$json" \
                        "$SCRATCH/bin/busy $steps" >/dev/null 2>&1
                    # 1.x lists "times"; 2.0 (schema 2) one "measurements" object a run.
                    walls=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
times = r["times"] if "times" in r else [m["time"]["value"] for m in r["measurements"]]
print("\n".join(f"{t:.9f}" for t in times))' "$json")
                    mapfile -t -O "${#hf_walls[@]}" hf_walls <<<"$walls"
                    ;;
            esac
        done
    done
    local lab_mean hf_mean interval ratio lo hi median_ratio verdict stretch
    lab_mean=$(printf '%s\n' "${lab_walls[@]}" | awk '{ s += $1 } END { printf "%.9f", s / NR }')
    hf_mean=$(printf '%s\n' "${hf_walls[@]}" | awk '{ s += $1 } END { printf "%.9f", s / NR }')
    interval=$(ratio_interval "$(printf '%s ' "${lab_walls[@]}")" "$(printf '%s ' "${hf_walls[@]}")")
    read -r ratio lo hi <<<"$interval"
    median_ratio=$(calc "$(median "${lab_walls[@]}") / $(median "${hf_walls[@]}")" %.4f)
    stretch=$(calc "$lab_mean / $(awk '{ s += $1 } END { print s / NR }' "$SCRATCH/p2/cpu")" %.2f)
    # Decided on the interval, as lab decides a compare check: inside the band passes, outside
    # fails, straddling it means the machine was too noisy to tell.
    verdict=inconclusive
    if [[ $(calc "$lo >= 0.97 && $hi <= 1.03" %d) == 1 ]]; then
        verdict=1
    elif [[ $(calc "$hi < 0.97 || $lo > 1.03" %d) == 1 ]]; then
        verdict=0
    fi
    row "mean wall time of a fixed C busy loop ($steps steps), ${#lab_walls[@]} runs each in alternating blocks of $AGREE_BLOCK, one warm-up run a block; ratio of means with its 95% bootstrap interval; ratio of medians $median_ratio; the runs' wall time was ${stretch}× their CPU time" \
        "$(calc "$lab_mean * 1000" %.2f) ms" "hyperfine $(calc "$hf_mean * 1000" %.2f) ms" \
        "$ratio [$lo, $hi]" "0.97–1.03" "$verdict"
}

# ---------------------------------------------------------------------------------------------
# 3. lab's own CPU time per 2 s run

# ratio_interval "A..." "B...": mean(A) / mean(B) and its 95% percentile bootstrap interval,
# each sample resampled on its own (10,000 resamples, seeded).
ratio_interval() {
    python3 - "$1" "$2" <<'EOF'
import random, statistics, sys
a, b = ([float(x) for x in arg.split()] for arg in sys.argv[1:3])
rng = random.Random(1)
ratios = sorted(
    statistics.fmean(rng.choices(a, k=len(a))) / statistics.fmean(rng.choices(b, k=len(b)))
    for _ in range(10_000)
)
print(f"{statistics.fmean(a) / statistics.fmean(b):.4f} {ratios[249]:.4f} {ratios[9749]:.4f}")
EOF
}

# The CPU time a tool spends for each run, read by the runs themselves: each run of
# `busy STEPS FILE` appends its parent's CPU-time clock to FILE as it ends, while the parent
# waits for it. The difference between two readings is everything the tool did for one run
# (storing the previous run, sampling the machine, spawning and waiting for the next) and
# nothing of its start or its end.
# intervals FILE: prints each difference in ns, one a line.
intervals() {
    awk 'NR > 1 { print $1 - last } { last = $1 }' "$1"
}

measure_own_cpu() {
    local steps round project tool readings lab_ns=() hf_ns=() run_cpu=() session found
    steps=$("$SCRATCH/bin/busy" --calibrate 2.0)
    for ((round = 1; round <= ROUNDS; round++)); do
        say "3. own CPU time, round $round of $ROUNDS: $CPU_RUNS runs of a 2 s busy loop through lab and through hyperfine"
        project=$SCRATCH/p3/round$round
        for tool in $(rotate "$round" lab hyperfine); do
            readings=$SCRATCH/p3/$tool$round.ns
            case $tool in
                lab)
                    write_experiment "$project" busy "$CPU_RUNS" 0 off "$SCRATCH/bin/busy" "$steps" "$readings"
                    lab_session "$project" busy
                    session=$(session_dir "$project" busy)
                    run_cpu+=("$(runs_csv "$session/runs.csv" cpu_mean)")
                    found=$(intervals "$readings")
                    mapfile -t -O "${#lab_ns[@]}" lab_ns <<<"$found"
                    ;;
                hyperfine)
                    "$HYPERFINE" -N --runs "$CPU_RUNS" --style none "$SCRATCH/bin/busy $steps $readings" >/dev/null 2>&1
                    found=$(intervals "$readings")
                    mapfile -t -O "${#hf_ns[@]}" hf_ns <<<"$found"
                    ;;
            esac
        done
    done
    local lab_mean hf_mean run share
    lab_mean=$(printf '%s\n' "${lab_ns[@]}" | awk '{ s += $1 } END { printf "%.0f", s / NR }')
    hf_mean=$(printf '%s\n' "${hf_ns[@]}" | awk '{ s += $1 } END { printf "%.0f", s / NR }')
    run=$(median "${run_cpu[@]}")
    share=$(calc "100 * $lab_mean / ($run * 1e9)" %.4f)
    row "lab's own CPU time per run of a C busy loop of $(calc "$run" %.2f) s of CPU, as a share of the run (lab's CPU-time clock read by each run as it ends: mean of ${#lab_ns[@]} intervals)" \
        "$(calc "$lab_mean / 1e6" %.3f) ms a run" "hyperfine -N: $(calc "$hf_mean / 1e6" %.3f) ms a run" \
        "${share}%" "≤ 0.05%" "$(calc "$share <= 0.05" %d)"
}

# ---------------------------------------------------------------------------------------------
# 4. lab report on 100k runs against pandas + SciPy

# timed OUTPUT_PREFIX DIR ARGV...: runs ARGV in DIR under GNU time; prints "SECONDS KIB RC".
timed() {
    local prefix=$1 dir=$2 rc=0
    shift 2
    (cd "$dir" && /usr/bin/time -f '%e %M' -o "$prefix.time" "$@") >"$prefix.out" 2>"$prefix.err" || rc=$?
    echo "$(tail -1 "$prefix.time") $rc"
}

# measure_report PART KIND GENERATOR_ARGS...: measurement 4 (KIND "synthetic", the clean
# session) or 5 (KIND "realistic", --realistic): lab report against SciPy on one session.
measure_report() {
    local part=$1 kind=$2
    shift 2
    local project=$SCRATCH/p$part runs=$((REPORT_CELLS * REPORT_RUNS)) session
    say "$part. writing a $kind session of $REPORT_CELLS cells × $REPORT_RUNS runs"
    python3 "$ROOT/scripts/synthetic_session.py" --cells "$REPORT_CELLS" --runs "$REPORT_RUNS" \
        --seed 1 --out "$project/project" "$@" >&2
    session=$(session_dir "$project/project" synthetic)
    local lab_s lab_kib lab_rc sp_s sp_kib sp_rc measured round
    local lab_times=() lab_kibs=() sp_times=() sp_kibs=()
    # Alternating, so that a slow stretch of the machine falls on both; the medians count.
    for ((round = 1; round <= ROUNDS; round++)); do
        say "$part. round $round of $ROUNDS: lab report on $runs runs"
        measured=$(timed "$project/lab" "$project/project" "$LAB" report synthetic)
        read -r lab_s lab_kib lab_rc <<<"$measured"
        ((lab_rc > 1)) && break
        lab_times+=("$lab_s") lab_kibs+=("$lab_kib")
        say "$part. round $round of $ROUNDS: benches/scipy_cells.py on the same session"
        measured=$(timed "$project/scipy" "$project/project" python3 "$ROOT/benches/scipy_cells.py" "$session")
        read -r sp_s sp_kib sp_rc <<<"$measured"
        ((sp_rc == 0)) || die "benches/scipy_cells.py exited $sp_rc: $(tail -3 "$project/scipy.err")"
        sp_times+=("$sp_s") sp_kibs+=("$sp_kib")
    done
    local what="\`lab report\` of a $kind session of $REPORT_CELLS cells × $REPORT_RUNS runs against pandas + scipy.stats.bootstrap (median percentile, mean BCa, 10,000 resamples)"
    if ((lab_rc > 1)); then
        row "$what: time" "exited $lab_rc after ${lab_s} s: $(head -1 "$project/lab.err" | tr '|' '/')" "n/a" "n/a" "≤ 0.05" 0
        row "$what: peak memory" "exited $lab_rc" "n/a" "n/a" "≤ 0.60" 0
        return
    fi
    lab_s=$(median "${lab_times[@]}") lab_kib=$(median "${lab_kibs[@]}")
    sp_s=$(median "${sp_times[@]}") sp_kib=$(median "${sp_kibs[@]}")
    local time_ratio mem_ratio agreement each="(median of $ROUNDS: ${lab_times[*]} and ${sp_times[*]} s)"
    time_ratio=$(calc "$lab_s / $sp_s" %.3f)
    mem_ratio=$(calc "$lab_kib / $sp_kib" %.3f)
    agreement=$(cell_agreement "$project/project/book/src/synthetic/analysis.json" "$project/scipy.out")
    row "$what: time $each; $agreement" "${lab_s} s" "${sp_s} s" "$time_ratio" "≤ 0.05" "$(calc "$time_ratio <= 0.05" %d)"
    row "$what: peak memory (maximum resident set, median of $ROUNDS)" "$(calc "$lab_kib / 1024" %d) MiB" "$(calc "$sp_kib / 1024" %d) MiB" \
        "$mem_ratio" "≤ 0.60" "$(calc "$mem_ratio <= 0.60" %d)"
}

# cell_agreement ANALYSIS_JSON SCIPY_CSV: whether both computed the same cells: n and median
# equal, and how far apart the interval ends are (both resample, with different generators).
cell_agreement() {
    python3 - "$1" "$2" <<'EOF'
import csv, json, sys
try:
    cells = json.load(open(sys.argv[1]))["cells"]
    lab = {c["label"]: c for c in cells}
    scipy = {r["cell"]: r for r in csv.DictReader(open(sys.argv[2]))}
    same = sum(1 for k, r in scipy.items() if k in lab and lab[k]["n"] == int(r["n"])
               and abs(lab[k]["summary"]["median"] - float(r["median"])) <= 1e-5 * abs(float(r["median"])))
    gaps = [abs(lab[k][ci][end] - float(r[f"{stat}_{end}"])) / float(r[stat])
            for k, r in scipy.items() if k in lab
            for stat, ci in (("median", "median_ci"), ("mean", "mean_ci")) for end in ("lo", "hi")]
    print(f"n and median equal in {same} of {len(scipy)} cells, interval ends within {100 * max(gaps):.3f}% of each other")
except (OSError, KeyError, TypeError, ValueError) as e:
    print(f"cells not compared ({type(e).__name__}: {e})")
EOF
}

# ---------------------------------------------------------------------------------------------
# The report

python_versions() {
    python3 -c 'import platform, numpy, scipy, pandas
print(f"Python {platform.python_version()}, numpy {numpy.__version__}, scipy {scipy.__version__}, pandas {pandas.__version__}")'
}

machine_header() {
    local cpu cores
    cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
    cores=$(nproc)
    echo "## lab against hyperfine, a bare spawn loop and SciPy"
    echo
    echo "| machine | |"
    echo "|---|---|"
    echo "| date | $(date -u '+%Y-%m-%d %H:%M UTC') |"
    echo "| CPU | ${cpu:-unknown}, $cores CPUs online ($(grep -c ^processor /proc/cpuinfo) in /proc/cpuinfo) |"
    echo "| memory | $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) |"
    echo "| kernel | $(uname -sr) |"
    echo "| governor | $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo 'not exposed') |"
    echo "| /proc/loadavg at start | $LOAD_START |"
    echo "| /proc/loadavg at end | $(cat /proc/loadavg) |"
    echo "| scratch folder | $SCRATCH ($(df -PT "$SCRATCH" | awk 'NR == 2 { print $2 }')) |"
    echo "| lab | $("$LAB" --version) ($LAB) |"
    echo "| rustc | $(rustc --version 2>/dev/null || echo 'not on PATH') |"
    echo "| hyperfine | $("$HYPERFINE" --version) |"
    echo "| cc | $(cc --version | head -1) |"
    echo "| python | $(python_versions) |"
    echo "| settings | --runs $RUNS, --rounds $ROUNDS, --report-runs $REPORT_RUNS, --parts $PARTS; script ran ${ELAPSED} s |"
    echo
}

print_report() {
    machine_header
    echo "| what | lab | other | ratio | target | result |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
}

main() {
    parse_args "$@"
    check_tools
    resolve_lab
    prepare_scratch
    build_programs
    LOAD_START=$(cat /proc/loadavg)
    local start=$EPOCHREALTIME
    if wants 1; then measure_session_cost; fi
    if wants 2; then measure_agreement; fi
    if wants 3; then measure_own_cpu; fi
    if wants 4; then measure_report 4 synthetic --iterations 1; fi
    if wants 5; then measure_report 5 realistic --realistic --iterations 3; fi
    ELAPSED=$(calc "$(since "$start")" %.0f)
    print_report
    return "$FAILED"
}

main "$@"
