//! The environment variables a variant sets, checked where lab.toml writes them. A program
//! receives each as one `NAME=value` C string: a name holding `=` would set another variable
//! than the one written, and a NUL would end the string early, so both are refused here
//! rather than failing every run.

use super::error::{ConfigError, Locator};
use std::collections::BTreeMap;
use toml::Spanned;

/// The variables of `raw`, the table at `key` (`variant[1].env`), when every name and value
/// can be passed to a program.
pub(crate) fn validate_env(
    raw: &BTreeMap<Spanned<String>, Spanned<String>>,
    key: &str,
    loc: &Locator,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut entries: Vec<_> = raw.iter().collect();
    entries.sort_by_key(|(name, _)| name.span().start);
    for (name, value) in &entries {
        let at = format!("{key}.{}", key_segment(name.get_ref()));
        if let Some((message, hint)) = name_problem(name.get_ref(), value.get_ref()) {
            return Err(loc.hinted(name.span(), &at, message, hint));
        }
        if let Some((message, hint)) = value_problem(value.get_ref()) {
            return Err(loc.hinted(value.span(), &at, message, hint));
        }
    }
    Ok(entries
        .into_iter()
        .map(|(name, value)| (name.get_ref().clone(), value.get_ref().clone()))
        .collect())
}

/// A name as one segment of a key path: bare when TOML allows it bare, quoted otherwise.
fn key_segment(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

/// What is wrong with the name of a variable holding `value`, and what to do.
fn name_problem(name: &str, value: &str) -> Option<(String, String)> {
    if name.is_empty() {
        return Some((
            "an environment variable needs a name".into(),
            "write NAME = \"value\"".into(),
        ));
    }
    if name.contains('\0') {
        return Some((
            format!("the variable name {name:?} holds a NUL character"),
            "a program gets each variable as a C string, which ends at a NUL: remove it".into(),
        ));
    }
    let (before, after) = name.split_once('=')?;
    Some((
        format!("the variable name {name:?} holds '='"),
        format!(
            "a variable's name ends at its first '=', so this would set {before:?} to {:?}: rename it (letters, digits and '_' are safe)",
            format!("{after}={value}")
        ),
    ))
}

/// What is wrong with a variable's value, and what to do.
fn value_problem(value: &str) -> Option<(String, String)> {
    let (before, _) = value.split_once('\0')?;
    Some((
        "the value holds a NUL character".into(),
        format!(
            "a program gets each variable as a C string, which ends at a NUL, so it would see only {before:?}: remove it"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[derive(serde::Deserialize)]
    struct Table {
        env: BTreeMap<Spanned<String>, Spanned<String>>,
    }

    fn check(source: &str) -> Result<BTreeMap<String, String>, String> {
        let table: Table = toml::from_str(source).unwrap();
        let loc = Locator::new(Path::new("lab.toml"), source);
        validate_env(&table.env, "variant[1].env", &loc).map_err(|e| e.to_string())
    }

    #[test]
    fn names_and_values_a_program_can_receive_are_kept() {
        let env = check("env = { B = \"2\", A_1 = \"x=y\", \"dotted.name\" = \"\" }").unwrap();
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(pairs, [("A_1", "x=y"), ("B", "2"), ("dotted.name", "")]);
    }

    #[test]
    fn a_name_with_an_equals_sign_or_a_nul_and_a_value_with_a_nul_are_refused_where_written() {
        let cases = [
            (
                "env = { OK = \"1\", \"A=B\" = \"1\" }",
                "lab.toml:1:19: `variant[1].env.\"A=B\"`: the variable name \"A=B\" holds '='\n  hint: a variable's name ends at its first '=', so this would set \"A\" to \"B=1\": rename it (letters, digits and '_' are safe)",
            ),
            (
                "[env]\n\"A\\u0000\" = \"1\"\n",
                "lab.toml:2:1: `variant[1].env.\"A\\0\"`: the variable name \"A\\0\" holds a NUL character\n  hint: a program gets each variable as a C string",
            ),
            (
                "env = { A = \"x\\u0000y\" }",
                "lab.toml:1:13: `variant[1].env.A`: the value holds a NUL character\n  hint: a program gets each variable as a C string, which ends at a NUL, so it would see only \"x\": remove it",
            ),
            (
                "env = { \"\" = \"1\" }",
                "lab.toml:1:9: `variant[1].env.\"\"`: an environment variable needs a name",
            ),
        ];
        for (source, expected) in cases {
            let err = check(source).unwrap_err();
            assert!(err.starts_with(expected), "{source}:\n{err}");
        }
    }
}
