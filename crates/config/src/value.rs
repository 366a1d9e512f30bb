//! A parameter value of the matrix, as lab.toml types it, with the one order every stage
//! compares values by.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// A parameter value as it appears in a command and in the data. Values compare by what they
/// denote: numbers by value, whether written as an integer, a float or numeric text (2, 2.0
/// and "2" are one value), and before every other text, which compares by its characters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Int(i64),
    Float(f64),
    Text(String),
}

impl ParamValue {
    /// The value as a number, when it is written as one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ParamValue::Int(i) => Some(*i as f64),
            ParamValue::Float(f) => Some(*f),
            ParamValue::Text(_) => None,
        }
    }

    /// The number the value denotes: a number, or text that reads as a finite one.
    pub fn number(&self) -> Option<f64> {
        match self.denoted() {
            Denoted::Int(i) => Some(i as f64),
            Denoted::Float(x) => Some(x),
            Denoted::Text(_) => None,
        }
    }

    fn denoted(&self) -> Denoted<'_> {
        match self {
            ParamValue::Int(i) => Denoted::Int(*i),
            ParamValue::Float(x) => Denoted::Float(*x),
            ParamValue::Text(s) => {
                let t = s.trim();
                if let Ok(i) = t.parse::<i64>() {
                    Denoted::Int(i)
                } else {
                    match t.parse::<f64>() {
                        Ok(x) if x.is_finite() => Denoted::Float(x),
                        _ => Denoted::Text(s),
                    }
                }
            }
        }
    }
}

/// What a value denotes, the form values are compared in.
enum Denoted<'a> {
    Int(i64),
    Float(f64),
    Text(&'a str),
}

impl Ord for ParamValue {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.denoted(), other.denoted()) {
            (Denoted::Int(a), Denoted::Int(b)) => a.cmp(&b),
            (Denoted::Float(a), Denoted::Float(b)) => compare_floats(a, b),
            (Denoted::Int(a), Denoted::Float(b)) => compare_int_float(a, b),
            (Denoted::Float(a), Denoted::Int(b)) => compare_int_float(b, a).reverse(),
            (Denoted::Text(a), Denoted::Text(b)) => a.cmp(b),
            (Denoted::Text(_), _) => Ordering::Greater,
            (_, Denoted::Text(_)) => Ordering::Less,
        }
    }
}

impl PartialOrd for ParamValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for ParamValue {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for ParamValue {}

/// Floats by value (0 and -0 are one value), NaN after every number.
fn compare_floats(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b)
        .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
}

/// An integer against a float, exactly (no rounding of the integer to a float).
fn compare_int_float(i: i64, x: f64) -> Ordering {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if x.is_nan() || x >= TWO_63 {
        return Ordering::Less;
    }
    if x < -TWO_63 {
        return Ordering::Greater;
    }
    let whole = x.trunc();
    i.cmp(&(whole as i64))
        .then_with(|| 0.0_f64.partial_cmp(&(x - whole)).unwrap_or(Ordering::Equal))
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Text(s) => f.write_str(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ParamValue::{self, Float, Int, Text};

    fn text(s: &str) -> ParamValue {
        Text(s.to_string())
    }

    #[test]
    fn numbers_order_by_value_not_by_their_digits() {
        assert!(Int(2) < Int(10));
        assert!(Float(2.5) < Int(10));
        assert!(text("2") < text("10"));
        assert!(Int(-3) < Float(-2.5));
        let mut values = vec![Int(10), text("9"), Float(2.5), Int(2)];
        values.sort();
        assert_eq!(values, [Int(2), Float(2.5), text("9"), Int(10)]);
    }

    #[test]
    fn one_number_in_any_spelling_is_one_value() {
        assert_eq!(Int(2), Float(2.0));
        assert_eq!(Int(1), text("1"));
        assert_eq!(text("2.50"), Float(2.5));
        assert_eq!(Float(0.0), Float(-0.0));
        assert_ne!(Int(2), Float(2.000_001));
        assert_ne!(
            Int(i64::MAX),
            Float(i64::MAX as f64),
            "no rounding of large integers"
        );
        assert_eq!(Float(f64::NAN), Float(f64::NAN));
    }

    #[test]
    fn numbers_come_before_text_and_text_orders_by_its_characters() {
        assert!(Int(1_000_000) < text("a"));
        assert!(Float(f64::INFINITY) < text("-"));
        assert!(Float(f64::NAN) < text("a"), "even NaN is a number");
        assert!(Float(f64::INFINITY) < Float(f64::NAN));
        assert!(text("B") < text("a"));
        assert!(text("fair") < text("nonfair"));
        assert_ne!(
            text("inf"),
            Float(f64::INFINITY),
            "only finite text reads as a number"
        );
    }

    #[test]
    fn each_value_displays_as_written() {
        assert_eq!(Int(-7).to_string(), "-7");
        assert_eq!(Float(2.0).to_string(), "2");
        assert_eq!(Float(0.25).to_string(), "0.25");
        assert_eq!(Float(1e20).to_string(), "100000000000000000000");
        assert_eq!(text("nonfair").to_string(), "nonfair");
        assert_eq!(text(" 2").to_string(), " 2");
    }
}
