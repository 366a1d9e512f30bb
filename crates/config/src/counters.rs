//! `[experiment] counters`: perf's counter names, each known to lab and listed once.

use super::error::{ConfigError, Locator};
use crate::counter::Counter;
use toml::Spanned;

/// The counters lab.toml asks for, in its order.
pub(crate) fn validate_counters(
    raw: &[Spanned<String>],
    loc: &Locator,
) -> Result<Vec<Counter>, ConfigError> {
    let mut counters = Vec::new();
    for name in raw {
        let key = "experiment.counters";
        let Some(counter) = Counter::named(name.get_ref()) else {
            let msg = format!("unknown counter {:?}", name.get_ref());
            let hint = format!(
                "lab reads these, by perf's names, and callgrind-instructions through valgrind: {}",
                Counter::known()
            );
            return Err(loc.hinted(name.span(), key, msg, hint));
        };
        if counters.contains(&counter) {
            let msg = format!("{:?} is listed twice", name.get_ref());
            return Err(loc.hinted(name.span(), key, msg, "list each counter once"));
        }
        counters.push(counter);
    }
    Ok(counters)
}
