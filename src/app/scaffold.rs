//! `lab new NAME --lang L`: a new experiment folder whose benchmark already avoids the classic
//! traps: a fixed amount of work rather than a fixed time, the clock read around the whole
//! loop (never per operation), a checksum of the result so the work cannot be optimised away
//! and variants can be compared, and the configuration echoed as `{"config": …}` so an option
//! swallowed by the shell is caught. Two variants compute the same sum in two ways.

use super::new::Lang;
use crate::error::{LabError, Result};
use crate::layout::Layout;
use std::path::PathBuf;

/// Writes `experiments/NAME/` and returns its path; refuses to overwrite anything.
pub fn new_experiment(layout: &Layout, name: &str, lang: Lang) -> Result<PathBuf> {
    if let Some(why) = lab_config::identifier_problem(name) {
        return Err(LabError::Usage(format!(
            "cannot name an experiment {name:?}: it {why}\n  hint: use letters, digits, '_', '-' and '.'"
        )));
    }
    let dir = layout.experiments().join(name);
    if dir.exists() {
        return Err(LabError::Usage(format!(
            "{} already exists; lab new never overwrites\n  hint: choose another name, or remove the folder",
            dir.display()
        )));
    }
    let files = files(name, lang);
    std::fs::create_dir_all(&dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    for (file, text) in files {
        std::fs::write(dir.join(file), text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", dir.join(file).display()))?;
    }
    Ok(dir)
}

/// (file name, text) of every file of the new experiment.
fn files(name: &str, lang: Lang) -> Vec<(&'static str, String)> {
    let program = program(lang);
    vec![
        ("lab.toml", lab_toml(name, lang)),
        ("notes.md", notes(commands(lang).2)),
        (program.0, program.1.to_string()),
    ]
}

/// How each language builds and runs: (build argv, run argv prefix, work per size unit).
fn commands(lang: Lang) -> (Option<&'static str>, &'static str, u64) {
    match lang {
        Lang::Sh => (None, r#""sh", "bench.sh""#, 2_000_000),
        Lang::Python => (None, r#""python3", "bench.py""#, 2_000_000),
        Lang::C => (
            Some(r#"["cc", "-O2", "-o", "build/bench", "bench.c"]"#),
            r#""./build/bench""#,
            60_000_000,
        ),
        Lang::Rust => (
            Some(r#"["rustc", "-O", "-o", "build/bench", "bench.rs"]"#),
            r#""./build/bench""#,
            60_000_000,
        ),
        Lang::Java => (
            Some(r#"["javac", "-d", "build", "Bench.java"]"#),
            r#""java", "-cp", "build", "Bench""#,
            30_000_000,
        ),
    }
}

/// The `[build]` table of a language that compiles, with its source and output files.
fn build_table(build: Option<&str>, lang: Lang) -> String {
    let (source, output) = match lang {
        Lang::Sh => ("bench.sh", ""),
        Lang::Python => ("bench.py", ""),
        Lang::C => ("bench.c", "build/bench"),
        Lang::Rust => ("bench.rs", "build/bench"),
        Lang::Java => ("Bench.java", "build/Bench.class"),
    };
    build.map_or(String::new(), |argv| {
        format!("[build]\nrun     = {argv}\ninputs  = [\"{source}\"]\noutputs = [\"{output}\"]\n\n")
    })
}

fn lab_toml(name: &str, lang: Lang) -> String {
    let (build, run, unit) = commands(lang);
    let build = build_table(build, lang);
    format!(
        r#"[experiment]
title       = "{name}"
hypothesis  = """Twice the work takes clearly longer, and both ways of summing give the same answer."""
repetitions = {{ min = 5, max = 40 }}   # five runs per cell, more where a hypothesis is open
budget      = "5m"                       # no look starts that would end the runs past five minutes
warmup_runs = 1
seed        = 1
timeout     = "60s"

{build}[params]
size = [{unit}, {double}]

[[variant]]
name = "plain"
run  = [{run}, "--variant=plain", "--size={{size}}"]

[[variant]]
name = "unrolled"
run  = [{run}, "--variant=unrolled", "--size={{size}}"]

[metric.mops]
json   = "mops"
unit   = "Mops/s"
better = "higher"

[metric.checksum]
json = "checksum"
text = true

[profile.quick]
repetitions = 3
warmup_runs = 1   # a first run may find the interpreter or its input out of the page cache

[[check]]
name   = "both variants compute the same sum"
kind   = "checksum"
metric = "checksum"

[[check]]
name   = "twice the work takes longer"
kind   = "compare"
metric = "wall_s"
a      = {{ variant = "plain", size = {double} }}
b      = {{ variant = "plain", size = {unit} }}
expect = "a > 1.1 * b"
"#,
        double = unit * 2
    )
}

/// The notes: every number in them drawn from the data.
fn notes(unit: u64) -> String {
    format!(
        r#"Plain summing reaches {{{{ cell(of="plain size={unit}") }}}}; the unrolled loop
{{{{ cell(of="unrolled size={unit}") }}}}. Doubling the work takes
{{{{ ratio(a="plain size={double}", b="plain size={unit}", metric="wall_s") }}}} times as long
({{{{ check(name="twice the work takes longer") }}}}).
"#,
        double = unit * 2
    )
}

/// (file name, source) of the benchmark program.
fn program(lang: Lang) -> (&'static str, &'static str) {
    match lang {
        Lang::Sh => ("bench.sh", SH),
        Lang::Python => ("bench.py", PYTHON),
        Lang::C => ("bench.c", C),
        Lang::Rust => ("bench.rs", RUST),
        Lang::Java => ("Bench.java", JAVA),
    }
}

const SH: &str = r#"#!/bin/sh
# Sums i * 7 mod 1000003 for i < size in awk, timed around the whole loop (the clock is read
# twice, never per operation), and prints the configuration, the throughput and a checksum.
variant=plain; size=0
for arg in "$@"; do
  case "$arg" in
    --variant=*) variant=${arg#--variant=} ;;
    --size=*) size=${arg#--size=} ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
echo "{\"config\": {\"variant\": \"$variant\", \"size\": $size}}"
start=$(date +%s%N)
checksum=$(awk -v size="$size" -v variant="$variant" 'BEGIN {
  sum = 0; i = 0
  if (variant == "unrolled") for (; i + 1 < size; i += 2) sum = (sum + i * 7 + (i + 1) * 7) % 1000003
  for (; i < size; i++) sum = (sum + i * 7) % 1000003
  print sum
}')
end=$(date +%s%N)
awk -v size="$size" -v ns=$((end - start)) -v sum="$checksum" \
  'BEGIN { printf "{\"mops\": %.6f, \"checksum\": \"%s\"}\n", size / (ns / 1e9) / 1e6, sum }'
"#;

const PYTHON: &str = r#"#!/usr/bin/env python3
"""Sums i * 7 mod 1000003 for i < size, timed around the whole loop (the clock is read twice,
never per operation), and prints the configuration, the throughput and a checksum for lab."""
import json
import sys
import time


def main():
    args = dict(a.lstrip("-").split("=", 1) for a in sys.argv[1:])
    variant, size = args["variant"], int(args["size"])
    print(json.dumps({"config": {"variant": variant, "size": size}}))
    start = time.perf_counter()
    total = 0
    if variant == "unrolled":
        for i in range(0, size - 1, 2):
            total = (total + i * 7 + (i + 1) * 7) % 1000003
        if size % 2:
            total = (total + (size - 1) * 7) % 1000003
    else:
        for i in range(size):
            total = (total + i * 7) % 1000003
    seconds = time.perf_counter() - start
    print(json.dumps({"mops": size / seconds / 1e6, "checksum": str(total)}))


if __name__ == "__main__":
    main()
"#;

const C: &str = r#"/* Sums i * 7 mod 1000003 for i < size, timed around the whole loop (the clock is read twice,
 * never per operation), and prints the configuration, the throughput and a checksum for lab. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    const char *variant = "plain";
    unsigned long long size = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--variant=", 10) == 0) variant = argv[i] + 10;
        else if (strncmp(argv[i], "--size=", 7) == 0) size = strtoull(argv[i] + 7, NULL, 10);
        else { fprintf(stderr, "unknown argument: %s\n", argv[i]); return 2; }
    }
    printf("{\"config\": {\"variant\": \"%s\", \"size\": %llu}}\n", variant, size);
    double start = now();
    unsigned long long sum = 0, i = 0;
    if (strcmp(variant, "unrolled") == 0) {
        for (; i + 1 < size; i += 2) sum = (sum + i * 7 + (i + 1) * 7) % 1000003;
    }
    for (; i < size; i++) sum = (sum + i * 7) % 1000003;
    double seconds = now() - start;
    printf("{\"mops\": %.6f, \"checksum\": \"%llu\"}\n", size / seconds / 1e6, sum);
    return 0;
}
"#;

const RUST: &str = r#"//! Sums i * 7 mod 1000003 for i < size, timed around the whole loop (the clock is read twice,
//! never per operation), and prints the configuration, the throughput and a checksum for lab.
use std::time::Instant;

fn main() {
    let (mut variant, mut size) = (String::from("plain"), 0u64);
    for arg in std::env::args().skip(1) {
        if let Some(v) = arg.strip_prefix("--variant=") {
            variant = v.to_string();
        } else if let Some(s) = arg.strip_prefix("--size=") {
            size = s.parse().expect("--size takes a number");
        } else {
            eprintln!("unknown argument: {arg}");
            std::process::exit(2);
        }
    }
    println!("{{\"config\": {{\"variant\": \"{variant}\", \"size\": {size}}}}}");
    let start = Instant::now();
    let (mut sum, mut i) = (0u64, 0u64);
    if variant == "unrolled" {
        while i + 1 < size {
            sum = (sum + i * 7 + (i + 1) * 7) % 1000003;
            i += 2;
        }
    }
    while i < size {
        sum = (sum + i * 7) % 1000003;
        i += 1;
    }
    let seconds = start.elapsed().as_secs_f64();
    println!("{{\"mops\": {:.6}, \"checksum\": \"{sum}\"}}", size as f64 / seconds / 1e6);
}
"#;

const JAVA: &str = r#"/** Sums i * 7 mod 1000003 for i < size, timed around the whole loop (the clock is read twice,
 * never per operation), and prints the configuration, the throughput and a checksum for lab. */
public class Bench {
    public static void main(String[] args) {
        String variant = "plain";
        long size = 0;
        for (String arg : args) {
            if (arg.startsWith("--variant=")) variant = arg.substring(10);
            else if (arg.startsWith("--size=")) size = Long.parseLong(arg.substring(7));
            else { System.err.println("unknown argument: " + arg); System.exit(2); }
        }
        System.out.println("{\"config\": {\"variant\": \"" + variant + "\", \"size\": " + size + "}}");
        long start = System.nanoTime();
        long sum = 0, i = 0;
        if (variant.equals("unrolled")) {
            for (; i + 1 < size; i += 2) sum = (sum + i * 7 + (i + 1) * 7) % 1000003;
        }
        for (; i < size; i++) sum = (sum + i * 7) % 1000003;
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("{\"mops\": %.6f, \"checksum\": \"%d\"}%n", size / seconds / 1e6, sum);
    }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;
    use lab_config::raw;
    use std::path::Path;

    /// The experiment as JSON, less the hash of the text it was read from.
    fn read(text: &str, profile: Option<&str>) -> serde_json::Value {
        let dir = Path::new("experiments/demo");
        let file = dir.join(lab_config::FILE_NAME);
        let exp =
            lab_config::parse(text, &file, dir, profile).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut value = serde_json::to_value(&exp).expect("an experiment serialises");
        value["source_hash"] = serde_json::Value::Null;
        value
    }

    /// Every language's template, though written by hand for its comments, is an experiment
    /// that the declaration of lab.toml writes back as the same experiment.
    #[test]
    fn every_template_reads_as_what_the_declaration_writes() {
        for lang in Lang::value_variants() {
            let template = lab_toml("demo", *lang);
            let file = raw::from_toml(&template).unwrap_or_else(|e| panic!("{lang:?}: {e:?}"));
            let written = raw::to_toml(&file).unwrap_or_else(|e| panic!("{lang:?}: {e}"));
            for profile in [None, Some("quick")] {
                assert_eq!(
                    read(&template, profile),
                    read(&written, profile),
                    "{lang:?}, profile {profile:?}, written as\n{written}"
                );
            }
        }
    }
}
