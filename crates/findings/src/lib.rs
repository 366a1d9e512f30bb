//! What a judged session found, as plain data: the runs as judged, the analysis of their
//! statistics, the checks' verdicts, where a sampled session stands, two sessions compared, an
//! experiment's history, its replications on several machines and what its notes quote. The
//! judgement (`lab-judge`) computes them; the book (`lab-render`) only formats them, so a
//! change to how lab judges or computes a statistic does not rebuild the book.

pub mod analysis;
pub mod automatic;
pub mod bisect;
pub mod checks;
pub mod compare;
pub mod history;
pub mod notes;
pub mod replication;
pub mod runs;
pub mod stopping;
