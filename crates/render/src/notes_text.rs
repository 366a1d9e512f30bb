//! The text a notes function gives: its default, a number linked to its anchor on the
//! chapter's provenance page where it has one, or the one field a `key=` argument asks for.

use tera::{Kwargs, TeraResult, Value};

/// A number's Markdown text, linked to its anchor on the provenance page where it has one.
/// Tera escapes a value for HTML after the functions: a linked one is escaped here instead.
pub(super) enum Text {
    Plain(String),
    Linked(String),
}

impl Text {
    /// The text as Tera renders it: a link as the safe Markdown it was made as.
    pub(super) fn value(self) -> Value {
        match self {
            Text::Plain(text) => Value::from(text),
            Text::Linked(link) => Value::safe_string(&link),
        }
    }
}

pub(super) fn linked(text: String, id: Option<String>) -> Text {
    match id {
        Some(id) => Text::Linked(format!(
            "[{}](provenance.md#{})",
            crate::escape::html(&text),
            crate::escape::html(&id)
        )),
        None => Text::Plain(text),
    }
}

/// The default text, or the one field a `key=` argument asks for.
pub(super) fn pick(
    kw: &Kwargs,
    key: &str,
    text: Text,
    fields: &serde_json::Value,
) -> TeraResult<Value> {
    let wanted: Option<String> = kw.get(key)?;
    let Some(wanted) = wanted else {
        return Ok(text.value());
    };
    match fields.get(&wanted) {
        Some(v) => Ok(Value::from_serializable(v)),
        None => {
            let names: Vec<&str> = fields
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            Err(tera::Error::message(format!(
                "no {key} \"{wanted}\"; choose one of: {}",
                names.join(", ")
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_number_is_escaped_for_html_and_an_unlinked_one_left_to_tera() {
        let Text::Linked(link) =
            linked("1.00 <b>s \\[0.9, 1.1\\]".into(), Some("a.m.median".into()))
        else {
            panic!("a number with an id is linked");
        };
        assert_eq!(
            link,
            "[1.00 &lt;b&gt;s \\[0.9, 1.1\\]](provenance.md#a.m.median)"
        );
        assert!(matches!(linked("1.00".into(), None), Text::Plain(t) if t == "1.00"));
    }
}
