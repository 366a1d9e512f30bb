//! Stages 5 to 7, the read side of a session: which runs count (validity), what they measured
//! (analysis), what may be claimed of it (checks), whether more runs would settle what is open
//! (stopping), the values an experiment's notes quote (notes), and sessions against each other
//! (comparison, history, replication). No file is written here and nothing is drawn. What it
//! finds is plain data in `lab-findings`, which the book reads; each stage re-exports its part
//! under its own path.

pub mod analysis;
/// A bisection as `lab bisect` keeps it: plain data, which the book shows.
pub mod bisect {
    pub use lab_findings::bisect::*;
}
pub mod checks;
pub mod compare;
pub mod history;
pub mod notes;
pub mod replication;
pub mod stopping;
pub mod validity;
