//! The notes' citations: `references.bib` beside notes.md, read with the `biblatex` crate,
//! `cite(key="…")` as an author–year citation linked to its entry, and a "References" section
//! after the notes listing the cited entries only.
//!
//! The style is that of CSL's author–date styles (Chicago author-date): "(Chen and Guestrin
//! 2016)" in the text, "Chen, Tianqi, and Carlos Guestrin. 2016. Title. *Venue*. DOI." in the
//! list, sorted by first author and year. lab formats this one style itself rather than through
//! `hayagriva`, the Typst project's CSL processor: for one list in one style it would add some
//! fifty crates (ICU collation and locale data, a URL parser, YAML) to every build of lab.
//! `biblatex` (the same project's BibTeX parser) gives the entries with byte spans, so a
//! malformed file is reported at its line and column.
//!
//! Every field is the author's text, escaped like every other value on the page; a link is
//! made only to an `http:` or `https:` address, or to a DOI at doi.org.

use super::NotesError;
use crate::escape::{html_line, markdown};
use biblatex::{Bibliography, ChunksExt, Entry, Person};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The references file of an experiment, beside its notes.md.
pub const REFERENCES_FILE: &str = "references.bib";

/// An experiment's references.bib as read and parsed; `entries` is empty when it has none.
#[derive(Debug, Clone, PartialEq)]
pub struct References {
    pub path: PathBuf,
    pub present: bool,
    entries: Vec<Reference>,
    /// The letter after the year of each key cited beside another work of the same authors
    /// and year ("a" for 2016a); see [`References::year_letters`].
    letters: BTreeMap<String, char>,
}

/// One entry, its fields as plain text.
#[derive(Debug, Clone, PartialEq)]
struct Reference {
    key: String,
    /// (family, given) names of the authors, or of the editors where there are no authors.
    names: Vec<(String, String)>,
    year: Option<String>,
    title: Option<String>,
    venue: Option<String>,
    doi: Option<String>,
    url: Option<String>,
}

impl References {
    /// references.bib in `dir`; none when the file is absent. A file that does not parse is
    /// an error naming it, the line and column, and what is wrong.
    pub fn read(dir: &Path) -> anyhow::Result<References> {
        let path = dir.join(REFERENCES_FILE);
        let text = match lab_config::folder_file::read_bytes(&path) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|e| {
                let at = e.utf8_error().valid_up_to();
                not_readable(
                    &path,
                    &format!("not valid UTF-8 at byte {at}; save it as UTF-8"),
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(References {
                    path,
                    present: false,
                    entries: Vec::new(),
                    letters: BTreeMap::new(),
                });
            }
            Err(e) => return Err(not_readable(&path, &e.to_string())),
        };
        let entries = parse(&text).map_err(|at_and_why| {
            anyhow::Error::new(NotesError(format!("{}:{at_and_why}", path.display())))
        })?;
        Ok(References {
            path,
            present: true,
            entries,
            letters: BTreeMap::new(),
        })
    }

    /// Letters that tell apart the cited works of the same authors and year, in the order
    /// the list shows them (by title): "Chen 2016a", "Chen 2016b", as the Chicago Manual of
    /// Style (17th ed., 15.19) and CSL's `disambiguate-add-year-suffix` do. Empty when no two
    /// cited works share their authors and year.
    pub(super) fn year_letters(&self, cited: &[String]) -> BTreeMap<String, char> {
        let mut by_label: BTreeMap<String, Vec<&Reference>> = BTreeMap::new();
        for entry in self.listed_entries(cited) {
            by_label.entry(entry.in_text()).or_default().push(entry);
        }
        let shared = by_label.into_values().filter(|same| same.len() > 1);
        shared
            .flat_map(|same| {
                let letters = ('a'..='z').chain(std::iter::repeat('z'));
                same.into_iter()
                    .zip(letters)
                    .map(|(e, l)| (e.key.clone(), l))
            })
            .collect()
    }

    /// The same references, citing with the letters [`References::year_letters`] gave.
    pub(super) fn with_year_letters(&self, letters: BTreeMap<String, char>) -> References {
        References {
            letters,
            ..self.clone()
        }
    }

    /// The year as cited and listed: with its letter where one tells it apart.
    fn year_of(&self, entry: &Reference) -> String {
        match (self.letters.get(&entry.key), &entry.year) {
            (Some(letter), Some(year)) => format!("{year}{letter}"),
            (Some(letter), None) => format!("n.d.-{letter}"),
            (None, _) => entry.year_or_nd().to_string(),
        }
    }

    /// The cited entries, each once, in the order of the list: by first author, year and title.
    fn listed_entries(&self, cited: &[String]) -> Vec<&Reference> {
        let mut entries: Vec<&Reference> = self
            .entries
            .iter()
            .filter(|e| cited.contains(&e.key))
            .collect();
        entries.sort_by_key(|e| {
            let title = e.title.as_deref().map(str::to_lowercase);
            (e.sort_names(), e.year.clone(), title, e.key.clone())
        });
        entries
    }

    /// The keys the file holds, in its order.
    pub(super) fn keys(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.key.as_str()).collect()
    }

    fn entry(&self, key: &str) -> Option<&Reference> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// The in-text citation of `key`, linked to its entry; an error message for a key the
    /// file lacks, or for any key when there is no file.
    pub(super) fn cite(&self, key: &str) -> Result<String, String> {
        if !self.present {
            return Err(format!(
                "cite(key=\"{key}\") needs a references file: put the BibTeX entries in {}",
                self.path.display()
            ));
        }
        let entry = self.entry(key).ok_or_else(|| {
            format!(
                "no reference \"{key}\" in {REFERENCES_FILE}; its keys: {}",
                self.keys().join(", ")
            )
        })?;
        let in_text = format!("{} {}", entry.who(), self.year_of(entry));
        Ok(format!(
            "(<a href=\"#{}\">{}</a>)",
            html_line(&anchor(key)),
            markdown(&html_line(&in_text))
        ))
    }

    /// The "References" section for the cited keys: each entry once, by first author, year
    /// and title.
    pub(super) fn section(&self, cited: &[String]) -> String {
        let entries = self.listed_entries(cited);
        if entries.is_empty() {
            return String::new();
        }
        let items: String = entries
            .iter()
            .map(|e| {
                format!(
                    "<li id=\"{}\">{}</li>",
                    html_line(&anchor(&e.key)),
                    e.listed(&self.year_of(e))
                )
            })
            .collect();
        format!("\n\n### References\n\n<ul class=\"lab-references\">{items}</ul>\n")
    }
}

fn not_readable(path: &Path, why: &str) -> anyhow::Error {
    anyhow::Error::new(NotesError(format!("{}: {why}", path.display())))
}

/// The entries of a .bib file; where it does not parse, "LINE:COLUMN: what is wrong".
fn parse(text: &str) -> Result<Vec<Reference>, String> {
    let bibliography = Bibliography::parse(text).map_err(|e| {
        let at = super::source::position(text, floor_char_boundary(text, e.span.start));
        format!("{}:{}: {}", at.line, at.column, e.kind)
    })?;
    Ok(bibliography.iter().map(Reference::of).collect())
}

/// The largest char boundary of `text` at or before byte `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// The anchor of an entry: `ref-KEY`, every character of the key outside letters, digits,
/// `-`, `.` and `:` written as `_HEX_`, so that any key makes an id and a URL fragment.
fn anchor(key: &str) -> String {
    let mut out = String::from("ref-");
    for c in key.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':') {
            out.push(c);
        } else {
            out.push_str(&format!("_{:x}_", u32::from(c)));
        }
    }
    out
}

/// A field as plain text, its TeX braces and commands resolved; none when absent or blank.
fn field(entry: &Entry, name: &str) -> Option<String> {
    let text = entry.get(name)?.format_verbatim();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

impl Reference {
    fn of(entry: &Entry) -> Reference {
        let people = |role: &str| {
            entry
                .get_as::<Vec<Person>>(role)
                .unwrap_or_default()
                .into_iter()
                .map(|p| {
                    let family = [p.prefix.as_str(), p.name.as_str(), p.suffix.as_str()]
                        .iter()
                        .filter(|s| !s.is_empty())
                        .copied()
                        .collect::<Vec<_>>()
                        .join(" ");
                    (family, p.given_name)
                })
                .collect::<Vec<_>>()
        };
        let mut names = people("author");
        if names.is_empty() {
            names = people("editor");
        }
        let year = field(entry, "year").or_else(|| {
            field(entry, "date").map(|d| d.chars().take_while(|c| *c != '-').collect())
        });
        let venue = [
            "journaltitle",
            "journal",
            "booktitle",
            "howpublished",
            "publisher",
            "institution",
            "school",
            "organization",
        ]
        .iter()
        .find_map(|name| field(entry, name));
        Reference {
            key: entry.key.clone(),
            names,
            year,
            title: field(entry, "title"),
            venue,
            doi: field(entry, "doi"),
            url: field(entry, "url"),
        }
    }

    fn year_or_nd(&self) -> &str {
        self.year.as_deref().unwrap_or("n.d.")
    }

    /// "Chen 2016", "Chen and Guestrin 2016", "Chen et al. 2016", before any letter.
    fn in_text(&self) -> String {
        format!("{} {}", self.who(), self.year_or_nd())
    }

    /// "Chen", "Chen and Guestrin", "Chen et al."; the title, or else the key, where the
    /// entry names no one.
    fn who(&self) -> String {
        let family = |i: usize| self.names[i].0.as_str();
        match self.names.len() {
            0 => self.title.clone().unwrap_or_else(|| self.key.clone()),
            1 => family(0).to_string(),
            2 => format!("{} and {}", family(0), family(1)),
            _ => format!("{} et al.", family(0)),
        }
    }

    fn sort_names(&self) -> Vec<String> {
        self.names
            .iter()
            .map(|(family, given)| format!("{family}, {given}").to_lowercase())
            .collect()
    }

    /// "Family, Given, Given Family, and Given Family": the first name inverted for sorting.
    fn authors(&self) -> String {
        let name = |i: usize, (family, given): &(String, String)| match (i, given.is_empty()) {
            (_, true) => family.clone(),
            (0, false) => format!("{family}, {given}"),
            (_, false) => format!("{given} {family}"),
        };
        let names: Vec<String> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| name(i, n))
            .collect();
        match names.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [first, second] => format!("{first}, and {second}"),
            [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
        }
    }

    /// The entry as the list shows it with its `year` as cited (HTML, every field escaped).
    fn listed(&self, year: &str) -> String {
        let mut parts = Vec::new();
        if !self.names.is_empty() {
            parts.push(html_line(&self.authors()));
        }
        parts.push(html_line(year));
        if let Some(title) = &self.title {
            parts.push(html_line(title));
        }
        if let Some(venue) = &self.venue {
            parts.push(format!("<em>{}</em>", html_line(venue)));
        }
        let doi = self.doi.as_ref().map(|d| {
            format!(
                "https://doi.org/{}",
                d.trim_start_matches("https://doi.org/")
            )
        });
        if let Some(address) = doi.or_else(|| self.url.clone()) {
            parts.push(web_link(&address));
        }
        parts
            .iter()
            .map(|p| with_full_stop(p))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A link to a web address, or the address as text when it is not one.
fn web_link(address: &str) -> String {
    let lower = address.to_ascii_lowercase();
    let text = html_line(address);
    if lower.starts_with("https://") || lower.starts_with("http://") {
        format!("<a href=\"{text}\">{text}</a>")
    } else {
        text
    }
}

fn with_full_stop(part: &str) -> String {
    let ends = ['.', '?', '!'];
    let plain = part.trim_end_matches("</em>").trim_end_matches("</a>");
    if plain.ends_with(ends) {
        part.to_string()
    } else {
        format!("{part}.")
    }
}

#[cfg(test)]
#[path = "notes_citations_tests.rs"]
mod tests;
