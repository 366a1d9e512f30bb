//! Which cells each declared check reads, for a sampled session that adds runs only where a
//! check needs them.

use lab_config::plan::CellKey;
use lab_config::{CheckKind, CheckSpec};

/// The cells of `keys` whose runs `spec` reads: the two cells a `compare` or `agree` names,
/// a `ceiling`'s calibration cells besides those it judges, the `variant` of a `scaling` or
/// `distinct` check; within the check's `cells` scope. A sampled session adds runs to these.
pub fn cells_read(spec: &CheckSpec, keys: &[CellKey]) -> Vec<CellKey> {
    let in_scope = |k: &CellKey| spec.scope.as_ref().is_none_or(|s| k.is_in(s));
    let reads = |k: &CellKey| match &spec.kind {
        CheckKind::Compare { a, b, .. } | CheckKind::Agree { a, b, .. } => {
            k.is_named_by(a) || k.is_named_by(b)
        }
        CheckKind::Ceiling {
            calibration: Some(c),
            ..
        } => k.is_named_by(c) || in_scope(k),
        CheckKind::Scaling { variant, along, .. } => {
            variant.as_ref().is_none_or(|v| *v == k.variant)
                && in_scope(k)
                && series_end(k, along, keys)
        }
        CheckKind::Distinct { variant, .. } => {
            variant.as_ref().is_none_or(|v| *v == k.variant) && in_scope(k)
        }
        _ => in_scope(k),
    };
    keys.iter().filter(|k| reads(k)).cloned().collect()
}

/// Whether `k` is the first or last cell of its series along `along` (the cells of its
/// variant at its other parameter values): the two a `scaling` check compares.
fn series_end(k: &CellKey, along: &str, keys: &[CellKey]) -> bool {
    let value = |c: &CellKey| c.params.get(along).and_then(lab_config::ParamValue::number);
    let same_series = |c: &&CellKey| {
        c.variant == k.variant
            && c.params
                .iter()
                .all(|(name, v)| name == along || k.params.get(name) == Some(v))
    };
    let values: Vec<f64> = keys.iter().filter(same_series).filter_map(value).collect();
    let Some(mine) = value(k) else {
        return false;
    };
    let lowest = values.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    mine == lowest || mine == highest
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_config::Experiment;
    use std::path::Path;

    /// The distinct cells of the experiment's plan.
    fn keys(exp: &Experiment) -> Vec<CellKey> {
        let mut keys: Vec<CellKey> = lab_config::plan::plan(exp)
            .runs
            .iter()
            .map(|r| r.cell.clone())
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    fn labels(spec: &CheckSpec, keys: &[CellKey]) -> Vec<String> {
        cells_read(spec, keys)
            .iter()
            .map(|k| k.to_string())
            .collect()
    }

    #[test]
    fn a_sampled_session_grows_only_the_cells_each_check_reads() {
        let src = r#"
[experiment]
title = "t"
hypothesis = "h"
[params]
threads = [1, 2, 4, 8]
[[variant]]
name = "lock"
run = ["p", "{threads}"]
[[variant]]
name = "free"
run = ["q", "{threads}"]
[metric.ops]
json = "ops"
[[check]]
name = "dip"
kind = "compare"
metric = "ops"
a = { variant = "lock", threads = 2 }
b = { variant = "lock", threads = 1 }
expect = "a < 0.5 * b"
[[check]]
name = "free scales"
kind = "scaling"
metric = "ops"
along = "threads"
variant = "free"
factor = 2
[[check]]
name = "lock is steady"
kind = "stable"
metric = "ops"
cells = { variant = "lock", threads = [4, 8] }
"#;
        let exp = lab_config::parse(src, Path::new("lab.toml"), Path::new("x"), None).unwrap();
        let keys = keys(&exp);
        assert_eq!(
            labels(&exp.checks[0], &keys),
            ["lock threads=1", "lock threads=2"]
        );
        // A scaling check compares the ends of each series: 1 and 8 threads of `free`.
        assert_eq!(
            labels(&exp.checks[1], &keys),
            ["free threads=1", "free threads=8"]
        );
        assert_eq!(
            labels(&exp.checks[2], &keys),
            ["lock threads=4", "lock threads=8"]
        );
    }
}
