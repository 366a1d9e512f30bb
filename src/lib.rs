//! lab: turns a benchmark investigation into a reproducible, publishable notebook.
//!
//! The pipeline, one crate per layer, each taking the previous one's typed output:
//! `lab-config` (lab.toml → Experiment; the plan of runs in a seeded order) → `lab-exec` (one
//! process per run) → `lab-store` (sealed, append-only session files) → `lab-judge` (validity,
//! analysis, checks, stopping, comparison) → `lab-render` (charts and the mdBook chapter), with
//! `lab-stats` under the judgement (`lab-basis`, the little of it the lower layers share, under
//! them all), what the judgement found as plain data in `lab-findings` (all the book reads of
//! it), and `lab-import` and `lab-bundle` beside the store. This crate holds the
//! pipeline's write side ([`run`]: one `lab run` from lab.toml to stored sessions), its read
//! side for one session ([`assess`]), the chapters written from stored sessions ([`chapter`])
//! and the command line (`app`), which parses arguments, calls the pipeline and prints.

pub mod app;
pub mod assess;
pub mod chapter;
pub mod cli;
pub mod error;
pub mod layout;
pub mod run;

pub use assess::{Assessed, assess};
pub use error::Exit;

// The layers below the command line, each a crate of the workspace, under the names the
// commands and tests use.
pub use lab_bundle as bundle;
pub use lab_config as config;
pub use lab_config::{format, plan, units};
pub use lab_exec as exec;
pub use lab_import as import;
pub use lab_judge::{analysis, checks, compare, history, replication, stopping, validity};
pub use lab_render as render;
pub use lab_stats as stats;
pub use lab_store as store;
pub use lab_store::regular;
