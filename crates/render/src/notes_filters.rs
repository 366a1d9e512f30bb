//! The filters notes format numbers with: `num` and `percent`, both passing an `n/a (why)`
//! marker through.

use lab_config::format::significant;
use tera::{Kwargs, State, Tera, TeraResult, Value};

/// The formatting filters, `num` and `percent`.
pub(super) fn register(tera: &mut Tera) {
    tera.register_filter(
        "num",
        |x: Value, kw: Kwargs, _: &State| -> TeraResult<Value> {
            let digits: i64 = kw.get("digits")?.unwrap_or(3);
            // A count (runs, values) stays a whole number: "27 runs", not "27.0 runs".
            if let Some(whole) = x.as_i64() {
                return Ok(Value::from(whole.to_string()));
            }
            match x.as_number().map(|n| n.as_float()) {
                Some(x) => Ok(Value::from(significant(x, digits.clamp(1, 12) as i32))),
                // An `n/a (why)` marker, or a number already written with its link, passes
                // through unchanged (a link stays the safe Markdown it was made as).
                None => Ok(x),
            }
        },
    );
    tera.register_filter(
        "percent",
        |x: Value, kw: Kwargs, _: &State| -> TeraResult<Value> {
            let digits: i64 = kw.get("digits")?.unwrap_or(2);
            match x.as_number().map(|n| n.as_float()) {
                Some(share) => Ok(Value::from(format!(
                    "{}%",
                    significant(share * 100.0, digits.clamp(1, 12) as i32)
                ))),
                // An `n/a (why)` marker passes through unchanged: arithmetic on it would fail.
                None => Ok(x),
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use tera::Context;

    fn render(source: &str, x: serde_json::Value) -> String {
        let mut tera = Tera::new();
        register(&mut tera);
        tera.add_raw_template("t", source).unwrap();
        let mut context = Context::new();
        context.insert("x", &x);
        tera.render("t", &context).unwrap()
    }

    #[test]
    fn percent_formats_a_share_and_passes_a_missing_value_through() {
        assert_eq!(render("{{ x | percent }}", 0.01234.into()), "1.2%");
        assert_eq!(render("{{ x | percent(digits=3) }}", 0.25.into()), "25.0%");
        // The notes of a session whose cell has no valid run: text, not an error.
        let missing = serde_json::Value::from("n/a (no valid run)");
        assert_eq!(
            render("{{ x | percent }}", missing.clone()),
            "n/a (no valid run)"
        );
        assert_eq!(render("{{ x | num }}", missing), "n/a (no valid run)");
    }

    #[test]
    fn a_linked_number_passes_num_as_the_safe_markdown_it_is() {
        let mut tera = Tera::new();
        register(&mut tera);
        tera.register_function("link", |_: Kwargs, _: &State| {
            Value::safe_string("[1 &lt;b&gt;](provenance.md#a)")
        });
        tera.autoescape_on(vec![".md"]);
        let source = "{{ link() | num(digits=3) }} {{ link() | percent }}";
        tera.add_raw_template("t.md", source).unwrap();
        assert_eq!(
            tera.render("t.md", &Context::new()).unwrap(),
            "[1 &lt;b&gt;](provenance.md#a) [1 &lt;b&gt;](provenance.md#a)"
        );
    }
}
