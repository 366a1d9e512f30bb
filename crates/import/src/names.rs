//! Variant names for imported benchmarks: short, unique, valid lab identifiers made from the
//! tools' names (fully qualified JMH methods, hyperfine command lines, Google Benchmark
//! names with their arguments). Where a name is too long, the part every name shares is
//! dropped, the tail that tells them apart is kept, and a short stable hash of the full name is added only where the kept
//! part is too long or would not be unique. The full name stays the variant's label.

use lab_config as config;
use sha2::{Digest, Sha256};

/// The longest name lab accepts.
const LONGEST: usize = 64;
/// Characters of a hash suffix, `-` included.
const HASH_SUFFIX: usize = 9;

/// One identifier per name, in order; equal names get equal identifiers. Names that all fit
/// as they are keep all of themselves; otherwise the part they share is dropped from each.
pub fn short_names(full: &[&str]) -> Vec<String> {
    let segmented: Vec<Vec<&str>> = full.iter().map(|n| segments(n)).collect();
    let whole: Vec<String> = full.iter().map(|n| identifier(n)).collect();
    let fits = whole.iter().zip(full).all(|(id, name)| {
        config::identifier_problem(id).is_none()
            && whole
                .iter()
                .zip(full)
                .all(|(other, o)| other != id || o == name)
    });
    if fits {
        return whole;
    }
    let shared = shared_prefix(&segmented);
    let mut names: Vec<String> = segmented
        .iter()
        .zip(full)
        .map(|(segs, name)| fitted(&segs[shared..], name))
        .collect();
    let clashing: Vec<bool> = (0..names.len())
        .map(|i| (0..names.len()).any(|j| names[j] == names[i] && full[j] != full[i]))
        .collect();
    for (i, clash) in clashing.into_iter().enumerate() {
        if clash {
            names[i] = with_hash(&identifier(&segmented[i][shared..].concat()), full[i]);
        }
    }
    names
}

/// `name` cut after each separator: `org.a.B.run` is `org.`, `a.`, `B.`, `run`.
fn segments(name: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in name.char_indices() {
        if is_separator(c) {
            out.push(&name[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    if start < name.len() || out.is_empty() {
        out.push(&name[start..]);
    }
    out
}

fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '.' | '/' | ':' | '#' | ',' | '=' | '(' | ')' | '<' | '>')
}

/// How many leading segments every name shares, leaving each name at least its last one
/// (a single name keeps all of its own).
fn shared_prefix(names: &[Vec<&str>]) -> usize {
    if names.len() < 2 {
        return 0;
    }
    let shortest = names.iter().map(Vec::len).min().unwrap_or(0);
    let first = &names[0];
    (0..shortest.saturating_sub(1))
        .take_while(|&i| names.iter().all(|n| n[i] == first[i]))
        .count()
}

/// The segments `tail` as an identifier of at most 64 characters: as many of its last
/// segments as fit, else the end of the last one with a hash of `full`.
fn fitted(tail: &[&str], full: &str) -> String {
    (0..tail.len())
        .map(|skip| identifier(&tail[skip..].concat()))
        .find(|id| config::identifier_problem(id).is_none())
        .unwrap_or_else(|| with_hash(&identifier(&tail.concat()), full))
}

/// The end of `id`, short enough to take `-` and 8 hexadecimal digits of SHA-256 of `full`.
fn with_hash(id: &str, full: &str) -> String {
    let digest = Sha256::digest(full.as_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    let keep = LONGEST - HASH_SUFFIX;
    let chars: Vec<char> = id.chars().collect();
    let tail: String = chars[chars.len().saturating_sub(keep)..].iter().collect();
    let tail = tail.trim_start_matches(['-', '.']);
    if tail.is_empty() {
        format!("b-{hash}")
    } else {
        format!("{tail}-{hash}")
    }
}

/// Letters, digits and `_` kept, `.` kept once; every other run of characters is one `-`;
/// no leading or trailing `-` or `.`.
fn identifier(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if c == '.' {
            if !out.ends_with(['.', '-']) {
                out.push('.');
            }
        } else if !out.ends_with('-') {
            if out.ends_with('.') {
                out.pop();
            }
            out.push('-');
        }
    }
    out.trim_matches(['-', '.']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(names: &[String]) {
        for n in names {
            assert_eq!(config::identifier_problem(n), None, "{n}");
        }
    }

    #[test]
    fn names_that_fit_are_kept_whole() {
        let names = short_names(&["sleep 0.01", "sleep 0.02", "org.a.B.run"]);
        assert_eq!(names, ["sleep-0.01", "sleep-0.02", "org.a.B.run"]);
    }

    #[test]
    fn where_one_is_too_long_the_shared_package_is_dropped_and_the_method_kept() {
        let package = "org.openjdk.bench.java.util.concurrent.locks.experimental";
        let full: Vec<String> = ["ArraysSort.sortInts", "ArraysSort.sortLongs", "Fill.fill"]
            .iter()
            .map(|m| format!("{package}.{m}"))
            .collect();
        let full: Vec<&str> = full.iter().map(String::as_str).collect();
        let names = short_names(&full);
        assert_eq!(
            names,
            ["ArraysSort.sortInts", "ArraysSort.sortLongs", "Fill.fill"]
        );
    }

    #[test]
    fn one_name_keeps_itself_when_it_fits() {
        assert_eq!(short_names(&["sort -n data.txt"]), ["sort-n-data.txt"]);
        assert_eq!(short_names(&["BM_Sort/1024"]), ["BM_Sort-1024"]);
    }

    #[test]
    fn a_long_name_keeps_the_last_segments_that_fit() {
        let long = format!(
            "org.openjdk.bench.java.util.concurrent.locks.experimental.{}",
            "StampedLockBench.readLatency"
        );
        assert_eq!(
            short_names(&[&long]),
            ["util.concurrent.locks.experimental.StampedLockBench.readLatency"]
        );
    }

    #[test]
    fn a_segment_too_long_keeps_its_end_and_a_stable_hash() {
        let long = format!("com.example.{}Benchmark.run", "Very".repeat(20));
        let names = short_names(&[&long, "com.example.Short.run"]);
        valid(&names);
        assert_eq!(names[1], "Short.run");
        assert_eq!(names[0], "run");
        let one = format!("com.example.{}Benchmark", "Very".repeat(20));
        let names = short_names(&[&one, "com.example.Short"]);
        valid(&names);
        assert_eq!(names[0].chars().count(), 64);
        assert!(names[0].ends_with(&format!("VeryBenchmark-{}", &names[0][56..])));
        assert_eq!(short_names(&[&one, "com.example.Short"]), names, "stable");
    }

    #[test]
    fn names_equal_once_made_identifiers_are_told_apart_by_hash() {
        let names = short_names(&["x a b", "x a-b", "x a b"]);
        valid(&names);
        assert_ne!(names[0], names[1]);
        assert_eq!(names[0], names[2]);
        assert!(
            names[0].starts_with("a-b-") && names[0].len() == 12,
            "{names:?}"
        );
        assert!(
            names[1].starts_with("a-b-") && names[1].len() == 12,
            "{names:?}"
        );
    }

    #[test]
    fn nothing_usable_still_gives_a_valid_name() {
        let names = short_names(&["...", "--", "é"]);
        valid(&names);
        assert_eq!(names.len(), 3);
        assert!(names.iter().all(|n| n.starts_with("b-")), "{names:?}");
        assert_eq!(identifier("a..b"), "a.b");
        assert_eq!(identifier("a.-b"), "a-b");
    }
}
