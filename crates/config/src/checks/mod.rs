//! Validation of `[[check]]` tables: allowed keys per kind, cells, metrics and expressions.

use super::duration::parse_fraction;
use super::error::{ConfigError, Locator};
use super::model::*;
use super::raw::RawCheck;
use super::raw::{RawMaxCv, RawNumberOrText};
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

mod cells;
mod expect;

type Result<T> = std::result::Result<T, ConfigError>;

/// Iterations a `steady` check allows a run to settle in when `within` is not given.
pub(crate) const DEFAULT_STEADY_WITHIN: usize = 50;

/// The keys each kind accepts besides `name`, `kind` and `class`.
const KINDS: &[(&str, &[&str])] = &[
    ("duration", &["expect", "tolerance", "metric"]),
    ("compare", &["metric", "a", "b", "expect", "margin"]),
    (
        "ceiling",
        &["metric", "limit", "calibration", "fraction", "cells"],
    ),
    ("agree", &["metric", "a", "b", "margin"]),
    ("checksum", &["metric", "reference"]),
    ("distinct", &["metric", "along", "variant", "margin"]),
    ("order", &["metric", "alpha", "max_drift", "cells"]),
    (
        "stable",
        &["metric", "max_cv", "mode_gap", "alpha", "cells"],
    ),
    ("steady", &["metric", "within", "cells"]),
    (
        "scaling",
        &["metric", "along", "variant", "factor", "margin"],
    ),
    (
        "mechanism",
        &["metric", "with", "direction", "min_rho", "cells"],
    ),
];

/// The rank correlation a `mechanism` check requires when `min_rho` is not given.
pub(crate) const DEFAULT_MIN_RHO: f64 = 0.5;

pub(crate) fn validate_checks(
    raw: &[Spanned<RawCheck>],
    exp: &Experiment,
    loc: &Locator,
) -> Result<Vec<CheckSpec>> {
    let mut checks: Vec<CheckSpec> = Vec::new();
    for (i, spanned) in raw.iter().enumerate() {
        let ctx = Ctx {
            raw: spanned.get_ref(),
            key: format!("check[{}]", i + 1),
            span: spanned.span(),
            exp,
            loc,
        };
        let name = ctx.raw.name.get_ref().trim().to_string();
        if checks.iter().any(|c| c.name == name) {
            return Err(loc.error(
                ctx.raw.name.span(),
                &ctx.key("name"),
                format!("duplicate check name {name:?}"),
            ));
        }
        let kind = ctx.kind()?;
        checks.push(CheckSpec {
            name,
            class: ctx.class(&kind)?,
            scope: ctx.scope()?,
            kind,
        });
    }
    Ok(checks)
}

struct Ctx<'a> {
    raw: &'a RawCheck,
    key: String,
    span: Range<usize>,
    exp: &'a Experiment,
    loc: &'a Locator<'a>,
}

impl Ctx<'_> {
    fn key(&self, field: &str) -> String {
        format!("{}.{field}", self.key)
    }

    fn kind(&self) -> Result<CheckKind> {
        let kind = self.raw.kind.get_ref().as_str();
        let Some((_, allowed)) = KINDS.iter().find(|(k, _)| *k == kind) else {
            let names: Vec<&str> = KINDS.iter().map(|(k, _)| *k).collect();
            let hint = format!("kinds: {}", names.join(", "));
            return Err(self.loc.hinted(
                self.raw.kind.span(),
                &self.key("kind"),
                format!("unknown check kind {kind:?}"),
                hint,
            ));
        };
        self.reject_foreign_keys(kind, allowed)?;
        match kind {
            "duration" => self.duration(),
            "compare" => self.compare(),
            "ceiling" => self.ceiling(),
            "agree" => Ok(CheckKind::Agree {
                metric: self.metric(true)?,
                a: self.cell("a", self.raw.a.as_ref())?,
                b: self.cell("b", self.raw.b.as_ref())?,
                margin: self.fraction("margin", self.raw.margin.as_ref(), None)?,
            }),
            "checksum" => Ok(CheckKind::Checksum {
                metric: self.metric(false)?,
                reference: self.variant_name(self.raw.reference.as_ref(), "reference")?,
            }),
            "distinct" => Ok(CheckKind::Distinct {
                metric: self.metric(false)?,
                along: self.param_name()?,
                variant: self.variant_name(self.raw.variant.as_ref(), "variant")?,
                margin: self.fraction("margin", self.raw.margin.as_ref(), Some(0.01))?,
            }),
            "order" => Ok(CheckKind::RunOrder {
                metric: self.metric(true)?,
                alpha: self.alpha()?,
                max_drift: self.fraction("max_drift", self.raw.max_drift.as_ref(), Some(0.05))?,
            }),
            "stable" => self.stable(),
            "steady" => Ok(CheckKind::Steady {
                metric: self.metric(true)?,
                within: self.within()?,
            }),
            "mechanism" => self.mechanism(),
            _ => self.scaling(),
        }
    }

    fn reject_foreign_keys(&self, kind: &str, allowed: &[&str]) -> Result<()> {
        let r = self.raw;
        let present: [(&str, Option<Range<usize>>); 22] = [
            ("metric", r.metric.as_ref().map(|s| s.span())),
            ("expect", r.expect.as_ref().map(|s| s.span())),
            ("tolerance", r.tolerance.as_ref().map(|s| s.span())),
            ("margin", r.margin.as_ref().map(|s| s.span())),
            ("a", r.a.as_ref().map(|s| s.span())),
            ("b", r.b.as_ref().map(|s| s.span())),
            ("limit", r.limit.as_ref().map(|s| s.span())),
            ("fraction", r.fraction.as_ref().map(|s| s.span())),
            ("calibration", r.calibration.as_ref().map(|s| s.span())),
            ("along", r.along.as_ref().map(|s| s.span())),
            ("variant", r.variant.as_ref().map(|s| s.span())),
            ("reference", r.reference.as_ref().map(|s| s.span())),
            ("max_cv", r.max_cv.as_ref().map(|s| s.span())),
            ("mode_gap", r.mode_gap.as_ref().map(|s| s.span())),
            ("cells", r.cells.as_ref().map(|s| s.span())),
            ("max_drift", r.max_drift.as_ref().map(|s| s.span())),
            ("factor", r.factor.as_ref().map(|s| s.span())),
            ("alpha", r.alpha.as_ref().map(|s| s.span())),
            ("within", r.within.as_ref().map(|s| s.span())),
            ("with", r.with.as_ref().map(|s| s.span())),
            ("direction", r.direction.as_ref().map(|s| s.span())),
            ("min_rho", r.min_rho.as_ref().map(|s| s.span())),
        ];
        for (field, span) in present {
            if let Some(span) = span.filter(|_| !allowed.contains(&field)) {
                let hint = format!("a `{kind}` check takes: {}", allowed.join(", "));
                return Err(self.loc.hinted(
                    span,
                    &self.key(field),
                    format!("not a key of a `{kind}` check"),
                    hint,
                ));
            }
        }
        Ok(())
    }

    fn class(&self, kind: &CheckKind) -> Result<CheckClass> {
        let default = match kind {
            CheckKind::Compare { .. } | CheckKind::Scaling { .. } | CheckKind::Mechanism { .. } => {
                CheckClass::Hypothesis
            }
            _ => CheckClass::Validity,
        };
        match self.raw.class.as_ref() {
            None => Ok(default),
            Some(c) if c.get_ref() == "validity" => Ok(CheckClass::Validity),
            Some(c) if c.get_ref() == "hypothesis" => Ok(CheckClass::Hypothesis),
            Some(c) => Err(self.loc.hinted(
                c.span(),
                &self.key("class"),
                format!("unknown class {:?}", c.get_ref()),
                "write \"validity\" or \"hypothesis\"",
            )),
        }
    }

    fn missing(&self, field: &str, hint: &str) -> ConfigError {
        self.loc.hinted(
            self.span.clone(),
            &self.key(field),
            format!("a `{}` check needs `{field}`", self.raw.kind.get_ref()),
            hint,
        )
    }

    /// The named metric; numeric ones only when `numeric`.
    fn metric(&self, numeric: bool) -> Result<String> {
        let Some(m) = self.raw.metric.as_ref() else {
            return Err(self.missing("metric", "name one of the [metric.NAME] tables"));
        };
        self.named_metric("metric", m, numeric)
    }

    /// The metric `m` names under `field`: declared (or built-in), and numeric when `numeric`.
    fn named_metric(&self, field: &str, m: &Spanned<String>, numeric: bool) -> Result<String> {
        match self.exp.metric(m.get_ref()) {
            None => {
                let known: Vec<&str> = self.exp.metrics.iter().map(|m| m.name.as_str()).collect();
                let hint = format!(
                    "metrics declared: {}",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                );
                Err(self.loc.hinted(
                    m.span(),
                    &self.key(field),
                    format!("no metric named {:?}", m.get_ref()),
                    hint,
                ))
            }
            Some(metric) if numeric && metric.text => Err(self.loc.error(
                m.span(),
                &self.key(field),
                "this check needs a numeric metric, and this one is `text = true`",
            )),
            Some(_) => Ok(m.get_ref().clone()),
        }
    }

    fn variant_name(&self, raw: Option<&Spanned<String>>, field: &str) -> Result<Option<String>> {
        let Some(v) = raw else { return Ok(None) };
        if self.exp.variant(v.get_ref()).is_none() {
            return Err(self.unknown_variant(v.get_ref(), v.span(), field));
        }
        Ok(Some(v.get_ref().clone()))
    }

    fn unknown_variant(&self, name: &str, span: Range<usize>, field: &str) -> ConfigError {
        let known: Vec<&str> = self.exp.variants.iter().map(|v| v.name.as_str()).collect();
        self.loc.hinted(
            span,
            &self.key(field),
            format!("no variant named {name:?}"),
            format!("variants: {}", known.join(", ")),
        )
    }

    fn param_name(&self) -> Result<String> {
        let Some(p) = self.raw.along.as_ref() else {
            return Err(self.missing("along", "name the parameter, e.g. along = \"threads\""));
        };
        match self.exp.param(p.get_ref()) {
            Some(param) if param.values.len() >= 2 => Ok(p.get_ref().clone()),
            Some(_) => Err(self.loc.error(
                p.span(),
                &self.key("along"),
                "this parameter has a single value: there is nothing to compare along it",
            )),
            None => Err(self.loc.error(
                p.span(),
                &self.key("along"),
                format!("no parameter named {:?} in [params]", p.get_ref()),
            )),
        }
    }

    fn fraction(
        &self,
        field: &str,
        raw: Option<&Spanned<RawNumberOrText>>,
        default: Option<f64>,
    ) -> Result<f64> {
        let value = match (raw, default) {
            (Some(s), _) => parse_fraction(&s.get_ref().text()).ok_or_else(|| {
                self.loc.hinted(
                    s.span(),
                    &self.key(field),
                    "not a fraction",
                    "write e.g. \"2.5%\" or 0.025",
                )
            })?,
            (None, Some(d)) => return Ok(d),
            (None, None) => return Err(self.missing(field, "write e.g. \"5%\"")),
        };
        match fraction_limit(field) {
            Some((upper, why)) if value >= upper => Err(self.loc.hinted(
                raw.map_or(0..0, |s| s.span()),
                &self.key(field),
                format!("{} is too large: {why}", s_percent(value)),
                format!("use a value under {}", s_percent(upper)),
            )),
            _ => Ok(value),
        }
    }

    fn stable(&self) -> Result<CheckKind> {
        let (max_cv, max_cv_by_variant) = self.max_cv()?;
        Ok(CheckKind::Stable {
            metric: self.metric(true)?,
            max_cv,
            max_cv_by_variant,
            // Modes closer than the spread the check allows are not a finding of their own.
            mode_gap: self.fraction("mode_gap", self.raw.mode_gap.as_ref(), Some(max_cv))?,
            alpha: self.alpha()?,
        })
    }

    /// `max_cv` as one limit (default 10%) and the limits of the variants it names.
    fn max_cv(&self) -> Result<(f64, BTreeMap<String, f64>)> {
        let Some(raw) = self.raw.max_cv.as_ref() else {
            return Ok((0.10, BTreeMap::new()));
        };
        let spanned = |v: &RawNumberOrText| Spanned::new(raw.span(), v.clone());
        match raw.get_ref() {
            RawMaxCv::One(v) => Ok((
                self.fraction("max_cv", Some(&spanned(v)), None)?,
                BTreeMap::new(),
            )),
            RawMaxCv::ByVariant(table) => {
                let mut default = 0.10;
                let mut by_variant = BTreeMap::new();
                for (name, v) in table {
                    let limit = self.fraction("max_cv", Some(&spanned(v)), None)?;
                    if name == "default" {
                        default = limit;
                    } else if self.exp.variant(name).is_some() {
                        by_variant.insert(name.clone(), limit);
                    } else {
                        return Err(self.unknown_variant(name, raw.span(), "max_cv"));
                    }
                }
                Ok((default, by_variant))
            }
        }
    }

    fn alpha(&self) -> Result<f64> {
        match self.raw.alpha.as_ref() {
            None => Ok(0.05),
            Some(a) if *a.get_ref() > 0.0 && *a.get_ref() < 1.0 => Ok(*a.get_ref()),
            Some(a) => Err(self.loc.error(
                a.span(),
                &self.key("alpha"),
                "alpha must lie strictly between 0 and 1",
            )),
        }
    }

    /// `within` of a `steady` check: a whole number of iterations, at least 1.
    fn within(&self) -> Result<usize> {
        let Some(w) = self.raw.within.as_ref() else {
            return Ok(DEFAULT_STEADY_WITHIN);
        };
        let k = *w.get_ref();
        if k.is_finite() && k >= 1.0 && k.fract() == 0.0 && k <= u32::MAX as f64 {
            return Ok(k as usize);
        }
        Err(self.loc.hinted(
            w.span(),
            &self.key("within"),
            format!("{k} is not a number of iterations: write a whole number, at least 1"),
            format!(
                "how many iterations a run may take to settle, e.g. within = \
                 {DEFAULT_STEADY_WITHIN}"
            ),
        ))
    }

    fn positive(&self, field: &str, raw: Option<&Spanned<f64>>) -> Result<Option<f64>> {
        match raw {
            Some(v) if !(v.get_ref().is_finite() && *v.get_ref() > 0.0) => {
                Err(self
                    .loc
                    .error(v.span(), &self.key(field), "must be a positive number"))
            }
            other => Ok(other.map(|v| *v.get_ref())),
        }
    }

    fn ceiling(&self) -> Result<CheckKind> {
        let limit = self.positive("limit", self.raw.limit.as_ref())?;
        let calibration = self
            .raw
            .calibration
            .as_ref()
            .map(|c| self.selector("calibration", c))
            .transpose()?;
        if limit.is_some() == calibration.is_some() {
            return Err(self.missing(
                "limit",
                "give either limit = NUMBER or calibration = { variant = \"NAME\" }, not both",
            ));
        }
        let fraction = match self.raw.fraction.as_ref() {
            None => 0.8,
            Some(_) => self.fraction("fraction", self.raw.fraction.as_ref(), None)?,
        };
        if fraction <= 0.0 {
            let span = self.raw.fraction.as_ref().map_or(0..0, |f| f.span());
            return Err(self
                .loc
                .error(span, &self.key("fraction"), "must be above 0"));
        }
        Ok(CheckKind::Ceiling {
            metric: self.metric(true)?,
            limit,
            calibration,
            fraction,
        })
    }

    fn scaling(&self) -> Result<CheckKind> {
        let Some(factor) = self.positive("factor", self.raw.factor.as_ref())? else {
            return Err(self.missing("factor", "e.g. factor = 1.5 (at least 1.5× from the first to the last value); 1.0 means \"does not fall\""));
        };
        Ok(CheckKind::Scaling {
            metric: self.metric(true)?,
            along: self.param_name()?,
            variant: self.variant_name(self.raw.variant.as_ref(), "variant")?,
            factor,
            margin: self.fraction(
                "margin",
                self.raw.margin.as_ref(),
                Some(expect::THRESHOLD_MARGIN),
            )?,
        })
    }
}

impl Ctx<'_> {
    fn mechanism(&self) -> Result<CheckKind> {
        let metric = self.metric(true)?;
        let Some(w) = self.raw.with.as_ref() else {
            return Err(self.missing(
                "with",
                "name the metric it moves with, e.g. with = \"waits\" or with = \"wall_s\"",
            ));
        };
        let with = self.named_metric("with", w, true)?;
        if with == metric {
            return Err(self.loc.error(
                w.span(),
                &self.key("with"),
                "`with` names the check's own metric: a metric always moves with itself",
            ));
        }
        self.at_least_two_cells()?;
        Ok(CheckKind::Mechanism {
            metric,
            with,
            direction: self.direction()?,
            min_rho: self.min_rho()?,
        })
    }

    /// `direction`: which way the two metrics move together.
    fn direction(&self) -> Result<Direction> {
        let hint = "write direction = \"same\" (both rise together) or \"opposite\" (one falls as the other rises)";
        let Some(d) = self.raw.direction.as_ref() else {
            return Err(self.missing("direction", hint));
        };
        match d.get_ref().as_str() {
            "same" => Ok(Direction::Same),
            "opposite" => Ok(Direction::Opposite),
            other => Err(self.loc.hinted(
                d.span(),
                &self.key("direction"),
                format!("unknown direction {other:?}"),
                hint,
            )),
        }
    }

    /// `min_rho`: the strength of the relation, in (0, 1]; 0 or less could not fail on a
    /// relation that is absent.
    fn min_rho(&self) -> Result<f64> {
        match self.raw.min_rho.as_ref() {
            None => Ok(DEFAULT_MIN_RHO),
            Some(r) if *r.get_ref() > 0.0 && *r.get_ref() <= 1.0 => Ok(*r.get_ref()),
            Some(r) => Err(self.loc.hinted(
                r.span(),
                &self.key("min_rho"),
                format!("{} is not a correlation the check can require", r.get_ref()),
                "write a value above 0 and at most 1, e.g. min_rho = 0.5",
            )),
        }
    }

    /// A relation across cells needs two cells or more: of the experiment, or of `cells`.
    fn at_least_two_cells(&self) -> Result<()> {
        let scope = self.scope()?;
        let selected = crate::plan::cell_keys(self.exp)
            .iter()
            .filter(|k| scope.as_ref().is_none_or(|s| k.is_in(s)))
            .count();
        if selected >= 2 {
            return Ok(());
        }
        let (span, hint) = match self.raw.cells.as_ref() {
            Some(c) => (
                c.span(),
                "leave a parameter free, or list more cells: cells = [{ variant = \"a\" }, { variant = \"b\" }]",
            ),
            None => (self.span.clone(), "add variants or parameter values"),
        };
        let what = if scope.is_some() {
            "`cells` selects"
        } else {
            "the experiment has"
        };
        Err(self.loc.hinted(
            span,
            &self.key("cells"),
            format!(
                "{what} {selected} cell; a `mechanism` check relates metrics across 2 cells or more"
            ),
            hint,
        ))
    }
}

/// The smallest value a fraction key may not reach, and why: beyond it the check cannot fail
/// or means nothing.
fn fraction_limit(field: &str) -> Option<(f64, &'static str)> {
    match field {
        "tolerance" => Some((
            1.0,
            "a run can never be 100% off what it asked for, so the check could not fail",
        )),
        "margin" => Some((1.0, "cells that differ by 100% or more would still agree")),
        "max_cv" => Some((10.0, "a spread of 1000% or more is no limit at all")),
        "mode_gap" => Some((10.0, "modes 1000% apart or more are no practical gap")),
        "max_drift" => Some((
            1.0,
            "a drift of 100% or more per 100 runs would double a result within the session",
        )),
        "fraction" => Some((
            1.000_001,
            "a ceiling fraction above 100% would judge values beyond the ceiling itself",
        )),
        _ => None,
    }
}

fn s_percent(x: f64) -> String {
    format!("{}%", crate::format::significant(x * 100.0, 3))
}

#[cfg(test)]
mod tests;
