//! `[experiment] skip_checks`: the automatic checks a lab.toml turns off, by their keys.

use super::error::{ConfigError, Locator};
use toml::Spanned;

/// Every automatic check lab.toml can turn off: its key, and what it looks for.
pub const SKIPPABLE: [(&str, &str); 6] = [
    (
        IMPOSSIBLE_TIMES,
        "a time value above its run's own wall and CPU time",
    ),
    (
        COLD_STATE,
        "a run that read from disk beside runs of its cell that did not",
    ),
    (
        PARALLEL,
        "a gain along threads beyond the CPUs the runs used",
    ),
    (
        RESOLUTION,
        "a metric that moves in steps coarser than a decision",
    ),
    (PERIODICITY, "iterations that slow down periodically"),
    (
        LAYOUT,
        "a result that depends on the randomised memory layout",
    ),
];

pub const IMPOSSIBLE_TIMES: &str = "impossible-times";
pub const COLD_STATE: &str = "cold-state";
pub const PARALLEL: &str = "parallel";
pub const RESOLUTION: &str = "resolution";
pub const PERIODICITY: &str = "periodicity";
pub const LAYOUT: &str = "layout";

/// The keys lab.toml lists, each known and listed once, in its order.
pub fn validate_skip_checks(
    raw: &[Spanned<String>],
    loc: &Locator,
) -> Result<Vec<String>, ConfigError> {
    let key = "experiment.skip_checks";
    let mut keys: Vec<String> = Vec::new();
    for name in raw {
        let name_ref = name.get_ref();
        if !SKIPPABLE.iter().any(|(k, _)| k == name_ref) {
            let known: Vec<String> = SKIPPABLE
                .iter()
                .map(|(k, what)| format!("\"{k}\" ({what})"))
                .collect();
            let msg = format!("{name_ref:?} names no automatic check lab can turn off");
            let hint = format!("these can be: {}", known.join(", "));
            return Err(loc.hinted(name.span(), key, msg, hint));
        }
        if keys.iter().any(|k| k == name_ref) {
            let msg = format!("{name_ref:?} is listed twice");
            return Err(loc.hinted(name.span(), key, msg, "list each check once"));
        }
        keys.push(name_ref.clone());
    }
    Ok(keys)
}
