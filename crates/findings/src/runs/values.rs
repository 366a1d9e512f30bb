//! The values one run printed (or lab measured for it), by metric, held compactly: a number
//! whose text is exactly `f64`'s shortest form (the form lab keeps numbers in once read) is
//! held as the number, anything else as printed, and metric names are shared between runs.
//! Nothing is lost: every value reads back as the same text and the same number. At 100,000
//! runs a map of strings per run held over 100 MB; this holds 8 bytes a metric, and 48 a run
//! beside, for the metrics that hold one number.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

/// Every value of one run, by metric in name order; each metric's values in iteration order.
/// A metric that holds one number (what nearly every metric of a run holds) takes the 8 bytes
/// of that number; the list of names is shared by every run with the same metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunValues {
    /// The metrics' names, in name order.
    names: Schema,
    /// Each metric's number, where it holds one number; 0 where it holds anything else.
    ones: Box<[f64]>,
    /// The metrics that hold anything but one number, by their index in `names`, in order.
    rest: Box<[(u32, Many)]>,
}

/// A metric name shared between runs, behind one thin pointer.
type Name = Arc<String>;

/// The names of a run's metrics, in name order, shared by the runs that have the same.
type Schema = Arc<[Name]>;

/// One metric's values as read: a single number, or anything else.
#[derive(Debug, Clone, PartialEq)]
enum Printed {
    /// A single value that is a number.
    One(f64),
    Many(Many),
}

/// One metric's values as found in a run: borrowed from where the run holds them.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Found<'a> {
    One(&'a f64),
    Many(&'a Many),
}

#[derive(Debug, Clone, PartialEq)]
enum Many {
    /// Values that are all numbers.
    Numbers(Vec<f64>),
    /// Values of which at least one is not a number in its shortest form, as printed.
    Text(Vec<String>),
}

/// Metric names shared by every run of a session, so that each run holds a pointer, not a
/// copy, and the lists of names runs hold, so that runs with the same metrics share one.
#[derive(Debug, Default)]
pub struct Names {
    table: BTreeMap<String, Name>,
    schemas: Mutex<HashSet<Schema>>,
}

impl Names {
    /// A table holding `names`.
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Names {
        Names {
            table: names
                .into_iter()
                .map(|n| (n.to_string(), Arc::new(n.to_string())))
                .collect(),
            schemas: Mutex::default(),
        }
    }

    /// A table of the same names with pointers of its own, for another thread: threads that
    /// share a pointer contend for its count each time they copy it.
    pub fn apart(&self) -> Names {
        Names::of(self.table.keys().map(String::as_str))
    }

    /// The shared name, or a new one when the table lacks it.
    fn get(&self, name: &str) -> Name {
        self.table
            .get(name)
            .cloned()
            .unwrap_or_else(|| Arc::new(name.to_string()))
    }

    /// The shared list of `names`, made the first time a run holds them.
    fn schema(&self, names: Vec<Name>) -> Schema {
        let mut schemas = self.schemas.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(shared) = schemas.get(names.as_slice()) {
            return shared.clone();
        }
        let schema: Schema = names.into();
        schemas.insert(schema.clone());
        schema
    }
}

/// The number `text` is, when `text` is exactly that number's shortest form (as `{x}`
/// writes it, compared as it is written, with nothing allocated).
fn exact_number(text: &str) -> Option<f64> {
    use std::fmt::Write;
    /// What is left of the text to match.
    struct Matching<'a>(&'a [u8]);
    impl Write for Matching<'_> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0 = self.0.strip_prefix(s.as_bytes()).ok_or(std::fmt::Error)?;
            Ok(())
        }
    }
    let x: f64 = text.parse().ok()?;
    let mut rest = Matching(text.as_bytes());
    (write!(rest, "{x}").is_ok() && rest.0.is_empty()).then_some(x)
}

impl Printed {
    fn of(texts: Vec<String>) -> Printed {
        match texts
            .iter()
            .map(|t| exact_number(t))
            .collect::<Option<Vec<f64>>>()
        {
            Some(numbers) if numbers.len() == 1 => Printed::One(numbers[0]),
            Some(numbers) => Printed::Many(Many::Numbers(numbers)),
            None => Printed::Many(Many::Text(texts)),
        }
    }
}

impl<'a> Found<'a> {
    /// The values as numbers, when they all are.
    fn numbers(self) -> Option<&'a [f64]> {
        match self {
            Found::One(x) => Some(std::slice::from_ref(x)),
            Found::Many(Many::Numbers(xs)) => Some(xs),
            Found::Many(Many::Text(_)) => None,
        }
    }

    /// The values as printed, when one is not a number.
    fn text(self) -> Option<&'a [String]> {
        match self {
            Found::Many(Many::Text(texts)) => Some(texts),
            _ => None,
        }
    }

    fn texts(self) -> Vec<String> {
        match (self.numbers(), self.text()) {
            (Some(xs), _) => xs.iter().map(f64::to_string).collect(),
            (None, texts) => texts.unwrap_or_default().to_vec(),
        }
    }

    /// The values, to be held anew.
    fn owned(self) -> Printed {
        match self {
            Found::One(x) => Printed::One(*x),
            Found::Many(many) => Printed::Many(many.clone()),
        }
    }

    fn len(self) -> usize {
        self.numbers()
            .map_or_else(|| self.text().map_or(0, <[String]>::len), <[f64]>::len)
    }
}

/// One value lab measured itself: a number, or the digits of a count too large for an f64 to
/// hold exactly (kept as text, as a printed value that is not a number in its shortest form).
#[derive(Debug, Clone, PartialEq)]
pub enum Measured {
    Number(f64),
    Digits(String),
}

impl Measured {
    /// A count: its number when an f64 holds it exactly (up to 2⁵³), its digits otherwise.
    pub fn count(count: u64) -> Measured {
        const EXACT: u64 = 1 << f64::MANTISSA_DIGITS;
        if count <= EXACT {
            Measured::Number(count as f64)
        } else {
            Measured::Digits(count.to_string())
        }
    }

    /// The value as a finite number, as a printed text of it would read.
    pub fn finite(&self) -> Option<f64> {
        match self {
            Measured::Number(x) => Some(*x),
            Measured::Digits(text) => text.parse().ok(),
        }
        .filter(|x: &f64| x.is_finite())
    }

    fn printed(self) -> Printed {
        match self {
            Measured::Number(x) => Printed::One(x),
            Measured::Digits(text) => Printed::of(vec![text]),
        }
    }
}

impl RunValues {
    /// The values of a map from metric to texts, names taken from `names`: the reference
    /// [`Self::from_parts`] is tested against.
    #[cfg(test)]
    pub fn from_map(map: BTreeMap<String, Vec<String>>, names: &Names) -> RunValues {
        RunValues::from_parts(map, Vec::new(), names)
    }

    /// The values a run printed (or were derived from them), as texts by metric, with those lab
    /// measured, which replace printed values of the same name: the values one map holding
    /// both would give, the measured ones written as `{x}` writes them, without writing them.
    pub fn from_parts(
        printed: BTreeMap<String, Vec<String>>,
        measured: Vec<(&str, Measured)>,
        names: &Names,
    ) -> RunValues {
        let mut entries: Vec<(Name, Printed)> = measured
            .into_iter()
            .map(|(n, m)| (names.get(n), m.printed()))
            .chain(
                printed
                    .into_iter()
                    .map(|(name, texts)| (names.get(&name), Printed::of(texts))),
            )
            .collect();
        // A stable sort: of two entries of one name, the measured one comes first and stays.
        entries.sort_by(|(a, _), (b, _)| a.cmp(b));
        entries.dedup_by(|(later, _), (kept, _)| later == kept);
        RunValues::from_entries(entries, names)
    }

    /// The values of `entries`, in name order and of distinct names, their list of names shared
    /// through `names`.
    fn from_entries(entries: Vec<(Name, Printed)>, names: &Names) -> RunValues {
        let mut listed = Vec::with_capacity(entries.len());
        let mut ones = Vec::with_capacity(entries.len());
        let mut rest = Vec::new();
        for (i, (name, printed)) in entries.into_iter().enumerate() {
            listed.push(name);
            match printed {
                Printed::One(x) => ones.push(x),
                Printed::Many(many) => {
                    ones.push(0.0);
                    rest.push((i as u32, many));
                }
            }
        }
        RunValues {
            names: names.schema(listed),
            ones: ones.into_boxed_slice(),
            rest: rest.into_boxed_slice(),
        }
    }

    /// Every metric's name and values, in name order.
    fn entries(&self) -> impl Iterator<Item = (&Name, Found<'_>)> {
        self.names
            .iter()
            .enumerate()
            .map(|(i, name)| (name, self.at(i)))
    }

    /// The values of the metric at `i` in the list of names.
    fn at(&self, i: usize) -> Found<'_> {
        match self.rest.binary_search_by_key(&(i as u32), |(at, _)| *at) {
            Ok(r) => Found::Many(&self.rest[r].1),
            Err(_) => Found::One(&self.ones[i]),
        }
    }

    /// The values of one metric, given as texts.
    pub fn of(metric: &str, texts: Vec<String>) -> RunValues {
        let mut values = RunValues::default();
        values.insert(metric, texts);
        values
    }

    /// Sets the values of `metric`, replacing any it had.
    pub fn insert(&mut self, metric: &str, texts: Vec<String>) {
        let mut entries: Vec<(Name, Printed)> = self
            .entries()
            .filter(|(name, _)| name.as_str() != metric)
            .map(|(name, found)| (name.clone(), found.owned()))
            .collect();
        let at = entries.partition_point(|(name, _)| name.as_str() < metric);
        entries.insert(at, (Arc::new(metric.to_string()), Printed::of(texts)));
        *self = RunValues::from_entries(entries, &Names::default());
    }

    fn find(&self, metric: &str) -> Option<Found<'_>> {
        self.names
            .binary_search_by(|n| n.as_str().cmp(metric))
            .ok()
            .map(|i| self.at(i))
    }

    /// The values of `metric` as text (as printed, numbers in their shortest form); `None`
    /// when the run has none.
    pub fn texts(&self, metric: &str) -> Option<Vec<String>> {
        self.find(metric).map(Found::texts)
    }

    /// The numeric values of `metric` after dropping `skip` warm-up iterations; values that are
    /// not numbers are left out.
    pub fn numbers(&self, metric: &str, skip: usize) -> Vec<f64> {
        let Some(found) = self.find(metric) else {
            return Vec::new();
        };
        match (found.numbers(), found.text()) {
            (Some(xs), _) => xs.iter().skip(skip).copied().collect(),
            (None, texts) => texts
                .unwrap_or_default()
                .iter()
                .skip(skip)
                .filter_map(|s| s.trim().parse().ok())
                .collect(),
        }
    }
}

/// As a map from metric to the list of its values' texts (what a map of strings gave).
impl Serialize for RunValues {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.names.len()))?;
        for (name, found) in self.entries() {
            map.serialize_entry(name.as_str(), &TextList(found))?;
        }
        map.end()
    }
}

struct TextList<'a>(Found<'a>);

/// A value serialized as the string its `Display` writes, without building the string
/// first.
struct AsText<T>(T);

impl<T: std::fmt::Display> Serialize for AsText<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl Serialize for TextList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        match (self.0.numbers(), self.0.text()) {
            (Some(xs), _) => {
                for x in xs {
                    seq.serialize_element(&AsText(x))?;
                }
            }
            (None, texts) => {
                for t in texts.unwrap_or_default() {
                    seq.serialize_element(t)?;
                }
            }
        }
        seq.end()
    }
}

#[cfg(test)]
#[path = "values_tests.rs"]
mod tests;
