//! The filters notes format numbers with: `num` and `percent`, both passing an `n/a (why)`
//! marker through, and linking the statistic a `cell(…, stat=…)` call returned to its number
//! on the provenance page.

use lab_config::format::significant;
use std::sync::{Arc, Mutex};
use tera::{Kwargs, State, Tera, TeraResult, Value};

/// The statistic the last of lab's functions returned, where it is one of the chapter's
/// numbers, and that number's id. A Tera number carries no link: the filter that formats it
/// next links the text it writes. Every call of one of lab's functions replaces it, and a
/// filter takes it only for the very number it was returned as, so arithmetic on a statistic
/// (`cell(…, stat="cv") * 100`), which is no longer the chapter's number, stays unlinked.
#[derive(Debug, Default)]
pub(super) struct LastStatistic(Mutex<Option<(f64, String)>>);

impl LastStatistic {
    /// Remembers that a function returned `value`, the chapter's number `id` (or a number
    /// that is none of the chapter's, where `id` is `None`).
    pub(super) fn returned(&self, value: f64, id: Option<String>) {
        if let Ok(mut last) = self.0.lock() {
            *last = id.map(|id| (value, id));
        }
    }

    /// Forgets the last statistic: another function was called.
    pub(super) fn forget(&self) {
        self.returned(f64::NAN, None);
    }

    /// The id of the number `x` is, where it is the statistic last returned; taken, so that
    /// the number links once.
    fn take_for(&self, x: f64) -> Option<String> {
        let mut last = self.0.lock().ok()?;
        match last.as_ref() {
            Some((value, _)) if value.to_bits() == x.to_bits() => last.take().map(|(_, id)| id),
            _ => None,
        }
    }

    /// `text`, the formatting of `x`, linked to its number where `x` is the last statistic.
    fn format(&self, x: f64, text: String) -> Value {
        super::text::linked(text, self.take_for(x)).value()
    }
}

/// The formatting filters, `num` and `percent`, linking what `last` names.
pub(super) fn register(tera: &mut Tera, last: &Arc<LastStatistic>) {
    let linking = Arc::clone(last);
    tera.register_filter(
        "num",
        move |x: Value, kw: Kwargs, _: &State| -> TeraResult<Value> {
            let digits: i64 = kw.get("digits")?.unwrap_or(3);
            // A count (runs, values) stays a whole number: "27 runs", not "27.0 runs".
            if let Some(whole) = x.as_i64() {
                return Ok(linking.format(whole as f64, whole.to_string()));
            }
            match x.as_number().map(|n| n.as_float()) {
                Some(x) => Ok(linking.format(x, significant(x, digits.clamp(1, 12) as i32))),
                // An `n/a (why)` marker, or a number already written with its link, passes
                // through unchanged (a link stays the safe Markdown it was made as).
                None => Ok(x),
            }
        },
    );
    let linking = Arc::clone(last);
    tera.register_filter(
        "percent",
        move |x: Value, kw: Kwargs, _: &State| -> TeraResult<Value> {
            let digits: i64 = kw.get("digits")?.unwrap_or(2);
            match x.as_number().map(|n| n.as_float()) {
                Some(share) => Ok(linking.format(
                    share,
                    format!(
                        "{}%",
                        significant(share * 100.0, digits.clamp(1, 12) as i32)
                    ),
                )),
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
        register(&mut tera, &Arc::default());
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
        register(&mut tera, &Arc::default());
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

    #[test]
    fn the_statistic_a_function_returned_links_once_and_only_as_itself() {
        let last = Arc::new(LastStatistic::default());
        let mut tera = Tera::new();
        register(&mut tera, &last);
        let returned = Arc::clone(&last);
        tera.register_function("stat", move |_: Kwargs, _: &State| {
            returned.returned(0.114, Some("a-b.ops.cv".into()));
            Ok(Value::from(0.114))
        });
        let counted = Arc::clone(&last);
        tera.register_function("runs", move |_: Kwargs, _: &State| {
            counted.returned(27.0, Some("a-b.ops.runs".into()));
            Ok(Value::from(27))
        });
        let render = |source: &str| {
            tera.clone()
                .render_str(source, &Context::new(), false)
                .unwrap()
        };
        assert_eq!(
            render("{{ stat() | percent }}"),
            "[11%](provenance.md#a-b.ops.cv)"
        );
        assert_eq!(
            render("{{ runs() | num }}"),
            "[27](provenance.md#a-b.ops.runs)"
        );
        // Arithmetic makes another number; a second filter finds the link taken.
        assert_eq!(render("{{ (stat() * 100) | num }}"), "11.4");
        assert_eq!(
            render("{{ stat() | num(digits=2) }} {{ 0.114 | num(digits=2) }}"),
            "[0.11](provenance.md#a-b.ops.cv) 0.11"
        );
        last.forget();
        assert_eq!(render("{{ 27 | num }}"), "27");
    }
}
