//! The one rule for names that become file and folder names: variants, metrics, parameters,
//! experiments.

pub(super) const IDENTIFIER_HINT: &str = "names become file and folder names: use letters, digits, '_', '-' and '.', starting with a letter, digit or '_' (at most 64 characters)";

/// Why `name` cannot name a variant, metric, parameter or experiment, if it cannot.
pub fn identifier_problem(name: &str) -> Option<&'static str> {
    let mut chars = name.chars();
    match chars.next() {
        None => Some("is empty"),
        Some(c) if !(c.is_ascii_alphanumeric() || c == '_') => {
            Some("must start with a letter, a digit or '_'")
        }
        _ if name.chars().count() > 64 => Some("is longer than 64 characters"),
        _ if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) =>
        {
            Some("may hold only letters, digits, '_', '-' and '.'")
        }
        _ if name.contains("..") => Some("may not contain '..'"),
        _ => None,
    }
}
