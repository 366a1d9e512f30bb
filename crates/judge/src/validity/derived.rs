//! The values of derived metrics (`of` / `per` in lab.toml), computed for each run from the
//! values it printed or lab measured: the run's total of `of` divided by its total of `per`.
//! Totals, because a run that prints one value per iteration did all of them in the one
//! process whose counters lab read.

use super::automatic::Problem;
use lab_config::{Experiment, Extractor, Metric};
use lab_findings::runs::Measured;
use std::collections::BTreeMap;

/// Adds each derived metric's value to `values` (what the run printed), in dependency order,
/// reading lab's own measurements from `measured`; returns why a run has none where it must
/// have one.
pub(super) fn derive(
    exp: &Experiment,
    values: &mut BTreeMap<String, Vec<String>>,
    measured: &[(&str, Measured)],
) -> Vec<Problem> {
    let mut found = Vec::new();
    for name in exp.derived_order() {
        let Some(metric) = exp.metric(&name) else {
            continue;
        };
        let Extractor::Derived { of, per } = &metric.extractor else {
            continue;
        };
        match ratio(exp, (values, measured), of, per) {
            Ok(x) => {
                values.insert(name.clone(), vec![x.to_string()]);
            }
            Err(Some(why)) if !metric.optional => found.push(Problem::Underived {
                metric: name.clone(),
                why,
            }),
            Err(_) => {}
        }
    }
    found
}

/// `of` / `per` over the run; `Err(None)` when it has no value for a reason that is not the
/// run's (a built-in count its session did not record), `Err(Some(why))` otherwise.
fn ratio(exp: &Experiment, values: Values, of: &str, per: &str) -> Result<f64, Option<String>> {
    let numerator = total(exp.metric(of), values)?;
    let denominator = total(exp.metric(per), values)?;
    if denominator == 0.0 {
        return Err(Some(format!("its `{per}` was 0")));
    }
    Ok(numerator / denominator)
}

/// A run's values so far: what it printed (and was derived), and what lab measured.
type Values<'a> = (&'a BTreeMap<String, Vec<String>>, &'a [(&'a str, Measured)]);

/// The sum of a metric's values in the run.
fn total(metric: Option<&Metric>, (printed, measured): Values) -> Result<f64, Option<String>> {
    let metric = metric.ok_or(None)?;
    let not_a_number = || Some(format!("its `{}` is not a number", metric.name));
    if let Some((_, value)) = measured.iter().find(|(name, _)| *name == metric.name) {
        return value.finite().ok_or_else(not_a_number);
    }
    let Some(texts) = printed.get(&metric.name).filter(|v| !v.is_empty()) else {
        return Err((!metric.is_builtin()).then(|| format!("it has no value of `{}`", metric.name)));
    };
    texts
        .iter()
        .map(|t| t.parse::<f64>().ok().filter(|x| x.is_finite()))
        .sum::<Option<f64>>()
        .ok_or_else(not_a_number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn experiment(extra: &str) -> Experiment {
        let source = format!(
            "[experiment]\ntitle = \"t\"\nhypothesis = \"h\"\n\n[[variant]]\nname = \"a\"\nrun = [\"prog\"]\n\n[metric.ops]\njson = \"ops\"\n{extra}"
        );
        lab_config::parse(
            &source,
            std::path::Path::new("e/lab.toml"),
            std::path::Path::new("e"),
            None,
        )
        .unwrap()
    }

    fn values(pairs: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        pairs
            .iter()
            .map(|(m, vs)| (m.to_string(), vs.iter().map(|v| v.to_string()).collect()))
            .collect()
    }

    const PER_OP: &str = "[metric.cs_per_op]\nof = \"voluntary_cs\"\nper = \"ops\"\n";

    #[test]
    fn a_per_op_value_divides_the_run_totals() {
        let exp = experiment(PER_OP);
        // Three iterations printed 100 + 150 + 250 = 500 ops; the run switched 125 times.
        let mut v = values(&[("ops", &["100", "150", "250"])]);
        let measured = [("voluntary_cs", Measured::count(125))];
        assert!(derive(&exp, &mut v, &measured).is_empty());
        assert_eq!(v["cs_per_op"], vec!["0.25".to_string()]);
        let m = exp.metric("cs_per_op").unwrap();
        assert_eq!(m.unit, "switches/ops");
        // voluntary_cs is counted, ops is not declared counted: the ratio is a timing.
        assert!(m.is_timing());
    }

    #[test]
    fn a_derived_metric_of_a_derived_one_is_computed_after_it() {
        let exp = experiment(&format!(
            "{PER_OP}[metric.kcs_per_fault]\nof = \"cs_per_op\"\nper = \"minor_faults\"\nunit = \"x\"\n"
        ));
        let mut v = values(&[("ops", &["4"])]);
        let measured = [
            ("voluntary_cs", Measured::count(10)),
            ("minor_faults", Measured::count(5)),
        ];
        assert!(derive(&exp, &mut v, &measured).is_empty());
        assert_eq!(v["cs_per_op"], vec!["2.5".to_string()]);
        assert_eq!(v["kcs_per_fault"], vec!["0.5".to_string()]);
        assert_eq!(exp.metric("kcs_per_fault").unwrap().unit, "x");
    }

    #[test]
    fn zero_or_missing_per_leaves_no_value_and_says_why() {
        let exp = experiment(PER_OP);
        let seven = [("voluntary_cs", Measured::count(7))];
        let mut zero = values(&[("ops", &["0", "0"])]);
        let found = derive(&exp, &mut zero, &seven);
        assert!(!zero.contains_key("cs_per_op"));
        assert_eq!(
            found.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["has no value of metric `cs_per_op`: its `ops` was 0"]
        );
        let mut missing = values(&[]);
        let found = derive(&exp, &mut missing, &seven);
        assert_eq!(
            found[0].to_string(),
            "has no value of metric `cs_per_op`: it has no value of `ops`"
        );
        assert_eq!(found[0].check_name(), super::super::automatic::REPORTED);
    }

    #[test]
    fn a_count_an_old_session_did_not_record_leaves_the_ratio_absent_without_a_problem() {
        let exp = experiment("[metric.faults_per_op]\nof = \"minor_faults\"\nper = \"ops\"\n");
        let mut v = values(&[("ops", &["3"])]);
        assert!(derive(&exp, &mut v, &[]).is_empty());
        assert!(!v.contains_key("faults_per_op"));
    }

    #[test]
    fn a_count_beyond_what_an_f64_holds_exactly_divides_as_its_digits_read() {
        let exp = experiment(PER_OP);
        let huge = (1u64 << 53) + 1;
        assert_eq!(Measured::count(huge), Measured::Digits(huge.to_string()));
        assert_eq!(
            Measured::count(1 << 53),
            Measured::Number(9007199254740992.0)
        );
        let mut v = values(&[("ops", &["2"])]);
        assert!(derive(&exp, &mut v, &[("voluntary_cs", Measured::count(huge))]).is_empty());
        assert_eq!(
            v["cs_per_op"],
            vec![(huge.to_string().parse::<f64>().unwrap() / 2.0).to_string()]
        );
    }
}
