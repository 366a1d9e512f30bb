//! Expectations of `duration` (a number of seconds, possibly from `{param}`) and `compare`
//! (`a OP [FACTOR *] b`) checks.

use super::{Ctx, Result};
use crate::model::{CheckKind, Comparison};
use crate::raw::RawExpect;
use crate::template::{placeholders, substitute};
use std::collections::BTreeMap;
use std::ops::Range;

impl Ctx<'_> {
    pub(super) fn duration(&self) -> Result<CheckKind> {
        let expect = match self.raw.expect.as_ref() {
            None => {
                return Err(self.missing(
                    "expect",
                    "the requested seconds, e.g. expect = \"{seconds}\"",
                ));
            }
            Some(e) => e,
        };
        let text = match expect.get_ref() {
            RawExpect::Number(n) => n.to_string(),
            RawExpect::Text(t) => t.clone(),
        };
        self.check_seconds_template(&text, expect.span())?;
        let metric = match self.raw.metric.as_ref() {
            Some(_) => Some(self.metric(true)?),
            None => None,
        };
        Ok(CheckKind::Duration {
            expect: text,
            tolerance: self.fraction("tolerance", self.raw.tolerance.as_ref(), None)?,
            metric,
        })
    }

    /// The template must yield a positive number of seconds for every value of its parameters.
    pub(super) fn check_seconds_template(&self, text: &str, span: Range<usize>) -> Result<()> {
        let key = self.key("expect");
        let names = placeholders(text).map_err(|m| self.loc.error(span.clone(), &key, m))?;
        let mut values = BTreeMap::new();
        for name in &names {
            let Some(param) = self.exp.param(name) else {
                return Err(self.loc.error(
                    span,
                    &key,
                    format!("unknown placeholder {{{name}}}: not a parameter"),
                ));
            };
            for v in &param.values {
                values.insert(name.clone(), v.clone());
                let seconds = substitute(text, &values).trim().parse::<f64>();
                if !seconds.is_ok_and(|s| s > 0.0) {
                    return Err(self.loc.error(
                        span,
                        &key,
                        format!("{name} = {v} does not give a positive number of seconds"),
                    ));
                }
            }
        }
        if names.is_empty() && !text.trim().parse::<f64>().is_ok_and(|s| s > 0.0) {
            return Err(self.loc.hinted(
                span,
                &key,
                format!("{text:?} is not a number of seconds"),
                "write e.g. \"{seconds}\" or 2.0",
            ));
        }
        Ok(())
    }

    pub(super) fn compare(&self) -> Result<CheckKind> {
        let Some(expect) = self.raw.expect.as_ref() else {
            return Err(self.missing("expect", "e.g. expect = \"a < 0.5 * b\""));
        };
        let RawExpect::Text(text) = expect.get_ref() else {
            return Err(self.loc.error(
                expect.span(),
                &self.key("expect"),
                "expected an expression such as \"a < 0.5 * b\"",
            ));
        };
        let (op, factor) = parse_comparison(text).ok_or_else(|| {
            self.loc.hinted(
                expect.span(),
                &self.key("expect"),
                format!("cannot read {text:?}"),
                "write `a OP [FACTOR *] b` with OP one of <, <=, >, >=, e.g. \"a < 0.5 * b\"",
            )
        })?;
        Ok(CheckKind::Compare {
            metric: self.metric(true)?,
            a: self.cell("a", self.raw.a.as_ref())?,
            b: self.cell("b", self.raw.b.as_ref())?,
            op,
            factor,
            margin: self.fraction("margin", self.raw.margin.as_ref(), Some(THRESHOLD_MARGIN))?,
        })
    }
}

/// The margin of a `compare` or `scaling` threshold when the check declares none: an interval
/// wholly within ±5% of the threshold reads "at the threshold" (from analysis 3 on).
pub(super) const THRESHOLD_MARGIN: f64 = 0.05;

/// Parses `a OP b`, `a OP F * b` or `a OP b * F`.
pub(super) fn parse_comparison(text: &str) -> Option<(Comparison, f64)> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let rest = compact.strip_prefix('a')?;
    let (op, rest) = [
        ("<=", Comparison::LessEqual),
        (">=", Comparison::GreaterEqual),
        ("<", Comparison::Less),
        (">", Comparison::Greater),
    ]
    .into_iter()
    .find_map(|(s, op)| rest.strip_prefix(s).map(|r| (op, r)))?;
    let factor = if rest == "b" {
        1.0
    } else if let Some(f) = rest.strip_suffix("*b") {
        f.parse().ok()?
    } else {
        rest.strip_prefix("b*")?.parse().ok()?
    };
    (factor > 0.0 && f64::is_finite(factor)).then_some((op, factor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn comparison_forms() {
        assert_eq!(
            parse_comparison("a < 0.5 * b"),
            Some((Comparison::Less, 0.5))
        );
        assert_eq!(
            parse_comparison("a>=b*0.9"),
            Some((Comparison::GreaterEqual, 0.9))
        );
        assert_eq!(parse_comparison("a > b"), Some((Comparison::Greater, 1.0)));
        assert_eq!(parse_comparison("b < a"), None);
        assert_eq!(parse_comparison("a < -1 * b"), None);
    }
}
